// Each family of the lower bound on its own, and the bound as a whole against plain schedules.
#include "solve/bound.hpp"

#include <catch2/catch.hpp>
#include <random>

#include "solve/planning.hpp"

using namespace gpuplan;
using namespace gpuplan::solve;
using namespace gpuplan::testing;

TEST_CASE("work bound: GPU-seconds over GPUs and node-blocking seconds over nodes") {
  CHECK(work_bound({800, 0}, {8, 1}) == 100);
  CHECK(work_bound({800, 300}, {8, 2}) == 150);  // blocking jobs: 300 s over 2 nodes
  CHECK(work_bound({800, 300}, {0, 0}) == 0);    // no capacity: no claim
}

TEST_CASE("pigeonhole bound: more node-blocking jobs than nodes run two in turn somewhere") {
  CHECK(pigeonhole_bound({100, 90, 80}, 3) == 0);  // one each
  // Four on three nodes: two of the four longest share a node, at least 80 + 70.
  CHECK(pigeonhole_bound({100, 90, 80, 70}, 3) == 150);
  // Seven on three nodes: three of the seven longest share one, at least the three shortest.
  CHECK(pigeonhole_bound({100, 90, 80, 70, 60, 50, 40}, 3) == 150);
  CHECK(pigeonhole_bound({100, 90, 80, 70, 60, 50, 10}, 3) == 150);  // k = 1 still wins: 80 + 70
}

TEST_CASE("one-more bound: as many whole-node jobs as nodes and any other job") {
  CHECK(one_more_bound({100, 90}, 0, 2) == 0);     // no other job
  CHECK(one_more_bound({100}, 30, 2) == 0);        // fewer than the nodes
  CHECK(one_more_bound({100, 90}, 30, 2) == 120);  // the other job waits for the shorter one
  CHECK(one_more_bound({100, 90}, 95, 2) == 185);  // two of the three in turn, at least 90 + 95
  CHECK(one_more_bound({100}, 30, 1) == 130);
}

TEST_CASE("demand profiles: GPUs held, node blocking and types per demand") {
  auto fleet = fleet_of({{"big", 1, 8}, {"small", 1, 2, "pcie"}});
  FleetIndex index = index_fleet(fleet);
  solve::Problem p;
  p.fleet = &index;
  p.max_sharing = 4;
  auto shape = [](int type, Occupancy occupancy, int gpus) {
    Shape s;
    s.type = type;
    s.occupancy = occupancy;
    s.gpus = gpus;
    return s;
  };
  Shape big_gpus = shape(0, Occupancy::gpus, 4);
  Shape small_gpus = shape(1, Occupancy::gpus, 2);
  Shape shared = shape(1, Occupancy::shared, 1);
  shared.memory_mib = shared.least_memory_mib = 500;
  shared.usable_mib = {1000, 2000};
  p.shapes = {big_gpus, small_gpus, shared};
  p.demand_shapes = {{0, 1}, {2}};
  auto by_memory = demand_profiles(p, Sharing::by_memory);
  CHECK(by_memory[0].gpus_held == 2);
  CHECK(by_memory[0].blocks_node == false);  // 4 of 8 is not more than half
  CHECK(by_memory[0].types == 3);
  CHECK(by_memory[1].gpus_held == 0.25);  // 500 of the larger 2,000 MiB
  CHECK(by_memory[1].types == 2);
  CHECK(demand_profiles(p, Sharing::by_count)[1].gpus_held == 0.25);  // one of four
  p.shapes[0].gpus = 5;
  CHECK(demand_profiles(p, Sharing::by_memory)[0].blocks_node);  // more than half everywhere
}

TEST_CASE("longest first with insertion fills the gap a wide unit leaves") {
  auto fleet = fleet_of({{"a", 1, 2, "pcie"}});
  SolveOptions options;
  options.scheduler = Scheduler::longest_first_insertion;
  auto plan = make_plan(Classification{}, {unit("//t:x", 100), unit("//t:y", 90, 2), unit("//t:z", 50)},
                        fleet, options);
  CHECK(plan.summary.makespan_s == 190);
  CHECK(assignment_of(plan, "//t:z").start_s == 0);
  CHECK(broken_promise(plan, fleet).empty());
}

TEST_CASE("a bound in whole steps: when every duration is a multiple of one, so is every makespan") {
  CHECK(granular_bound(90, 60) == 120);
  CHECK(granular_bound(120, 60) == 120);
  CHECK(granular_bound(120.00000000001, 60) == 120);  // rounding in a work bound is not a step
  CHECK(granular_bound(90, 0) == 90);                 // no step: as it was
  auto fleet = fleet_of({{"a", 1, 2, "pcie"}});
  FleetIndex index = index_fleet(fleet);
  solve::Problem p;
  p.fleet = &index;
  p.jobs = {{0, 60}, {0, 120}, {0, 0}};
  CHECK(duration_step(p) == 60);
  p.jobs.push_back({0, 45});
  CHECK(duration_step(p) == 15);
  p.jobs.push_back({0, 0.5});
  CHECK(duration_step(p) == 0);  // not all whole seconds
  // Three one-GPU units of 60 s on two GPUs: 90 GPU-seconds each, but two of them run in turn.
  auto plan = plan_of({unit("//t:x", 60), unit("//t:y", 60), unit("//t:z", 60)}, fleet);
  CHECK(plan.summary.lower_bound_s == 120);
  CHECK(plan.summary.makespan_s == 120);
  auto fractional = plan_of({unit("//t:x", 60.5), unit("//t:y", 60), unit("//t:z", 60)}, fleet);
  CHECK(fractional.summary.lower_bound_s == Approx(90.25));
}

TEST_CASE("the search stops at a schedule that ends at the bound, with the schedule it would have chosen") {
  auto fleet = fleet_of({{"a", 2, 4, "pcie"}});
  FleetIndex index = index_fleet(fleet);
  solve::Problem p;
  p.fleet = &index;
  for (int gpus = 1; gpus <= 3; ++gpus) {
    Shape shape;
    shape.gpus = gpus;
    shape.eligible = 0xf;
    p.shapes.push_back(shape);
    p.demand_shapes.push_back({gpus - 1});
  }
  std::mt19937 random(7);
  int at_bound = 0;
  for (int round = 0; round < 100; ++round) {
    p.jobs.clear();
    for (int i = 0; i < 12; ++i)
      p.jobs.push_back({static_cast<int>(random() % 3), double(1 + random() % 6) * 60});
    double bound = lower_bound(p);
    auto whole = best_schedule(p, 0);
    auto stopped = best_schedule(p, 0, bound);
    INFO("round " << round);
    CHECK(whole.makespan >= bound);
    if (whole.makespan <= bound) ++at_bound;
    CHECK(stopped.makespan == whole.makespan);
    for (size_t j = 0; j < p.jobs.size(); ++j) {
      CHECK(stopped.placements[j].node == whole.placements[j].node);
      CHECK(stopped.placements[j].gpus == whole.placements[j].gpus);
      CHECK(stopped.placements[j].start == whole.placements[j].start);
    }
  }
  CHECK(at_bound >= 20);  // the early stop is exercised, not only the full search
}
