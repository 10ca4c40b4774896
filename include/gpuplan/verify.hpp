#pragma once
// Checking any plan (ours, hand-edited, another tool's) against the fleet and the query.
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/classify.hpp"
#include "gpuplan/fleet.hpp"
#include "gpuplan/plan.hpp"
#include "gpuplan/rules.hpp"

namespace gpuplan {

/// What kind of promise a plan breaks; one kind a check.
enum class ViolationKind {
  unknown_node,   ///< the node is not in the fleet
  gpu_index,      ///< a GPU index the node does not have, or one listed twice
  gpu_count,      ///< more or fewer GPUs than the unit asks for (under the plan's policy)
  double_booked,  ///< a GPU held by two units at once (under `pack`: over VRAM or over max tests per GPU)
  requirement,    ///< the node or its GPUs lack memory, CUDA, model, vendor, compute capability or NVLink
  exclusive,      ///< another unit beside one that has its node to itself
  coverage,       ///< a unit missing, listed twice, or not a GPU test of the query
  times,          ///< a negative start, end ≠ start + duration, or a makespan other than the last end
  env,  ///< CUDA_VISIBLE_DEVICES or the shard variables disagree with the assignment, or another name is set
  summary,  ///< the summary's counts are not the plan's, or its lower bound is above its makespan
};
std::string_view to_string(ViolationKind kind);  ///< "double-booked", "gpu-index", ...

struct Violation {
  ViolationKind kind;
  std::string unit;    ///< the unit id; empty for the plan as a whole
  std::string reason;  ///< a sentence a person understands
  /// The JSON path of the plan record it is about ("assignments[3]", "unschedulable[0]"), whose
  /// line the CLI names; empty for the plan as a whole and a test of the query.
  std::string json_path = {};
};

struct VerifyOptions {
  /// When given, every GPU test of it must be in the plan exactly once (as a whole or
  /// as all its shards), and requirements are checked as the query states them rather
  /// than as the plan copied them.
  const Classification* query = nullptr;
  Rules rules;  ///< `pack`'s VRAM headroom and tests-per-GPU limit
};

/// Every broken promise of `plan` on `fleet`, in plan order; empty when the plan is valid.
std::vector<Violation> verify(const Plan& plan, const Fleet& fleet, const VerifyOptions& options = {});

}  // namespace gpuplan
