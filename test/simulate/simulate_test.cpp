// The simulated executors on small hand-made plans, and simulate()'s promises.
#include "gpuplan/simulate.hpp"

#include <catch2/catch.hpp>

#include "gpuplan/error.hpp"
#include "simulate/durations.hpp"
#include "simulate/replay.hpp"
#include "solve/planning.hpp"

using namespace gpuplan;
using namespace gpuplan::testing;

namespace {

Assignment placed(Unit u, const std::string& node, std::vector<int> gpus, double start) {
  Assignment a;
  a.unit = std::move(u);
  a.node = node;
  a.gpus = std::move(gpus);
  a.start_s = start;
  a.end_s = start + a.unit.duration_s;
  return a;
}

Plan hand_plan(std::vector<Assignment> assignments) {
  Plan plan;
  plan.assignments = std::move(assignments);
  for (const auto& a : plan.assignments) plan.summary.makespan_s = std::max(plan.summary.makespan_s, a.end_s);
  return plan;
}

}  // namespace

TEST_CASE("With the planned durations the static executor ends when the plan does, the dynamic one near it",
          "[simulate]") {
  Fleet fleet = fleet_of({{"h100", 3, 8, "nvswitch"}, {"a100", 2, 8, "pairs", "a100", 40960, "8.0", "12.2"}});
  std::vector<Unit> units;
  for (int i = 0; i < 60; ++i) {
    units.push_back(unit(fmt::format("//t:u{:02}", i), 30 + (i * 37) % 200, 1 + i % 3 / 2 * (1 + i % 2)));
    if (i % 7 == 0) with_exclusive(units.back());
  }
  Plan plan = plan_of(units, fleet);
  auto replay = sim::prepare_replay(plan, fleet);
  std::vector<double> planned;
  for (const auto& a : plan.assignments) planned.push_back(a.unit.duration_s);
  CHECK(sim::run_static(replay, planned).makespan == Approx(plan.summary.makespan_s));
  // The dispatcher knows the estimates, not the plan's foresight (it placed units to fit each
  // other): with exact estimates it may end a little after the plan (here 486 s against 485).
  CHECK(sim::run_dynamic(replay, planned).makespan <= 1.02 * plan.summary.makespan_s);
}

TEST_CASE("The static executor starts a pack plan's units that share a GPU together", "[simulate]") {
  Fleet fleet = fleet_of({{"n", 1, 1}});
  std::vector<Assignment> assignments;
  for (int i = 0; i < 8; ++i) {
    Unit shared = unit(fmt::format("//a:u{}", i), 60);
    shared.vram_mib = 1024;  // single-GPU units of known memory
    shared.requirement.edit().gpus.value = 1;
    assignments.push_back(placed(shared, "n-0", {0}, i < 4 ? 0 : 60));
  }
  Plan plan = hand_plan(assignments);
  plan.policy = Policy::pack;
  auto replay = sim::prepare_replay(plan, fleet);
  auto result = sim::run_static(replay, std::vector<double>(8, 60));
  CHECK(result.makespan == Approx(120));
  CHECK(result.started_at == std::vector<double>{0, 0, 0, 0, 60, 60, 60, 60});
}

TEST_CASE("An idle node takes a unit still waiting on another node", "[simulate]") {
  // Longest planned first wherever a GPU is free: n-1 starts n-0's second unit at 0, and n-0
  // the short one when its first ends.
  Fleet fleet = fleet_of({{"n", 2, 1}});
  Plan plan = hand_plan({placed(unit("//a:first", 100), "n-0", {0}, 0),
                         placed(unit("//a:second", 100), "n-0", {0}, 100),
                         placed(unit("//b:short", 10), "n-1", {0}, 0)});
  auto replay = sim::prepare_replay(plan, fleet);
  std::vector<double> real{100, 100, 10};
  CHECK(sim::run_static(replay, real).makespan == 200);
  auto dynamic = sim::run_dynamic(replay, real);
  CHECK(dynamic.makespan == 110);
  CHECK(dynamic.started_at[1] == 0);
  CHECK(dynamic.ran_on[1] == 1);
  CHECK(dynamic.started_at[2] == 100);
  CHECK(dynamic.taken_elsewhere == 2);
}

TEST_CASE("A node never takes a unit it cannot run", "[simulate]") {
  Fleet fleet = fleet_of({{"h100", 1, 1}, {"a100", 1, 1, "nvswitch", "a100", 40960, "8.0", "12.2"}});
  Unit second = unit("//a:second", 100);
  with_models(second, {"h100"});
  Plan plan = hand_plan({placed(unit("//a:first", 100), "h100-0", {0}, 0), placed(second, "h100-0", {0}, 100),
                         placed(unit("//b:short", 10), "a100-0", {0}, 0)});
  auto replay = sim::prepare_replay(plan, fleet);
  auto dynamic = sim::run_dynamic(replay, {100, 100, 10});
  CHECK(dynamic.makespan == 200);
  CHECK(dynamic.taken_elsewhere == 0);
}

