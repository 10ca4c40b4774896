#pragma once
// Plans for people: the terminal preview, the Gantt chart (SVG, self-contained HTML), and
// the table that compares plans of the same tests under several policies and fleets; and the
// classification for people and scripts (`classify --json`, `explain`).
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/classify.hpp"
#include "gpuplan/fleet.hpp"
#include "gpuplan/plan.hpp"
#include "gpuplan/units.hpp"

namespace gpuplan {

struct TextOptions {
  int width = 80;                ///< terminal columns
  bool color = false;            ///< ANSI colours (the CLI decides: a terminal, and NO_COLOR unset)
  const Fleet* fleet = nullptr;  ///< when set, its idle nodes and GPUs are drawn too
};

/// Summary, then per node a text Gantt (a lane per GPU, a time axis), the unschedulable
/// units and the diagnostics. No line is wider than options.width (at least 40).
std::string render_text(const Plan& plan, const TextOptions& options);
/// The Gantt chart as SVG, handed to `sink` in pieces as it is made: lanes per node and GPU, a
/// bar per unit coloured by its package with a tooltip naming its test, a time axis, a legend
/// of the packages with the most units (as the HTML page's), makespan and lower bound marked.
/// With `fleet`, idle nodes and GPUs too.
void write_svg(const Plan& plan, const Fleet* fleet, const std::function<void(std::string_view)>& sink);
/// The chart as one HTML page that needs nothing else (no network): the plan's layout as
/// data and a canvas that fits the window, zooms and pans, with a search box, a sticky time
/// axis, one bar per unit spanning its GPUs, the unschedulable units on top, a legend by
/// package or by size, tooltips and the diagnostics. With `fleet`, idle nodes and GPUs too.
/// Handed to `sink` in pieces as it is made (a plan of 150,000 units is never one document
/// in memory).
void write_html(const Plan& plan, const Fleet* fleet, const std::function<void(std::string_view)>& sink);

/// One plan's line in `gpuplan compare`.
struct Comparison {
  std::string fleet;  ///< the fleet file's name
  Policy policy = Policy::exact;
  int fleet_gpus = 0;
  int fleet_nodes = 0;
  PlanSummary summary;
  double gpu_hours_reserved = 0;  ///< GPU time held by units; a GPU shared under pack counts once
  double gpu_hours_used = 0;      ///< GPU time the tests asked for: GPUs asked × planned duration
  /// GPU time some unit runs on a GPU / (fleet GPUs × makespan): the plan's gpu_utilization,
  /// show's "GPU utilisation" (one name, one definition; compare's util was `held` before).
  double utilization = 0;
  double held = 0;  ///< reserved / (fleet GPUs × makespan): also GPUs a whole-node unit holds unused
};

Comparison compare(const Plan& plan, const Fleet& fleet);

/// The comparisons as aligned tables, one per fleet, fitted to options.width.
std::string render_comparison(const std::vector<Comparison>& rows, const TextOptions& options);
nlohmann::ordered_json comparison_to_json(const std::vector<Comparison>& rows);

}  // namespace gpuplan

namespace gpuplan {

/// The plan for `$GITHUB_STEP_SUMMARY`, Buildkite annotations and PR comments (GitHub
/// Markdown): the summary, unschedulable units grouped by reason, diagnostics grouped by
/// message, and a table of each node's load. Labels are escaped, never markup.
std::string render_markdown(const Plan& plan);

/// Chrome trace-event JSON (for Perfetto, chrome://tracing): a process per node, a thread per
/// GPU, one complete event per unit and GPU it holds, times in microseconds; handed to `sink`
/// one at a time (at 147,000 units the 59 MB text held whole took `render` from the plan's
/// 100 MiB to 155 MiB).
void write_trace(const Plan& plan, const std::function<void(std::string_view)>& sink);

}  // namespace gpuplan

namespace gpuplan {

/// The planned duration of one shard of a test, or of the whole test (no shard).
struct ShardEstimate {
  std::optional<int> shard;
  Estimate estimate;
  /// The `pack_slowdown` the seconds carry: not 1 only for a unit that shares its GPU under
  /// `pack`, as the plan slows it down.
  double slowdown = 1;
};

/// What `explain` shows of one test: each shard's planned duration (none for a test that is
/// not a GPU test), one duration for a test of one shard.
std::vector<ShardEstimate> planned_durations(const ClassifiedTest& test, const Estimator& estimate);

/// What the dependency graph says of a test; present only for input that lists rule inputs.
struct GpuPathView {
  bool present = false;  ///< the input had the test's rule inputs
  bool reaches = false;
  std::vector<std::string> path;  ///< test → ... → GPU dep
  std::string pattern;            ///< the gpu_deps pattern the last step matched
  /// A label the test reaches that the input did not expand (as in the output of
  /// `tests(//...)`), when it reaches no GPU code: whether it does is unknown. Empty otherwise.
  std::string undeclared;
  std::string rule_class;  ///< the last step's rule class, where that made it GPU code (cuda_library)
  std::string file_kind;   ///< what the last step's file name makes it, where that made it GPU code
  std::string linkopt;     ///< the last step's linkopt that links a GPU library, where that made it GPU code
  /// The test's own rule class when the graph would not show this GPU test's GPU code, so that
  /// whether it uses any is unknown (BlindTests). Empty otherwise.
  std::string blind;
  std::string blind_reason;       ///< then why (BlindTests::reason); also for `used_gpu`
  bool without_implicit = false;  ///< why: the graph lacks implicit deps (BlindTests::without_implicit)
  /// What its runs measured, when they used a GPU that the graph shows no GPU code for (--history).
  std::string used_gpu;
  /// Then, where other tests of the class reach GPU code: the repositories they get it from,
  /// of which this test reaches no label ("pypi"). Empty when no test of the class reaches any.
  std::vector<std::string> suppliers;
};

/// All that `explain` says of one test.
/// A unit of the test (a shard, or the whole test) whose runs, or its other shards', used more
/// memory than it reserves: `plan` requires at least their peak of each of its GPUs as its
/// requirements.gpu_mem_mib (units.cpp memory_floor), which no tag of the test says.
struct MemoryFloorView {
  std::optional<int> shard;
  std::int64_t peak_mib = 0;             ///< the measured peak: the GPU memory the plan requires
  double vram_headroom = 0;              ///< the rules' headroom
  std::int64_t with_headroom_mib = 0;    ///< the peak with the headroom
  std::optional<std::int64_t> vram_mib;  ///< what the plan reserves of a GPU it shares; empty: not shared
  std::string measured_by;  ///< "its other shards' runs", "its runs that failed or were cut short"
};

struct Explanation {
  const ClassifiedTest* test = nullptr;
  std::vector<ShardEstimate> estimates;
  Diagnostics diagnostics;  ///< the test's own and those of reading its history
  GpuPathView graph;
  std::vector<MemoryFloorView> memory_floors;  ///< with --history: the units history gives a floor
  double vram_headroom = 0.15;                 ///< the rules' headroom a measured peak is reserved with
};

/// `explain`'s text: attributes, annotations read, requirements each with its source, the path
/// to GPU code, the bucket and why, planned durations and diagnostics.
std::string render_explanation(const Explanation& explanation);
/// The same as JSON: `classify --json`'s form of the test with all of the above.
std::string explanation_to_json(const Explanation& explanation);

/// `classify --json`: the summary, the GPU tests with requirements and sources, the CPU and
/// skipped tests with reasons, the diagnostics; written to `sink` test by test, never as a
/// whole document in memory.
void write_classification_json(const Classification& classification,
                               const std::function<void(std::string_view)>& sink);

}  // namespace gpuplan
