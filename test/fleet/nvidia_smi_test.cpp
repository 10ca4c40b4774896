#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <iterator>
#include <sstream>

#include "gpuplan/error.hpp"
#include "gpuplan/fleet.hpp"

using namespace gpuplan;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

NamedText fixture(const std::string& name) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR "/test/data/nvidia-smi/") + name, std::ios::binary);
  REQUIRE(in);
  return {std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()), name};
}

/// The fleet `gpuplan fleet import` writes for the machine `name`, read back by the loader.
Fleet imported(const std::string& name, ImportOptions options = {}) {
  options.node = name;
  std::istringstream yaml(
      import_nvidia_smi(fixture(name + ".query.csv"), fixture(name + ".topo.txt"), options).yaml);
  return load_fleet(yaml, name + ".yaml");
}

std::vector<std::string> imported_warnings(const std::string& name) {
  return import_nvidia_smi(fixture(name + ".query.csv"), fixture(name + ".topo.txt"), {}).warnings;
}

std::string import_error(const NamedText& query, const NamedText& topo, const ImportOptions& options = {}) {
  try {
    import_nvidia_smi(query, topo, options);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(imported)";
}

}  // namespace

TEST_CASE("an HGX H100 with NV18 everywhere imports as one NVSwitch node") {
  auto fleet = imported("h100-hgx-8x");
  const auto& node = fleet.nodes.at(0);
  REQUIRE(node.name == "h100-hgx-8x");
  REQUIRE(node.pool == "h100");
  REQUIRE(node.gpus.size() == 8);
  REQUIRE(node.gpus[0].model == "H100-SXM-80GB");
  REQUIRE(node.gpus[0].vram_mib == 81559);
  REQUIRE(node.gpus[5].uuid == "GPU-00000000-0000-0000-0000-000000000005");
  REQUIRE(node.cuda == *Version::parse("12.4"));
  REQUIRE(node.driver == "550.54.15");
  REQUIRE(fleet.pools[0].topology == "nvswitch");
  REQUIRE(node.connected({0, 1, 2, 3, 4, 5, 6, 7}));
}

TEST_CASE("a real H200's capture, escapes in topo -m and the MIG column included, imports as one GPU") {
  auto fleet = imported("h200-1x");
  const auto& node = fleet.nodes.at(0);
  REQUIRE(node.pool == "h200");
  REQUIRE(node.gpus.size() == 1);
  REQUIRE(node.gpus[0].model == "H200-SXM-141GB");
  REQUIRE(node.gpus[0].vram_mib == 143771);
  REQUIRE(node.gpus[0].uuid == "GPU-da3b26c4-47e3-3bdc-ef9a-b8650428a86a");
  REQUIRE(node.cuda == *Version::parse("13.0"));
  REQUIRE(node.driver == "580.159.04");
  REQUIRE(fleet.pools[0].topology == "pcie");
}

TEST_CASE("four PCIe A100s with NV12 bridges import as NVLink pairs") {
  auto fleet = imported("a100-pcie-nvlink-pairs");
  const auto& node = fleet.nodes.at(0);
  REQUIRE(node.gpus[0].model == "A100-PCIE-80GB");
  REQUIRE(fleet.pools[0].topology == "nvlink_pairs");
  REQUIRE(node.connected_sets(2) == std::vector<std::vector<int>>{{0, 1}, {2, 3}});
  REQUIRE(node.cuda == *Version::parse("13.3"));
}

TEST_CASE("PCIe-only boxes import without NVLink, whether topo -m kept its tabs or not") {
  auto l40s = imported("l40s-pcie-4x");
  REQUIRE(l40s.pools[0].topology == "pcie");
  REQUIRE(l40s.nodes[0].gpus[3].vram_mib == 46068);
  auto a100 = imported("a100-pcie-40gb-2x");
  REQUIRE(a100.pools[0].topology == "pcie");
  REQUIRE(a100.nodes[0].gpus[1].uuid == "GPU-4497e145-7ee3-dc4e-5227-a824fc72d9a6");
  REQUIRE(a100.nodes[0].cuda == *Version::parse("12.7"));
}

