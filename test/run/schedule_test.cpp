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
  ExecSchedule s({on({0}, 0, 100), on({0}, 0, 10), on({0}, 10, 20)});
  REQUIRE(s.ready() == Ready{0});
  s.started(0);
  REQUIRE(s.ready() == Ready{1});
  s.started(1);
  s.finished(1);
  REQUIRE(s.ready() == Ready{2});  // runs beside unit 0, as planned
}
