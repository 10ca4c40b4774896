#pragma once
// A plan as the simulated executors replay it, and the two executors.
#include <cstddef>
#include <vector>

#include "gpuplan/fleet.hpp"
#include "gpuplan/plan.hpp"
#include "run/dispatch.hpp"
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
  Policy policy = Policy::exact;  ///< the plan's: under pack, units that share a GPU run beside each other
  /// Per assignment: its place in dispatch order (dispatched_before), 0 first.
  std::vector<size_t> dispatch_rank;
  std::vector<bool> holds_node;         ///< per assignment
  std::vector<double> planned_seconds;  ///< per assignment: its planned duration
  std::vector<double> planned_start;    ///< per assignment
  std::vector<int> demand_of;           ///< per assignment: its distinct need, for taking it elsewhere
  int demands = 0;
  /// Per demand and node type (demand × types + type): the GPUs it may use there; 0: it cannot run there.
  std::vector<solve::GpuMask> eligible;
  std::vector<DispatchNeed> needs;  ///< per demand
};

/// Throws InputError naming a node of the plan the fleet lacks, or a GPU it does not have.
Replay prepare_replay(const Plan& plan, const Fleet& fleet);

/// Where a node's GPU time went in a dynamic run (GPU-seconds), to explain its distance from
/// the bound: every GPU is busy or idle for one of these reasons at every moment up to the end.
struct TimeSpent {
  double working = 0;  ///< held by a unit
  double unfit = 0;    ///< idle: units the node may run wait, but none fits its free GPUs now
  double starved = 0;  ///< idle: no unit waits anywhere that the node could run
  double tail = 0;     ///< idle after the last unit of the run started
  TimeSpent& operator+=(const TimeSpent& o);
};

/// How one run ended.
struct RunResult {
  double makespan = 0;
  long taken_elsewhere = 0;        ///< units run on a node other than their planned one
  std::vector<double> started_at;  ///< per assignment: when it started
  std::vector<int> ran_on;         ///< per assignment: the node it ran on (Fleet::nodes index)
  std::vector<TimeSpent> spent;    ///< per node, when run_dynamic was asked to explain
};

/// Each node runs its planned list: a unit starts when the units before it on its GPUs allow
/// (ExecSchedule, as `exec --static`). `durations` per assignment.
RunResult run_static(const Replay& replay, const std::vector<double>& durations);

/// The dynamic executor, as `exec --claims --fleet` runs (dispatch.hpp): wherever GPUs are free,
/// the first unit in dispatch order (longest planned first) that this node can run on them
/// starts there, every requirement checked here and its GPUs chosen here (dispatch_gpus),
/// whichever node the plan put it on.
/// `explain`: fill RunResult::spent (runs the executor twice, to know when the last unit starts).
RunResult run_dynamic(const Replay& replay, const std::vector<double>& durations, bool explain = false);

}  // namespace gpuplan::sim