TEST_CASE("a GPU the catalog does not know keeps the memory and compute capability nvidia-smi reported") {
  auto fleet = imported("rtx4090-pcie-8x");
  const auto& gpu = fleet.nodes[0].gpus[0];
  REQUIRE(gpu.model == "GeForce-RTX-4090");
  REQUIRE(gpu.vram_mib == 24564);
  REQUIRE(gpu.compute_capability == *Version::parse("8.9"));
  REQUIRE(fleet.pools[0].name == "geforce-rtx-4090");
}

TEST_CASE("the pool, node name and CUDA version can be given") {
  ImportOptions options;
  options.pool = "gpu-big";
  options.cuda = "12.6";
  auto fleet = imported("h100-hgx-8x", options);
  REQUIRE(fleet.pools[0].name == "gpu-big");
  REQUIRE(fleet.nodes[0].cuda == *Version::parse("12.6"));
}

TEST_CASE("the CSV may come without header or units, in the README's column order") {
  NamedText query{"0, NVIDIA L4, GPU-a, 23034, 8.9, 550.90.07\n", "q.csv"};
  NamedText topo{"\tGPU0\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID\nGPU0\t X \t0-23\t0\t\tN/A\n", "t.txt"};
  std::istringstream yaml(import_nvidia_smi(query, topo, {}).yaml);
  auto fleet = load_fleet(yaml, "imported.yaml");
  REQUIRE(fleet.nodes[0].name == "node-0");
  REQUIRE(fleet.nodes[0].gpus[0].model == "L4");
}

TEST_CASE("an irregular NVLink mesh imports as a matrix") {
  NamedText query{
      "index, name, memory.total [MiB], compute_cap, driver_version\n"
      "0, NVIDIA B200, 183359 MiB, 10.0, 580.95.05\n1, NVIDIA B200, 183359 MiB, 10.0, 580.95.05\n"
      "2, NVIDIA B200, 183359 MiB, 10.0, 580.95.05\n",
      "q.csv"};
  NamedText topo{
      "        GPU0    GPU1    GPU2\nGPU0     X      NV18    NODE\nGPU1    NV18     X      NV18\n"
      "GPU2    NODE    NV18     X\n",
      "t.txt"};
  auto yaml = import_nvidia_smi(query, topo, {}).yaml;
  REQUIRE_THAT(yaml, Contains("matrix:\n        - \"X NV18 NODE\"\n"));
  std::istringstream in(yaml);
  auto node = load_fleet(in, "imported.yaml").nodes[0];
  REQUIRE(node.connected({1, 2}));
  REQUIRE_FALSE(node.connected({0, 2}));
}

TEST_CASE("GPUs of different models on one machine are refused, pointing at the odd one") {
  REQUIRE_THAT(
      import_error(fixture("a100-mixed-models.query.csv"), fixture("a100-pcie-nvlink-pairs.topo.txt")),
      StartsWith("a100-mixed-models.query.csv:6:4: GPU 4 is 'NVIDIA A100-SXM4-80GB' but GPU 0 is "
                 "'NVIDIA A100 80GB PCIe'"));
}

TEST_CASE("a topo -m of another machine is refused") {
  REQUIRE(import_error(fixture("h100-hgx-8x.query.csv"), fixture("l40s-pcie-4x.topo.txt")) ==
          "l40s-pcie-4x.topo.txt:1:1: shows 4 GPUs, the --query-gpu output 8");
}