TEST_CASE("Units that differ only in their vendor are each run on their vendor's GPUs", "[simulate]") {
  // The replay grouped units by what they need of a node and left the vendor out: the AMD unit
  // was judged by the NVIDIA one's needs (or the other way round), never ran on the AMD node, and
  // the NVIDIA node ran it after its own.
  Fleet fleet = fleet_of({{"h100", 1, 1}, {"mi300x", 1, 1, "nvswitch", "mi300x", 196608, "9.0", "12.4"}});
  fleet.nodes[1].gpus[0].vendor = "amd";
  auto vendor = [](Unit u, const std::string& name) {
    u.requirement.edit().vendor = Sourced<std::string>{name, "tag requires-gpu-" + name};
    return u;
  };
  Plan plan = hand_plan({placed(vendor(unit("//nv:first", 100), "nvidia"), "h100-0", {0}, 0),
                         placed(vendor(unit("//nv:second", 100), "nvidia"), "h100-0", {0}, 100),
                         placed(vendor(unit("//amd:only", 10), "amd"), "mi300x-0", {0}, 0)});
  auto replay = sim::prepare_replay(plan, fleet);
  auto dynamic = sim::run_dynamic(replay, {100, 100, 10});
  CHECK(dynamic.makespan == 200);
  CHECK(dynamic.taken_elsewhere == 0);
  CHECK(dynamic.ran_on[2] == 1);
}

TEST_CASE("A taken NVLink unit gets a connected pair on its new node", "[simulate]") {
  // The pair-linked node runs four 1-GPU units on GPUs 0-3 (longest planned first, lowest
  // GPUs first); at 20 GPUs 1 and 3 free up, which are not linked, so the 2-GPU NVLink unit
  // waits until GPU 0 frees at 100 and takes the pair 0,1.
  Fleet fleet = fleet_of({{"h100", 1, 2}, {"a100", 1, 4, "pairs", "a100", 81920, "8.0", "12.4"}});
  Unit wide = unit("//w:nvlink", 50, 2);
  with_nvlink(wide);
  Plan plan =
      hand_plan({placed(unit("//h:long", 300, 2), "h100-0", {0, 1}, 0), placed(wide, "h100-0", {0, 1}, 300),
                 placed(unit("//p:a", 300), "a100-0", {0}, 0), placed(unit("//p:b", 100), "a100-0", {1}, 0),
                 placed(unit("//p:c", 20), "a100-0", {2}, 0), placed(unit("//p:d", 200), "a100-0", {3}, 0)});
  auto replay = sim::prepare_replay(plan, fleet);
  auto dynamic = sim::run_dynamic(replay, {300, 50, 100, 300, 20, 20});
  CHECK(dynamic.taken_elsewhere == 1);
  CHECK(dynamic.ran_on[1] == 1);
  CHECK(dynamic.started_at[1] == 100);
  CHECK(dynamic.makespan == 300);
  auto late = sim::run_dynamic(replay, {300, 250, 100, 300, 20, 20});
  CHECK(late.makespan == 350);  // taken at 100 on GPUs 0,1, not at 20 on 1,3
}

TEST_CASE("A gpu-exclusive unit runs alone on its node in both executors", "[simulate]") {
  Fleet fleet = fleet_of({{"n", 1, 2}});
  Unit alone = unit("//x:alone", 50);
  with_exclusive(alone);
  Plan plan = hand_plan({placed(alone, "n-0", {0}, 0), placed(unit("//x:after", 10), "n-0", {1}, 50)});
  auto replay = sim::prepare_replay(plan, fleet);
  CHECK(sim::run_static(replay, {100, 10}).makespan == 110);
  CHECK(sim::run_dynamic(replay, {100, 10}).makespan == 110);
}

TEST_CASE("A plan for another fleet is bad input naming the node", "[simulate]") {
  Fleet fleet = fleet_of({{"n", 1, 1}});
  Plan plan = hand_plan({placed(unit("//a:b", 10), "gone-3", {0}, 0)});
  CHECK_THROWS_WITH(sim::prepare_replay(plan, fleet), Catch::Contains("gone-3"));
}

