#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "gpuplan/error.hpp"
#include "gpuplan/fleet.hpp"

using namespace gpuplan;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

Fleet load(const std::string& yaml) {
  std::istringstream in(yaml);
  return load_fleet(in, "fleet.yaml");
}

/// What `gpuplan fleet check` would print after "gpuplan: " for this fleet file.
std::string error_of(const std::string& yaml) {
  try {
    load(yaml);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(accepted)";
}

/// A one-pool fleet whose pool body is `pool` (indented four spaces per line by the caller).
std::string fleet_with(const std::string& pool) { return "version: 1\npools:\n  - name: p\n" + pool; }

const std::string h100 = "    gpu: {model: H100-SXM-80GB, count: 8}\n    cuda: \"12.4\"\n";

}  // namespace

TEST_CASE("the example fleet expands pools into named nodes with catalog values") {
  std::ifstream in(GPUPLAN_SOURCE_DIR "/examples/fleet.yaml");
  auto fleet = load_fleet(in, "examples/fleet.yaml");
  REQUIRE(fleet.pools.size() == 4);
  REQUIRE(fleet.nodes.size() == 18);
  const auto& h100_0 = fleet.nodes.front();
  REQUIRE(h100_0.name == "h100-0");
  REQUIRE(h100_0.gpus.size() == 8);
  REQUIRE(h100_0.gpus[7].index == 7);
  REQUIRE(h100_0.gpus[0].vram_mib == 81559);
  REQUIRE(h100_0.gpus[0].family == "h100");
  REQUIRE(h100_0.gpus[0].compute_capability == *Version::parse("9.0"));
  REQUIRE(h100_0.cuda == *Version::parse("12.4"));
  REQUIRE(h100_0.labels.at("zone") == "a");
  REQUIRE(h100_0.connected({0, 3, 5, 7}));
  const auto& l4 = fleet.nodes.back();
  REQUIRE(l4.name == "ci-l4-06");
  REQUIRE(l4.pool == "l4");
  REQUIRE(fleet.pools[3].topology == "pcie");
}

TEST_CASE("the workstation example is one node ws-0 with four GPUs in NVLink pairs") {
  std::ifstream in(GPUPLAN_SOURCE_DIR "/examples/workstation.yaml");
  auto fleet = load_fleet(in, "examples/workstation.yaml");
  REQUIRE(fleet.nodes.size() == 1);
  REQUIRE(fleet.nodes[0].name == "ws-0");
  REQUIRE(fleet.nodes[0].gpus.size() == 4);
  REQUIRE(fleet.nodes[0].connected({2, 3}));
  REQUIRE_FALSE(fleet.nodes[0].connected({1, 2}));
}

TEST_CASE("explicit vram and compute capability override the catalog") {
  auto fleet =
      load(fleet_with("    gpu: {model: h100-sxm-80gb, count: 1, vram: 80GiB, compute_capability: \"9.0\"}\n "
                      "   cuda: \"12.4\"\n"));
  REQUIRE(fleet.nodes[0].gpus[0].model == "H100-SXM-80GB");
  REQUIRE(fleet.nodes[0].gpus[0].vram_mib == 81920);
}

TEST_CASE("a model the catalog does not know is accepted with its vram and compute capability") {
  auto fleet =
      load(fleet_with("    gpu: {model: RTX-5090, count: 2, vram: 32607MiB, compute_capability: \"12.0\"}\n  "
                      "  cuda: \"12.8\"\n"));
  REQUIRE(fleet.nodes[0].gpus[1].family == "rtx-5090");
  REQUIRE(fleet.nodes[0].gpus[1].vram_mib == 32607);
}

TEST_CASE("a one-node pool may list its GPUs' UUIDs") {
  auto fleet =
      load(fleet_with("    nodes: [box]\n    gpu: {model: L4, count: 2, uuids: [GPU-a, GPU-b]}\n"
                      "    cuda: \"12.4\"\n"));
  REQUIRE(fleet.nodes[0].gpus[1].uuid == "GPU-b");
}

TEST_CASE("an unknown key is reported with its position and a suggestion") {
  REQUIRE_THAT(
      error_of(fleet_with("    gpu: {model: L4, cont: 1}\n    cuda: \"12.4\"\n")),
      StartsWith("fleet.yaml:4:22: gpu.cont: unknown key (did you mean 'count'?); known here: model, count"));
  REQUIRE_THAT(error_of(fleet_with(h100 + "    toplogy: nvswitch\n")),
               StartsWith("fleet.yaml:6:5: toplogy: unknown key (did you mean 'topology'?)"));
}