TEST_CASE("inputs that are not nvidia-smi output are refused with their position") {
  auto topo = fixture("l40s-pcie-4x.topo.txt");
  REQUIRE_THAT(import_error({"index, name\n0, NVIDIA L4\n", "q.csv"}, topo),
               StartsWith("q.csv:1:1: no memory.total column"));
  REQUIRE(import_error({"index, name, memory.total [MiB]\n0, NVIDIA L4, lots\n", "q.csv"}, topo) ==
          "q.csv:2:15: 'lots' is not a memory size in MiB");
  // DGX Spark's GB10 shares the system's memory: nvidia-smi prints [N/A], which said '' before.
  REQUIRE_THAT(import_error({"index, name, memory.total [MiB]\n0, NVIDIA GB10, [N/A]\n", "q.csv"}, topo),
               StartsWith("q.csv:2:17: memory.total is [N/A]: nvidia-smi reports no memory of its own"));
  REQUIRE(import_error({"", "q.csv"}, topo) ==
          "q.csv: is empty: expected the output of nvidia-smi --query-gpu");
  REQUIRE_THAT(import_error(fixture("l40s-pcie-4x.query.csv"), {"Sat Nov 30\n", "t.txt"}),
               StartsWith("t.txt: has no GPU0 GPU1 ... header"));
  NamedText two{"index, name, memory.total [MiB]\n0, NVIDIA L4, 23034 MiB\n1, NVIDIA L4, 23034 MiB\n",
                "q.csv"};
  REQUIRE(import_error(two, {"\tGPU0\tGPU1\nGPU0\t X \tNV4\nGPU1\tSYS\t X \n", "t.txt"}) ==
          "t.txt:3:6: GPU1 and GPU0 disagree on whether they are NVLinked");
  REQUIRE(import_error(two, {"\tGPU0\tGPU1\nGPU0\t X \tFAST\nGPU1\tFAST\t X \n", "t.txt"}) ==
          "t.txt:2:10: 'FAST' is not a link kind (X, NV<n>, SYS, NODE, PHB, PXB, PIX)");
  REQUIRE(import_error({"index, name, memory.total [MiB]\n0, NVIDIA L4, 23034 MiB\n0, NVIDIA L4, 23034 MiB\n",
                        "q.csv"},
                       topo) == "q.csv:3:4: GPU indices must be 0 to 1 once each; GPU 0 is listed twice");
}

TEST_CASE("a driver whose CUDA version is not known asks for --cuda") {
  NamedText query{"0, NVIDIA L4, GPU-a, 23034 MiB, 8.9, 999.1\n", "q.csv"};
  NamedText topo{"\tGPU0\nGPU0\t X \n", "t.txt"};
  REQUIRE_THAT(import_error(query, topo),
               StartsWith("--cuda: cannot tell which CUDA version driver '999.1' supports"));
  ImportOptions options;
  options.cuda = "13.9";
  REQUIRE(import_error(query, topo, options) == "(imported)");
}

TEST_CASE("without the MIG column the import warns that it took the GPUs to be whole") {
  NamedText topo{"\tGPU0\tCPU Affinity\nGPU0\t X \t0-23\n", "t.txt"};
  auto six =
      import_nvidia_smi({"0, NVIDIA A100-SXM4-40GB, GPU-a, 40960, 8.0, 550.90.07\n", "q.csv"}, topo, {});
  REQUIRE(six.warnings.size() == 1);
  REQUIRE_THAT(six.warnings[0], StartsWith("q.csv has no mig.mode.current column"));
  REQUIRE_THAT(six.warnings[0], Contains("Add mig.mode.current to --query-gpu"));
  // The README's command, without header: its seventh column is read, and an enabled MIG refused.
  auto seven = import_nvidia_smi(
      {"0, NVIDIA A100-SXM4-40GB, GPU-a, 40960, 8.0, 550.90.07, Disabled\n", "q.csv"}, topo, {});
  REQUIRE(seven.warnings.empty());
  REQUIRE(seven.yaml == six.yaml);
  REQUIRE_THAT(
      import_error({"0, NVIDIA A100-SXM4-40GB, GPU-a, 40960, 8.0, 550.90.07, Enabled\n", "q.csv"}, topo),
      StartsWith("q.csv:1:") && Contains("GPU 0 has MIG enabled"));
  REQUIRE(imported_warnings("h200-1x").empty());  // captured with the column: "Disabled"
  REQUIRE(imported_warnings("rtx4090-pcie-8x").size() == 1);
}

TEST_CASE("a GPU in MIG mode is refused with what to do instead of imported as a whole GPU") {
  auto error = import_error(fixture("a100-mig.query.csv"), fixture("a100-pcie-40gb-2x.topo.txt"));
  REQUIRE_THAT(error, StartsWith("a100-mig.query.csv:2:"));
  REQUIRE_THAT(error, Contains("GPU 0 has MIG enabled: jobs see its MIG instances"));
  REQUIRE_THAT(error, Contains("nvidia-smi -i 0 -mig 0"));
}

