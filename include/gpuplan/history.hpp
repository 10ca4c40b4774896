#pragma once
// Learning durations and GPU memory from past runs (SPEC section 3): Bazel's Build Event
// Protocol JSON, the JUnit test.xml files in bazel-testlogs, and a simple CSV/JSON table.
// `gpuplan plan --history` reaches this through src/cli/history_input.hpp.
#include <compare>
#include <cstdint>
#include <functional>
#include <istream>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/classify.hpp"
#include "gpuplan/diagnostic.hpp"
#include "gpuplan/rules.hpp"
#include "gpuplan/symbol.hpp"
#include "gpuplan/units.hpp"

namespace gpuplan {

/// One measured attempt of a test, or of one shard of it.
struct Sample {
  double seconds = 0;
  /// The attempt hit its timeout: it would have run at least `seconds`. A lower bound,
  /// never part of the percentile.
  bool timed_out = false;
  std::optional<std::int64_t> peak_vram_mib;  ///< per GPU, as measured
  std::optional<std::int64_t> start_ms;       ///< when it started (ms since the epoch), if the input says
  /// Whether any of its processes was on a GPU (results records' gpu_touched); empty: not measured.
  std::optional<bool> gpu_touched;
  Symbol node;  ///< where it ran (results records' node); empty when the input does not say
  /// It ended with a failure (an exit status other than 0, Bazel's FAILED): it may have stopped
  /// before its GPU work, so its peak may fall short of what a whole run needs.
  bool failed = false;
  /// Its peak is memory its framework took up front, not what it needs (results records'
  /// peak_up_front: JAX or TensorFlow held up_front_share or more of its GPU).
  bool peak_up_front = false;
  /// It was given no GPU (results records' gpus empty: run-under's --unplanned=warn ran it with
  /// CUDA_VISIBLE_DEVICES empty) and used none. A test that needs GPUs mostly skips its GPU work so:
  /// its time is not the test's, and estimates of GPU tests leave such runs out.
  bool given_no_gpu = false;
  /// How many GPUs it was given (results records' gpus); empty where the input does not say. A
  /// run given fewer than its test needs (--missing-gpus=warn on a machine with only some of the
  /// planned GPUs) skipped or shrank its multi-GPU work: estimates of such a test leave it out.
  std::optional<int> gpus_given = std::nullopt;
  /// How many GPUs its test asked for when it ran (results records' gpus_asked); empty where the
  /// input does not say. A run given all of them and fewer than its test needs now is of the test's
  /// older GPU count; given fewer than them, of a machine short of GPUs.
  std::optional<int> gpus_asked = std::nullopt;
  /// It ran only some of its test cases (Bazel's --test_filter, a --test_arg of --gtest_filter or
  /// pytest's -k): its time is not the test's, and estimates leave it out.
  bool filtered = false;
  /// Its time is Bazel's own (the test.xml Bazel wrote for a test that wrote none, or its
  /// test.cache_status), counted from when Bazel launched the test's --run_under: a wait for GPUs
  /// that run-under's line in the test's log names (LaunchWait) is in it.
  bool timed_by_bazel = false;
  /// It ran to its end and passed: its peak is what a run of the test needs.
  bool ran_through() const { return !timed_out && !failed; }
  /// It measured the memory its run used: a peak, but not the 0 MiB of a run on a GPU (its
  /// processes may have held none yet when sampled).
  bool measured_memory() const { return peak_vram_mib && !(*peak_vram_mib == 0 && gpu_touched == true); }
  /// What it says of GPU use: true when it was on a GPU (gpu_touched, or a peak above 0, whatever
  /// the column says: a merged history), false when it ran a second or more and never was, and
  /// nothing when it was not measured or ran shorter: NVML is sampled every 0.2 s, so a shorter
  /// run may have used a GPU between samples (as exec's own check leaves such units out).
  std::optional<bool> gpu_use() const {
    if (gpu_touched.value_or(false) || peak_vram_mib.value_or(0) > 0) return true;
    if (gpu_touched && seconds >= 1) return false;
    return std::nullopt;
  }
  bool operator==(const Sample&) const = default;
};

/// The share of a GPU's memory at or above which run-under and exec take a peak of JAX or
/// TensorFlow for memory taken up front (results records' peak_up_front): JAX takes 75% of the
/// GPU at its first operation (XLA_PYTHON_CLIENT_PREALLOCATE), TensorFlow nearly all of it
/// (unless TF_FORCE_GPU_ALLOW_GROWTH). Measured on an H200: a JAX test holding a 1 GiB array
/// peaked at 107,918 of 143,771 MiB.
constexpr double up_front_share = 0.74;

/// The unit a sample belongs to.
struct SampleKey {
  std::string label;         ///< canonical_label(): "@//a:b" and "//a:b" are one test
  std::optional<int> shard;  ///< 0-based like TEST_SHARD_INDEX; empty for an unsharded test
  // NOLINTNEXTLINE(modernize-use-nullptr): clang-tidy 14 misreads a defaulted <=>
  auto operator<=>(const SampleKey&) const = default;
};

/// Samples read from one or more inputs, in input order within each unit.
struct History {
  std::map<SampleKey, std::vector<Sample>> samples;
  std::map<std::string, int> shard_counts;  ///< by canonical label, where an input said
  long cached_results = 0;                  ///< cached BEP results, ignored: they measured an older run
  /// JUnit runs in which every test case was skipped (pytest's skip, GTEST_SKIP: a GPU test that
  /// found no GPU skips itself), ignored: they measured none of the test's work.
  long skipped_runs = 0;
  /// Tests whose shard count a newer input changed: by label, the older count and how many runs
  /// of its shards were left out. They measured shards of another size (8 shards of 12 s read
  /// beside 2 of 50 s planned each new shard at 39 s).
  std::map<std::string, std::pair<int, long>> other_shard_counts;
  /// By test: the latest start among the runs of its current shard count, where they say.
  std::map<std::string, std::int64_t> shard_count_latest_ms;

