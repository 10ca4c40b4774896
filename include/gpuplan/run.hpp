#pragma once
// Running a plan: the decisions shared by `run-under`, `exec` and the Slurm export.
// Everything here takes values and returns values; the processes, signals and lock
// files themselves live in src/run/os.hpp.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/fleet.hpp"
#include "gpuplan/plan.hpp"

namespace gpuplan {

/// `value` as one POSIX shell word: unchanged when it is made of safe characters only
/// (letters, digits, `/._-:,=+@%`), else in single quotes with each `'` written `'\''`.
std::string shell_quote(std::string_view value);

/// The assignments planned on `node`, in plan order: by planned start, then first GPU, then unit id.
std::vector<Assignment> node_assignments(const Plan& plan, std::string_view node);

/// What `run-under` and `exec` run a unit with: planned_env() and CUDA_DEVICE_ORDER=PCI_BUS_ID;
/// the unit's GPU list also in ZE_AFFINITY_MASK (Intel's Level Zero, with
/// ZE_ENABLE_PCI_ID_DEVICE_ORDER=1), HIP_VISIBLE_DEVICES and GPU_DEVICE_ORDINAL (ROCm's HIP and
/// OpenCL), and for a unit without GPUs lists that show none there (all three read an empty list
/// as every GPU: ZE_AFFINITY_MASK an index past any device, the other two -1); for a shard,
/// GTEST_SHARD_INDEX and GTEST_TOTAL_SHARDS too, as Bazel's test-setup.sh derives them from TEST_SHARD_INDEX
/// and TEST_TOTAL_SHARDS (googletest reads only its own names, so a gtest binary run outside Bazel would run
/// every case in every shard). The plan's GPU indices are nvidia-smi's and NVML's (the fleet's, and those the
/// NVML checks and samples), in PCI bus order; CUDA numbers GPUs fastest first unless told otherwise, so an
/// index in CUDA_VISIBLE_DEVICES could name another GPU than the planned one (not the NVLink partner the plan
/// chose, not the one NVML checked). `export kubernetes` sets it in the pod for the same reason.
std::map<std::string, std::string> command_env(const Assignment& assignment, bool shares_gpu);

/// The variables that choose a unit's GPUs or its shard: a unit gets them from command_env() or
/// not at all, never from the environment of whoever started run-under or exec (a caller's
/// HIP_VISIBLE_DEVICES, which HIP reads before CUDA_VISIBLE_DEVICES, would put an AMD test on
/// another test's GPU; a caller's TEST_SHARD_INDEX would make an unsharded gtest run a third of
/// its cases and pass).
bool chosen_by_plan(std::string_view name);

/// Why a caller's ONEAPI_DEVICE_SELECTOR (SYCL's and oneAPI's device filter) would hide some of
/// the `gpus` GPUs a unit is given, or "" where it hides none. SYCL numbers the devices a unit's
/// lists show it (ZE_AFFINITY_MASK for Level Zero and Intel's OpenCL, CUDA_VISIBLE_DEVICES,
/// HIP_VISIBLE_DEVICES) from 0, so a device number counts among the unit's own GPUs: `level_zero:0`
/// shows a unit of 2 GPUs one of them, and `level_zero:1` a unit of 1 none. Also a selector of only
/// cpu or fpga devices, a discarded number, or every backend's GPUs discarded (`!*:gpu`). One that
/// names backends only (`level_zero:*`, `opencl:gpu`, `!opencl:*`) hides none: it chooses the
/// runtime. No selector can show a unit more than its lists do; a unit without GPUs has none to hide.
std::string oneapi_selector_hides_gpus(std::string_view selector, std::size_t gpus);

/// Whether the caller's `name=value` reaches a unit whose command_env() is `env`: not a variable
/// the plan chooses (chosen_by_plan) or `env` sets, nor an empty ROCR_VISIBLE_DEVICES (ROCr reads
/// a set one, even empty, as its list: no GPU), nor an ONEAPI_DEVICE_SELECTOR that would hide some
/// of the unit's GPUs (oneapi_selector_hides_gpus; the unit's GPUs are its CUDA_VISIBLE_DEVICES).
bool inherited_by_unit(std::string_view name, std::string_view value,
                       const std::map<std::string, std::string>& env);

/// Which of a plan's labels name the test a launch names: those equal to it as canonical_label
/// writes both, when the plan has one; else those of its label_identity (a bzlmod canonical
/// repository name against its apparent one). So "@@foo~1.0//t:x" and "@@foo~2.0//t:x" (two
/// versions of one module, one identity) stay two tests: the second ran on the first's GPUs, and
/// under --claims not at all, taking the first's result. A label the plan lacks exactly whose
/// identity names two of its tests (Bazel 6's TEST_TARGET "@foo//t:x" for both) is ambiguous.
class LabelMatch {
 public:
  LabelMatch(const Plan& plan, std::string_view label);
  bool operator()(std::string_view other) const;
  /// The plan's tests the label could name when it is ambiguous, else empty.
  const std::set<std::string>& ambiguous() const { return candidates_; }

