#pragma once
// The real durations of one simulated run, drawn the same way on every machine.
#include <cstdint>
#include <vector>

#include "gpuplan/plan.hpp"
#include "gpuplan/simulate.hpp"

namespace gpuplan::sim {

/// Where each assignment's real duration comes from: its planned one with log-normal noise, or
/// its own recent samples when the noise is history.
struct DurationSource {
  std::vector<double> planned;               ///< per assignment
  std::vector<std::vector<double>> samples;  ///< per assignment; empty: log-normal (or planned, with history)
  /// Per assignment, beside `samples`: the sample is a lower bound (a timeout or a stopped run).
  std::vector<std::vector<bool>> lower_bound;
  /// The assignments in the order they draw their durations: by node in the fleet's order, then
  /// start, first GPU and unit id, the order gpuplan writes a plan in, so that a plan whose units
  /// are listed in another order gets the same durations from a seed. Empty: the plan's order.
  std::vector<size_t> draw_order;
  double sigma = 0;
  bool from_history = false;
  long without_history = 0;  ///< with history: assignments that have no sample
  /// Of those, assignments of tests whose history has another shard count than the plan: an old
  /// shard's samples are not a new shard's (8 shards of 50 s are not 4 of 50 s).
  long resharded = 0;
};

DurationSource duration_source(const Plan& plan, const DurationNoise& noise, int history_window);

/// Run `run`'s durations, per assignment, drawn in `draw_order`. A drawn lower bound stands for a
/// finished sample at least that long, drawn from those, or for itself when no finished sample was
/// that long: a run stopped early by Ctrl-C is not a short run, and one killed at its timeout will
/// be again. Uses its own stream seeded from (seed, run), with mt19937_64 and Box-Muller written
/// out, so the result does not depend on the standard library.
std::vector<double> draw_durations(const DurationSource& source, std::uint64_t seed, int run);

}  // namespace gpuplan::sim
