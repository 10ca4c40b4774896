#include <catch2/catch.hpp>

#include "gpuplan/fleet.hpp"

using namespace gpuplan;

TEST_CASE("catalog models are found by their fleet name in any case") {
  REQUIRE(find_gpu_model("H100-SXM-80GB")->vram_mib == 81559);
  REQUIRE(find_gpu_model("a100-sxm-40gb")->vram_mib == 40960);
  REQUIRE(find_gpu_model("A100-SXM-80GB")->vram_mib == 81920);
  REQUIRE(find_gpu_model("l4")->compute_capability == *Version::parse("8.9"));
  REQUIRE(find_gpu_model("B200-SXM-180GB")->compute_capability == *Version::parse("10.0"));
  REQUIRE(find_gpu_model("H300") == nullptr);
}

TEST_CASE("the names nvidia-smi prints map to catalog entries") {
  REQUIRE(find_gpu_model("NVIDIA H100 80GB HBM3")->name == "H100-SXM-80GB");
  REQUIRE(find_gpu_model("NVIDIA A100-SXM4-80GB")->name == "A100-SXM-80GB");
  REQUIRE(find_gpu_model("NVIDIA A100 80GB PCIe")->name == "A100-PCIE-80GB");
  REQUIRE(find_gpu_model("NVIDIA L4")->family == "l4");
  REQUIRE(find_gpu_model("Tesla V100-SXM2-32GB")->name == "V100-32GB");
  // DGX-2's and DGX Station's V100s: drivers before R510 print no compute_cap to learn them from.
  REQUIRE(find_gpu_model("Tesla V100-SXM3-32GB")->name == "V100-32GB");
  REQUIRE(find_gpu_model("Tesla V100-DGXS-16GB")->name == "V100-16GB");
}

namespace {
Gpu gpu_of(std::string_view name) {
  const auto* model = find_gpu_model(name);
  Gpu gpu;
  gpu.model = model ? model->name : std::string(name);
  gpu.family = model ? model->family : family_from_name(name);
  gpu.vram_mib = model ? model->vram_mib : 24564;
  return gpu;
}
}  // namespace

// Each way of writing a model that was unschedulable everywhere (a100-80gb, A100-SXM4-80GB,
// nvidia-tesla-t4, rtx4090), and the near names that must stay apart.
TEST_CASE("a gpu-model name matches the GPUs it names however it is written, and no others") {
  auto a100_80 = gpu_of("A100-SXM-80GB"), a100_40 = gpu_of("A100-PCIE-40GB"), h100 = gpu_of("H100-SXM-80GB");
  CHECK(gpu_is_model(a100_80, "a100"));
  CHECK(gpu_is_model(a100_80, "A100-SXM-80GB"));
  CHECK(gpu_is_model(a100_80, "A100-SXM4-80GB"));         // nvidia-smi's name
  CHECK(gpu_is_model(a100_80, "NVIDIA-A100-SXM4-80GB"));  // GPU feature discovery's label
  CHECK(gpu_is_model(a100_80, "a100-80gb"));
  CHECK(gpu_is_model(a100_80, "a100_80g"));
  CHECK(gpu_is_model(a100_80, "a100-sxm"));
  CHECK_FALSE(gpu_is_model(a100_40, "a100-80gb"));
  CHECK_FALSE(gpu_is_model(a100_80, "a100-40gb"));
  CHECK_FALSE(gpu_is_model(a100_40, "a100-sxm"));
  CHECK(gpu_is_model(h100, "h100-80gb"));  // 81559 MiB, as nvidia-smi has it
  CHECK(gpu_is_model(h100, "h100-sxm"));
  CHECK_FALSE(gpu_is_model(h100, "h100-pcie"));
  CHECK_FALSE(gpu_is_model(gpu_of("GH200"), "h100"));
  CHECK(gpu_is_model(gpu_of("T4"), "nvidia-tesla-t4"));  // GKE's accelerator label
  CHECK(gpu_is_model(gpu_of("T4"), "tesla-t4"));
  CHECK_FALSE(gpu_is_model(gpu_of("L40S"), "l40"));
  CHECK_FALSE(gpu_is_model(gpu_of("A10G"), "a10"));
  CHECK(gpu_is_model(gpu_of("A10"), "a10"));
  auto rtx = gpu_of("GeForce-RTX-4090");
  CHECK(gpu_is_model(rtx, "rtx4090"));
  CHECK(gpu_is_model(rtx, "rtx-4090"));
  CHECK(gpu_is_model(rtx, "4090"));
  CHECK_FALSE(gpu_is_model(rtx, "rtx"));
  auto ada = gpu_of("NVIDIA RTX 6000 Ada Generation");  // as fleet import names it
  CHECK(gpu_is_model(ada, "rtx-6000-ada"));
  CHECK(gpu_is_model(ada, "rtx6000ada"));
  CHECK(gpu_is_model(ada, "6000-ada"));
  CHECK_FALSE(gpu_is_model(ada, "rtx-6000"));  // the Turing Quadro RTX 6000
  CHECK_FALSE(gpu_is_model(ada, "ada"));
  CHECK(gpu_is_model(gpu_of("NVIDIA H100 NVL"), "h100-nvl"));  // a hand-written name with blanks
}

