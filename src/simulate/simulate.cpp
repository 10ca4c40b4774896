// simulate: many runs of both executors, and the planner's bound with the real durations.
#include "gpuplan/simulate.hpp"

#include <algorithm>
#include <cmath>

#include "gpuplan/solve.hpp"
#include "simulate/durations.hpp"
#include "simulate/replay.hpp"

namespace gpuplan {

namespace {

/// Nearest rank: the smallest value with at least `fraction` of the values at or below it.
double percentile(std::vector<double> values, double fraction) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  auto rank = static_cast<size_t>(std::ceil(fraction * double(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

Spread spread(const std::vector<double>& values) {
  return {percentile(values, 0.5), percentile(values, 0.95)};
}

}  // namespace

SimulationReport simulate(const Plan& plan, const Fleet& fleet, const SimulateOptions& options) {
  sim::Replay replay = sim::prepare_replay(plan, fleet);
  sim::DurationSource source = sim::duration_source(plan, options.noise, options.rules.history_window);
  for (const auto& units : replay.node_units)
    source.draw_order.insert(source.draw_order.end(), units.begin(), units.end());
  if (source.draw_order.size() != plan.assignments.size()) source.draw_order.clear();
  SolveOptions hindsight;
  hindsight.policy = plan.policy;
  hindsight.rules = options.rules;
  hindsight.rules.pack_slowdown = 1;  // the plan's durations already carry it

  SimulationReport report;
  report.runs = options.runs;
  report.units = static_cast<long>(plan.assignments.size());
  report.planned_makespan = plan.summary.makespan_s;
  report.units_without_history = source.without_history;
  report.units_resharded = source.resharded;
  // The plan's units again, to be planned with each run's durations: what they need of the fleet
  // is worked out once (make_plan a run did it again each time, and built a whole plan).
  std::vector<Unit> units;
  units.reserve(plan.assignments.size());
  for (const auto& a : plan.assignments) units.push_back(a.unit);
  Replanner replanner(std::move(units), fleet, hindsight);
  std::vector<double> statics, dynamics, bounds, plans, taken, static_ratios, dynamic_ratios;
  for (int run = 0; run < options.runs; ++run) {
    std::vector<double> durations = sim::draw_durations(source, options.seed, run);
    statics.push_back(sim::run_static(replay, durations).makespan);
    auto dynamic = sim::run_dynamic(replay, durations);
    dynamics.push_back(dynamic.makespan);
    taken.push_back(double(dynamic.taken_elsewhere));
    auto known = replanner.plan(durations);
    bounds.push_back(known.lower_bound_s);
    plans.push_back(known.makespan_s);
    double bound = known.lower_bound_s > 0 ? known.lower_bound_s : 1;
    static_ratios.push_back(statics.back() / bound);
    dynamic_ratios.push_back(dynamics.back() / bound);
  }
  report.static_makespan = spread(statics);
  report.dynamic_makespan = spread(dynamics);
  report.hindsight_bound = spread(bounds);
  report.hindsight_plan = spread(plans);
  report.static_over_bound = spread(static_ratios);
  report.dynamic_over_bound = spread(dynamic_ratios);
  report.taken_elsewhere_median = percentile(taken, 0.5);
  return report;
}

}  // namespace gpuplan
