#include "emit/classification_json.hpp"

#include <cstdint>

#include "gpuplan/emit.hpp"
#include "gpuplan/plan.hpp"
#include "plan/json_parts.hpp"

namespace gpuplan {

using nlohmann::ordered_json;
using util::JsonWriter;

namespace emit {

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

/// Where each requirement field came from.
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
  if (r.every_node_gpu) out.key("every_node_gpu").value(r.every_node_gpu->source.str());
  out.end_object();
}

}  // namespace

void write_test(JsonWriter& out, const ClassifiedTest& test) {
  const auto& t = test.target;
  out.begin_object();
  out.key("label").value(t.label);
  out.key("bucket").value(to_string(test.bucket));
  out.key("reason").value(test.reason.str());
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

ordered_json diagnostics_to_json(const Diagnostics& diagnostics) {
  return document([&](JsonWriter& out) { write_diagnostics(out, diagnostics); });
}

}  // namespace emit

void write_classification_json(const Classification& c, const std::function<void(std::string_view)>& sink) {
  long counts[3] = {0, 0, 0};
  for (const auto& t : c.tests) ++counts[static_cast<int>(t.bucket)];
  JsonWriter out(sink);
  out.begin_object();
  out.key("summary").begin_object();
  out.key("tests").value(c.tests.size());
  out.key("gpu_tests").value(static_cast<std::int64_t>(counts[static_cast<int>(Bucket::gpu)]));
  out.key("cpu_tests").value(static_cast<std::int64_t>(counts[static_cast<int>(Bucket::cpu)]));
  out.key("skipped_tests").value(static_cast<std::int64_t>(counts[static_cast<int>(Bucket::skipped)]));
  out.key("dropped_targets").value(static_cast<std::int64_t>(c.dropped.total()));
  out.end_object();
  out.key("gpu_tests").begin_array();
  for (const auto& t : c.tests)
    if (t.bucket == Bucket::gpu) emit::write_test(out, t);
  out.end_array();
  for (auto [key, bucket] :
       {std::pair{"cpu_tests", Bucket::cpu}, std::pair{"skipped_tests", Bucket::skipped}}) {
    out.key(key).begin_array();
    for (const auto& t : c.tests) {
      if (t.bucket != bucket) continue;
      out.begin_object();
      out.key("label").value(t.target.label);
      out.key("reason").value(t.reason.str());
      out.end_object();
    }
    out.end_array();
  }
  out.key("diagnostics");
  write_diagnostics(out, c.diagnostics);
  out.end_object();
  out.raw("\n");
  out.flush();
}

}  // namespace gpuplan
