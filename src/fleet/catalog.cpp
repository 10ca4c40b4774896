// The built-in GPU catalog: what `model: H100-SXM-80GB` alone stands for.
// vram_mib is memory.total as nvidia-smi prints it (less than the marketing GB: the
// driver reserves some); the README's "Fleet" section says where each number comes from.
#include <algorithm>
#include <cctype>

#include "gpuplan/fleet.hpp"

namespace gpuplan {

namespace {

bool equal_ignoring_case(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

GpuModel entry(std::string name, std::string family, std::int64_t vram_mib, std::string_view cc,
               std::vector<std::string> smi_names) {
  return GpuModel{std::move(name), std::move(family), vram_mib, *Version::parse(cc), std::move(smi_names)};
}

}  // namespace

const std::vector<GpuModel>& gpu_catalog() {
  static const std::vector<GpuModel> catalog = {
      entry("V100-16GB", "v100", 16384, "7.0", {"Tesla V100-SXM2-16GB", "Tesla V100-PCIE-16GB"}),
      entry("V100-32GB", "v100", 32768, "7.0",
            {"Tesla V100-SXM2-32GB", "Tesla V100-PCIE-32GB", "Tesla V100S-PCIE-32GB"}),
      entry("T4", "t4", 15360, "7.5", {"Tesla T4"}),
      entry("A10G", "a10g", 23028, "8.6", {"NVIDIA A10G"}),
      entry("L4", "l4", 23034, "8.9", {"NVIDIA L4"}),
      entry("L40S", "l40s", 46068, "8.9", {"NVIDIA L40S"}),
      entry("RTX-A6000", "a6000", 49140, "8.6", {"NVIDIA RTX A6000"}),
      entry("A100-PCIE-40GB", "a100", 40960, "8.0", {"NVIDIA A100-PCIE-40GB", "A100-PCIE-40GB"}),
      entry("A100-SXM-40GB", "a100", 40960, "8.0", {"NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB"}),
      entry("A100-PCIE-80GB", "a100", 81920, "8.0", {"NVIDIA A100 80GB PCIe"}),
      entry("A100-SXM-80GB", "a100", 81920, "8.0", {"NVIDIA A100-SXM4-80GB", "A100-SXM-80GB"}),
      entry("H100-PCIE-80GB", "h100", 81559, "9.0", {"NVIDIA H100 PCIe"}),
      entry("H100-SXM-80GB", "h100", 81559, "9.0", {"NVIDIA H100 80GB HBM3"}),
      entry("H200-SXM-141GB", "h200", 143771, "9.0", {"NVIDIA H200"}),
      entry("B200-SXM-180GB", "b200", 183359, "10.0", {"NVIDIA B200"}),
  };
  return catalog;
}

const GpuModel* find_gpu_model(std::string_view name) {
  for (const auto& model : gpu_catalog()) {
    if (equal_ignoring_case(model.name, name)) return &model;
    for (const auto& smi_name : model.smi_names)
      if (equal_ignoring_case(smi_name, name)) return &model;
  }
  return nullptr;
}

}  // namespace gpuplan
