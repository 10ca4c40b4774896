#pragma once
// The dynamic executor's policy, shared by `exec --claims --fleet` and `simulate`: wherever GPUs
// are free, start the first unit in dispatch order that this node can run on them.
#include <optional>
#include <vector>

#include "gpuplan/plan.hpp"
#include "solve/eligibility.hpp"

namespace gpuplan {

/// Dispatch order: the longest planned unit first (it is the one most likely to end the run
/// late if it starts late), then the earliest planned start, then the unit id.
bool dispatched_before(const Assignment& x, const Assignment& y);

/// What a unit needs of the node it runs on, as dispatch sees it.
struct DispatchNeed {
  int gpus = 1;             ///< how many GPUs it holds
  bool nvlink = false;      ///< they must be pairwise NVLink-connected
  bool holds_node = false;  ///< it runs alone on the node (holds_whole_node)
  bool every_gpu = false;   ///< holding it, it is given every GPU it may use (takes_every_node_gpu)
};

/// The GPUs a unit takes among a node's `free` ones (`usable`: those of them it may use, every
/// per-GPU requirement checked), `all`: every GPU of the node, `links` its NVLink wiring. A unit
/// that holds the node starts only when all are free, and is given every usable one (every_gpu)
/// or its count of them as any other unit; an NVLink unit the first connected set of free usable
/// GPUs; any other the lowest usable indices. nullopt: it does not fit now.
std::optional<solve::GpuMask> dispatch_gpus(const DispatchNeed& need, solve::GpuMask usable,
                                            solve::GpuMask free, solve::GpuMask all,
                                            const std::vector<solve::GpuMask>& links);

/// A unit's requirement as the planner places it: its gpu-mem, or the memory it reserves
/// (vram_mib) when that is more.
Requirement placing_requirement(const Unit& unit);

}  // namespace gpuplan