TEST_CASE("a key given twice is an error, not a silent override") {
  REQUIRE(error_of(fleet_with(h100 + "    cuda: \"12.2\"\n")) ==
          "fleet.yaml:6:5: cuda: given twice (first on line 5)");
}

TEST_CASE("two nodes with the same name are an error naming both pools") {
  REQUIRE(error_of("version: 1\npools:\n  - name: a\n    count: 2\n" + h100 +
                   "  - name: b\n    nodes: [x, a-1]\n" + h100) ==
          "fleet.yaml:8:16: nodes: node name 'a-1' is already used by pool a (line 4)");
  REQUIRE(error_of("version: 1\npools:\n  - name: a\n" + h100 + "  - name: a\n" + h100) ==
          "fleet.yaml:6:11: name: pool 'a' is already defined");
}

TEST_CASE("zero or negative counts are rejected") {
  REQUIRE(error_of(fleet_with("    gpu: {model: L4, count: 0}\n    cuda: \"12.4\"\n")) ==
          "fleet.yaml:4:29: gpu.count: must be at least 1, not 0");
  REQUIRE(error_of(fleet_with("    count: -2\n" + h100)) ==
          "fleet.yaml:4:12: count: must be at least 1, not -2");
  REQUIRE(error_of(fleet_with("    nodes: []\n" + h100)) ==
          "fleet.yaml:4:12: nodes: is empty: a pool has at least one node");
}

TEST_CASE("a fleet past 500,000 nodes, GPUs and labels is refused at the pool that passes it") {
  // 50,000 nodes of 8 GPUs: 450,000. A second such pool passes the limit; `count` had made
  // 12 million GPUs from 1.5 KB of YAML before anything was checked.
  std::string pool = "    count: 10000\n    gpu: {model: H100-SXM-80GB, count: 8}\n    cuda: \"12.4\"\n";
  std::string fleet = "version: 1\npools:\n";
  for (int i = 0; i < 5; ++i) fleet += fmt::format("  - name: p{}\n", i) + pool;
  REQUIRE(load(fleet).nodes.size() == 50000);
  REQUIRE(error_of(fleet + "  - name: last\n" + pool) ==
          "fleet.yaml:24:12: count: the fleet reaches 540000 nodes, GPUs and node labels with this pool, "
          "more than the 500000 gpuplan plans for (README, \"Limits\")");
  // Labels count once per node that carries them.
  REQUIRE_THAT(
      error_of(fleet_with("    count: 10000\n    labels: {a: 1, b: 2, c: 3, d: 4, e: 5}\n" +
                          std::string(pool.substr(pool.find("    gpu")))) +
               "  - name: q\n    count: 10000\n    gpu: {model: L4, count: 64}\n    cuda: \"12.4\"\n"),
      Contains("the fleet reaches 790000 nodes, GPUs and node labels"));
}

TEST_CASE("an unknown model without vram is rejected with the nearest catalog model") {
  REQUIRE_THAT(error_of(fleet_with("    gpu: {model: H100-SXM-80G, count: 8}\n    cuda: \"12.4\"\n")),
               StartsWith("fleet.yaml:4:18: gpu.model: unknown model 'H100-SXM-80G' (did you mean "
                          "'H100-SXM-80GB'?): give gpu.vram, or use a model from the catalog"));
}

TEST_CASE("a model of one's own needs only vram, as the SPEC says; without a compute capability it warns") {
  auto fleet = load(fleet_with("    gpu: {model: FooGPU-9000, count: 4, vram: 24GiB}\n    cuda: \"12.4\"\n"));
  REQUIRE(fleet.nodes.at(0).gpus.at(0).vram_mib == 24576);
  REQUIRE(fleet.nodes.at(0).gpus.at(0).compute_capability.empty());  // meets no gpu-cc constraint
  REQUIRE(fleet.warnings.size() == 1);
  REQUIRE_THAT(fleet.warnings[0],
               Contains("fleet.yaml:4:18: gpu.model: 'FooGPU-9000' is not in the catalog and "
                        "has no gpu.compute_capability"));
  auto with_cc = load(fleet_with(
      "    gpu: {model: FooGPU-9000, count: 4, vram: 24GiB, compute_capability: \"8.9\"}\n    cuda: "
      "\"12.4\"\n"));
  REQUIRE(with_cc.warnings.empty());
}

