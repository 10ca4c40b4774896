#include <catch2/catch.hpp>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpuplan/fleet.hpp"

using namespace gpuplan;
using Catch::Matchers::Contains;

namespace {

Fleet example() {
  std::ifstream in(GPUPLAN_SOURCE_DIR "/examples/fleet.yaml");
  return load_fleet(in, "examples/fleet.yaml");
}

}  // namespace

TEST_CASE("the summary counts pools, nodes, GPUs and memory in its first line") {
  auto text = fleet_summary(example());
  REQUIRE_THAT(text, Catch::Matchers::StartsWith(
                         "examples/fleet.yaml: 4 pools, 18 nodes, 70 GPUs, 4.5 TiB of GPU memory\n"));
}

TEST_CASE("the summary has one aligned row per pool with its NVLink structure") {
  auto text = fleet_summary(example());
  REQUIRE_THAT(
      text, Contains("pool     nodes  GPUs/node  model            VRAM/GPU  CC   CUDA  driver      NVLink\n"
                     "h100         4          8  H100-SXM-80GB   81559 MiB  9.0  12.4  550.54.15   "
                     "all-to-all (NVSwitch)\n"
                     "a100-80      4          4  A100-SXM-80GB   81920 MiB  8.0  12.2  535.161.08  "
                     "pairs 0-1 2-3\n"));
  REQUIRE_THAT(text, Contains("GPUs by model:\n  A100-PCIE-40GB     16 GPUs  640.0 GiB\n"));
  REQUIRE_THAT(text, Contains("  L4                  6 GPUs  135.0 GiB\n"));
  REQUIRE_THAT(text, Contains("CUDA versions: 11.8 (4 nodes), 12.2 (4 nodes), 12.4 (10 nodes)\n"));
}

TEST_CASE("the JSON summary carries the same facts for machines") {
  auto json = nlohmann::json::parse(fleet_summary_json(example()));
  REQUIRE(json["totals"]["gpus"] == 70);
  REQUIRE(json["totals"]["vram_mib"] == 32 * 81559 + 16 * 81920 + 16 * 40960 + 6 * 23034);
  REQUIRE(json["totals"]["gpus_by_model"]["L4"] == 6);
  REQUIRE(json["totals"]["cuda_versions"][0]["cuda"] == "11.8");
  REQUIRE(json["pools"][1]["nvlink_links"] == nlohmann::json::parse("[[0,1],[2,3]]"));
  REQUIRE(json["pools"][3]["nodes"][5] == "ci-l4-06");
  REQUIRE(json["pools"][3]["labels"]["cloud"] == "gcp");
}

TEST_CASE("nodes without CUDA (AMD, Intel) count as such among the CUDA versions") {
  std::istringstream in(
      "version: 1\npools:\n  - name: mi\n    count: 2\n    gpu: {model: MI300X, count: 8}\n"
      "  - name: h\n    count: 1\n    gpu: {model: H100-SXM-80GB, count: 8}\n    cuda: \"12.4\"\n");
  REQUIRE_THAT(fleet_summary(load_fleet(in, "fleet.yaml")),
               Contains("CUDA versions: none (2 nodes), 12.4 (1 node)\n"));
}
