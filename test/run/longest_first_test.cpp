// The order the dynamic executor runs a node's own units in.
#include "run/longest_first.hpp"

#include <catch2/catch.hpp>

using namespace gpuplan;

namespace {
Assignment on(const char* id, std::vector<int> gpus, double start, double end) {
  Assignment a;
  a.unit.id = id;
  a.gpus = std::move(gpus);
  a.start_s = start;
  a.end_s = end;
  return a;
}
using Order = std::vector<size_t>;
}  // namespace

TEST_CASE("A node's longest planned unit starts first, on the GPUs the plan gave it") {
  std::vector<Assignment> units{on("x", {0}, 0, 10), on("y", {0}, 10, 110), on("z", {1}, 0, 50)};
  REQUIRE(longest_first(units, Policy::exact) == Order{1, 2, 0});
  CHECK(units[1].start_s == 0);
  CHECK(units[1].end_s == 100);
  CHECK(units[1].gpus == std::vector<int>{0});
  CHECK(units[2].start_s == 0);
  CHECK(units[0].start_s == 100);
  CHECK(units[0].end_s == 110);
}

TEST_CASE("A unit holding the node waits for every GPU in the new order") {
  Assignment alone = on("alone", {0}, 10, 60);
  alone.unit.requirement.edit().exclusive = Sourced<bool>{true, "test"};
  std::vector<Assignment> units{on("a", {0}, 0, 10), on("b", {1}, 0, 5), alone};
  REQUIRE(longest_first(units, Policy::exact) == Order{2, 0, 1});
  CHECK(units[0].start_s == 50);
  CHECK(units[1].start_s == 50);
}

TEST_CASE("Units planned to share a GPU keep the plan's times and order") {
  std::vector<Assignment> packed{on("p", {0}, 0, 10), on("q", {0}, 5, 100)};
  REQUIRE(longest_first(packed, Policy::pack) == Order{0, 1});
  CHECK(packed[1].start_s == 5);
}