TEST_CASE("a driver older than R450 still gives its CUDA version") {
  NamedText query{
      "index, name, uuid, memory.total [MiB], compute_cap, driver_version\n"
      "0, Tesla V100-SXM2-16GB, GPU-1, 16160 MiB, 7.0, 418.87.01\n",
      "q.csv"};
  NamedText topo{"\tGPU0\tCPU Affinity\nGPU0\t X \t0-39\n", "t.txt"};
  auto yaml = import_nvidia_smi(query, topo, {}).yaml;
  REQUIRE_THAT(yaml, Contains("cuda: \"10.1\""));
}

TEST_CASE("430.26 reports CUDA 10.2, unlike the rest of its branch") {
  // Its nvidia-smi header says "Driver Version: 430.26  CUDA Version: 10.2" (NVIDIA/nvidia-docker#1146);
  // 430.50 and later say 10.1. Before, 430.26 was written as 10.1 and a cuda<10.2 test placed on it.
  NamedText topo{"\tGPU0\tCPU Affinity\nGPU0\t X \t0-39\n", "t.txt"};
  auto cuda_of = [&](const std::string& driver) {
    return import_nvidia_smi({"0, Tesla V100-SXM2-16GB, GPU-1, 16160 MiB, 7.0, " + driver + "\n", "q.csv"},
                             topo, {})
        .yaml;
  };
  REQUIRE_THAT(cuda_of("430.26"), Contains("cuda: \"10.2\""));
  REQUIRE_THAT(cuda_of("430.64"), Contains("cuda: \"10.1\""));
}

TEST_CASE("columns in another order than a header-less CSV must have are refused, not read as each other") {
  // The README's six columns with driver and compute_cap swapped: the driver became the compute
  // capability (550.54.15), and a test that needs sm_100 was placed on the H100.
  NamedText topo{"\tGPU0\nGPU0\t X \n", "t.txt"};
  REQUIRE_THAT(import_error({"0, NVIDIA H100 80GB HBM3, GPU-a, 81559 MiB, 550.54.15, 9.0\n", "q.csv"}, topo),
               StartsWith("q.csv:1:45: '550.54.15' is not a compute capability (X.Y, such as 9.0) (without a "
                          "header the columns must be index,name"));
  REQUIRE_THAT(import_error({"0, NVIDIA H100 80GB HBM3, GPU-a, 81559 MiB, 9.0, 9.0\n", "q.csv"}, topo),
               StartsWith("q.csv:1:50: '9.0' is not a driver version"));
  REQUIRE_THAT(
      import_error(
          {"0, NVIDIA H100 80GB HBM3, GPU-a, 81559 MiB, 9.0, 550.54.15, 00000000:01:00.0\n", "q.csv"}, topo),
      Contains("'00000000:01:00.0' is not a MIG mode"));
  // --query-gpu=index,uuid,name,...: on a one-GPU node no other GPU disagrees, and the model was
  // the uuid (no gpu-model test went there) and the uuid list held the name.
  REQUIRE_THAT(
      import_error({"0, GPU-da3b26c4-47e3, NVIDIA H200, 143771 MiB, 9.0, 570.124.06\n", "q.csv"}, topo),
      StartsWith("q.csv:1:4: 'GPU-da3b26c4-47e3' is a GPU uuid, not a GPU name (without a header"));
  REQUIRE_THAT(
      import_error(
          {"index, name, uuid, memory.total [MiB]\n0, NVIDIA H200, NVIDIA H200, 143771 MiB\n", "q.csv"},
          topo),
      StartsWith("q.csv:2:17: 'NVIDIA H200' is not a GPU uuid (nvidia-smi writes GPU-xxxxxxxx-...)"));
}

TEST_CASE(
    "nvidia-smi's own messages are quoted, and an old driver's refusal of compute_cap says what to drop") {
  NamedText topo{"\tGPU0\nGPU0\t X \n", "t.txt"};
  REQUIRE_THAT(import_error({"Failed to initialize NVML: Driver/library version mismatch\n", "q.csv"}, topo),
               StartsWith("q.csv:1:1: no index column in its first line, \"Failed to initialize NVML: "
                          "Driver/library version mismatch\""));
  REQUIRE_THAT(import_error({"Field \"compute_cap\" is not a valid field to query.\n", "q.csv"}, topo),
               StartsWith("q.csv:1:1: is nvidia-smi's refusal, not its output") &&
                   Contains("leave the field it names out of --query-gpu"));
}

