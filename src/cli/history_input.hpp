#pragma once
// `--history FILE` (repeatable; files or bazel-testlogs directories), shared by the commands that plan.
#include <string>
#include <vector>

#include "gpuplan/classify.hpp"
#include "gpuplan/diagnostic.hpp"
#include "gpuplan/history.hpp"
#include "gpuplan/rules.hpp"
#include "gpuplan/units.hpp"

namespace gpuplan::cli {

/// Reads every path in order, later ones counting as newer: a file in any history format
/// ("-" is standard input), or a bazel-testlogs directory (each test.xml and
/// test_attempts/attempt_N.xml below it). Skipped bad rows become warnings in `diagnostics`;
/// under `strict` they throw InputError.
History read_history_paths(const std::vector<std::string>& paths, bool strict, Diagnostics& diagnostics);

/// The estimator a plan uses: history where there is some, then the fallbacks
/// (size-class median, size default). With no paths, the size defaults alone.
Estimator estimator_for(const std::vector<std::string>& history_paths, const Rules& rules,
                        const Classification& tests, bool strict, Diagnostics& diagnostics);

/// With history paths: one stderr line saying how many GPU units were planned from their own
/// runs, and from their size class's median or the size default. When none was, every duration
/// is a guess the user did not ask for (a history of other labels, an empty file): a warning
/// naming the paths, or under `strict` an InputError. "" without paths or units.
std::string history_coverage(const std::vector<std::string>& paths, const std::vector<Unit>& units,
                             bool strict, Diagnostics& diagnostics);

}  // namespace gpuplan::cli
