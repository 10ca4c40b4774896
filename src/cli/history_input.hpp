#pragma once
// `--history FILE` (repeatable; files or bazel-testlogs directories), shared by the commands that plan.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cli/query_input.hpp"
#include "gpuplan/classify.hpp"
#include "gpuplan/diagnostic.hpp"
#include "gpuplan/history.hpp"
#include "gpuplan/rules.hpp"
#include "gpuplan/units.hpp"

namespace gpuplan::cli {

/// Reads every path in order, later ones counting as newer: a file in any history format
/// ("-" is standard input), or a bazel-testlogs directory (each test.xml and
/// test_attempts/attempt_N.xml below it). Skipped bad rows become warnings in `diagnostics`;
/// under `strict` they throw InputError. `shards_now` (by label identity, shard_counts_now) says
/// which shard_N_of_M folders of a bazel-testlogs directory are today's where it holds several.
/// `keep` says whose runs are held (`history show`: one test's); every row is checked all the same.
History read_history_paths(const std::vector<std::string>& paths, bool strict, Diagnostics& diagnostics,
                           const std::map<std::string, int>& shards_now = {}, const LabelFilter& keep = {});

/// What reading the history found, one stderr line each ("gpuplan: warning: FILE: ..." or, of
/// one test, "gpuplan: note: LABEL: ..."), for the commands that print no plan diagnostics: every
/// warning and error, and the first ten notes, then how many more (a note is no guess, and a
/// testlogs folder can give one a file). Returns their count for the command's totals line,
/// "2 warnings, 15 notes".
std::string print_history_diagnostics(const Diagnostics& diagnostics);

/// `--history` read once: nothing without paths.
std::optional<History> read_history_option(const std::vector<std::string>& paths, bool strict,
                                           Diagnostics& diagnostics,
                                           const std::map<std::string, int>& shards_now = {});

/// The shard count of each sharded test (by label identity), for read_history_paths.
std::map<std::string, int> shard_counts_now(const Classification& tests);

/// `--history` of a command that reads a query, read with the shard counts of the query's tests
/// (shard_counts_now), so that stale shard_N_of_M folders give way to today's count as in `plan`.
/// Under --classify-by-deps, which weighs which tests' runs used a GPU, `query.read_history` reads
/// it into `history` once the tests are read and sorted, before any is moved; else nothing is
/// read here, and the command reads it once the tests are classified (read_history_option with
/// shard_counts_now), so that it is not held while the query is read. `history` and `diagnostics`
/// must outlive read_and_classify.
void read_history_for_classifying(const std::vector<std::string>& paths, QueryOptions& query,
                                  const Rules& rules, std::optional<History>& history,
                                  Diagnostics& diagnostics);

/// Where the history and the tests disagree, a warning naming the test (under `strict`, an
/// InputError listing them all): a test with no GPU annotation whose recent runs used a GPU (a
/// GPU tag removed since, or a test that never had one: planned as a CPU test, it runs without
/// one); a sharded GPU test with runs of a shard it has not (1-based shard numbers in a CSV).
void check_history_against_tests(const std::optional<History>& history, const Rules& rules,
                                 Classification& tests, bool strict);

/// The estimator a plan uses: history where there is some, then the fallbacks
/// (size-class median, size default). Without history, the size defaults alone.
Estimator estimator_for(const std::optional<History>& history, const Rules& rules,
                        const Classification& tests);

/// The tests whose recent runs (the rules' history_window) used a GPU → what the runs measured
/// ("GPU used in 2 of 3 measured runs, peak 900 MiB"): QueryOptions::used_gpu.
std::map<std::string, std::string> used_gpu(const std::optional<History>& history, const Rules& rules);

/// A test's shards planned from their other shards' runs (history-p90-other-shards).
struct BorrowingShards {
  int count = 0;            ///< the test's shards
  std::vector<int> shards;  ///< those planned from the others' runs, 0-based
  /// The most memory the others used (their peak, without the headroom): the floor each was given.
  std::optional<std::int64_t> floor_mib;
};
/// By label, as the units print it.
using ShardsFromSiblings = std::map<std::string, BorrowingShards>;

/// `estimate`, noting in `noted` each shard it plans from its test's other shards' runs. A unit
/// of a test planned whole (--shards=whole) has such shards in it too, which its source alone
/// does not tell: it had been called "shard 0", the one of them that had runs.
Estimator noting_shards_from_siblings(Estimator estimate, double vram_headroom, ShardsFromSiblings& noted);

/// Runs the history read that the estimates leave out, counted in the totals line.
struct RunsLeftOut {
  long cached_results = 0;  ///< History::cached_results
  long skipped_runs = 0;    ///< History::skipped_runs
  long given_no_gpu = 0;    ///< GPU tests' recent runs given no GPU (partial_runs)
  long fewer_gpus = 0;      ///< given fewer GPUs than their test needs
  long more_gpus = 0;       ///< given more GPUs than their test asks for now (its count lowered)
  long filtered = 0;        ///< filtered to some test cases
};
RunsLeftOut runs_left_out(const std::optional<History>& history, const Classification& tests, int window);

/// With history paths: one stderr line saying how many GPU units were planned from their own
/// runs (a unit of a test planned whole counts when a shard of it has some), from their test's
/// other shards' runs (with a warning naming the test, its shards so planned and the memory
/// they are given at least, from `siblings`; an error under `strict`), and from their size
/// class's median or the size default, and the runs `left_out` counts. When
/// none was, every duration is a guess the user did not ask for (a history of other labels, an
/// empty file): a warning naming the paths, or under `strict` an InputError. "" without paths or
/// units.
std::string history_coverage(const std::vector<std::string>& paths, const std::vector<Unit>& units,
                             const ShardsFromSiblings& siblings, const RunsLeftOut& left_out, bool strict,
                             Diagnostics& diagnostics);

}  // namespace gpuplan::cli
