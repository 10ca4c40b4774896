// A GPU test tied to one vendor is placed only on that vendor's GPUs, and says so when it cannot be.
#include <catch2/catch.hpp>

#include "solve/planning.hpp"

using namespace gpuplan;
using namespace gpuplan::testing;

namespace {

Fleet mixed_fleet() {
  auto fleet = fleet_of({{"h100", 1, 8, "nvswitch", "h100", 81920, "9.0", "12.4"},
                         {"mi300x", 1, 8, "pcie", "mi300x", 196608, "9.0", "12.4"}});
  for (auto& node : fleet.nodes)
    if (node.pool == "mi300x")
      for (auto& gpu : node.gpus) gpu.vendor = "amd";
  return fleet;
}

Unit& with_vendor(Unit& u, const std::string& vendor) {
  u.requirement.edit().vendor = Sourced<std::string>{vendor, "tag requires-gpu-" + vendor};
  return u;
}

}  // namespace

TEST_CASE("AMD tests go to AMD GPUs and NVIDIA tests to NVIDIA GPUs, however busy each pool is") {
  auto fleet = mixed_fleet();
  std::vector<Unit> units;
  for (int i = 0; i < 12; ++i) {
    Unit amd = unit(fmt::format("//t:amd{}", i), 100);
    units.push_back(with_vendor(amd, "amd"));
    Unit nv = unit(fmt::format("//t:nv{}", i), 100);
    units.push_back(with_vendor(nv, "nvidia"));
  }
  auto plan = plan_of(units, fleet);
  REQUIRE(plan.unschedulable.empty());
  for (const auto& a : plan.assignments)
    CHECK(a.node == (a.unit.id.find("amd") != std::string::npos ? "mi300x-0" : "h100-0"));
  CHECK(broken_promise(plan, fleet).empty());
}

TEST_CASE("a test for a vendor the fleet lacks is unschedulable and the reason names the vendor") {
  auto fleet = mixed_fleet();
  Unit intel = unit("//t:intel", 100, 2);
  auto plan = plan_of({with_vendor(intel, "intel")}, fleet);
  REQUIRE(plan.unschedulable.size() == 1);
  CHECK(plan.unschedulable[0].reason == "needs 2 Intel GPUs; node mi300x-0 has AMD GPUs");
}
