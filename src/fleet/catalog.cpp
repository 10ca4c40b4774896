// The built-in GPU catalog: what `model: H100-SXM-80GB` alone stands for.
// vram_mib is memory.total as nvidia-smi prints it (less than the marketing GB: the
// driver reserves some); the README's "Fleet" section says where each number comes from.
#include <algorithm>
#include <cctype>
#include <charconv>

#include "gpuplan/fleet.hpp"
#include "util/text.hpp"

namespace gpuplan {

namespace {

using util::equal_ignoring_case;

GpuModel entry(std::string name, std::string family, std::int64_t vram_mib, std::string_view cc,
               std::vector<std::string> smi_names) {
  return GpuModel{std::move(name),     std::move(family),    vram_mib,
                  *Version::parse(cc), std::move(smi_names), "nvidia"};
}

/// An AMD or Intel part: no compute capability (a CUDA notion).
GpuModel other(std::string vendor, std::string name, std::string family, std::int64_t vram_mib,
               std::vector<std::string> smi_names) {
  return GpuModel{std::move(name), std::move(family),    vram_mib,
                  Version{},       std::move(smi_names), std::move(vendor)};
}

bool starts_with_ignoring_case(std::string_view text, std::string_view prefix) {
  return text.size() >= prefix.size() && equal_ignoring_case(text.substr(0, prefix.size()), prefix);
}

/// `text` without a leading `word` (a whole word) and the blanks or dashes after it, ignoring case.
std::string_view without_word(std::string_view text, std::string_view word) {
  if (!starts_with_ignoring_case(text, word)) return text;
  if (text.size() > word.size() && text[word.size()] != ' ' && text[word.size()] != '-') return text;
  text.remove_prefix(word.size());
  while (!text.empty() && (text.front() == ' ' || text.front() == '-' || text.front() == '('))
    text.remove_prefix(1);
  return text;
}

/// A name's letters and digits, lower-case, without a vendor's words before it: "NVIDIA A100-SXM4-80GB"
/// and "nvidia-a100-sxm4-80gb" → "a100sxm480gb"; "Tesla T4" and "tesla-t4" → "t4".
std::string squeezed(std::string_view name) {
  std::string out;
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c)))
      out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (std::string_view word : {"nvidia", "tesla", "amd", "instinct", "intelr", "intel"})
    if (out.starts_with(word) && out.size() > word.size()) out.erase(0, word.size());
  return out;
}

}  // namespace

const std::vector<GpuModel>& gpu_catalog() {
  static const std::vector<GpuModel> catalog = {
      entry("V100-16GB", "v100", 16384, "7.0",
            {"Tesla V100-SXM2-16GB", "Tesla V100-PCIE-16GB", "Tesla V100-DGXS-16GB"}),
      entry("V100-32GB", "v100", 32768, "7.0",
            {"Tesla V100-SXM2-32GB", "Tesla V100-PCIE-32GB", "Tesla V100S-PCIE-32GB", "Tesla V100-SXM3-32GB",
             "Tesla V100-DGXS-32GB"}),
      entry("T4", "t4", 15360, "7.5", {"Tesla T4"}),
      entry("A10G", "a10g", 23028, "8.6", {"NVIDIA A10G"}),
      entry("A10", "a10", 23028, "8.6", {"NVIDIA A10"}),
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
      // AMD Instinct (XLA's amdgpu_any, JAX's ROCm CI): memory as the data sheet gives it in GiB.
      // An MI250/MI250X is two GPUs to ROCm (one per GCD), each with half the package's memory.
      other("amd", "MI100", "mi100", 32768, {"AMD Instinct MI100", "Instinct MI100"}),
      other("amd", "MI210", "mi210", 65536, {"AMD Instinct MI210", "Instinct MI210"}),
      other("amd", "MI250", "mi250", 65536, {"AMD Instinct MI250", "Instinct MI250"}),
      other("amd", "MI250X", "mi250x", 65536,
            {"AMD Instinct MI250X", "Instinct MI250X", "AMD Instinct MI250X/MI250"}),
      other("amd", "MI300A", "mi300a", 131072, {"AMD Instinct MI300A", "Instinct MI300A"}),
      other("amd", "MI300X", "mi300x", 196608,
            {"AMD Instinct MI300X", "Instinct MI300X", "AMD Instinct MI300X OAM"}),
      other("amd", "MI325X", "mi325x", 262144, {"AMD Instinct MI325X", "Instinct MI325X"}),
      // Intel Data Center GPU Max (XLA's intelgpu_any, oneAPI/SYCL): as xpu-smi names them.
      other("intel", "Max-1100", "max1100", 49152,
            {"Intel(R) Data Center GPU Max 1100", "Data Center GPU Max 1100"}),
      other("intel", "Max-1550", "max1550", 131072,
            {"Intel(R) Data Center GPU Max 1550", "Data Center GPU Max 1550"}),
  };
  return catalog;
}

