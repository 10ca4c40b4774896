#include "annotate/claim.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>

#include "gpuplan/requirements.hpp"
#include "gpuplan/rules.hpp"
#include "gpuplan/size.hpp"
#include "util/text.hpp"

namespace gpuplan::annotate {

namespace {

std::string join_constraints(const std::vector<VersionConstraint>& constraints) {
  std::string text;
  for (const auto& c : constraints) text += (text.empty() ? "" : " and ") + describe(c);
  return text;
}

std::optional<bool> parse_bool(std::string_view text) {
  auto word = util::lower(text);
  if (word == "true") return true;
  if (word == "false") return false;
  return std::nullopt;
}

}  // namespace

std::string_view to_string(Backend backend) {
  switch (backend) {
    case Backend::cpu: return "cpu";
    case Backend::gpu: return "gpu";
    case Backend::tpu: return "tpu";
  }
  return "cpu";
}

bool is_vendor(std::string_view vendor) { return vendor == "nvidia" || vendor == "amd" || vendor == "intel"; }

bool Claim::wants_gpu() const {
  return gpu || gpus || gpu_mem_mib || !cuda.empty() || !compute_capability.empty() || gpu_models ||
         (nvlink && *nvlink) || (exclusive && *exclusive) || vendor || backend == Backend::gpu;
}

std::string Claim::meaning() const {
  if (cpu_only) return "CPU only";
  std::vector<std::string> qualifiers;
  if (gpu_mem_mib) qualifiers.push_back(fmt::format("≥ {} on each GPU", format_mib(*gpu_mem_mib)));
  if (!cuda.empty()) qualifiers.push_back("CUDA " + join_constraints(cuda));
  if (!compute_capability.empty())
    qualifiers.push_back("compute capability " + join_constraints(compute_capability));
  if (gpu_models) qualifiers.push_back(fmt::format("a GPU model {}", fmt::join(*gpu_models, " or ")));
  if (nvlink) qualifiers.emplace_back(*nvlink ? "NVLink between all its GPUs" : "no NVLink needed");
  if (exclusive) qualifiers.emplace_back(*exclusive ? "the whole node to itself" : "not exclusive");
  if (vendor && compute_capability.empty())
    qualifiers.push_back(fmt::format("an {} GPU", vendor_display(*vendor)));
  if (excluded_vendor) qualifiers.push_back(fmt::format("not an {} GPU", vendor_display(*excluded_vendor)));
  if (backend && *backend != Backend::gpu)
    return fmt::format("the {} variant: not a GPU test", to_string(*backend));
  std::string text;
  if (gpus)
    text = fmt::format("{} GPU{}", *gpus, util::plural(*gpus));
  else if (gpu)
    text = "1 GPU";
  if (text.empty() && !qualifies_only && (vendor || backend)) text = "1 GPU";
  if (text.empty()) return qualifiers.empty() ? "nothing" : fmt::format("{}", fmt::join(qualifiers, ", "));
  if (!qualifiers.empty()) text += fmt::format(" with {}", fmt::join(qualifiers, ", "));
  return text;
}

Result<int> parse_gpu_count(std::string_view text) {
  if (text.empty()) return Problem{"the GPU count is missing"};
  // "2.0" is 2: exec_properties are strings, and a generator that writes floats (as Bazel's
  // `resources:gpu` reads them) wrote that; before, such a test went to the CPU bucket.
  if (auto point = text.find('.'); point != std::string_view::npos && point > 0 && point + 1 < text.size() &&
                                   text.find_first_not_of('0', point + 1) == std::string_view::npos)
    text = text.substr(0, point);
  if (text.find_first_not_of("0123456789") != std::string_view::npos)
    return Problem{
        fmt::format("\"{}\" is not a GPU count (a whole number of at least 1)", util::excerpt(text))};
  long long value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || value > max_gpus_per_test)
    return Problem{
        fmt::format("{} GPUs is more than any node has (at most {} for one test)", text, max_gpus_per_test)};
  if (value == 0)
    return Problem{
        "a GPU count must be at least 1 (a test without GPUs needs no GPU annotation, or cpu-only)"};
  return static_cast<int>(value);
}

