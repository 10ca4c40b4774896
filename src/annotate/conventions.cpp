#include "annotate/conventions.hpp"

#include <fmt/format.h>

#include <cctype>
#include <string>

#include "gpuplan/size.hpp"

namespace gpuplan::annotate {

namespace {

Recognized claim(std::string_view convention, Claim c) {
  return {convention, Reading{c.source, std::move(c), {}}};
}
Recognized malformed(std::string_view convention, std::string problem) {
  return {convention, Reading{{}, std::nullopt, std::move(problem)}};
}

Recognized gpu_count(std::string_view convention, std::string source, std::string_view text) {
  std::string problem;
  auto count = parse_gpu_count(text, problem);
  if (!count) return malformed(convention, problem);
  Claim c{.source = std::move(source), .gpu = true, .gpus = *count};
  return claim(convention, std::move(c));
}

Recognized flag_gpu(std::string_view convention, std::string source) {
  return claim(convention, Claim{.source = std::move(source), .gpu = true});
}

/// The part after "cuda"/"gpu-cc": ":12.4" (meaning ≥), ">=12.4", "<13", "==9.0", comma-joined.
Recognized constraints(std::string_view convention, std::string source, std::string_view rest, bool is_cuda) {
  std::string problem;
  bool colon = rest.starts_with(':');
  auto parsed = parse_version_constraints(colon ? rest.substr(1) : rest, colon, problem);
  if (!parsed) return malformed(convention, problem);
  Claim c{.source = std::move(source)};
  (is_cuda ? c.cuda : c.compute_capability) = *parsed;
  return claim(convention, std::move(c));
}

bool starts_constraint(std::string_view tag, std::string_view name) {
  return tag.starts_with(name) && tag.size() > name.size() &&
         std::string_view(":<>=").find(tag[name.size()]) != std::string_view::npos;
}

/// XLA's requires-gpu-smXY[-only][:N], `rest` being what follows "requires-gpu-sm".
Recognized xla_compute_capability(std::string source, std::string_view rest) {
  constexpr std::string_view convention = "requires-gpu-sm";
  auto digits = rest.find_first_not_of("0123456789");
  auto number = rest.substr(0, digits);
  rest.remove_prefix(number.size());
  bool only = rest.starts_with("-only");
  if (only) rest.remove_prefix(5);
  if (number.size() < 2 || number.size() > 4 || (!rest.empty() && !rest.starts_with(':')))
    return malformed(convention,
                     "write requires-gpu-smXY or requires-gpu-smXY-only (XY: compute capability "
                     "X.Y, e.g. sm80), optionally with :N for N GPUs");
  auto version = Version::parse(fmt::format("{}.{}", number.substr(0, number.size() - 1), number.back()));
  Claim c{.source = std::move(source), .gpu = true};
  c.compute_capability.push_back({only ? VersionConstraint::Op::eq : VersionConstraint::Op::ge, *version});
  if (rest.starts_with(':')) {
    std::string problem;
    auto count = parse_gpu_count(rest.substr(1), problem);
    if (!count) return malformed(convention, problem);
    c.gpus = *count;
  }
  return claim(convention, std::move(c));
}

bool is_truthy(std::string_view value) {
  auto word = lower(value);
  return word.empty() || word == "true" || word == "yes";
}

}  // namespace

namespace {

std::optional<Recognized> read_tag_as(std::string_view tag, const Rules& rules) {
  auto source = fmt::format("tag {}", tag);
  if (tag == "cpu-only" || tag == "no_gpu" || tag == "nogpu" || tag == "no-gpu")
    return claim("cpu-only", Claim{.source = source, .cpu_only = true});
  if (tag == "gpu") return flag_gpu("gpu", source);
  if (tag.starts_with("gpu:")) return gpu_count("gpu", source, tag.substr(4));
  if (tag.starts_with("resources:gpu:")) return gpu_count("resources:gpu", source, tag.substr(14));
  if (tag == "resources:gpu")
    return malformed("resources:gpu", "the GPU count is missing (write resources:gpu:N)");
  if (tag.starts_with("gpu-mem:") || tag.starts_with("gpu_mem:")) {
    auto size = tag.substr(8);
    auto mib = parse_size_mib(size);
    if (!mib)
      return malformed("gpu-mem",
                       fmt::format("\"{}\" is not a memory size (write e.g. 40GiB, 40G or 40960MiB)", size));
    return claim("gpu-mem", Claim{.source = source, .gpu_mem_mib = *mib});
  }
  if (starts_constraint(tag, "cuda")) return constraints("cuda", source, tag.substr(4), true);
  if (tag.starts_with("gpu-model:")) {
    std::string problem;
    auto models = parse_models(tag.substr(10), problem);
    if (!models) return malformed("gpu-model", problem);
    return claim("gpu-model", Claim{.source = source, .gpu_models = *models});
  }
  if (starts_constraint(tag, "gpu-cc")) return constraints("gpu-cc", source, tag.substr(6), false);
  if (tag == "nvlink") return claim("nvlink", Claim{.source = source, .nvlink = true});
  if (tag == "gpu-exclusive") return claim("gpu-exclusive", Claim{.source = source, .exclusive = true});
  if (tag == "requires-gpu-nvidia") return flag_gpu("requires-gpu-nvidia", source);
  if (tag.starts_with("requires-gpu-nvidia:"))
    return gpu_count("requires-gpu-nvidia", source, tag.substr(20));
  if (tag == "multi_gpu")
    return claim("multi_gpu", Claim{.source = source, .gpu = true, .gpus = rules.multi_gpu_count});
  if (tag.starts_with("requires-gpu-sm")) return xla_compute_capability(source, tag.substr(15));
  if (tag == "multiaccelerator")
    return claim("multiaccelerator",
                 Claim{.source = source, .gpu = true, .gpus = rules.multiaccelerator_count});
  return std::nullopt;
}

}  // namespace

std::optional<Recognized> read_tag(std::string_view tag, const Rules& rules) {
  auto recognized = read_tag_as(tag, rules);
  if (recognized) recognized->reading.source = fmt::format("tag {}", tag);
  return recognized;
}

namespace {

std::optional<Recognized> read_exec_property_as(std::string_view key, std::string_view value,
                                                const Rules& rules, const std::string& source) {
  if (key == "resources:gpu") return gpu_count("resources:gpu", source, value);
  if (key == "gpu" || key == "gpu_count") {
    if (is_truthy(value) && !value.empty()) return flag_gpu("exec-gpu-count", source);
    return gpu_count("exec-gpu-count", source, value);
  }
  if (key == "gpu_model") {
    std::string problem;
    auto models = parse_models(value, problem);
    if (!models) return malformed("exec-gpu-model", problem);
    return claim("exec-gpu-model", Claim{.source = source, .gpu = true, .gpu_models = *models});
  }
  if (key == "Pool" || key == "pool") {
    if (lower(value).find("gpu") == std::string::npos) return std::nullopt;
    return flag_gpu("exec-pool", source);
  }
  if (key == "dockerRuntime") {
    if (lower(value) != "nvidia") return std::nullopt;
    return flag_gpu("exec-docker-runtime", source);
  }
  auto as_tag = is_truthy(value) ? read_tag(key, rules) : std::nullopt;
  if (!as_tag) as_tag = read_tag(fmt::format("{}:{}", key, value), rules);
  if (as_tag && as_tag->reading.claim) as_tag->reading.claim->source = source;
  return as_tag;
}

}  // namespace

std::optional<Recognized> read_exec_property(std::string_view key, std::string_view value,
                                             const Rules& rules) {
  auto source = fmt::format("exec_properties {}={}", key, value);
  auto recognized = read_exec_property_as(key, value, rules, source);
  if (recognized) recognized->reading.source = source;
  return recognized;
}

bool looks_gpu_related(std::string_view text) {
  auto word = lower(text);
  for (std::string_view hint : {"gpu", "cuda", "nvidia", "accelerator"})
    if (word.find(hint) != std::string::npos) return true;
  return false;
}

}  // namespace gpuplan::annotate

namespace gpuplan {

const std::vector<std::string_view>& convention_names() {
  static const std::vector<std::string_view> names = {"gpu",
                                                      "resources:gpu",
                                                      "gpu-mem",
                                                      "cuda",
                                                      "gpu-model",
                                                      "gpu-cc",
                                                      "nvlink",
                                                      "gpu-exclusive",
                                                      "cpu-only",
                                                      "requires-gpu-nvidia",
                                                      "multi_gpu",
                                                      "requires-gpu-sm",
                                                      "multiaccelerator",
                                                      "exec-gpu-count",
                                                      "exec-gpu-model",
                                                      "exec-pool",
                                                      "exec-docker-runtime"};
  return names;
}

}  // namespace gpuplan