TEST_CASE("a model outside the catalog gets its family the way gpu-model: writes it") {
  NamedText query{
      "index, name, uuid, memory.total [MiB], compute_cap, driver_version\n"
      "0, NVIDIA A100-SXM-64GB, GPU-1, 65536 MiB, 8.0, 550.54.15\n",
      "q.csv"};
  NamedText topo{"\tGPU0\tCPU Affinity\nGPU0\t X \t0-39\n", "t.txt"};
  auto yaml = import_nvidia_smi(query, topo, {}).yaml;
  std::istringstream in(yaml);
  auto fleet = load_fleet(in, "imported.yaml");
  REQUIRE(fleet.nodes.at(0).gpus.at(0).family == "a100");
  REQUIRE(fleet.pools.at(0).name == "a100");
}

TEST_CASE("a GPU nvidia-smi could not read is refused, not counted as usable") {
  const NamedText topo = fixture("a100-pcie-40gb-2x.topo.txt");
  for (const char* broken : {"[Unknown Error]", "[GPU is lost]"}) {
    INFO(broken);
    auto query = fixture("a100-pcie-40gb-2x.query.csv");
    auto uuid = query.text.find("GPU-4497e145");
    query.text.replace(uuid, query.text.find(',', uuid) - uuid, broken);
    CHECK_THAT(import_error(query, topo),
               Contains("a100-pcie-40gb-2x.query.csv:3:") &&
                   Contains(std::string("uuid of this GPU is nvidia-smi's \"") + broken) &&
                   Contains("error state"));
  }
  // A GPU it cannot reach at all gets this line in its row's place (it was "has 1 values for 3
  // columns", which did not say a GPU was lost).
  REQUIRE_THAT(
      import_error({"index, name, memory.total [MiB]\nUnable to determine the device handle for "
                    "GPU0000:3B:00.0: Unknown Error\n1, Tesla V100-SXM2-32GB, 32510 MiB\n",
                    "q.csv"},
                   {"\tGPU0\tGPU1\nGPU0\t X \tNV1\nGPU1\tNV1\t X \n", "t.txt"}),
      StartsWith("q.csv:2:1: is nvidia-smi's \"Unable to determine the device handle for GPU0000:3B:00.0: "
                 "Unknown Error\": a GPU is lost or in an error state"));
}

TEST_CASE("one GPU without a uuid drops the node's uuids with a warning, not an empty one") {
  auto query = fixture("a100-pcie-40gb-2x.query.csv");
  auto uuid = query.text.find("GPU-4497e145");
  query.text.replace(uuid, query.text.find(',', uuid) - uuid, "[N/A]");
  auto imported = import_nvidia_smi(query, fixture("a100-pcie-40gb-2x.topo.txt"), {});
  CHECK(imported.yaml.find("uuids") ==
        std::string::npos);                // was uuids: [GPU-5d8a..., ""], which check refuses
  REQUIRE(imported.warnings.size() == 2);  // and no mig.mode.current column
  CHECK_THAT(imported.warnings[1], Contains("1 of the 2 GPUs have no uuid"));
}

TEST_CASE("an import writes only what fleet check reads, and says what the driver cannot run") {
  const auto query = fixture("a100-pcie-40gb-2x.query.csv");  // driver 565.57.01: CUDA 12.7
  const auto topo = fixture("a100-pcie-40gb-2x.topo.txt");
  ImportOptions options;
  options.cuda = "565.57";  // the driver's version where the CUDA version goes
  CHECK_THAT(import_error(query, topo, options),
             Contains("is not a CUDA version") && Contains("nothing was written"));
  options.cuda = "12.8";
  auto imported = import_nvidia_smi(query, topo, options);
  REQUIRE(imported.warnings.size() == 2);  // and no mig.mode.current column
  CHECK_THAT(imported.warnings[1], Contains("cuda: 12.8 is newer than driver 565.57.01 supports (CUDA 12.7"));
  options.cuda = "12.7";
  CHECK(import_nvidia_smi(query, topo, options).warnings.size() == 1);
}

