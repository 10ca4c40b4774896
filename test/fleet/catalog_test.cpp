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