TEST_CASE("a model written as a family alone lists the catalog models it could mean") {
  REQUIRE_THAT(
      error_of(fleet_with("    gpu: {model: h100, count: 8}\n    cuda: \"12.4\"\n")),
      StartsWith("fleet.yaml:4:18: gpu.model: unknown model 'h100' (did you mean 'H100-PCIE-80GB' or "
                 "'H100-SXM-80GB'?)"));
}

// The nearest spelling of A100-80GB is V100-16GB, which no one who wrote it meant.
TEST_CASE("a model of a family with its memory suggests the catalog's models of both") {
  REQUIRE_THAT(error_of(fleet_with("    gpu: {model: A100-80GB, count: 8}\n    cuda: \"12.4\"\n")),
               StartsWith("fleet.yaml:4:18: gpu.model: unknown model 'A100-80GB' (did you mean "
                          "'A100-PCIE-80GB' or 'A100-SXM-80GB'?)"));
}

TEST_CASE("a topology index outside the node's GPUs is rejected") {
  REQUIRE(error_of(fleet_with(h100 + "    topology: {nvlink_pairs: [[0, 1], [7, 8]]}\n")) ==
          "fleet.yaml:6:43: topology.nvlink_pairs: GPU 8 is out of range: the node has 8 GPUs (0 to 7)");
}

TEST_CASE("a GPU in two NVLink groups is rejected") {
  REQUIRE(error_of(fleet_with(h100 + "    topology:\n      nvlink_groups: [[0, 1, 2, 3], [3, 4, 5]]\n")) ==
          "fleet.yaml:7:38: topology.nvlink_groups: GPU 3 is already in the group at line 7, column 23: "
          "a GPU is in one NVLink group");
  REQUIRE(error_of(fleet_with(h100 + "    topology: {nvlink_pairs: [[0, 1, 2]]}\n")) ==
          "fleet.yaml:6:31: topology.nvlink_pairs: a pair has two GPUs, this has 3");
}

TEST_CASE("unparsable versions and sizes are rejected") {
  REQUIRE(error_of(fleet_with("    gpu: {model: L4, count: 1}\n    cuda: twelve\n")) ==
          "fleet.yaml:5:11: cuda: 'twelve' is not a version like \"12.4\"");
  REQUIRE(error_of(fleet_with(h100 + "    driver: 550.54.x\n")) ==
          "fleet.yaml:6:13: driver: '550.54.x' is not a version like \"550.54.15\"");
  REQUIRE(error_of(fleet_with("    gpu: {model: L4, count: 1, vram: lots}\n    cuda: \"12.4\"\n")) ==
          "fleet.yaml:4:38: gpu.vram: 'lots' is not a size: write it with a unit, e.g. 81559MiB or 80GiB");
}

TEST_CASE("a YAML syntax error points at where the parser stopped") {
  REQUIRE_THAT(error_of("version: 1\npools:\n  - name: [p\n"),
               StartsWith("fleet.yaml:4:1: YAML syntax error: "));
}

TEST_CASE("an empty fleet is rejected") {
  REQUIRE_THAT(error_of(""), StartsWith("fleet.yaml:1:1: empty fleet"));
  REQUIRE(error_of("version: 1\npools: []\n") ==
          "fleet.yaml:2:8: pools: empty fleet: list at least one pool");
  REQUIRE(error_of("version: 1\n") == "fleet.yaml:1:1: pools: missing: the list of pools");
}

TEST_CASE("values of the wrong type are rejected") {
  REQUIRE(error_of(fleet_with("    gpu: H100-SXM-80GB\n    cuda: \"12.4\"\n")) ==
          "fleet.yaml:4:10: gpu: must be a mapping, not 'H100-SXM-80GB'");
  REQUIRE(error_of(fleet_with("    count: four\n" + h100)) ==
          "fleet.yaml:4:12: count: must be a whole number, not 'four'");
  REQUIRE(error_of(fleet_with(h100 + "    labels: [a, b]\n")) ==
          "fleet.yaml:6:13: labels: must be a mapping, not a list");
  REQUIRE(error_of("- version: 1\n") == "fleet.yaml:1:1: fleet: must be a mapping, not a list");
  REQUIRE(error_of("version: 2\npools: []\n") ==
          "fleet.yaml:1:10: version: only version 1 is known, not '2'");
}

TEST_CASE("count and nodes together are ambiguous") {
  REQUIRE(error_of(fleet_with("    count: 2\n    nodes: [a, b]\n" + h100)) ==
          "fleet.yaml:5:5: nodes: give count or nodes, not both");
}

