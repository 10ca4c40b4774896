#pragma once
// The plan: what launchers read (SPEC section 6), and the units it is made of.
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/boxed.hpp"
#include "gpuplan/diagnostic.hpp"
#include "gpuplan/requirements.hpp"
#include "gpuplan/version.hpp"

namespace gpuplan {

enum class Policy { whole_node, exact, pack };
std::string_view to_string(Policy policy);  ///< "whole-node", "exact", "pack"
std::optional<Policy> parse_policy(std::string_view name);

/// One schedulable piece of work: a whole test, or one shard of a sharded test.
struct Unit {
  std::string id;     ///< the label, or "//ml:train#shard-1-of-4" (0-based index, like TEST_SHARD_INDEX)
  std::string label;  ///< as Bazel printed it
  std::optional<int> shard_index;  ///< 0-based; empty for an unsharded test or --shards=whole
  int shard_count = 1;
  bool flaky = false;  ///< here, not last: in the padding after shard_count (8 bytes a unit)
  double duration_s = 0;
  Symbol duration_source;                ///< "history-p90", "size-default", "size-median", ...
  std::optional<std::int64_t> vram_mib;  ///< per-GPU memory reserved; empty when unknown
  SharedRequirement requirement;         ///< shared with the test's other units and tests of the same needs
  Symbol size = "medium";
  Symbol timeout;  ///< Bazel timeout attribute; empty: derived from size
};

struct Assignment {
  Unit unit;
  Symbol node;
  std::vector<int> gpus;  ///< ascending
  double start_s = 0;
  double end_s = 0;
  /// The `env` a plan file gave (verify checks it against planned_env); empty in a plan made
  /// here, whose env is planned_env(): a million small maps were a fifth of `plan`'s memory.
  Boxed<std::map<std::string, std::string>> env;
};

/// "0,1": GPU indices as CUDA_VISIBLE_DEVICES spells them.
std::string gpu_list(const std::vector<int>& gpus);

/// Under `pack`: a single-GPU, non-exclusive unit whose memory need is known, which may share
/// its GPU with other such units.
bool shares_gpu(const Unit& unit, Policy policy);

/// True when the unit has its node to itself at run time: a `gpu-exclusive` unit, or under
/// `whole-node` one that asks for more than one GPU (as the planner placed them). It holds every
/// GPU of its node, also those it does not use (the charts draw them held).
bool holds_whole_node(const Assignment& assignment, Policy policy);

/// The environment a plan gives an assignment's test, computed from the assignment and never
/// from a plan file's `env` (a plan cannot set PATH or LD_PRELOAD): CUDA_VISIBLE_DEVICES from
/// its GPUs; for a shard, TEST_SHARD_INDEX and TEST_TOTAL_SHARDS; for a unit that shares its
/// GPU (shares_gpu), TF_FORCE_GPU_ALLOW_GROWTH=true and XLA_PYTHON_CLIENT_PREALLOCATE=false, so
/// that neither TensorFlow nor JAX takes most of the GPU's memory at start, as both do
/// otherwise, leaving its neighbours none; in the names' order.
std::map<std::string, std::string> planned_env(const Assignment& assignment, bool shares_gpu);
/// The same, a variable at a time in the names' order, without allocating: the plan writer's
/// way through a million assignments.
void for_each_planned_env(const Assignment& assignment, bool shares_gpu,
                          const std::function<void(std::string_view name, std::string_view value)>& each);

struct UnschedulableUnit {
  Unit unit;
  std::string reason;  ///< names the requirement and the closest node
};

/// A test kept out of the GPU plan, and why.
struct ListedTest {
  std::string label;
  std::string reason;
};

struct PlanSummary {
  long tests = 0;
  long cpu_tests = 0;
  long gpu_tests = 0;
  long skipped_tests = 0;
  long gpu_units = 0;
  long scheduled_units = 0;
  long unschedulable_units = 0;
  double makespan_s = 0;
  double lower_bound_s = 0;
  double gpu_utilization = 0;  ///< busy GPU-seconds / (GPUs × makespan)
  double pack_slowdown = 1.0;  ///< the factor applied to shareable units under `pack`
  /// `pack`'s other knobs the plan was made with (the rules file's); empty for other policies and
  /// plans that do not say: verify and simulate take them when given no rules file.
  std::optional<double> vram_headroom;
  std::optional<int> max_tests_per_gpu;
};

struct Plan {
  int schema_version = 1;
  std::string generator_version = program_version();
  Policy policy = Policy::exact;
  std::string fleet;  ///< the fleet file it was planned for
  PlanSummary summary;
  std::vector<ListedTest> cpu_tests;             ///< by label
  std::vector<ListedTest> skipped_tests;         ///< by label
  std::vector<Assignment> assignments;           ///< by node, then start, then first GPU, then unit id
  std::vector<UnschedulableUnit> unschedulable;  ///< by unit id
  Diagnostics diagnostics;
};

/// The plan's unschedulable units by reason: the largest group first (ties by reason), each
/// group's units in plan order. What the terminal summary, markdown and SVG list.
using UnschedulableGroup = std::pair<std::string_view, std::vector<const UnschedulableUnit*>>;
std::vector<UnschedulableGroup> unschedulable_by_reason(const Plan& plan);

/// The plan file's text (SPEC section 6, indented by two, a newline at the end), handed to
/// `write` in pieces of about 64 KiB as it is produced: the whole document never exists in
/// memory. Key order and number formatting are fixed, so the same plan always gives the same bytes.
void write_plan_json(const Plan& plan, const std::function<void(std::string_view)>& write);

/// The plan as a JSON document, the same as write_plan_json writes; for small plans and tests.
nlohmann::ordered_json to_json(const Plan& plan);

/// Reads a plan written by to_json (or by hand, or by another tool). Throws InputError
/// naming `name` and the JSON path of the bad field.
Plan plan_from_json(const nlohmann::json& json, const std::string& name);

/// A plan from the text of its JSON file: plan_from_json, with the line and column of
/// broken JSON. Throws InputError naming `name`.
Plan parse_plan(std::string_view json_text, const std::string& name);
/// The same, read from `in` as it parses: the text is never held whole.
Plan parse_plan(std::istream& in, const std::string& name);

}  // namespace gpuplan
