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
Classification read_and_classify(const QueryOptions& options, const Rules& rules);

}  // namespace gpuplan::cli