TEST_CASE("a topology matrix must be square, symmetric and in topo -m's words") {
  auto matrix = [](const std::string& rows) {
    return error_of(fleet_with(
        "    gpu: {model: L4, count: 2}\n    cuda: \"12.4\"\n    topology:\n      matrix:\n" + rows));
  };
  REQUIRE(matrix("        - X NV4\n        - NV4 X\n") == "(accepted)");
  REQUIRE(matrix("        - X NV4\n        - SYS X\n") ==
          "fleet.yaml:9:11: topology.matrix: row 1 and row 0 disagree on whether GPUs 1 and 0 are NVLinked");
  REQUIRE(
      matrix("        - [X, NVLINK]\n        - [NV4, X]\n") ==
      "fleet.yaml:8:11: topology.matrix: row 0, column 1: 'NVLINK' is not NV<n>, SYS, NODE, PHB, PXB or PIX");
  REQUIRE(matrix("        - X NV4\n") == "fleet.yaml:8:9: topology.matrix: has 1 rows for 2 GPUs");
}

TEST_CASE("UUIDs must match the GPU count and belong to a single node") {
  REQUIRE(error_of(fleet_with("    gpu: {model: L4, count: 2, uuids: [GPU-a]}\n    cuda: \"12.4\"\n")) ==
          "fleet.yaml:4:39: gpu.uuids: lists 1 UUIDs for 2 GPUs");
  REQUIRE(error_of(fleet_with(
              "    count: 2\n    gpu: {model: L4, count: 1, uuids: [GPU-a]}\n    cuda: \"12.4\"\n")) ==
          "fleet.yaml:5:39: gpu.uuids: only a pool of one node can list its GPUs' UUIDs");
}

TEST_CASE("a missing cuda version is asked for, not assumed") {
  REQUIRE_THAT(error_of(fleet_with("    gpu: {model: L4, count: 1}\n")),
               StartsWith("fleet.yaml:3:5: cuda: missing: the highest CUDA version the driver supports"));
}

TEST_CASE("a model one slip from a catalog model is read as its own model, with a warning") {
  auto fleet =
      load(fleet_with("    gpu: {model: H100-SXM-80G, count: 8, vram: 80GiB, compute_capability: \"9.0\"}\n"
                      "    cuda: \"12.4\"\n"));
  REQUIRE(fleet.warnings.size() == 1);
  REQUIRE_THAT(fleet.warnings[0],
               StartsWith("fleet.yaml:4:18: gpu.model: 'H100-SXM-80G' is not in the catalog; "
                          "did you mean 'H100-SXM-80GB'?"));
  REQUIRE(fleet.nodes[0].gpus[0].family == "h100");
  // Other digits are another model: A100-SXM-64GB is an a100 of its own, no warning.
  auto other =
      load(fleet_with("    gpu: {model: A100-SXM-64GB, count: 8, vram: 64GiB, compute_capability: \"8.0\"}\n"
                      "    cuda: \"12.4\"\n"));
  REQUIRE(other.warnings.empty());
  REQUIRE(other.nodes[0].gpus[0].family == "a100");
}

TEST_CASE("AMD and Intel pools know their vendor and need no CUDA version") {
  auto amd = load(fleet_with("    gpu: {model: MI300X, count: 8}\n"));
  REQUIRE(amd.nodes[0].gpus[0].vendor == "amd");
  REQUIRE(amd.nodes[0].gpus[0].vram_mib == 196608);
  auto intel =
      load(fleet_with("    gpu: {model: Ponte-Vecchio-128GB, vendor: intel, count: 4, vram: 128GiB}\n"));
  REQUIRE(intel.nodes[0].gpus[0].vendor == "intel");
  REQUIRE_THAT(error_of(fleet_with("    gpu: {model: MI300X, vendor: amdd, count: 8}\n")),
               Contains("gpu.vendor: 'amdd' is not nvidia, amd or intel"));
}

TEST_CASE("a fleet file that is not UTF-8 is an error at the byte, not a crash writing JSON") {
  // yaml-cpp passes the byte through; `fleet check --json` once died on it (exit 1).
  REQUIRE_THAT(error_of(fleet_with("    count: 1\n    gpu: {model: H100\xff}\n")),
               Catch::StartsWith("fleet.yaml:5:22: byte 0xff is not UTF-8"));
}

