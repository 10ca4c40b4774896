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
#include "workloads.hpp"

using namespace gpuplan;
using namespace gpuplan::bench;

int main(int argc, char** argv) {
  bool quick = false;
  int runs = 10;
  double sigma = 0.5;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      quick = true;
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