const GpuModel* find_gpu_model(std::string_view name) {
  for (const auto& model : gpu_catalog()) {
    if (equal_ignoring_case(model.name, name)) return &model;
    for (const auto& smi_name : model.smi_names)
      if (equal_ignoring_case(smi_name, name)) return &model;
  }
  // nvidia-smi's name without the vendor's word, or with other separators: A100-SXM4-80GB.
  const std::string written = squeezed(name);
  for (const auto& model : gpu_catalog())
    for (const auto& smi_name : model.smi_names)
      if (squeezed(smi_name) == written) return &model;
  return nullptr;
}

std::string vendor_from_name(std::string_view model) {
  auto name = model;
  for (std::string_view amd : {"amd", "instinct", "radeon", "mi"})
    if (starts_with_ignoring_case(name, amd)) return "amd";
  for (std::string_view intel : {"intel", "data center gpu max", "arc", "flex", "max"})
    if (starts_with_ignoring_case(name, intel)) return "intel";
  return "nvidia";
}

namespace {

/// The words of a lower-case name: "geforce-rtx-4090" → geforce, rtx, 4090.
std::vector<std::string_view> words_of(std::string_view name) {
  std::vector<std::string_view> words;
  for (std::size_t i = 0; i < name.size();) {
    auto end = std::min(name.find_first_of("-_ ", i), name.size());
    if (end > i) words.push_back(name.substr(i, end - i));
    i = end + 1;
  }
  return words;
}

bool names_model(const Gpu& gpu, std::string_view wanted) {
  std::string w = util::lower(wanted), model = util::lower(gpu.model);
  if (w == model || w == gpu.family) return true;
  std::string s = squeezed(w);
  if (s == squeezed(model) || s == squeezed(gpu.family)) return true;
  if (const auto* known = find_gpu_model(gpu.model))
    for (const auto& smi_name : known->smi_names)
      if (s == squeezed(smi_name)) return true;
  // The model without its memory: h100-sxm of H100-SXM-80GB.
  auto model_words = words_of(model);
  if (model_words.size() > 1 && model_words.back().ends_with("gb") &&
      s == squeezed(model.substr(0, model.size() - model_words.back().size())))
    return true;
  // The family's last words, with a digit among them: rtx-4090 or 4090 of geforce-rtx-4090;
  // nvidia-smi's "Generation" after a workstation part is no word of its name (rtx-6000-ada).
  auto family_words = words_of(gpu.family);
  if (family_words.size() > 1 && family_words.back() == "generation") family_words.pop_back();
  std::string tail;
  for (auto word = family_words.rbegin(); word != family_words.rend(); ++word) {
    tail = std::string(*word) + tail;
    if (tail == s &&
        std::ranges::any_of(tail, [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
      return true;
  }
  return false;
}

}  // namespace

bool gpu_is_model(const Gpu& gpu, std::string_view wanted) {
  if (names_model(gpu, wanted)) return true;
  // A memory after the name, as sold: a100-80gb, h100_80g.
  std::string w = util::lower(wanted);
  auto cut = w.find_last_of("-_");
  if (cut == std::string::npos) return false;
  std::string_view memory = std::string_view(w).substr(cut + 1);
  bool has_unit = false;
  for (std::string_view unit : {"gib", "gb", "g"})
    if (!has_unit && memory.ends_with(unit)) {
      memory.remove_suffix(unit.size());
      has_unit = true;
    }
  if (!has_unit) return false;
  std::int64_t gib = 0;
  auto [end, error] = std::from_chars(memory.data(), memory.data() + memory.size(), gib);
  if (error != std::errc{} || end != memory.data() + memory.size() || gib <= 0 || gib > 4096) return false;
  return gpu.vram_mib * 100 >= gib * 1024 * 90 && gpu.vram_mib * 100 <= gib * 1024 * 102 &&
         names_model(gpu, std::string_view(w).substr(0, cut));
}

std::string family_from_name(std::string_view model) {
  auto lowered = [](std::string_view text) {
    std::string out;
    for (char c : text)
      out += c == ' ' ? '-' : static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
  };
  auto name = model;
  for (std::string_view word : {"nvidia", "tesla", "amd", "instinct", "intel(r)", "intel"})
    name = without_word(name, word);
  auto rest = without_word(name, "data center gpu max");
  auto head = rest.substr(0, rest.find_first_of(" -_/"));
  if (rest.size() < name.size()) return "max" + lowered(head);  // Intel's "Max 1550" → max1550
  // A first word with a digit is the family (A100, P100, MI250X); else the whole name ("RTX-5090").
  if (std::ranges::any_of(head, [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    return lowered(head);
  return lowered(name.empty() ? model : name);
}

}  // namespace gpuplan
