#pragma once
// The options every command that reads `bazel query` output shares (classify, explain, plan):
// FILE, --input-format, --attrs, --rules, --strict, --include-manual; and the step
// "read the input and the rules, classify".
#include <CLI/CLI.hpp>
#include <string>

#include "cli/targets_input.hpp"
#include "gpuplan/classify.hpp"
#include "gpuplan/rules.hpp"

namespace gpuplan::cli {

struct QueryOptions {
  TargetsInput targets;  ///< FILE, --input-format, --attrs
  std::string rules;     ///< --rules FILE; empty: the built-in defaults
  bool strict = false;
  bool include_manual = false;
};

/// Registers the options above, FILE as the next positional argument.
void add_query_options(CLI::App& command, QueryOptions& options);

/// The rules file named by --rules, or the defaults. Throws InputError (file:line:col).
Rules read_rules(const QueryOptions& options);

/// Reads the query output (joined with --attrs) and classifies it with `rules`.
/// Under --strict, throws InputError listing every error diagnostic (exit 2).
/// `annotations`: keep each test's annotations, which only `explain` shows.
Classification read_and_classify(const QueryOptions& options, const Rules& rules, bool annotations = false);

/// Once the units are made, make_plan needs of the tests only the CPU and skipped ones (it
/// lists them) and how many GPU tests there were (the summary counts them). The GPU tests —
/// targets and requirements, the bulk of a large query — go before planning, so that they and
/// the plan are never in memory together; the caller adds `gpu_tests` to the plan's summary
/// (`tests` and `gpu_tests`).
Classification without_gpu_tests(Classification tests, long& gpu_tests);

}  // namespace gpuplan::cli
