#include "gpuplan/requirements.hpp"

#include <fmt/format.h>

#include "gpuplan/size.hpp"
#include "util/text.hpp"

namespace gpuplan {

namespace {

std::string describe(const std::vector<Sourced<VersionConstraint>>& constraints) {
  std::string text;
  for (const auto& c : constraints) text += (text.empty() ? "" : " and ") + describe(c.value);
  return text;
}

}  // namespace

std::string describe(const VersionConstraint& constraint) {
  static constexpr std::string_view symbols[] = {"≥", ">", "≤", "<", "="};
  return fmt::format("{} {}", symbols[static_cast<int>(constraint.op)], constraint.version.str());
}

std::string vendor_display(std::string_view vendor) {
  if (vendor == "nvidia") return "NVIDIA";
  if (vendor == "amd") return "AMD";
  if (vendor == "intel") return "Intel";
  return std::string(vendor);
}

std::string describe(const Requirement& r) {
  if (r.gpus.value == 0) return "no GPU";
  std::vector<std::string> parts{r.takes_every_node_gpu()
                                     ? std::string("every GPU of its node")
                                     : fmt::format("{} GPU{}", r.gpus.value, util::plural(r.gpus.value))};
  if (r.gpu_mem_mib) parts.push_back(fmt::format("≥ {} each", format_mib(r.gpu_mem_mib->value)));
  if (!r.cuda.empty()) parts.push_back("CUDA " + describe(r.cuda));
  if (!r.compute_capability.empty()) parts.push_back("compute capability " + describe(r.compute_capability));
  if (r.gpu_models) parts.push_back(fmt::format("model {}", fmt::join(r.gpu_models->value, "|")));
  if (r.vendor) parts.push_back(vendor_display(r.vendor->value));
  if (r.needs_nvlink()) parts.emplace_back("NVLink");
  if (r.is_exclusive()) parts.emplace_back("whole node");
  return fmt::format("{}", fmt::join(parts, ", "));
}

}  // namespace gpuplan