  /// Records a test's shard count as of a run read next (started at `start_ms`, where it says).
  /// Where it had another, the runs of the older count are left out (other_shard_counts): they
  /// measured shards of another size. Older by start time where the runs say, else by order:
  /// false when the run read next is the older one, to be left out itself.
  bool set_shard_count(const std::string& label, int count,
                       std::optional<std::int64_t> start_ms = std::nullopt);
  /// Appends `newer` after this history: with no start times, later inputs are newer. Where
  /// `newer` gives a test another shard count than this history, this history's runs of its
  /// shards are left out (other_shard_counts); its runs of the whole test stay.
  void merge(const History& newer);
  /// The same, taking `newer`'s samples whole when this history is empty (the first input:
  /// no copy of a large history beside itself).
  void merge(History&& newer);
  long sample_count() const;
  /// merge(), leaving out each sample of `newer` with a start time that repeats one of this
  /// history's field for field: one run read again from another input (a file given twice, a
  /// rolling history fed the results file it was made from), which counted as two and pushed
  /// real runs out of the window. Repeats within one input (runs of --runs_per_test started in
  /// the same second) are kept. Returns how many were left out.
  long merge_new(History&& newer);
  /// Leaves out every test whose newest run started more than `max_age_ms` before the newest
  /// run of the whole history: a test removed from the repository, or moved to another label,
  /// whose runs a rolling history kept for ever. By the runs' own start times, not the clock, so
  /// the same history gives the same result; a test with a run of no start time (JUnit, a
  /// hand-written row) is kept, its age unknown. Returns how many tests were left out.
  long drop_tests_older_than(std::int64_t max_age_ms);
};

/// What one input gave: its samples and, if rows were skipped, one warning that counts them.
struct HistoryRead {
  History history;
  Diagnostics diagnostics;
};

enum class HistoryFormat {
  bep,    ///< bazel test --build_event_json_file: one JSON event a line
  junit,  ///< test.xml as Bazel, gtest or pytest write it
  csv,    ///< header with label,seconds and optionally
          ///< shard,peak_vram_mib,start,exit_status,node,gpu_touched,peak_up_front
  json,   ///< rows as a JSON array or one object a line, or the file `history summarize` writes
};
std::string_view to_string(HistoryFormat format);

/// Tells the formats apart by their first bytes.
HistoryFormat detect_history_format(std::string_view head);
/// Why the first bytes are no history format at all (binary data: a NUL or another control
/// byte), or lay one out as gpuplan cannot read it (build events pretty-printed or in an array,
/// as jq writes them), naming what they look like; "" for a readable one.
std::string history_head_problem(std::string_view head);

/// Where a test.xml sits under bazel-testlogs, which says whose it is:
/// "ml/train_test/shard_2_of_4/test.xml" is shard 1 of 4 of //ml:train_test.
struct TestLogPath {
  std::string label;
  std::optional<int> shard;  ///< 0-based
  int shard_count = 1;
  int attempt = 0;  ///< N for test_attempts/attempt_N.xml (earlier attempts); 0 for test.xml (the last)
};

/// `relative` is the path below bazel-testlogs; "external/repo/pkg/name/..." is "@repo//pkg:name".
/// Nullopt for anything that is not a test.xml or an attempt_N.xml.
std::optional<TestLogPath> parse_testlog_path(std::string_view relative);

/// What Bazel's `test.cache_status` beside a final test.xml says of the run (the test action's
/// `TestResultData`, src/main/protobuf/test_status.proto). Bazel judges a run by the test's exit
/// status, test.xml by what the test wrote before it ended: a test that writes a passing XML and
/// then crashes or hangs at exit (CUDA or NCCL teardown) is FAILED or TIMEOUT to Bazel, passed in
/// its test.xml.
struct BazelCacheStatus {
  /// BlazeTestStatus: 1 PASSED, 2 FLAKY, 3 TIMEOUT, 4 FAILED, 5 INCOMPLETE, ...; 0 when not set.
  int status = 0;
  std::optional<std::int64_t> run_duration_ms;  ///< run_duration_millis: the action's own time
  static constexpr int passed = 1;
  static constexpr int flaky = 2;
  static constexpr int timeout = 3;
  static constexpr int failed = 4;
};
/// Reads the fields above from the file's bytes; nullopt when they are not a protocol buffer
/// message (cut short, or another file).
std::optional<BazelCacheStatus> read_bazel_cache_status(std::string_view bytes);

/// A test.cache_status file as read_junit is handed it: its name (for messages) and bytes.
struct BazelCacheStatusFile {
  std::string name;
  std::string bytes;
};
/// Reads the test.cache_status beside a final test.xml; nullopt where there is none. read_junit
/// calls it only where that test.xml cannot be read as XML, so a directory of good files reads
/// no more than before. Empty for an attempt's XML, beside which Bazel keeps none.
using BazelCacheStatusReader = std::function<std::optional<BazelCacheStatusFile>()>;

/// What `run-under` says in a test's log where the test waited for its GPUs before it started:
/// Bazel times a test from when it launches its --run_under, so the time its test.xml and build
/// events give holds that wait (a test queued behind another on its GPU), and history takes it
/// out. Before, a 3.6 s test that waited 3.1 s for its GPU was planned at 6.7 s.
struct LaunchWait {
  double seconds = 0;            ///< from run-under's launch to the test's start
  std::int64_t launched_ms = 0;  ///< when run-under was launched (ms since 1970)
};
/// The line run-under writes to the test's log (no line end): it starts
/// "gpuplan run-under: waited 3.085 s for GPUs 0 (launched 2026-12-06T17:14:54.915Z) before ".
std::string launch_wait_line(const LaunchWait& wait, std::string_view label, std::string_view gpus);
/// The first such line at the start of a line of `log` (the head of a test.log); nullopt where
/// there is none.
std::optional<LaunchWait> find_launch_wait(std::string_view log);
/// The head of the test.log a build event names by path, for read_bep, where that file was last
/// written at or before `written_by_ms` (ms since 1970: the attempt's end, with a margin); nullopt
/// where it was written later (a later run of the test writes over it: concatenated builds' events
/// name one log many times), or cannot be read. A line is used only where its launch falls within
/// the result's attempt.
using TestLogReader =
    std::function<std::optional<std::string>(const std::string& path, std::int64_t written_by_ms)>;
/// How many bytes of a test.log are read for that line: run-under writes it before the test starts,
/// after the three lines of Bazel's test-setup.sh.
constexpr std::size_t launch_wait_log_head = 4096;

/// Which tests' runs a reader keeps: one test's (`history show`), or every test's (empty). The
/// rows of the others are still read and checked, a bad one as bad as before (the file is bad),
/// and then dropped: one test's runs are held, not a monorepo's.
struct LabelFilter {
  std::string label;  ///< label_identity() of the test kept; empty: every test
  bool keeps(std::string_view identity) const { return label.empty() || identity == label; }
};

/// Readers. `name` is the file name in error positions ("file:line: what is wrong").
/// A bad row throws InputError under `strict`; otherwise it is skipped and counted. `keep`
/// says whose runs go into the history; the diagnostics are the same whatever it keeps, but for
/// BEP's resent results, which are told apart (noted, and counted once) only in the tests it
/// keeps: telling one apart takes memory for each result read.
/// `test_log`, where given, reads the test.log each result names, to take run-under's wait for GPUs
/// out of its time (LaunchWait).
HistoryRead read_bep(std::istream& in, const std::string& name, bool strict, const LabelFilter& keep = {},
                     const TestLogReader& test_log = {});
/// JUnit: a file that is not well-formed XML (empty; cut short by a test that crashed or was timed
/// out while writing its own; Bazel 4's own XML of a test whose name holds &, < or ") is a bad row,
/// unless `cache_status` gives a test.cache_status with a status and a run time: then the run is
/// read from it, with a note.
HistoryRead read_junit(std::istream& in, const std::string& name, const TestLogPath& test, bool strict,
                       const LabelFilter& keep = {}, const BazelCacheStatusReader& cache_status = {});
/// csv or json. A CSV, and JSON with one row object a line, are read as a stream, a line at a
/// time; a JSON array or a summarize file is one document, read whole.
HistoryRead read_table(std::istream& in, const std::string& name, bool strict, const LabelFilter& keep = {});

/// How Bazel says one attempt of a test ended: a testResult event of its build events.
struct BepOutcome {
  std::string label;
  int run = 1, shard = 1, attempt = 1;  ///< 1-based, as the event's id counts them
  std::string status;                   ///< "PASSED", "FAILED", "TIMEOUT", ... ("NO_STATUS" when left out)
  bool cached = false;                  ///< Bazel took it from its cache: no test ran
  double seconds = 0;                   ///< the attempt's duration (0 when the event has none)
  std::string test_log;                 ///< the test.log path its file:// URI names; "" when none
  /// It ran only some of its test cases: the invocation's command line (.bazelrc options
  /// included) filtered it, as read_bep marks Sample::filtered.
  bool filtered = false;
};
/// How a build's tests ended, from its --build_event_json_file.
struct BepOutcomes {
  std::vector<BepOutcome> results;                    ///< every testResult event, in file order
  std::map<std::string, std::string> overall_status;  ///< label → its testSummary's overallStatus
};
/// Lenient: a line that is no JSON event (the last one of a build cut short) and events of
/// other kinds are skipped.
BepOutcomes read_bep_outcomes(std::istream& in);

/// The `history summarize` file: the last `window` samples of every unit, oldest first.
/// read_table reads it back. The same history always gives the same bytes.
std::string summarize(const History& history, int window);
/// The same text handed to `write` in pieces as it is produced, for a file of any size.
void write_summary(const History& history, int window, const std::function<void(std::string_view)>& write);

/// A unit's samples oldest first (by start time when every one has it, else in input order),
/// keeping the last `window`.
std::vector<Sample> recent_samples(std::vector<Sample> samples, int window);
/// The samples a unit's estimate uses, oldest first: its last `window` (the durations) and, older
/// than them, those among its newest `window` that measured memory (the memory). Newer runs
/// without a peak (BEP, JUnit, CSV without the column) do not push a measured peak out: they
/// had left a test that peaked at 30,000 MiB with its memory unknown, planned on a 24 GB GPU.
std::vector<Sample> window_samples(std::vector<Sample> samples, int window);

/// The shortest duration a plan gives a unit: a measured 0 (Bazel's test.xml rounds down to
/// whole seconds) must not make a zero-length unit. `history show` says the same.
inline constexpr double min_planned_seconds = 0.001;

/// A unit's estimate from its own samples: the rules' percentile (default p90) of the
/// durations among its last `history_window` attempts, and the largest peak VRAM among its
/// newest `history_window` that measured memory (window_samples) plus the VRAM headroom (peaks
/// taken up front left out). Empty without samples; a unit that only timed out
/// gets the longest timeout as `seconds` with source "history-timeout" (a lower bound).
std::optional<Estimate> estimate_from_samples(const std::vector<Sample>& samples, const Rules& rules);

/// Why a run measured only part of its test's work, which leaves it out of the test's duration.
enum class PartialRun {
  whole,         ///< it measured the test: its time counts
  filtered,      ///< it ran only some test cases (Sample::filtered)
  given_no_gpu,  ///< a GPU test's run given no GPU (Sample::given_no_gpu)
  fewer_gpus,    ///< given some GPUs, fewer than the test needs (Sample::gpus_given)
  /// given more GPUs than the test asks for now: a run of a time it asked for more (gpu:2, now
  /// gpu), whose time and memory a GPU each are not the test's on fewer
  more_gpus,
};
/// What a run measured of a test that needs `gpus` GPUs: 0 for a CPU test, nullopt where the
/// need is unknown (a test the query does not name), which leaves out only filtered runs.
/// `takes_more`: the test is given every GPU of its node (Requirement::takes_every_node_gpu), so
/// a run given more than `gpus` is whole.
PartialRun partial_run(const Sample& sample, std::optional<int> gpus, bool takes_more = false);
/// The GPUs a classified test's units need: its requirement's count for a GPU test (at least
/// one), 0 for any other.
int gpus_needed(const ClassifiedTest& test);

/// Of a unit of a test needing `gpus` GPUs, the samples its estimate uses: the whole runs.
std::vector<Sample> whole_runs(const std::vector<Sample>& samples, std::optional<int> gpus,
                               bool takes_more = false);

/// The test-case filter a test's arguments give it as googletest and pytest read them
/// (`--gtest_filter=PATTERNS` other than `*`, `-k EXPRESSION`, `-kEXPRESSION`), or "" for none.
/// `pytest` false: the program is not pytest (a compiled test, whose -k is its own option), and
/// only googletest's filter counts.
std::string test_case_filter(const std::vector<std::string>& args, bool pytest);
/// The filter a `bazel test` command line sets a test (BEP's optionsParsed cmdLine, each option
/// `--name=value`): the last `--test_filter` (the test's TESTBRIDGE_TEST_ONLY), else what its
/// `--test_arg`s give it (test_case_filter; `pytest` false for a test whose program is not
/// pytest, test_kind_may_run_pytest), or "" for none.
std::string bazel_test_filter(const std::vector<std::string>& options, bool pytest = true);
/// Whether a test of a kind as BEP's targetConfigured event names it ("cc_test rule") may run
/// pytest, whose -k a --test_arg may be: false for the compiled tests' kinds (cc_test, go_test,
/// rust_test, java_test), whose program is the binary the rule built, which gives -k its own
/// meaning if any; true for py_test, sh_test (a script may run pytest) and every other kind.
bool test_kind_may_run_pytest(std::string_view target_kind);

/// One test's recent runs that measured only part of its work, which its estimate leaves out.
struct PartialRuns {
  long given_no_gpu = 0;       ///< among the newest `window` of each of its units
  long fewer_gpus = 0;         ///< given fewer GPUs than `needs`
  int fewest_gpus = 0;         ///< the fewest GPUs such a run was given
  long fewer_as_asked = 0;     ///< of those, the runs given all their test asked for then (gpus_asked)
  long fewer_than_asked = 0;   ///< of those, the runs given fewer than it asked for then: a machine's
  long fewer_after_whole = 0;  ///< of the others (no gpus_asked), the runs after a whole run of their unit
  long fewer_last = 0;         ///< of the others, the runs no whole run of their unit came after (neither
                               ///< these nor those: runs of a count raised since)
  long more_gpus = 0;          ///< given more GPUs than `needs` (of a time it asked for more)
  int most_gpus = 0;           ///< the most GPUs such a run was given
  int needs = 0;               ///< the GPUs the test needs
  long filtered = 0;           ///< filtered to some test cases
  long recent = 0;             ///< the newest `window` of each of its units, these included
  bool every_run = false;      ///< no run of the test was whole: it is planned as one without history
  long left_out() const { return given_no_gpu + fewer_gpus + more_gpus + filtered; }
};
/// By canonical label, each GPU test of `tests` (bucket gpu: the tests a plan places) of which a
/// recent run (the newest `window` of each unit) measured only part of its work (partial_run); the
/// others are left out.
std::map<std::string, PartialRuns> partial_runs(const History& history, const Classification& tests,
                                                int window);

/// The largest peak of `label`'s recent runs (any shard, window_samples of each) when every
/// peak among them is memory taken up front (Sample::peak_up_front): the test's need is then
/// unknown. Empty when a run measured a peak of its own, or none measured any.
std::optional<std::int64_t> up_front_peak(const History& history, const std::string& label, int window);

/// What results records measured of one test's GPU use (gpu_touched, peak_vram_mib) in its
/// recent runs, all shards together.
struct GpuUse {
  long runs = 0;     ///< runs that say whether it used a GPU
  long touched = 0;  ///< runs whose gpu_touched was true (or whose peak VRAM was above 0)
  std::int64_t peak_vram_mib = 0;
};
/// One test's measured GPU use (canonical label) over the last `window` runs of each of its
/// units; nullopt when no run says.
std::optional<GpuUse> measured_gpu_use(const History& history, std::string_view label, int window);
/// Every test's, by canonical label; tests with no run that says are left out.
std::map<std::string, GpuUse> measured_gpu_use(const History& history, int window);
/// Of a test (canonical label) whose recent runs (the newest `last` of each unit) say it touched
/// no GPU, how many whole runs show that (of a sharded test the fewest of any shard, runs of the
/// whole test counting for each); nullopt when one touched a GPU or none says.
std::optional<long> untouched_runs(const History& history, const std::string& label, int shard_count,
                                   int last);
/// "GPU used in 2 of 3 measured runs, peak 900 MiB"
std::string to_string(const GpuUse& use);

/// The end of the source of a shard's estimate that is an even share of its test's whole-test
/// runs (from before it was sharded): "history-p90-whole-resharded". It ends in "-resharded", as
/// every resharding guess's source does, which the plan warns of.
inline constexpr std::string_view whole_resharded_suffix = "-whole-resharded";

/// The planner's estimator: a unit's history (its whole runs, whole_runs); for a test without history the
/// median of the history estimates of the GPU tests of its size class in `tests` ("size-median"); then
/// `fallback` (the size defaults). A lower bound from timeouts is never undercut, and no
/// estimate is zero.
Estimator history_estimator(const History& history, const Classification& tests, const Rules& rules,
                            Estimator fallback);

/// A GPU test as `history suggest` judges it: what it asks for and where it was planned.
struct AdvisedTest {
  std::string label;                        ///< canonical_label()
  std::optional<std::int64_t> gpu_mem_mib;  ///< its declared gpu-mem
  std::string gpu_mem_source;  ///< the annotation that declared it ("tag gpu-mem:40GiB"), if known
  /// The plan's gpu_mem_mib is a floor history set ("gpu_mem_measured"), which replaced any
  /// gpu-mem the test declares: what it declares is unknown, not none, so no change may say
  /// "add tag" (it may have one).
  std::optional<std::int64_t> gpu_mem_floor_mib;
  std::string cpu_change;    ///< the edit that sends it to the CPU bucket ("add tag cpu-only")
  std::string planned_node;  ///< where the plan put it; empty when unknown
  int shard_count = 1;       ///< its shards now (plan or query): each must have been measured
};

/// The knobs of `history suggest`.
struct AdviceOptions {
  int last = 10;     ///< the runs that count: each unit's newest this many
  int min_runs = 3;  ///< measured runs (gpu_touched known) a test needs before it is called CPU-only
  double vram_headroom = 0.15;
  double over_factor =
      2;  ///< a declared gpu-mem this many times the measured need (and 1 GiB more) is far above
  /// The smallest GPU memory of each node (from the fleet): the memory a measured peak is held against.
  std::map<std::string, std::int64_t, std::less<>> node_vram_mib;
  /// The fleet's largest GPU memory (0: no fleet given): no gpu-mem above it is suggested.
  std::int64_t largest_gpu_mib = 0;
};

enum class AdviceKind {
  never_touched_gpu,  ///< no GPU touched in any measured recent run: a candidate for the CPU bucket
  near_capacity,      ///< peak within the headroom of its GPU's memory: ask for a bigger GPU
  gpu_mem_too_high,   ///< declared gpu-mem far above the measured peak: ask for less
  memory_up_front,    ///< no gpu-mem, and every peak is memory taken up front: its need is unknown
};
/// "never-touched-gpu", "near-capacity", "gpu-mem-too-high", "memory-up-front"
std::string_view to_string(AdviceKind kind);

/// One piece of advice about one test, with the exact edit.
struct Advice {
  AdviceKind kind = AdviceKind::never_touched_gpu;
  std::string label;
  long runs = 0;  ///< recent runs with a measurement (gpu_touched for the first kind, peak VRAM else)
  std::optional<std::int64_t> peak_vram_mib;  ///< the largest recent peak
  std::optional<std::int64_t> gpu_vram_mib;   ///< near_capacity: the memory of the smallest GPU it ran on
  std::string node;                           ///< near_capacity: the node of that GPU
  std::string peak_node;                      ///< near_capacity: where the peak was measured (may be empty)
  std::optional<std::int64_t>
      peak_gpu_vram_mib;                     ///< near_capacity: that node's GPU memory, if the fleet lists it
  std::optional<std::int64_t> declared_mib;  ///< its declared gpu-mem
  std::optional<std::int64_t> suggested_mib;  ///< the gpu-mem to ask for: the peak plus headroom, in
                                              ///< whole GiB, or the fleet's largest GPU when that is less;
                                              ///< empty when no GPU of the fleet is larger
  std::string change;  ///< the edit: "add tag cpu-only", "replace tag gpu-mem:40GiB with gpu-mem:6GiB"
};

struct HistoryAdvice {
  std::vector<Advice> advice;  ///< by kind, then label
  long tests = 0;              ///< GPU tests judged
  long measured = 0;           ///< of them, with a recent run that measured GPU use or memory
  /// Warnings, one a test: a peak held against no GPU because the fleet lacks the node it ran on.
  Diagnostics unjudged;
};

/// Judges each test by the last `options.last` samples of each of its units.
HistoryAdvice advise(const History& history, const std::vector<AdvisedTest>& tests,
                     const AdviceOptions& options);

}  // namespace gpuplan