namespace {

/// `count` GPUs named `name` as `nvidia-smi --query-gpu=index,name,memory.total,compute_cap,
/// driver_version,mig.mode.current --format=csv` prints them, for the topo -m captures that came
/// without one.
NamedText query_of(int count, const std::string& name, const std::string& mib, const std::string& cc,
                   const std::string& driver) {
  std::string text = "index, name, memory.total [MiB], compute_cap, driver_version, mig.mode.current\n";
  for (int i = 0; i < count; ++i)
    text += fmt::format("{}, {}, {} MiB, {}, {}, Disabled\n", i, name, mib, cc, driver);
  return {text, "q.csv"};
}

}  // namespace

TEST_CASE("public topo -m captures import as their boards are: NIC rows, legends, GPU NUMA IDs") {
  auto import = [](const NamedText& query, const std::string& topo) {
    auto imported = import_nvidia_smi(query, fixture(topo), {});
    CHECK(imported.warnings.empty());
    return imported.yaml;
  };
  // HGX H100 4-GPU: NV6 between every two, NIC rows and the legend after the GPU rows.
  CHECK_THAT(
      import(query_of(4, "NVIDIA H100 80GB HBM3", "81559", "9.0", "550.54.15"), "h100-nv6-4x.topo.txt"),
      Contains("nvlink_groups: [[0, 1, 2, 3]]"));
  // GB200 tray: four GPUs NV18, GPU NUMA IDs 2, 10, 18 in the last column.
  CHECK_THAT(import(query_of(4, "NVIDIA GB200", "189471", "10.0", "570.172.08"), "gb200-4x.topo.txt"),
             Contains("nvlink_groups: [[0, 1, 2, 3]]") && Contains("model: GB200"));
  CHECK_THAT(import(query_of(8, "NVIDIA H100 80GB HBM3", "81559", "9.0", "535.104.05"),
                    "h100-nv18-2nic-8x.topo.txt"),
             Contains("topology: nvswitch"));
  CHECK_THAT(
      import(query_of(2, "NVIDIA GeForce RTX 5090", "32607", "12.0", "575.64.03"), "rtx5090-2x.topo.txt"),
      Contains("topology: pcie") && Contains("model: GeForce-RTX-5090"));
  // One GPU and sixteen NICs, the header at the start of its line (vLLM's collect_env).
  CHECK_THAT(
      import(query_of(1, "NVIDIA A100-SXM4-80GB", "81920", "8.0", "550.54.15"), "one-gpu-16nic.topo.txt"),
      Contains("count: 1"));
}

TEST_CASE("an SXM board whose topo -m shows no NVLink warns that it was written as pcie") {
  // A DGX A100's topo -m without one NV# cell (rapidsai/ucx-py#749): imported as pcie without a
  // word, so every NVLink test of the fleet skipped the node, and nobody was told why.
  auto imported = import_nvidia_smi(query_of(8, "NVIDIA A100-SXM4-40GB", "40960", "8.0", "460.32.03"),
                                    fixture("dgx-a100-no-nvlink.topo.txt"), {});
  REQUIRE_THAT(imported.yaml, Contains("topology: pcie"));
  REQUIRE(imported.warnings.size() == 1);
  CHECK_THAT(
      imported.warnings[0],
      StartsWith("dgx-a100-no-nvlink.topo.txt: no two of the 8 GPUs are NVLinked (no NV# cell), yet the "
                 "NVIDIA A100-SXM4-40GB is an SXM module") &&
          Contains("nvidia-smi topo -mp") && Contains("nvidia-fabricmanager"));
  // The same matrix from PCIe cards is what it says.
  CHECK(import_nvidia_smi(query_of(8, "NVIDIA A100-PCIE-40GB", "40960", "8.0", "460.32.03"),
                          fixture("dgx-a100-no-nvlink.topo.txt"), {})
            .warnings.empty());
}

