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

TEST_CASE("a CUDA or compute capability bound below a version is not met by a node that has none") {
  // An AMD node has no CUDA version and its GPUs no compute capability: read as 0, they met every
  // < and <= bound, so cuda<12.0 and gpu-cc<9.0 tests went to the AMD node and verify agreed.
  auto fleet = mixed_fleet();
  for (auto& node : fleet.nodes)
    if (node.pool == "mi300x") {
      node.cuda = Version{};
      for (auto& gpu : node.gpus) gpu.compute_capability = Version{};
    }
  Unit old_cuda = unit("//t:old_cuda", 100), old_cc = unit("//t:old_cc", 100);
  with_cuda(old_cuda, "<12.0");
  with_capability(old_cc, "<9.0");
  auto plan = plan_of({old_cuda, old_cc}, fleet);
  REQUIRE(plan.assignments.empty());
  REQUIRE(plan.unschedulable.size() == 2);
  for (const auto& u : plan.unschedulable)
    CHECK_THAT(u.reason, Catch::Contains("no CUDA version") || Catch::Contains("no compute capability"));
}
