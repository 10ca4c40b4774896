#include "cli/classification_json.hpp"

#include "gpuplan/plan.hpp"
#include "plan/json_parts.hpp"

namespace gpuplan::cli {

using nlohmann::ordered_json;
using util::JsonWriter;

namespace {

/// A small document from its streamed form, so that each form is written in one place.
template <class Write>
ordered_json document(Write write) {
  std::string text;
  JsonWriter out([&](std::string_view piece) { text += piece; }, -1);
  write(out);
  out.flush();
  return ordered_json::parse(text);
}

}  // namespace

void write_sources(JsonWriter& out, const Requirement& r) {
  auto optional = [&](const auto& field) {
    if (field)
      out.value(field->source.str());
    else
      out.null();
  };
  auto list = [&](const std::vector<Sourced<VersionConstraint>>& constraints) {
    out.begin_array();
    for (const auto& c : constraints) out.value(c.source.str());
    out.end_array();
  };
  out.begin_object();
  out.key("gpus").value(r.gpus.source.str());
  out.key("gpu_mem_mib");
  optional(r.gpu_mem_mib);
  out.key("cuda");
  list(r.cuda);
  out.key("gpu_models");
  optional(r.gpu_models);
  out.key("compute_capability");
  list(r.compute_capability);
  out.key("nvlink");
  optional(r.nvlink);
  out.key("exclusive");
  optional(r.exclusive);
  if (r.vendor) out.key("vendor").value(r.vendor->source.str());
  out.end_object();
}

ordered_json sources_to_json(const Requirement& r) {
  return document([&](JsonWriter& out) { write_sources(out, r); });
}

void write_test(JsonWriter& out, const ClassifiedTest& test) {
  const auto& t = test.target;
  out.begin_object();
  out.key("label").value(t.label);
  out.key("bucket").value(to_string(test.bucket));
  out.key("reason").value(test.reason);
  out.key("rule_class").value(t.rule_class.str());
  out.key("size").value(t.size.str());
  out.key("shard_count").value(t.shard_count);
  out.key("flaky").value(t.flaky);
  out.key("requirements");
  write_requirements(out, test.requirement);
  out.key("sources");
  write_sources(out, test.requirement);
  out.end_object();
}

ordered_json test_to_json(const ClassifiedTest& test) {
  return document([&](JsonWriter& out) { write_test(out, test); });
}

void write_diagnostics(JsonWriter& out, const Diagnostics& diagnostics) {
  out.begin_array();
  for (const auto& d : diagnostics) {
    out.begin_object();
    out.key("severity").value(to_string(d.severity));
    out.key("label").value(d.label);
    out.key("source").value(d.source);
    out.key("message").value(d.message);
    out.end_object();
  }
  out.end_array();
}

ordered_json diagnostics_to_json(const Diagnostics& diagnostics) {
  return document([&](JsonWriter& out) { write_diagnostics(out, diagnostics); });
}

}  // namespace gpuplan::cli