TEST_CASE("an NVSwitch board with one GPU's NVLinks down names that GPU's row") {
  // vllm-project/vllm#16336: GPU2 of eight B200s is NODE/SYS to every other GPU. The fleet keeps
  // the seven others as one NVLink group and GPU2 out of it, as topo -m says, and now says why.
  auto imported = import_nvidia_smi(query_of(8, "NVIDIA B200", "183359", "10.0", "570.124.06"),
                                    fixture("b200-gpu2-down.topo.txt"), {});
  REQUIRE_THAT(imported.yaml, Contains("nvlink_groups: [[0, 1, 3, 4, 5, 6, 7]]"));
  REQUIRE(imported.warnings.size() == 1);
  CHECK_THAT(imported.warnings[0],
             StartsWith("b200-gpu2-down.topo.txt:4: GPU2 has no NVLink to any other GPU") &&
                 Contains("SXM module (NVIDIA B200)") && Contains("nvidia-smi nvlink -s -i 2"));
}

// NVIDIA's driver README (its list of supported GPUs) names the SXM5 modules of HGX H800 and HGX H20
// boards "NVIDIA H800", "NVIDIA H20" and "NVIDIA H20-3e" (captures also show "NVIDIA H800 80GB
// HBM3"), and Grace Blackwell's GPUs "NVIDIA GB200" and "NVIDIA GB300": no SXM in the name and not
// in the catalog, so their boards with the NVLinks down were imported as pcie without a word.
TEST_CASE("H800, H20, GB200 and GB300 boards whose topo -m shows no NVLink warn as SXM boards do") {
  // The memory and compute capability do not matter here; the count is the capture's.
  auto warnings = [](const std::string& name, const NamedText& topo) {
    const int gpus = topo.text.find("GPU7") != std::string::npos ? 8 : 4;
    return import_nvidia_smi(query_of(gpus, name, "97871", "9.0", "570.172.08"), topo, {}).warnings;
  };
  // HGX H800 and H20 are 8-GPU NVSwitch boards, as the DGX A100 of this capture is.
  const auto dgx = fixture("dgx-a100-no-nvlink.topo.txt");
  for (const char* name : {"NVIDIA H800", "NVIDIA H800 80GB HBM3", "NVIDIA H20", "NVIDIA H20-3e"}) {
    INFO(name);
    auto said = warnings(name, dgx);
    REQUIRE(said.size() == 1);
    CHECK_THAT(said[0],
               StartsWith(fmt::format("dgx-a100-no-nvlink.topo.txt: no two of the 8 GPUs are NVLinked "
                                      "(no NV# cell), yet the {} is an SXM module",
                                      name)));
  }
  // The GB200 tray's capture with its NV18 cells made SYS by hand, as a tray whose NVLinks (or
  // NVLink switch trays) are down prints them.
  auto tray = fixture("gb200-4x.topo.txt");
  for (auto at = tray.text.find("NV18"); at != std::string::npos; at = tray.text.find("NV18"))
    tray.text.replace(at, 4, "SYS ");
  for (const char* name : {"NVIDIA GB200", "NVIDIA GB300"}) {
    INFO(name);
    auto said = warnings(name, tray);
    REQUIRE(said.size() == 1);
    CHECK_THAT(said[0],
               Contains(fmt::format("yet the {} is a Grace Blackwell superchip's GPU, NVLinked on every "
                                    "board it is sold on",
                                    name)));
  }
  // One GPU's links down on an H20 board, as on the B200 board of vllm-project/vllm#16336.
  auto one_down = warnings("NVIDIA H20-3e", fixture("b200-gpu2-down.topo.txt"));
  REQUIRE(one_down.size() == 1);
  CHECK_THAT(one_down[0], StartsWith("b200-gpu2-down.topo.txt:4: GPU2 has no NVLink to any other GPU") &&
                              Contains("SXM module (NVIDIA H20-3e)"));
  // PCIe cards, whose NVLink bridges are optional, are what topo -m says; so is H20 NVL16, whose
  // boards gpuplan knows nothing of.
  for (const char* name : {"NVIDIA H800 PCIe", "NVIDIA H800 NVL", "NVIDIA H100 NVL", "NVIDIA H20 NVL16"}) {
    INFO(name);
    CHECK(warnings(name, dgx).empty());
  }
}