TEST_CASE("simulate gives the same report for the same seed, and another for another", "[simulate]") {
  Fleet fleet = fleet_of({{"h100", 4, 8, "nvswitch"}});
  std::vector<Unit> units;
  for (int i = 0; i < 200; ++i)
    units.push_back(unit(fmt::format("//t:u{:03}", i), 20 + (i * 53) % 300, 1 + i % 5 / 4));
  Plan plan = plan_of(units, fleet);
  SimulateOptions options;
  options.runs = 15;
  auto a = simulate(plan, fleet, options);
  auto b = simulate(plan, fleet, options);
  CHECK(a.dynamic_makespan.median == b.dynamic_makespan.median);
  CHECK(a.static_makespan.p95 == b.static_makespan.p95);
  CHECK(a.hindsight_bound.median == b.hindsight_bound.median);
  options.seed = 2;
  auto c = simulate(plan, fleet, options);
  CHECK(c.static_makespan.median != a.static_makespan.median);
  // No executor beats the bound, and taking units elsewhere never loses much here.
  CHECK(a.static_makespan.median >= a.hindsight_bound.median);
  CHECK(a.dynamic_makespan.median >= a.hindsight_bound.median);
  CHECK(a.dynamic_makespan.median <= a.static_makespan.median);
}

TEST_CASE("With no noise every run is the plan", "[simulate]") {
  Fleet fleet = fleet_of({{"h100", 2, 8, "nvswitch"}});
  std::vector<Unit> units;
  for (int i = 0; i < 40; ++i) units.push_back(unit(fmt::format("//t:u{:03}", i), 10 + i));
  Plan plan = plan_of(units, fleet);
  SimulateOptions options;
  options.noise.sigma = 0;
  options.runs = 3;
  auto r = simulate(plan, fleet, options);
  CHECK(r.static_makespan.median == Approx(plan.summary.makespan_s));
  CHECK(r.static_makespan.p95 == Approx(plan.summary.makespan_s));
  CHECK(r.hindsight_bound.median == Approx(plan.summary.lower_bound_s));
}

TEST_CASE("History noise draws each unit's duration from its own samples", "[simulate]") {
  Fleet fleet = fleet_of({{"n", 1, 1}});
  Plan plan =
      hand_plan({placed(unit("//a:known", 100), "n-0", {0}, 0), placed(unit("//a:new", 5), "n-0", {0}, 100)});
  History history;
  Sample seven;
  seven.seconds = 7;
  history.samples[{"//a:known", std::nullopt}] = {seven, seven};
  SimulateOptions options;
  options.noise.history = &history;
  options.runs = 4;
  auto r = simulate(plan, fleet, options);
  CHECK(r.units_without_history == 1);
  CHECK(r.static_makespan.median == 12);
  CHECK(r.dynamic_makespan.p95 == 12);
}

TEST_CASE("History noise never draws a run that did part of the unit's work", "[simulate]") {
  Fleet fleet = fleet_of({{"n", 1, 1}});
  Plan plan = hand_plan({placed(unit("//a:known", 100), "n-0", {0}, 0)});
  History history;
  Sample whole, filtered;
  whole.seconds = 7;
  filtered.seconds = 0.3;  // a developer's --test_filter run of one case
  filtered.filtered = true;
  history.samples[{"//a:known", std::nullopt}] = {whole, filtered, filtered, filtered};
  SimulateOptions options;
  options.noise.history = &history;
  options.runs = 8;
  auto r = simulate(plan, fleet, options);
  CHECK(r.static_makespan.median == 7);  // was below 7: the 0.3 s runs drawn as the unit's
  CHECK(r.static_makespan.p95 == 7);
}

TEST_CASE("History of another shard count is not replayed as the plan's shards", "[simulate]") {
  // The plan splits 8 old shards of 50 s into 4 of 100 s; old shard k's 50 s is not new shard k's.
  Fleet fleet = fleet_of({{"n", 1, 1}});
  std::vector<Assignment> placements;
  for (int shard = 0; shard < 4; ++shard) {
    Unit u = unit("//a:sharded", 100);
    u.shard_index = shard;
    u.shard_count = 4;
    placements.push_back(placed(u, "n-0", {0}, shard * 100.0));
  }
  Plan plan = hand_plan(placements);
  History history;
  Sample fifty;
  fifty.seconds = 50;
  for (int shard = 0; shard < 8; ++shard) history.samples[{"//a:sharded", shard}] = {fifty};
  SimulateOptions options;
  options.noise.history = &history;
  options.runs = 2;
  auto r = simulate(plan, fleet, options);
  CHECK(r.units_resharded == 4);
  CHECK(r.static_makespan.median == 400);   // was 200: the plan looked twice too pessimistic
  history.shard_counts["//a:sharded"] = 4;  // the same shards: replayed
  history.samples.erase(history.samples.lower_bound({"//a:sharded", 4}), history.samples.end());
  r = simulate(plan, fleet, options);
  CHECK(r.units_resharded == 0);
  CHECK(r.static_makespan.median == 200);
  // A whole test's own runs are replayed, whatever shard rows of another time sit beside them.
  Plan whole = hand_plan({placed(unit("//a:whole", 100), "n-0", {0}, 0)});
  history.samples[{"//a:whole", std::nullopt}] = {fifty};
  history.samples[{"//a:whole", 1}] = {fifty};
  r = simulate(whole, fleet, options);
  CHECK(r.units_without_history == 0);
  CHECK(r.static_makespan.median == 50);
}

