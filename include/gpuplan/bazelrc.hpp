#pragma once
// What in Bazel's rc files makes `bazel test` stop before it runs a test (src/run/bazelrc.cpp,
// which reads them as rc_option, in run.hpp, does).
#include <string>
#include <vector>

namespace gpuplan {

/// What in `rc_files` (and `bazel_args` after them) Bazel 4 refuses, read as rc_option reads
/// them, each "FILE:LINE: what ('Bazel's words')": an import of a file that cannot be read, an
/// import loop, an import of other than one file, a --config that no rc file defines for `test`
/// or one that names itself, a --run_under Bazel cannot split as a shell would (an empty one).
/// The line is "the options after --" for `bazel_args`.
std::vector<std::string> rc_refusals(const std::vector<std::string>& rc_files, const std::string& workspace,
                                     const std::vector<std::string>& bazel_args);

}  // namespace gpuplan
