#include <catch2/catch.hpp>
#include <sstream>

#include "gpuplan/fleet.hpp"

using namespace gpuplan;

namespace {

Node node_with(int gpus, const std::string& topology) {
  std::istringstream in("version: 1\npools:\n  - name: n\n    gpu: {model: H100-SXM-80GB, count: " +
                        std::to_string(gpus) + "}\n    cuda: \"12.4\"\n    topology: " + topology + "\n");
  return load_fleet(in, "fleet.yaml").nodes.front();
}

using Sets = std::vector<std::vector<int>>;

}  // namespace

TEST_CASE("on an NVSwitch node every set of GPUs is connected") {
  auto node = node_with(8, "nvswitch");
  REQUIRE(node.connected({0, 1, 2, 3, 4, 5, 6, 7}));
  REQUIRE(node.connected_sets(4).size() == 70);
  REQUIRE(node.connected_sets(8) == Sets{{0, 1, 2, 3, 4, 5, 6, 7}});
  REQUIRE(node.connected_sets(2).front() == std::vector<int>{0, 1});
  REQUIRE(node.connected_sets(2).back() == std::vector<int>{6, 7});
}

TEST_CASE("on a PCIe node only single GPUs count as connected") {
  auto node = node_with(4, "pcie");
  REQUIRE_FALSE(node.connected({0, 1}));
  REQUIRE(node.connected({2}));
  REQUIRE(node.connected_sets(1) == Sets{{0}, {1}, {2}, {3}});
  REQUIRE(node.connected_sets(2).empty());
}

TEST_CASE("NVLink pairs connect within a pair and not across") {
  auto node = node_with(4, "{nvlink_pairs: [[0, 2], [1, 3]]}");
  REQUIRE(node.connected({0, 2}));
  REQUIRE_FALSE(node.connected({0, 1}));
  REQUIRE(node.connected_sets(2) == Sets{{0, 2}, {1, 3}});
  REQUIRE(node.connected_sets(3).empty());
}

TEST_CASE("NVLink groups are all-to-all inside and apart from each other") {
  auto node = node_with(8, "{nvlink_groups: [[0, 1, 2, 3], [4, 5, 6, 7]]}");
  REQUIRE(node.connected_sets(4) == Sets{{0, 1, 2, 3}, {4, 5, 6, 7}});
  REQUIRE(node.connected_sets(3).size() == 8);
  REQUIRE_FALSE(node.connected({3, 4}));
}

TEST_CASE("an explicit matrix gives exactly the links it names") {
  auto node = node_with(3, "{matrix: [\"X NV4 NV4\", \"NV4 X SYS\", \"NV4 SYS X\"]}");
  REQUIRE(node.connected({0, 1}));
  REQUIRE(node.connected({0, 2}));
  REQUIRE_FALSE(node.connected({1, 2}));
  REQUIRE(node.connected_sets(2) == Sets{{0, 1}, {0, 2}});
  REQUIRE(describe_nvlink(node, "matrix") == "links 0-1 0-2");
}

TEST_CASE("connected sets of impossible sizes are empty, and an index outside the node is not connected") {
  auto node = node_with(2, "nvswitch");
  REQUIRE(node.connected_sets(0).empty());
  REQUIRE(node.connected_sets(3).empty());
  REQUIRE_FALSE(node.connected({0, 5}));
}

TEST_CASE("the NVLink structure reads the way people describe it") {
  REQUIRE(describe_nvlink(node_with(8, "nvswitch"), "nvswitch") == "all-to-all (NVSwitch)");
  REQUIRE(describe_nvlink(node_with(4, "{nvlink_groups: [[0, 1, 2, 3]]}"), "nvlink_groups") == "all-to-all");
  REQUIRE(describe_nvlink(node_with(4, "{nvlink_pairs: [[0, 1], [2, 3]]}"), "nvlink_pairs") ==
          "pairs 0-1 2-3");
  REQUIRE(describe_nvlink(node_with(8, "{nvlink_groups: [[0, 2, 4, 6], [1, 3, 5, 7]]}"), "nvlink_groups") ==
          "groups 0,2,4,6 1,3,5,7");
  REQUIRE(describe_nvlink(node_with(4, "pcie"), "pcie") == "none (PCIe)");
  REQUIRE(describe_nvlink(node_with(1, "pcie"), "pcie") == "none (1 GPU)");
}