TEST_CASE("a file that is no fleet is named with a short excerpt of its line, never quoted whole") {
  // YAML reads a text file as one string, which the message once quoted whole: a 1 MB line, a
  // log file, a binary.
  REQUIRE(error_of("This is a README, not a fleet file.\nIt has several lines of prose.\n") ==
          "fleet.yaml:1:1: fleet: must be a mapping, not 'This is a README, not a fleet file.…'");
  std::string line(1'000'000, 'x');
  REQUIRE(error_of(line) == "fleet.yaml:1:1: fleet: must be a mapping, not '" + std::string(60, 'x') + "…'");
  REQUIRE(error_of(line + "\n" + line + "\n").size() < 200);
  REQUIRE(error_of("\x7f"
                   "ELF\x02\x01\x01 binary\n") ==
          "fleet.yaml:1:1: fleet: must be a mapping, not '\\x7fELF\\x02\\x01\\x01 binary'");
  REQUIRE(error_of("[{\"version\": 1}, {\"pools\": []}]\n") ==
          "fleet.yaml:1:1: fleet: must be a mapping, not a list");
  REQUIRE(error_of("version: 1\npools: " + line + "\n") ==
          "fleet.yaml:2:8: pools: must be a list, not '" + std::string(60, 'x') + "…'");
  REQUIRE(error_of(fleet_with("    gpu: {model: L4, count: 1, vram: " + line + "}\n    cuda: \"12.4\"\n")) ==
          "fleet.yaml:4:38: gpu.vram: '" + std::string(60, 'x') +
              "…' is not a size: write it with a unit, e.g. 81559MiB or 80GiB");
  REQUIRE(error_of(std::string(1000, 'k') + ": 1\n") ==
          "fleet.yaml:1:1: " + std::string(60, 'k') + "…: unknown key; known here: version, pools");
}

TEST_CASE("an unquoted version is read as written: cuda 12.10 is not the number 12.1") {
  auto fleet = load(fleet_with("    gpu: {model: H100-SXM-80GB, count: 8}\n    cuda: 12.10\n"));
  REQUIRE(fleet.nodes.at(0).cuda.str() == "12.10");
  REQUIRE(fleet.nodes.at(0).cuda > *Version::parse("12.9"));
  // No CUDA has had a minor version of 10 or more: unquoted, 12.40 was likely the number 12.4
  // written long (as PyYAML reads it), and a cuda>=12.8 test was placed there without a word.
  REQUIRE(fleet.warnings.size() == 1);
  REQUIRE(fleet.warnings[0] ==
          "fleet.yaml:5:11: cuda: 12.10 is read as written, CUDA 12.10, a minor version no CUDA has had; "
          "YAML 1.1 "
          "readers (PyYAML, Ansible) read it as the number 12.1: write \"12.1\" if that was meant");
  REQUIRE(
      load(fleet_with("    gpu: {model: H100-SXM-80GB, count: 8}\n    cuda: \"12.10\"\n")).warnings.empty());
  REQUIRE(load(fleet_with("    gpu: {model: H100-SXM-80GB, count: 8}\n    cuda: 12.11\n")).warnings.empty());
}

// yaml-cpp reads YAML 1.2, which has no merge keys: "unknown key" for a file that PyYAML reads
// left the user guessing.
TEST_CASE("a YAML merge key is refused as what it is, and an alias works") {
  REQUIRE_THAT(
      error_of("version: 1\npools:\n  - name: p\n    <<: {count: 2}\n    gpu: {model: L4, count: 1}\n"
               "    cuda: \"12.4\"\n"),
      StartsWith("fleet.yaml:4:5: <<: a YAML merge key, which YAML 1.2 (gpuplan's reader) does not have"));
  // In labels too, where it was "must be a word or number, not a mapping".
  REQUIRE_THAT(
      error_of("version: 1\npools:\n  - name: p\n    gpu: {model: L4, count: 1}\n    cuda: \"12.4\"\n"
               "    labels:\n      <<: {zone: a}\n"),
      StartsWith("fleet.yaml:7:7: labels.<<: a YAML merge key, which YAML 1.2"));
  auto fleet = load(
      "version: 1\npools:\n  - name: a\n    gpu: &l4 {model: L4, count: 2}\n    cuda: \"12.4\"\n"
      "  - name: b\n    gpu: *l4\n    cuda: \"12.4\"\n");
  REQUIRE(fleet.nodes.at(1).gpus.size() == 2);
}