TEST_CASE("A stopped or timed-out sample is drawn as a finished run at least that long", "[simulate]") {
  // //a:stopped finished once in 100 s and was stopped (Ctrl-C) three times after 5 s; those are
  // not 5-second runs. //a:killed always hit its 300 s timeout: it will hold its GPU that long.
  Fleet fleet = fleet_of({{"n", 2, 1}});
  Plan plan = hand_plan(
      {placed(unit("//a:stopped", 100), "n-0", {0}, 0), placed(unit("//a:killed", 300), "n-1", {0}, 0)});
  Sample finished;
  finished.seconds = 100;
  Sample stopped;
  stopped.seconds = 5;
  stopped.timed_out = true;
  Sample killed;
  killed.seconds = 300;
  killed.timed_out = true;
  Sample quick;
  quick.seconds = 20;
  History history;
  history.samples[{"//a:stopped", std::nullopt}] = {stopped, finished, stopped, stopped};
  history.samples[{"//a:killed", std::nullopt}] = {quick, killed};
  auto source = sim::duration_source(plan, DurationNoise{0, &history}, 10);
  for (int run = 0; run < 20; ++run) {
    auto durations = sim::draw_durations(source, 1, run);
    CHECK(durations[0] == 100);
    CHECK((durations[1] == 20 || durations[1] == 300));
  }
}

TEST_CASE("The dynamic executor starts a node's longest planned unit first", "[simulate]") {
  // n-0 plans its long unit second; estimates are off and it runs 300 s: started first it ends
  // the run at 300, and idle n-1 takes the short one.
  Fleet fleet = fleet_of({{"n", 2, 1}});
  Plan plan =
      hand_plan({placed(unit("//a:short", 10), "n-0", {0}, 0), placed(unit("//a:long", 100), "n-0", {0}, 10),
                 placed(unit("//b:one", 60), "n-1", {0}, 0), placed(unit("//b:two", 50), "n-1", {0}, 60)});
  auto replay = sim::prepare_replay(plan, fleet);
  std::vector<double> real{10, 300, 60, 50};
  CHECK(sim::run_static(replay, real).makespan == 310);
  auto dynamic = sim::run_dynamic(replay, real);
  CHECK(dynamic.started_at[1] == 0);
  CHECK(dynamic.started_at[0] == 110);
  CHECK(dynamic.makespan == 300);
  CHECK(dynamic.taken_elsewhere == 1);
}

namespace {
/// On one node of two GPUs: a 100 s unit on GPU 0, a 30 s one on GPU 1, then a 2-GPU 80 s one.
Plan long_wide_short() {
  return hand_plan({placed(unit("//a:long", 100), "n-0", {0}, 0),
                    placed(unit("//a:wide", 80, 2), "n-0", {0, 1}, 100),
                    placed(unit("//a:short", 30), "n-0", {1}, 0)});
}
}  // namespace

TEST_CASE("A unit that does not fit the free GPUs lets a shorter one that fits start", "[simulate]") {
  // Two GPUs: the 100 s unit takes GPU 0; the 2-GPU unit does not fit beside it, so the 30 s
  // one starts on GPU 1, and the 2-GPU unit when both are free.
  Fleet fleet = fleet_of({{"n", 1, 2}});
  Plan plan = long_wide_short();
  auto replay = sim::prepare_replay(plan, fleet);
  auto dynamic = sim::run_dynamic(replay, {100, 80, 30});
  CHECK(dynamic.started_at[2] == 0);
  CHECK(dynamic.started_at[1] == 100);
  CHECK(dynamic.makespan == 180);
}

TEST_CASE("Explaining a dynamic run accounts for every GPU-second up to its end", "[simulate]") {
  // GPU 1 idles from 30 to 100 while the 2-GPU unit waits (unfit); nothing starts after 100.
  Fleet fleet = fleet_of({{"n", 1, 2}});
  Plan plan = long_wide_short();
  auto replay = sim::prepare_replay(plan, fleet);
  auto r = sim::run_dynamic(replay, {100, 80, 30}, true);
  REQUIRE(r.spent.size() == 1);
  CHECK(r.spent[0].working == 100 + 160 + 30);
  CHECK(r.spent[0].unfit == 70);
  CHECK(r.spent[0].starved == 0);
  CHECK(r.spent[0].tail == 0);
}