 private:
  std::string exact_, identity_;
  bool by_identity_ = true;
  std::set<std::string> candidates_;
};

/// Where a test stands in a plan for one node, as `run-under` decides whether to run it.
struct TestPlacement {
  enum class Kind {
    planned,  ///< on this node: `assignment` holds its GPUs
    cpu,      ///< in the plan's CPU bucket: runs on any node with no GPU visible
    refused,  ///< it would run without the GPUs it needs: `reason` says why
    unknown,  ///< not in the plan at all: the caller may classify it by its tags
  };
  Kind kind = Kind::unknown;
  std::optional<Assignment> assignment;
  std::string reason;  ///< for `refused`: "is planned on node b, not a", ...
};

/// Never a GPU test without its GPUs: a test (or shard) is refused when `node` has no units in
/// the plan, when it is planned on another node, unschedulable or skipped by the plan.
TestPlacement place_test(const Plan& plan, std::string_view node, std::string_view label,
                         std::optional<int> shard_index);

/// The GPUs of `node` among `free` on which a unit planned elsewhere can run here: every
/// requirement checked against this node (memory as the planner reserves it, model, compute
/// capability, CUDA), an NVLink set of this node when it needs one, else the lowest eligible
/// indices; with `holds_node`, only when all are free, and every one it may use for a unit given
/// every GPU of the node it holds (Requirement::takes_every_node_gpu). nullopt: not here, not now.
std::optional<std::vector<int>> gpus_here(const Assignment& assignment, const Node& node,
                                          const std::vector<int>& free, bool holds_node = false);

/// The GPUs a node has as far as the plan knows: 1 + the highest index planned on it (0 if none).
int planned_gpu_count(const Plan& plan, std::string_view node);

/// The GPUs of `node` that exec and run-under run on: a unit that holds the whole node holds
/// all of them, and dynamic execution chooses among them. With the fleet's node (--fleet,
/// named `fleet_path` in messages) its GPUs, which must include every GPU the plan uses there
/// (else InputError); without it 0 .. the highest index the plan uses there.
std::vector<int> run_node_gpus(const Plan& plan, std::string_view node, const Node* fleet_node,
                               const std::string& fleet_path);

/// The lowest GPU index below `planned` (a planned_gpu_count) that the fleet's node lacks: a
/// plan made for another fleet, which exec refuses (run_node_gpus) and so does every export.
std::optional<int> first_missing_gpu(int planned, const Node& fleet_node);

/// Checks that the plan at `plan_path` gives `assignment` what it needs before it runs, so that
/// a hand-edited or broken plan never runs a GPU test on no GPU or on one GPU twice: at least
/// one GPU, as many as its requirement asks, none listed twice or negative, and a label. Throws InputError
/// naming the plan, unit and node (`gpuplan verify` says all that is wrong with a plan).
/// With `index`, its place in the plan's assignments, the error is a JsonValueError at
/// "assignments[INDEX]", whose line the CLI finds (at_plan_lines).
void check_launchable(const Assignment& assignment, const std::string& plan_path,
                      std::optional<std::size_t> index = std::nullopt);

/// Checks that no unit is planned twice (on one node or two), which would run it twice, and that
/// the shards of a test agree on their count (TEST_TOTAL_SHARDS: with two counts, some of its
/// cases would run twice and others never). Throws InputError naming the plan, the unit and both
/// nodes or counts: a JsonValueError at the second unit ("assignments[N]").
void check_planned_once(const Plan& plan, const std::string& plan_path);

/// Seconds a unit may run: its `timeout` attribute (short 60, moderate 300, long 900,
/// eternal 3600), else Bazel's default for its size (small, medium, large, enormous).
int timeout_seconds(const Unit& unit);

/// The time beyond its planned end a launcher's limit must leave each node: Bazel runs a test
/// marked `flaky` up to three times, so two more runs of each flaky unit, which delay what runs
/// after it on its GPUs (and through a unit on several GPUs, what runs after that on the others).
/// Nodes without flaky units are left out.
std::map<std::string, double> rerun_allowance_s(const Plan& plan);

/// A command template with `{label}`, `{unit}`, `{gpus}`, `{shard_index}` and `{shard_count}`
/// replaced by the unit's values, each shell-quoted. `{{` and `}}` are literal braces.
/// Throws InputError naming `option` for an unknown placeholder or an unmatched brace.
std::string expand_command(std::string_view command_template, const Assignment& assignment,
                           const std::string& option = "--command");

/// The container runtime ("docker", "podman", "nerdctl") a command template starts a container
/// with (`docker run ...`, `podman container run ...`) without handing it the unit's GPUs: it names
/// none of {gpus}, CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES. A container does not inherit
/// exec's environment, so the unit's CUDA_VISIBLE_DEVICES never reaches it, and `--gpus all` gives
/// it every GPU of the node. nullopt for any other template.
std::optional<std::string> container_without_unit_gpus(std::string_view command_template);

/// The same for a pack plan's units that share a GPU: the runtime of a container the template
/// starts without passing it TF_FORCE_GPU_ALLOW_GROWTH and XLA_PYTHON_CLIENT_PREALLOCATE (it
/// names neither), so that TensorFlow and JAX in it take most of the shared GPU's memory.
std::optional<std::string> container_without_sharing_env(std::string_view command_template);

/// What `exec` runs when no --command is given: one `bazel test` of all the node's labels,
/// with a --run_under that is the same string on every node and every run (the node comes
/// from a file), so Bazel keeps its analysis cache and cached test results.
struct BazelRun {
  std::string gpuplan;    ///< the gpuplan binary, absolute
  std::string plan;       ///< the plan, absolute
  std::string node_file;  ///< run-under reads the node's name from it
  std::string lock_dir;
  std::optional<std::string> results;  ///< absolute
  /// Where Bazel writes its build events (--build_event_json_file), which exec's --junit is
  /// made from; empty when not asked or when the team's own options name the file.
  std::optional<std::string> build_events;
  std::optional<std::string> fleet;     ///< absolute: the node's GPUs, those the plan leaves idle too
  int jobs = 1;                         ///< --local_test_jobs: the node's GPUs
  std::vector<std::string> bazel_args;  ///< the team's own options (--config=cuda), first
  /// exec's --missing-gpus=warn, passed on: run-under, which checks each test again, would
  /// otherwise refuse every test on a GPU this machine lacks after exec had said it runs them.
  bool warn_missing_gpus = false;
  /// exec's --query and --rules (absolute), passed on: the tests at the commit Bazel runs, so that
  /// run-under refuses one whose tags ask for more than the plan, made earlier, gives it.
  std::optional<std::string> query;
  std::optional<std::string> rules;
};

/// The value Bazel's rc files (or the options after them) give an option of `bazel test`.
struct RcOption {
  std::string file;  ///< the rc file; empty: the options given (bazel_args)
  long line = 0;
  std::string config;  ///< the --config its line comes with; empty: every bazel test
  std::string value;
};

/// The value of `option` ("run_under") a `bazel test` with `bazel_args` gets from `rc_files` (in
/// the order Bazel reads them; a file that does not exist is none), their imports (%workspace%
/// is `workspace`), and `bazel_args` after them, as Bazel applies them: the last wins, and a
/// --config expands in place (with --enable_platform_specific_config, the :linux lines too).
/// Nullopt when none gives it.
std::optional<RcOption> rc_option(const std::vector<std::string>& rc_files, const std::string& workspace,
                                  const std::vector<std::string>& bazel_args, const std::string& option);

/// Whether a --run_under value is gpuplan's run-under (as the README's .bazelrc lines give it).
bool is_gpuplan_run_under(const std::string& value);

/// Checks the options a user gives the default `bazel test` (exec's and the exports' arguments
/// after `--`): options only, each as --name=value, since the plan names the tests and a
/// separate value could not be told from a target; and none with --command, whose
/// template says everything it runs. Throws InputError naming the first offender.
void check_bazel_args(const std::vector<std::string>& args, bool with_command);

/// The --run_under value: "GPUPLAN run-under --plan PLAN --node-file F --lock-dir D [--results R]
/// [--fleet F] [--missing-gpus=warn]".
std::string run_under_command(const BazelRun& run);

/// Bazel's test filters, each set to nothing: the tests a plan names all run, whatever a
/// .bazelrc filters out (`test --test_tag_filters=-gpu` keeps GPU tests off CPU CI).
inline constexpr std::string_view no_test_filters =
    "--test_tag_filters= --test_size_filters= --test_timeout_filters= --test_lang_filters=";

/// The default command of a node, and its target file when it needs one.
struct NodeCommand {
  std::string command;
  std::string target_file;       ///< LOCK_DIR/targets-HASH; empty when the labels are on the line
  std::string target_file_text;  ///< the labels, a line each, for target_file
};

/// The longest command gpuplan gives /bin/sh -c: Linux takes one argument of at most 128 KiB.
inline constexpr std::size_t max_command_line = 100'000;

/// `bazel test BAZEL_ARGS --run_under=... --sandbox_writable_path=LOCK_DIR [...]
/// --local_test_jobs=N NO_TEST_FILTERS -- LABELS`, the labels of `units` once each, sorted,
/// everything shell-quoted. The team's options come first, so that what a --config of theirs
/// brings (a --run_under, a test filter) cannot undo gpuplan's. Labels that would make the command
/// longer than max_command_line go to `--target_pattern_file=LOCK_DIR/targets-HASH` instead,
/// named by the hash of its text: two execs sharing a lock directory (two checkouts' CI jobs on
/// one host) each get their own labels, and the same labels the same file on every run.
NodeCommand bazel_node_command(const std::vector<Assignment>& units, const BazelRun& run);

/// The default `bazel test` runs every shard of each test it names, and run-under refuses a shard
/// planned on another node: a test whose shards the plan puts on several nodes fails on each (the
/// other tests run). What to warn of: the first such test among `node`'s (among all when `node` is
/// empty), where its shards are and the ways out (--command; plan --shards=whole); "" when none.
std::string tests_split_over_nodes(const Plan& plan, std::string_view node);

/// One finished unit, as `run-under` and `exec` append it to a results file.
/// How a unit's run ended: on its own, or cut short (its duration is then a lower bound).
enum class RunEnd {
  exited,     ///< it exited, or a signal of its own ended it: exit_status says how
  timed_out,  ///< killed at exec's --timeout: "timeout" in the exit_status column
  stopped,    ///< killed because gpuplan was stopped (Ctrl-C, Bazel's test timeout): "stopped"
};

struct RunRecord {
  std::string label;
  std::optional<int> shard_index;  ///< 0-based, like TEST_SHARD_INDEX; empty when unsharded
  double seconds = 0;
  std::string node;
  std::vector<int> gpus;
  double start_epoch_s = 0;                   ///< when it started, seconds since 1970 (UTC)
  int exit_status = 0;                        ///< the process's exit code, or 128 + the signal that ended it
  std::optional<std::int64_t> peak_vram_mib;  ///< the most GPU memory its processes held on one GPU (NVML)
  std::optional<bool> gpu_touched;  ///< whether any of its processes was on a GPU; empty: not measured
  RunEnd end = RunEnd::exited;
  bool peak_up_front = false;  ///< its peak is memory JAX or TensorFlow took up front (GpuUsage)
  int shard_count = 1;         ///< the test's shards (TEST_TOTAL_SHARDS)
  /// It ran only some of its test cases (a test filter: Bazel's TESTBRIDGE_TEST_ONLY, googletest's
  /// --gtest_filter or GTEST_FILTER, pytest's -k): history leaves its time out of the test's.
  bool filtered = false;
  /// How many GPUs the test asked for when it ran: the GPUs the plan gave its unit (a test missing
  /// from the plan: those its tags in --query give it; one --query says asks for more than planned:
  /// that count), 0 for a CPU test; empty where that is not known (a test run-under refused and
  /// --unplanned=warn ran with no GPU). Beside `gpus`, what it was given, it tells a run of a test's
  /// older GPU count (given all it asked for then) from a run on a machine short of GPUs.
  std::optional<int> gpus_asked = std::nullopt;
};

/// The columns of a results file, which an older gpuplan's file keeps: its records go on in them.
enum class ResultsColumns {
  nine,      ///< before peak_up_front and shard_count
  eleven,    ///< before filtered
  twelve,    ///< before gpus_asked
  thirteen,  ///< results_header()'s
};

/// "label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched,peak_up_front,
/// shard_count,filtered,gpus_asked": the history CSV (SPEC section 3) with the run's details as
/// extra columns.
std::string_view results_header();
/// The header of results files begun before peak_up_front and shard_count: such a file is
/// appended to in its own columns.
std::string_view results_header_before_new_columns();
/// The header of results files begun before filtered, appended to in their eleven columns.
std::string_view results_header_before_filtered();
/// The header of results files begun before gpus_asked, appended to in their twelve columns.
std::string_view results_header_before_gpus_asked();
/// Checks that the results file `path` can be appended to (creating it empty if missing) and
/// says in which columns. Throws InputError for a file that cannot be written or has other columns.
ResultsColumns check_results_file(const std::string& path);
/// The note for a results file begun before peak_up_front and shard_count: its records go on
/// without them, so history cannot tell JAX's memory pool or a resharded test there.
std::string results_columns_note(const std::string& path);

/// One CSV line (with its newline): fields quoted per RFC 4180 where needed, `start` as
/// ISO-8601 UTC with milliseconds ("2026-11-30T10:55:26.120Z"); exit_status the number, or
/// "timeout"/"stopped" for a run cut short (history reads both as a lower bound); peak_vram_mib,
/// gpu_touched ("true"/"false") and peak_up_front empty when not measured; shard_count empty for an
/// unsharded test; filtered "true", or empty for a run of the whole test; gpus_asked a count, or
/// empty when not known. In `columns`: an older file's leave out the columns it lacks.
std::string to_csv(const RunRecord& record, ResultsColumns columns = ResultsColumns::thirteen);

/// The records of a results file as to_csv wrote them (its header line first), for the JUnit
/// that run-under rewrites after each unit. Reads label, shard, seconds, node, gpus,
/// exit_status, gpu_touched, shard_count, filtered and gpus_asked (start and the memory are left empty), in
/// any header's columns. Throws InputError naming `name`, the line and the bad field.
std::vector<RunRecord> parse_results_csv(std::string_view text, const std::string& name);

/// What `exec` says when none of a node's GPU units touched a GPU: among the records whose
/// gpu_touched NVML measured and that ran at least a second (a shorter one may fall between two
/// samples), none did. Such a run passes GPU tests that used no GPU: a build without CUDA (the
/// team's --config=cuda not given), or GPUs hidden from the tests. Empty when any touched one,
/// or none was measured.
std::string untouched_gpus_warning(const std::vector<RunRecord>& records);

/// Which of a node's units may start, following the plan's order on each GPU. A unit waits
/// for every earlier unit on one of its GPUs: until it finished when the plan has them one
/// after the other, until it started when the plan has them share the GPU (`pack`). A unit
/// that holds the whole node (holds_whole_node) counts as being on every GPU of the node and
/// never runs beside another. Nothing waits for planned start times: durations are estimates.
/// Event-driven: setting up and each started/finished cost about the unit's GPUs' length,
/// so 16,000 units on one node are scheduled in near-linear time.
class ExecSchedule {
 public:
  /// `units` in plan order (as node_assignments returns them); `policy` the plan's.
  explicit ExecSchedule(const std::vector<Assignment>& units, Policy policy = Policy::exact);