// A GH200 is one GPU per Grace Hopper superchip: a one-GPU node has no GPU-to-GPU NVLink to miss,
// and a dual-GH200 workstation's two GPUs are SYS to each other (a public write-up of one reports
// GPU0 to GPU1 as SYS and no peer access), while GH200 NVL2 and NVL32 boards and four-superchip
// blades NVLink them all. So only a GPU left out beside NVLinked ones is warned of.
TEST_CASE("a GH200 node warns only of a GPU left out of its NVLinked neighbours") {
  auto warnings = [](int count, const NamedText& topo) {
    return import_nvidia_smi(query_of(count, "NVIDIA GH200 480GB", "97871", "9.0", "570.148.08"), topo, {})
        .warnings;
  };
  CHECK(warnings(1, fixture("one-gpu-16nic.topo.txt")).empty());
  // Written by hand: two superchips, SYS to each other.
  CHECK(warnings(2, {"\tGPU0\tGPU1\nGPU0\t X \tSYS\nGPU1\tSYS\t X \n", "dual.txt"}).empty());
  // Written by hand: a four-superchip blade, GPU3's NVLinks down.
  auto blade = warnings(4, {"\tGPU0\tGPU1\tGPU2\tGPU3\n"
                            "GPU0\t X \tNV6\tNV6\tSYS\n"
                            "GPU1\tNV6\t X \tNV6\tSYS\n"
                            "GPU2\tNV6\tNV6\t X \tSYS\n"
                            "GPU3\tSYS\tSYS\tSYS\t X \n",
                            "blade.txt"});
  REQUIRE(blade.size() == 1);
  CHECK_THAT(blade[0], StartsWith("blade.txt:5: GPU3 has no NVLink to any other GPU") &&
                           Contains("a Grace Hopper superchip (NVIDIA GH200 480GB)"));
}

TEST_CASE("GPUs of one model that report different memory warn, and the node gets the least") {
  NamedText query{
      "index, name, memory.total [MiB], compute_cap, driver_version, mig.mode.current\n"
      "0, NVIDIA RTX A6000, 49140 MiB, 8.6, 550.54.15, [N/A]\n"
      "1, NVIDIA RTX A6000, 48676 MiB, 8.6, 550.54.15, [N/A]\n",
      "q.csv"};
  auto imported = import_nvidia_smi(query, {"\tGPU0\tGPU1\nGPU0\t X \tPHB\nGPU1\tPHB\t X \n", "t.txt"}, {});
  REQUIRE_THAT(imported.yaml, Contains("vram: 48676MiB"));
  REQUIRE(imported.warnings.size() == 1);
  CHECK_THAT(imported.warnings[0],
             StartsWith("q.csv:3:22: GPU 1 reports 48676 MiB of memory.total but GPU 0 49140 MiB"));
}

TEST_CASE("a header-less CSV with other columns says which columns it must have") {
  // --query-gpu=index,name,memory.total --format=csv,noheader,nounits: was "has 3 values for 7 columns".
  REQUIRE_THAT(import_error({"0, NVIDIA L4, 23034\n", "q.csv"}, {"\tGPU0\nGPU0\t X \n", "t.txt"}),
               StartsWith("q.csv:1:1: has 3 values, and without a header the columns must be "
                          "index,name,uuid,memory.total,compute_cap,driver_version,mig.mode.current") &&
                   Contains("keep the header"));
}

TEST_CASE("other nvidia-smi listings given as the CSV are refused, quoting their first line") {
  NamedText topo{"\tGPU0\nGPU0\t X \n", "t.txt"};
  // nvidia-smi -L with MIG devices (influxdata/telegraf#5812), and --query-gpu=name,pci.device_id
  // --format=csv,noheader (akash-network/provider-configs#91).
  CHECK_THAT(import_error(fixture("a100-sxm4-mig.L.txt"), topo),
             StartsWith("a100-sxm4-mig.L.txt:1:1: no index column in its first line, \"GPU 0: NVIDIA "
                        "A100-SXM4-80GB (UUID: GPU-513536b6"));
  CHECK_THAT(import_error(fixture("h100-nvl.name-device-id.csv"), topo),
             StartsWith("h100-nvl.name-device-id.csv:1:1: no index column in its first line, \"NVIDIA H100 "
                        "NVL, 0x232110DE\""));
}
