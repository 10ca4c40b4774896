#include "cli/classification_json.hpp"

#include "gpuplan/plan.hpp"

namespace gpuplan::cli {

using nlohmann::ordered_json;

ordered_json sources_to_json(const Requirement& r) {
  auto optional = [](const auto& field) {
    return field ? ordered_json(field->source) : ordered_json(nullptr);
  };
  auto list = [](const std::vector<Sourced<VersionConstraint>>& constraints) {
    ordered_json sources = ordered_json::array();
    for (const auto& c : constraints) sources.push_back(c.source);
    return sources;
  };
  ordered_json j;
  j["gpus"] = r.gpus.source;
  j["gpu_mem_mib"] = optional(r.gpu_mem_mib);
  j["cuda"] = list(r.cuda);
  j["gpu_models"] = optional(r.gpu_models);
  j["compute_capability"] = list(r.compute_capability);
  j["nvlink"] = optional(r.nvlink);
  j["exclusive"] = optional(r.exclusive);
  if (r.vendor) j["vendor"] = r.vendor->source;
  return j;
}

ordered_json test_to_json(const ClassifiedTest& test) {
  const auto& t = test.target;
  ordered_json j;
  j["label"] = t.label;
  j["bucket"] = to_string(test.bucket);
  j["reason"] = test.reason;
  j["rule_class"] = t.rule_class;
  j["size"] = t.size;
  j["shard_count"] = t.shard_count;
  j["flaky"] = t.flaky;
  j["requirements"] = requirements_to_json(test.requirement);
  j["sources"] = sources_to_json(test.requirement);
  return j;
}

ordered_json diagnostics_to_json(const Diagnostics& diagnostics) {
  ordered_json array = ordered_json::array();
  for (const auto& d : diagnostics)
    array.push_back({{"severity", to_string(d.severity)},
                     {"label", d.label},
                     {"source", d.source},
                     {"message", d.message}});
  return array;
}

}  // namespace gpuplan::cli