  /// Indices of the units that may start now and have not, in plan order.
  std::vector<size_t> ready() const;
  void started(size_t unit);
  void finished(size_t unit);
  bool all_started() const { return started_count_ == waiting_.size(); }
  /// Marks a unit as done without running it (another node took it): it counts as
  /// started and finished for the units after it.
  void skipped(size_t unit);

 private:
  void release(size_t unit);
  std::vector<std::vector<size_t>> after_start_, after_finish_;  ///< who waits for whom
  std::vector<int> waiting_;                                     ///< unmet waits of each unit
  std::vector<bool> started_;
  std::set<size_t> ready_;
  size_t started_count_ = 0;
};

/// What `gpuplan export slurm` writes into its output directory.
struct SlurmOptions {
  std::string plan_path;            ///< where the job finds the plan (absolute: jobs start elsewhere)
  std::string gpuplan = "gpuplan";  ///< the gpuplan binary on the cluster
  std::optional<std::string> partition;
  std::optional<std::string> account;
  double time_margin =
      1.5;              ///< --time: the node's planned end (+ flaky reruns) × this + startup, in minutes up
  int startup_s = 300;  ///< added to --time: the job's bazel test builds before its first test
  std::vector<std::string> bazel_args;    ///< after exec's --: options for its default bazel test
  std::vector<std::string> sbatch_lines;  ///< extra lines, "#SBATCH " added where missing
  std::optional<std::string> gres_extra;  ///< more GRES after the job's GPUs: --gres=gpu:N,THIS
  std::optional<std::string> command;     ///< passed to `gpuplan exec --command`
  std::optional<std::string> results;     ///< passed to `gpuplan exec --results`
  std::optional<std::string> claims;      ///< passed to `gpuplan exec --claims` (dynamic execution)
  std::optional<double> lease_s;          ///< passed to `gpuplan exec --lease`
  std::optional<std::string> fleet;       ///< passed to `gpuplan exec --fleet`
  bool warn_missing_gpus = false;         ///< passed as `gpuplan exec --missing-gpus=warn`
};

/// The second line of every script (after its `#!` line) starts so: how a later export knows the
/// job scripts it may remove.
inline constexpr std::string_view slurm_script_mark = "# Made by gpuplan export slurm:";

/// File name → content: one "NODE.sbatch" per node with assignments, and "submit.sh".
/// Throws InputError for a node name Slurm cannot take, an option that would break a line, or
/// an extra line that would undo what the job's own lines ask for.
/// `fleet` (the file of options.fleet, loaded): each job asks for every GPU of its node, which
/// `exec --fleet` may hand out; without it, 1 + the highest index the plan uses there.
std::map<std::string, std::string> slurm_scripts(const Plan& plan, const SlurmOptions& options,
                                                 const Fleet* fleet = nullptr);

}  // namespace gpuplan
