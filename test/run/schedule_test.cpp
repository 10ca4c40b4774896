#include <catch2/catch.hpp>

#include "gpuplan/run.hpp"

using namespace gpuplan;

namespace {
Assignment on(std::vector<int> gpus, double start, double end) {
  Assignment a;
  a.gpus = std::move(gpus);
  a.start_s = start;
  a.end_s = end;
  return a;
}
using Ready = std::vector<size_t>;
}  // namespace

TEST_CASE("units on different GPUs start together") {
  ExecSchedule s({on({0}, 0, 10), on({1}, 0, 10), on({2, 3}, 0, 10)});
  REQUIRE(s.ready() == Ready{0, 1, 2});
}

TEST_CASE("a unit starts as soon as the units before it on its GPUs finish, not at its planned time") {
  ExecSchedule s({on({0}, 0, 100), on({1}, 0, 10), on({1}, 10, 20), on({0, 1}, 100, 200)});
  REQUIRE(s.ready() == Ready{0, 1});
  s.started(0);
  s.started(1);
  REQUIRE(s.ready().empty());
  s.finished(1);
  REQUIRE(s.ready() == Ready{2});
  s.started(2);
  s.finished(0);
  REQUIRE(s.ready().empty());  // unit 3 also waits for unit 2 on GPU 1
  s.finished(2);
  REQUIRE(s.ready() == Ready{3});
  s.started(3);
  REQUIRE(s.all_started());
}

TEST_CASE("the plan's order on a GPU holds even when a later unit could fit earlier") {
  ExecSchedule s({on({0}, 0, 10), on({0, 1}, 10, 20), on({1}, 20, 30)});
  s.started(0);
  REQUIRE(s.ready().empty());  // GPU 1 is free, but unit 2 comes after unit 1 there
}

TEST_CASE("units the plan packs onto one GPU run together, in plan order") {
  auto shared = [](double start, double end) {
    auto a = on({0}, start, end);
    a.unit.vram_mib = 1024;  // a pack plan's single-GPU unit of known memory
    a.unit.requirement.edit().gpus.value = 1;
    return a;
  };
  ExecSchedule s({shared(0, 100), shared(0, 10), shared(10, 20)}, Policy::pack);
  REQUIRE(s.ready() == Ready{0});
  s.started(0);
  REQUIRE(s.ready() == Ready{1});
  s.started(1);
  s.finished(1);
  REQUIRE(s.ready() == Ready{2});  // runs beside unit 0, as planned
}

TEST_CASE("units that do not share their GPU never run beside each other, whatever their times") {
  // A unit planned to last 0 s inside another's time, and times that overlap by a rounding: exec had
  // run both on the GPU at once (verify called the first plan valid).
  for (Policy policy : {Policy::exact, Policy::pack}) {
    ExecSchedule s({on({0}, 0, 300), on({0}, 0, 0), on({0}, 299.999, 400)}, policy);
    REQUIRE(s.ready() == Ready{0});
    s.started(0);
    REQUIRE(s.ready().empty());
    s.finished(0);
    REQUIRE(s.ready() == Ready{1});
    s.started(1);
    REQUIRE(s.ready().empty());
    s.finished(1);
    REQUIRE(s.ready() == Ready{2});
  }
}

TEST_CASE("an exclusive unit waits for every unit before it on the node and every later one waits for it") {
  auto exclusive = on({1}, 10, 20);
  exclusive.unit.requirement.edit().exclusive = Sourced<bool>{true, "tag gpu-exclusive"};
  ExecSchedule s({on({0}, 0, 10), on({2}, 0, 5), exclusive, on({0}, 20, 30), on({2}, 20, 30)});
  REQUIRE(s.ready() == Ready{0, 1});
  s.started(0);
  s.started(1);
  s.finished(0);
  REQUIRE(s.ready().empty());  // the unit on GPU 2 still runs
  s.finished(1);
  REQUIRE(s.ready() == Ready{2});
  s.started(2);
  REQUIRE(s.ready().empty());
  s.finished(2);
  REQUIRE(s.ready() == Ready{3, 4});
}

TEST_CASE("a node's units set up and run through in near-linear time") {
  std::vector<Assignment> units;
  for (int i = 0; i < 16000; ++i) units.push_back(on({i % 8}, (i / 8) * 10.0, (i / 8) * 10.0 + 10));
  ExecSchedule s(units);
  size_t done = 0;
  while (!s.all_started()) {
    auto ready = s.ready();
    REQUIRE(ready.size() <= 8);
    for (size_t i : ready) {
      s.started(i);
      s.finished(i);
      ++done;
    }
  }
  REQUIRE(done == units.size());
}