TEST_CASE("a stray comma or a line indented less than the first is an error, never a hang") {
  // yaml-cpp 0.7's LoadAll, which the multi-document check used, looped forever on ",",
  // allocating (23 GB in a minute; CI's fuzzer found it).
  REQUIRE_THAT(error_of(","), StartsWith("fleet.yaml:1:1: empty fleet"));
  REQUIRE_THAT(error_of("version: 1\npools:\n  - name: p\n,\n"), Contains("YAML syntax error"));
  // A document that yaml-cpp ends at the first line indented less than its first: only the
  // first was read, and a fleet file pasted in with the wrong indentation lost its pools.
  REQUIRE(error_of("  version: 1\npools: []\n") ==
          "fleet.yaml:2:1: YAML syntax error: this line is not part of the document above it (a line "
          "indented less than the document's first line ends it)");
}

TEST_CASE("fleet facts a user mistypes are refused, not read as something else") {
  // Each was read before, with exit 0: only the first of several documents; a compute capability
  // of 89 (an RTX 4090 then took tests that need sm_90); the driver in cuda:, which met every
  // CUDA constraint; CUDA and compute capability on AMD GPUs, which took tests that ask for them;
  // a vendor against the catalog's, which turned H100s into AMD GPUs.
  REQUIRE_THAT(error_of(fleet_with(h100) + "---\n" + fleet_with(h100)),
               StartsWith("fleet.yaml:6:1: fleet: a second YAML document (after ---)"));
  REQUIRE(error_of(fleet_with(h100) + "---\n") == "(accepted)");  // an empty last document drops nothing
  REQUIRE_THAT(
      error_of(fleet_with("    gpu: {model: RTX-4090, count: 8, vram: 24GiB, compute_capability: 89}\n"
                          "    cuda: \"12.4\"\n")),
      Contains("'89' is not a compute capability: X.Y"));
  for (const char* cuda : {"550.54", "550.54.15", "124"}) {
    INFO(cuda);
    REQUIRE_THAT(error_of(fleet_with(std::string("    gpu: {model: H100-SXM-80GB, count: 8}\n    cuda: \"") +
                                     cuda + "\"\n")),
                 Contains("is not a CUDA version, such as \"12.4\""));
  }
  REQUIRE_THAT(error_of(fleet_with("    gpu: {model: MI300X, count: 8}\n    cuda: \"12.4\"\n")),
               Contains("cuda: a CUDA version on AMD GPUs"));
  REQUIRE_THAT(error_of(fleet_with("    gpu: {model: MI300X, count: 8, compute_capability: \"9.4\"}\n")),
               Contains("a compute capability is NVIDIA's (CUDA's) notion"));
  REQUIRE_THAT(error_of(fleet_with("    gpu: {model: H100-SXM-80GB, count: 8, vendor: amd}\n")),
               Contains("the catalog's H100-SXM-80GB is nvidia's, not amd"));
}

TEST_CASE("a vram override above the catalog model's memory, or of no GPU's size, is a warning") {
  auto more = load(fleet_with("    gpu: {model: H100-SXM-80GB, count: 8, vram: 80GB}\n    cuda: \"12.4\"\n"));
  REQUIRE(more.warnings.size() == 1);
  REQUIRE_THAT(more.warnings[0], Contains("80GB is more than the catalog's H100-SXM-80GB has (81559 MiB"));
  auto typo =
      load(fleet_with("    gpu: {model: Own-GPU, count: 1, vram: 80M, compute_capability: \"9.0\"}\n"
                      "    cuda: \"12.4\"\n"));
  REQUIRE_THAT(typo.warnings.at(0), Contains("80M is a size no GPU has"));
  REQUIRE(load(fleet_with("    gpu: {model: H100-SXM-80GB, count: 8, vram: 40GiB}\n    cuda: \"12.4\"\n"))
              .warnings.empty());  // less than it has: a share the team keeps for its tests
}

TEST_CASE("a CUDA version newer than the node's driver supports is warned of") {
  // Tests that need CUDA 12.8 were planned on a 550 driver's node and refused at run time.
  auto fleet =
      load(fleet_with("    gpu: {model: L4, count: 1}\n    cuda: \"12.8\"\n    driver: \"550.54.15\"\n"));
  REQUIRE(fleet.warnings.size() == 1);
  REQUIRE_THAT(fleet.warnings[0],
               Catch::Contains("cuda: 12.8 is newer than driver 550.54.15 supports (CUDA 12.4"));
  REQUIRE(load(fleet_with("    gpu: {model: L4, count: 1}\n    cuda: \"12.4\"\n    driver: \"550.54.15\"\n"))
              .warnings.empty());
}
