#pragma once
// `[FILE] --input-format F --attrs FILE`: reading Bazel's output, shared by every
// command that starts from a query (targets, classify, plan, ...).
#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "gpuplan/ingest.hpp"
#include "gpuplan/target.hpp"

namespace gpuplan::cli {

struct TargetsInput {
  std::string path = "-";    ///< "" or "-": standard input
  std::string input_format;  ///< "": detect from the content
  std::string attrs;         ///< an attributes source for labels-only input, or ""
  /// The input's text, read already (run-under's one rule of `path`): read instead of `path`,
  /// which names it in messages.
  std::optional<std::string> text;
};

/// Adds the FILE argument and the --input-format and --attrs options to `command`.
void add_targets_input(CLI::App& command, TargetsInput& input);

/// Reads the tests; throws InputError for bad input or an unknown --input-format.
/// With `graph`, FILE's dependency graph goes there too.
TargetList read_targets_input(const TargetsInput& input, GraphSink* graph = nullptr);
/// The same, handing each test to `tests` as it is read (after the join, with --attrs); the
/// list returned holds the format and the dropped counts, no tests.
TargetList read_targets_input(const TargetsInput& input, GraphSink* graph, TargetSink& tests);

}  // namespace gpuplan::cli
