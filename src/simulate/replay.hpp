#pragma once
// A plan as the simulated executors replay it, and the two executors.
#include <cstddef>
#include <vector>

#include "gpuplan/fleet.hpp"
#include "gpuplan/plan.hpp"
#include "solve/eligibility.hpp"

namespace gpuplan::sim {

/// A plan's assignments with the fleet's facts looked up once, for many runs.
struct Replay {
  const Fleet* fleet = nullptr;
  solve::FleetIndex index;
  std::vector<int> node_of;                     ///< per assignment: index into Fleet::nodes
  std::vector<std::vector<size_t>> node_units;  ///< per node: its assignments in plan order
  /// Per node: its assignments as ExecSchedule takes them, a unit that holds the whole node
  /// listed on every GPU of it, so that it runs alone there as `exec` runs it.
  std::vector<std::vector<Assignment>> node_lists;
  /// Per node: its assignments as the dynamic executor runs them, longest planned first
  /// (longest_first), and the same as ExecSchedule takes them.
  std::vector<std::vector<size_t>> dynamic_units;
  std::vector<std::vector<Assignment>> dynamic_lists;
  std::vector<bool> holds_node;         ///< per assignment
  std::vector<double> planned_seconds;  ///< per assignment: its planned duration
  std::vector<double> planned_start;    ///< per assignment
  std::vector<int> demand_of;           ///< per assignment: its distinct need, for taking it elsewhere
  int demands = 0;
  /// Per demand and node type (demand × types + type): the GPUs it may use there; 0: it cannot run there.
  std::vector<solve::GpuMask> eligible;
  std::vector<int> gpus_needed;  ///< per demand
  std::vector<bool> nvlink;      ///< per demand
};

/// Throws InputError naming a node of the plan the fleet lacks, or a GPU it does not have.
Replay prepare_replay(const Plan& plan, const Fleet& fleet);

/// How one run ended.
struct RunResult {
  double makespan = 0;
  long taken_elsewhere = 0;        ///< units run on a node other than their planned one
  std::vector<double> started_at;  ///< per assignment: when it started
};

/// Each node runs its planned list: a unit starts when the units before it on its GPUs allow
/// (ExecSchedule, as `exec --static`). `durations` per assignment.
RunResult run_static(const Replay& replay, const std::vector<double>& durations);

/// Each node runs its own units longest planned first (longest_first, as `exec --claims` does),
/// and GPUs that sit idle take units that have not started, planned elsewhere or later on this
/// node: GPUs with none of their node's own units left take the one with the longest planned
/// duration that this node can run on them (every requirement checked here, NVLink sets chosen
/// here); GPUs whose next own unit waits for units still running on the node (a unit that holds
/// the node waits for all) take one planned to end before the last of those is planned to. An
/// own unit whose GPU such a unit still holds waits for it (as `exec` waits for the GPU's lock);
/// the home node skips a unit taken elsewhere when its turn comes.
RunResult run_dynamic(const Replay& replay, const std::vector<double>& durations);

}  // namespace gpuplan::sim