Result<std::vector<std::string>> parse_models(std::string_view text) {
  std::vector<std::string> models;
  while (true) {
    auto bar = text.find('|');
    auto name = text.substr(0, bar);
    // nvidia-smi's names have blanks ("Tesla T4"), and models match with any separators.
    bool ok =
        !name.empty() && name.front() != ' ' && name.back() != ' ' &&
        std::all_of(name.begin(), name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.' || c == ' ';
        });
    if (!ok)
      return Problem{name.empty() ? "a GPU model name is empty (write e.g. gpu-model:A100|H100)"
                                  : fmt::format("\"{}\" is not a GPU model name", util::excerpt(name))};
    if (auto model = util::lower(name); std::find(models.begin(), models.end(), model) == models.end())
      models.push_back(model);
    if (bar == std::string_view::npos) break;
    text.remove_prefix(bar + 1);
  }
  return models;
}

Result<std::vector<VersionConstraint>> parse_version_constraints(std::string_view text,
                                                                 bool bare_means_at_least, VersionOf of) {
  std::vector<VersionConstraint> constraints;
  std::string_view rest = text;
  while (true) {
    auto comma = rest.find(',');
    auto piece = rest.substr(0, comma);
    auto constraint = VersionConstraint::parse(piece);
    if (!constraint && bare_means_at_least) {
      if (auto version = Version::parse(piece))
        constraint = VersionConstraint{VersionConstraint::Op::ge, *version};
    }
    if (!constraint) return Problem{constraint.problem()};
    const auto& parts = constraint->version.parts;
    if (of == VersionOf::compute_capability &&
        (parts.front() > 15 || parts.size() > 2 || (parts.size() == 2 && parts[1] > 9)))
      return Problem{fmt::format("{} is not a compute capability: X.Y, such as 8.0 (sm_80) or 9.0",
                                 constraint->version.str())};
    if (of == VersionOf::cuda && parts.front() > 99)
      return Problem{fmt::format("{} is not a CUDA version, such as 12.4", constraint->version.str())};
    constraints.push_back(*constraint);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return constraints;
}

const std::vector<std::string_view>& setting_fields() {
  static const std::vector<std::string_view> fields = {
      "gpus",   "gpu_mem",   "cuda",    "compute_capability", "gpu_models", "vendor",
      "nvlink", "exclusive", "cpu_only"};
  return fields;
}

Result<Claim> apply_setting(Claim claim, std::string_view field, std::string_view value) {
  if (field == "gpus") {
    auto count = parse_gpu_count(value);
    if (!count) return Problem{count.problem()};
    claim.gpus = *count;
  } else if (field == "gpu_mem") {
    auto mib = parse_size_mib(value);
    if (!mib)
      return Problem{
          fmt::format("\"{}\" is not a memory size (write e.g. 40GiB or 16384MiB)", util::excerpt(value))};
    claim.gpu_mem_mib = *mib;
  } else if (field == "cuda" || field == "compute_capability") {
    auto constraints = parse_version_constraints(
        value, true, field == "cuda" ? VersionOf::cuda : VersionOf::compute_capability);
    if (!constraints) return Problem{constraints.problem()};
    auto& target = field == "cuda" ? claim.cuda : claim.compute_capability;
    target.insert(target.end(), constraints->begin(), constraints->end());
  } else if (field == "gpu_models") {
    auto models = parse_models(value);
    if (!models) return Problem{models.problem()};
    claim.gpu_models = *std::move(models);
  } else if (field == "vendor") {
    auto vendor = util::lower(value);
    if (!is_vendor(vendor))
      return Problem{fmt::format("\"{}\" is not a GPU vendor (nvidia, amd or intel)", util::excerpt(value))};
    claim.vendor = vendor;
  } else if (field == "nvlink" || field == "exclusive" || field == "cpu_only") {
    auto flag = parse_bool(value);
    if (!flag) return Problem{fmt::format("\"{}\" is not true or false", util::excerpt(value))};
    if (field == "nvlink")
      claim.nvlink = *flag;
    else if (field == "exclusive")
      claim.exclusive = *flag;
    else {
      claim.cpu_only = *flag;
      claim.not_cpu_only = !*flag;
    }
  } else {
    return Problem{fmt::format("unknown field \"{}\"", util::excerpt(field))};
  }
  return claim;
}

}  // namespace gpuplan::annotate
