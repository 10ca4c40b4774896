#pragma once
// The options every command that reads `bazel query` output shares (classify, explain, plan):
// FILE, --input-format, --attrs, --rules, --strict, --include-manual; and the step
// "read the input and the rules, classify".
#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <memory>
#include <string>

#include "cli/targets_input.hpp"
#include "gpuplan/classify.hpp"
#include "gpuplan/fleet.hpp"
#include "gpuplan/graph.hpp"
#include "gpuplan/rules.hpp"

namespace gpuplan::cli {

struct QueryOptions {
  TargetsInput targets;  ///< FILE, --input-format, --attrs
  std::string rules;     ///< --rules FILE; empty: the built-in defaults
  bool strict = false;
  bool include_manual = false;
  /// `plan`: labels-only input with no rule that reads labels is an error (exit 2) unless --allow-untagged.
  bool refuse_untagged = false;
  bool allow_untagged = false;
  bool classify_by_deps = false;  ///< --classify-by-deps (or the rules file's classify_by_deps)
  /// Under --classify-by-deps, called once the tests are read and sorted, before any is moved:
  /// reads --history with the tests' shard counts (read_history_for_classifying) and returns the
  /// tests whose runs used a GPU → what the runs measured, which the graph showing no GPU code
  /// does not send to the CPU bucket (BlindTests::used_gpu). Before, the history was read before
  /// the query, without its shard counts, and stale shard_N_of_M folders could win.
  std::function<std::map<std::string, std::string>(const Classification&)> read_history;
  /// Free each test's location, tags and exec_properties once classified (`plan`, `classify`:
  /// they never read them again).
  bool drop_inputs = false;
  /// Stop (exit 2) on the errors --strict makes of warnings; `explain`, whose --strict is about
  /// one test, keeps them as they are and looks at its test's only.
  bool refuse_errors = true;
};

/// The dependency graph read with the tests, and which of its nodes reach GPU code.
struct DepsInput {
  DepGraph graph;
  std::unique_ptr<GpuReach> reach;  ///< set once the graph is read
  long moved_to_cpu = 0;            ///< tests --classify-by-deps moved
};

/// The query input's name for messages: its path, or "<stdin>".
std::string input_name(const QueryOptions& options);

/// gpu_deps and gpu_free: the built-in sets and the rules file's.
GpuDepPatterns gpu_patterns(const Rules& rules);

/// Registers the options above, FILE as the next positional argument.
void add_query_options(CLI::App& command, QueryOptions& options);

/// The rules file named by --rules, or the defaults. Throws InputError (file:line:col).
Rules read_rules(const QueryOptions& options);

/// Reads the query output (joined with --attrs) and classifies it with `rules`.
/// Under --strict, throws InputError listing every error diagnostic (exit 2).
/// `annotations`: keep each test's annotations, which `explain` and `audit` show.
/// With `deps` (or under --classify-by-deps) the dependency graph is read too; under
/// --classify-by-deps it moves GPU tests that reach no GPU code to the CPU bucket.
Classification read_and_classify(const QueryOptions& options, const Rules& rules, bool annotations = false,
                                 DepsInput* deps = nullptr);

/// Once the units are made, make_plan needs of the tests only the CPU and skipped ones (it
/// lists them) and how many GPU tests there were (the summary counts them). The GPU tests —
/// targets and requirements, the bulk of a large query — go before planning, so that they and
/// the plan are never in memory together; the caller adds `gpu_tests` to the plan's summary
/// (`tests` and `gpu_tests`).
Classification without_gpu_tests(Classification tests, long& gpu_tests);

/// Frees what planning never reads once the tests are classified: where each was declared,
/// its tags and exec_properties, and the reason of a GPU test (the plan lists reasons only
/// for CPU and skipped tests). About a hundred bytes a test of a large query (issue 14).
void drop_classification_inputs(Classification& tests);

/// Registers `plan`'s --allow-untagged and turns the refusal of untagged input on.
void add_untagged_option(CLI::App& command, QueryOptions& options);

/// "2 warnings, 1 note" ("1 error, 2 warnings, 1 note" where there are errors), with
/// `more_warnings` printed before (the fleet's) among the warnings, and `more_notes` among the notes.
std::string diagnostic_counts(const Diagnostics& diagnostics, long more_warnings = 0, long more_notes = 0);

/// On standard error: each warning (the first few), then one line of totals:
/// "gpuplan: 2 warnings, 1 note; gpuplan explain LABEL for one test" (without the hint for
/// `explain` itself: `of_one_test`). `warnings_printed`: warnings already shown (the fleet's),
/// counted here too.
void print_diagnostic_totals(const Diagnostics& diagnostics, bool list_warnings, bool of_one_test = false,
                             long warnings_printed = 0);

/// The fleet loader's guesses (a model name like a catalog model with a typo), on standard error;
/// under `strict` an InputError naming them, as every guess is. Returns how many it printed, for
/// the totals line.
long print_fleet_warnings(const Fleet& fleet, bool strict = false);

}  // namespace gpuplan::cli
