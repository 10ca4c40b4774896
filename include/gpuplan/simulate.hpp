#pragma once
// Replaying a plan with durations other than the planned ones: how the static executor (each
// node runs its own list) and the dynamic one (idle GPUs take units planned elsewhere) fare.
#include <cstdint>
#include <vector>

#include "gpuplan/fleet.hpp"
#include "gpuplan/history.hpp"
#include "gpuplan/plan.hpp"
#include "gpuplan/rules.hpp"

namespace gpuplan {

/// How a run's real durations are drawn from the planned ones.
struct DurationNoise {
  /// Log-normal: planned × e^(sigma·Z), Z standard normal, so the median factor is 1 and the
  /// estimates are off by a factor around e^sigma.
  double sigma = 0.5;
  /// When set: each unit's duration is one of its own recent samples, drawn uniformly (the last
  /// `Rules::history_window`); a unit without samples keeps its planned duration. A timeout or a
  /// stopped run is a lower bound: drawn, it stands for a finished sample at least that long.
  const History* history = nullptr;
};

struct SimulateOptions {
  DurationNoise noise;
  int runs = 100;
  std::uint64_t seed = 1;  ///< the same seed gives the same runs, on every machine
  Rules rules;             ///< `pack` knobs for the hindsight plan, and the history window
};

/// The median and 95th percentile (nearest rank) of one quantity over the runs.
struct Spread {
  double median = 0;
  double p95 = 0;
};

/// What `gpuplan simulate` reports. Makespans in seconds.
struct SimulationReport {
  int runs = 0;
  long units = 0;
  double planned_makespan = 0;     ///< the plan's own, with planned durations
  Spread static_makespan;          ///< each node runs exactly its planned list, in plan order
  Spread dynamic_makespan;         ///< longest planned first per node, and idle GPUs take foreign units
  Spread hindsight_bound;          ///< the planner's lower bound for the real durations: no executor beats it
  Spread hindsight_plan;           ///< the planner's makespan had it known the real durations
  Spread static_over_bound;        ///< per run: the static makespan / that run's hindsight bound
  Spread dynamic_over_bound;       ///< per run: the dynamic makespan / that run's hindsight bound
  long units_without_history = 0;  ///< with `noise.history`: units that kept their planned duration
  long units_resharded = 0;        ///< of those, units whose history was of another shard count
  double taken_elsewhere_median = 0;  ///< units the dynamic executor ran off their planned node, per run
};

/// Replays `plan` on `fleet` `options.runs` times. Deterministic for a given seed. Throws
/// InputError when the plan names a node the fleet does not have.
SimulationReport simulate(const Plan& plan, const Fleet& fleet, const SimulateOptions& options);

}  // namespace gpuplan
