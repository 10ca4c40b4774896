#pragma once
// List scheduling: units in a priority order, each at the earliest start any node offers it.
#include <vector>

#include "solve/eligibility.hpp"
#include "solve/gpu_choice.hpp"

namespace gpuplan::solve {

/// One unit as the scheduler sees it: which demand (distinct needs) it has and how long it takes.
struct Job {
  int demand = 0;
  double duration = 0;
};

/// Everything a schedule is made from. Jobs are in unit-id order, so that index order breaks ties.
struct Problem {
  const FleetIndex* fleet = nullptr;
  std::vector<Shape> shapes;
  std::vector<std::vector<int>> demand_shapes;  ///< per demand, its shape on each type that can run it
  std::vector<Job> jobs;                        ///< every job has at least one shape
  int max_sharing = 1;  ///< units per GPU at once: max_tests_per_gpu under `pack`, else 1
};

struct Placement {
  int node = -1;  ///< index into Fleet::nodes
  GpuMask gpus = 0;
  double start = 0;
};

struct Schedule {
  std::vector<Placement> placements;  ///< per job
  double makespan = 0;
};

/// One pass: jobs in `order`, each placed at the earliest time a fitting GPU set is free on any
/// node that can run it (ties: the first node in fleet order). Time grows as n log(nodes).
Schedule list_schedule(const Problem& problem, const std::vector<int>& order);

/// Jobs longest first (ties: the widest first, then job order).
std::vector<int> longest_first(const Problem& problem);

/// The best of a few priority orders (longest first; largest area first; widest first; most
/// constrained first), each with its tail placed again in every order (improve_tail in
/// schedule.cpp), and, on small problems or within a time limit, longest first with insertion;
/// then, within `time_limit_s`, perturbed longest-first orders.
/// Without a time limit the result depends only on the problem. It stops early at a schedule
/// that ends at `bound` (a lower bound of the problem: none can be shorter), with the schedule
/// the whole search would have chosen.
Schedule best_schedule(const Problem& problem, double time_limit_s, double bound = 0);

}  // namespace gpuplan::solve