TEST_CASE("every catalog entry is complete and names a lower-case family") {
  for (const auto& model : gpu_catalog()) {
    INFO(model.name);
    REQUIRE(model.vram_mib > 10000);
    REQUIRE(model.compute_capability.empty() == (model.vendor != "nvidia"));
    REQUIRE_FALSE(model.smi_names.empty());
    for (char c : model.family) REQUIRE_FALSE(std::isupper(static_cast<unsigned char>(c)));
  }
}

TEST_CASE("families and vendors of models outside the catalog come from their names") {
  REQUIRE(family_from_name("NVIDIA A100-SXM-64GB") == "a100");
  REQUIRE(family_from_name("A100-SXM-64GB") == "a100");
  REQUIRE(family_from_name("Tesla P100-PCIE-16GB") == "p100");
  REQUIRE(family_from_name("NVIDIA RTX A6000") == "rtx-a6000");
  REQUIRE(family_from_name("GeForce-RTX-4090") == "geforce-rtx-4090");
  REQUIRE(family_from_name("AMD Instinct MI250X") == "mi250x");
  REQUIRE(family_from_name("Intel(R) Data Center GPU Max 1550") == "max1550");
  REQUIRE(vendor_from_name("AMD Instinct MI210") == "amd");
  REQUIRE(vendor_from_name("MI300X") == "amd");
  REQUIRE(vendor_from_name("Intel(R) Data Center GPU Max 1100") == "intel");
  REQUIRE(vendor_from_name("GH200") == "nvidia");
}

TEST_CASE("the catalog knows AMD Instinct and Intel Max parts with their vendor and memory") {
  REQUIRE(find_gpu_model("MI300X")->vendor == "amd");
  REQUIRE(find_gpu_model("AMD Instinct MI250X")->vram_mib == 65536);
  REQUIRE(find_gpu_model("Intel(R) Data Center GPU Max 1550")->vendor == "intel");
  REQUIRE(find_gpu_model("H100-SXM-80GB")->vendor == "nvidia");
}

// A fleet's model: A100-SXM4-80GB, nvidia-smi's name without the vendor's word, was an unknown
// model while NVIDIA A100-SXM4-80GB was the catalog's.
TEST_CASE("a catalog model is found by nvidia-smi's name however it is separated or prefixed") {
  REQUIRE(find_gpu_model("A100-SXM4-80GB")->name == "A100-SXM-80GB");
  REQUIRE(find_gpu_model("nvidia-a100-sxm4-80gb")->name == "A100-SXM-80GB");
  REQUIRE(find_gpu_model("H100 80GB HBM3")->name == "H100-SXM-80GB");
  REQUIRE(find_gpu_model("A100-SXM4-40GB")->name == "A100-SXM-40GB");
  REQUIRE(find_gpu_model("A100-SXM4-64GB") == nullptr);
}
