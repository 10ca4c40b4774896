// The executors on the planner benchmark's shapes: each case is planned (exact policy) with the
// planned durations, then replayed with real durations planned × e^(sigma·Z); the static executor
// (each node its own list) and the dynamic one (idle GPUs take units planned elsewhere) against
// the hindsight lower bound. Targets at sigma 0.5: dynamic median ≤ 1.10 × the bound's median,
// dynamic p95 ≤ 1.2 ×. Exit 1 when a case misses them.
// Usage: simulate_bench [--quick] [--runs=N] [--sigma=S] [WORDS]   (--quick: 10,000 units a case
// instead of the planner's counts; WORDS: only the cases whose name contains them)
#include <fmt/format.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

#include "gpuplan/simulate.hpp"
#include "gpuplan/solve.hpp"
#include "simulate/durations.hpp"
#include "simulate/replay.hpp"
#include "workloads.hpp"

using namespace gpuplan;
using namespace gpuplan::bench;

namespace {

/// --explain: per run and node type, where the dynamic executor's GPU time went, in seconds a
/// GPU of that type (so working + the idle reasons = the makespan).
void explain(const Plan& plan, const Fleet& fleet, const SimulateOptions& options) {
  sim::Replay replay = sim::prepare_replay(plan, fleet);
  sim::DurationSource source = sim::duration_source(plan, options.noise, 0);
  SolveOptions hindsight;
  for (int run = 0; run < options.runs; ++run) {
    std::vector<double> durations = sim::draw_durations(source, options.seed, run);
    auto result = sim::run_dynamic(replay, durations, true);
    std::vector<Unit> units;
    for (size_t i = 0; i < plan.assignments.size(); ++i) {
      units.push_back(plan.assignments[i].unit);
      units.back().duration_s = durations[i];
    }
    Plan known = make_plan(Classification{}, std::move(units), fleet, hindsight);
    double last_start = 0;
    size_t last = 0;
    for (size_t u = 0; u < durations.size(); ++u) {
      last_start = std::max(last_start, result.started_at[u]);
      if (result.started_at[u] + durations[u] > result.started_at[last] + durations[last]) last = u;
    }
    fmt::print(
        "  run {}: makespan {:.0f}, bound {:.0f} ({:.3f}); the last unit starts at {:.0f}; the last to end "
        "was "
        "planned {:.0f} s and ran {:.0f} s from {:.0f}\n",
        run, result.makespan, known.summary.lower_bound_s, result.makespan / known.summary.lower_bound_s,
        last_start, replay.planned_seconds[last], durations[last], result.started_at[last]);
    // The same dispatcher told the real durations (dispatch order by them): what not knowing
    // which unit runs long costs.
    sim::Replay told = replay;
    std::vector<size_t> order(durations.size());
    for (size_t u = 0; u < order.size(); ++u) order[u] = u;
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t x, size_t y) { return durations[x] > durations[y]; });
    for (size_t k = 0; k < order.size(); ++k) told.dispatch_rank[order[k]] = k;
    fmt::print("    dispatching by the real durations instead: {:.3f}\n",
               sim::run_dynamic(told, durations).makespan / known.summary.lower_bound_s);
    for (size_t t = 0; t < replay.index.types.size(); ++t) {
      const auto& type = replay.index.types[t];
      sim::TimeSpent sum;
      double ends = 0;
      for (int n : type.nodes) sum += result.spent[static_cast<size_t>(n)];
      for (size_t u = 0; u < durations.size(); ++u)
        if (replay.index.type_of_node[static_cast<size_t>(result.ran_on[u])] == static_cast<int>(t))
          ends = std::max(ends, result.started_at[u] + durations[u]);
      double g = double(type.gpus) * double(type.nodes.size());
      fmt::print(
          "    {} ×{}: working {:.0f}, unfit {:.0f}, starved {:.0f}, tail {:.0f} (its last unit ends at "
          "{:.0f})\n",
          fleet.nodes[static_cast<size_t>(type.nodes.front())].pool, type.nodes.size(), sum.working / g,
          sum.unfit / g, sum.starved / g, sum.tail / g, ends);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false, explaining = false;
  int runs = 10;
  double sigma = 0.5;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      quick = true;
    else if (std::strcmp(argv[i], "--explain") == 0)
      explaining = true;
    else if (std::strncmp(argv[i], "--runs=", 7) == 0)
      runs = std::stoi(argv[i] + 7);
    else if (std::strncmp(argv[i], "--sigma=", 8) == 0)
      sigma = std::stod(argv[i] + 8);
    else
      only = argv[i];
  }
  fmt::print(
      "| case | units | plan (s) | static median (s) | static p95 (s) | dynamic median (s) | dynamic p95 (s) "
      "| "
      "hindsight bound median (s) | hindsight plan median (s) | static/bound median | dynamic/bound median | "
      "dynamic/bound p95 | CPU time (s) |\n");
  fmt::print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  bool met = true;
  for (Case c : planner_cases(true)) {
    if (c.name.find(only) == std::string::npos) continue;
    if (quick) {
      if (c.units > 10'000) continue;
    } else if (c.units < 100'000) {
      continue;
    }
    Fleet fleet = make_fleet(c.nodes, c.fleet);
    SolveOptions solve;
    Plan plan = make_plan(Classification{}, make_units(c.units, c.workload, 12345), fleet, solve);
    SimulateOptions options;
    options.noise.sigma = sigma;
    options.runs = runs;
    if (explaining) {
      fmt::print("{} ({} units)\n", c.name, c.units);
      explain(plan, fleet, options);
      continue;
    }
    std::clock_t began = std::clock();
    SimulationReport r = simulate(plan, fleet, options);
    double seconds = double(std::clock() - began) / CLOCKS_PER_SEC;
    met = met && r.dynamic_over_bound.median <= 1.10 && r.dynamic_over_bound.p95 <= 1.2;
    fmt::print(
        "| {} | {} | {:.0f} | {:.0f} | {:.0f} | {:.0f} | {:.0f} | {:.0f} | {:.0f} | {:.3f} | {:.3f} | {:.3f} "
        "| {:.1f} |\n",
        c.name, c.units, r.planned_makespan, r.static_makespan.median, r.static_makespan.p95,
        r.dynamic_makespan.median, r.dynamic_makespan.p95, r.hindsight_bound.median, r.hindsight_plan.median,
        r.static_over_bound.median, r.dynamic_over_bound.median, r.dynamic_over_bound.p95, seconds);
    std::fflush(stdout);
  }
  if (!met)
    fmt::print("the dynamic executor missed a target (median ≤ 1.10×, p95 ≤ 1.2× the hindsight bound)\n");
  return met ? 0 : 1;
}
