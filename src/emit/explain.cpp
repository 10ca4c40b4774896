// `explain`: one test's attributes, annotations, requirements with their sources, path to GPU
// code, bucket and planned durations, as text and as JSON.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "emit/classification_json.hpp"
#include "gpuplan/emit.hpp"
#include "gpuplan/size.hpp"
#include "util/rounding.hpp"

namespace gpuplan {

namespace {

std::string or_none(const std::string& text) { return text.empty() ? "none" : text; }

std::string render_graph_text(const GpuPathView& view, std::string_view label) {
  if (!view.present) return "";
  std::string out = "\ndependency graph\n";
  if (!view.undeclared.empty())
    return out +
           fmt::format("  unknown: reaches {}, which the input did not expand (run bazel query 'deps({})')\n",
                       view.undeclared, label);
  if (!view.blind_reason.empty())
    return out + fmt::format("  unknown: {} ({})\n", view.blind_reason,
                             view.without_implicit ? "query without --noimplicit_deps"
                                                   : "name it in the rules file's gpu_deps");
  if (view.reaches) {
    std::string why =
        !view.pattern.empty()     ? "matches gpu_deps " + view.pattern
        : !view.file_kind.empty() ? fmt::format("is {}: GPU code by its file name", view.file_kind)
        : !view.linkopt.empty()   ? fmt::format("links {}: GPU code by its linkopts", view.linkopt)
                                  : fmt::format("is a {}: CUDA code by its rule class", view.rule_class);
    return out + fmt::format("  reaches GPU code: {}\n  ({} {})\n", fmt::join(view.path, " → "),
                             view.path.back(), why);
  }
  return out + "  reaches no GPU code (no path to a gpu_deps label)\n";
}

/// The rule, tags, exec_properties, generator and size of the test as Bazel described it.
std::string render_attributes(const Target& t) {
  std::string out = fmt::format("{}\n", t.label);
  auto field = [&](std::string_view name, const std::string& value) {
    out += fmt::format("  {:<20}{}\n", name, value);
  };
  field("rule", or_none(t.rule_class) + (t.location.empty() ? "" : " at " + t.location));
  field("tags", or_none(fmt::format("{}", fmt::join(t.tags, ", "))));
  std::vector<std::string> properties;
  for (const auto& [k, v] : t.exec_properties) properties.push_back(fmt::format("{}={}", k, v));
  field("exec_properties", or_none(fmt::format("{}", fmt::join(properties, ", "))));
  const auto& launch = t.launch();
  if (!launch.device_env.empty()) field("env", launch.device_env.str());
  if (!launch.process_args.empty()) field("args", launch.process_args.str());
  field("generator_function", or_none(t.generator_function));
  field("size", t.size.str() + (t.shard_count > 1 ? fmt::format(", {} shards", t.shard_count) : "") +
                    (t.flaky ? ", flaky" : ""));
  return out;
}

/// Each requirement with its value and where it came from.
std::string render_requirements(const Requirement& r) {
  std::string out = "\nrequirements\n";
  auto requirement = [&](std::string_view name, const std::string& value, const std::string& source) {
    out += fmt::format("  {:<20}{:<16}from {}\n", name, value, source);
  };
  requirement("gpus", std::to_string(r.gpus.value), r.gpus.source);
  if (r.gpu_mem_mib)
    requirement("gpu memory", "≥ " + format_mib(r.gpu_mem_mib->value), r.gpu_mem_mib->source);
  for (const auto& c : r.cuda) requirement("cuda", describe(c.value), c.source);
  for (const auto& c : r.compute_capability) requirement("compute capability", describe(c.value), c.source);
  if (r.gpu_models)
    requirement("gpu models", fmt::format("{}", fmt::join(r.gpu_models->value, "|")), r.gpu_models->source);
  if (r.nvlink) requirement("nvlink", r.nvlink->value ? "yes" : "no", r.nvlink->source);
  if (r.exclusive) requirement("whole node", r.exclusive->value ? "yes" : "no", r.exclusive->source);
  if (r.takes_every_node_gpu())
    requirement("every GPU of it", "yes", r.every_node_gpu->source.str() + " with no GPU count");
  if (r.vendor) requirement("vendor", vendor_display(r.vendor->value), r.vendor->source);
  return out;
}

}  // namespace

std::vector<ShardEstimate> planned_durations(const ClassifiedTest& test, const Estimator& estimate) {
  std::vector<ShardEstimate> estimates;
  if (test.bucket != Bucket::gpu) return estimates;
  if (test.target.shard_count <= 1) return {{std::nullopt, estimate(test, std::nullopt)}};
  for (int shard = 0; shard < test.target.shard_count; ++shard)
    estimates.push_back({shard, estimate(test, shard)});
  return estimates;
}

std::string render_explanation(const Explanation& explanation) {
  const ClassifiedTest& test = *explanation.test;
  std::string out = render_attributes(test.target);
  out += "\nannotations read\n";
  if (test.annotations.empty()) out += "  none\n";
  for (const auto& a : test.annotations) out += fmt::format("  {} → {}\n", a.source, a.meaning);
  out += render_requirements(test.requirement);
  out += render_graph_text(explanation.graph, test.target.label);
  out += fmt::format("\nbucket: {}\n  {}\n", to_string(test.bucket), test.reason);
  if (!explanation.estimates.empty()) out += "\nplanned duration\n";
  // Seconds as the plan JSON gives them (before, 6 significant digits: 1234.57s for the plan's
  // 1234.568); the memory is what the plan reserves, the runs' peak plus the headroom (before,
  // called the peak, which `history show` lists without it).
  for (const auto& [shard, e, slowdown] : explanation.estimates)
    out += fmt::format(
        "  {:<20}{:<16}from {}{}{}\n", shard ? fmt::format("shard {}", *shard) : "whole test",
        fmt::format("{}s", util::json_seconds(e.seconds)), e.source,
        slowdown != 1 ? fmt::format(", × pack_slowdown {:g} (it shares its GPU under pack)", slowdown) : "",
        e.peak_vram_mib ? fmt::format(", VRAM {} (peak plus {:g}% headroom)", format_mib(*e.peak_vram_mib),
                                      explanation.vram_headroom * 100)
                        : "");
  if (!explanation.memory_floors.empty())
    out +=
        "\nmeasured memory floor (the plan runs it only on GPUs with at least this much; no tag says it;\n"
        "a unit a shard, as plan makes them: under --shards=whole the test's one unit takes the largest)\n";
  for (const auto& f : explanation.memory_floors)
    out += fmt::format("  {:<20}{:<16}from {}: peak {} of {} ({} with the {:g}% headroom); reserves {}\n",
                       f.shard ? fmt::format("shard {}", *f.shard) : "whole test",
                       "≥ " + format_mib(f.peak_mib), memory_floor_source, format_mib(f.peak_mib),
                       f.measured_by, format_mib(f.with_headroom_mib), f.vram_headroom * 100,
                       f.vram_mib
                           ? fmt::format("{} of a GPU it shares", format_mib(*f.vram_mib))
                           : std::string("its GPUs whole (its own need is unknown, so pack shares none)"));
  if (!explanation.diagnostics.empty()) {
    out += "\ndiagnostics\n";
    for (const auto& d : explanation.diagnostics)
      out += fmt::format("  {}: {}\n", to_string(d.severity), d.message);
  }
  return out;
}

std::string explanation_to_json(const Explanation& explanation) {
  const ClassifiedTest& test = *explanation.test;
  auto j = emit::test_to_json(test);
  const auto& t = test.target;
  j["tags"] = t.tags;
  nlohmann::ordered_json properties = nlohmann::ordered_json::object();
  for (const auto& [k, v] : t.exec_properties) properties[k] = v;
  j["exec_properties"] = properties;
  j["generator_function"] = t.generator_function;
  j["location"] = t.location;
  j["annotations"] = nlohmann::ordered_json::array();
  for (const auto& a : test.annotations)
    j["annotations"].push_back({{"source", a.source}, {"meaning", a.meaning}});
  j["planned_duration"] = nlohmann::ordered_json::array();
  for (const auto& [shard, e, slowdown] : explanation.estimates)
    j["planned_duration"].push_back(
        {{"shard_index", shard ? nlohmann::ordered_json(*shard) : nlohmann::ordered_json(nullptr)},
         {"seconds", util::json_seconds(e.seconds)},
         {"source", e.source},
         {"pack_slowdown", slowdown},
         {"peak_vram_mib",
          e.peak_vram_mib ? nlohmann::ordered_json(*e.peak_vram_mib) : nlohmann::ordered_json(nullptr)}});
  if (!explanation.memory_floors.empty()) {
    j["measured_memory_floor"] = nlohmann::ordered_json::array();
    for (const auto& f : explanation.memory_floors)
      j["measured_memory_floor"].push_back(
          {{"shard_index", f.shard ? nlohmann::ordered_json(*f.shard) : nlohmann::ordered_json(nullptr)},
           {"peak_mib", f.peak_mib},
           {"vram_headroom", f.vram_headroom},
           {"with_headroom_mib", f.with_headroom_mib},
           {"gpu_mem_mib", f.peak_mib},
           {"vram_mib", f.vram_mib ? nlohmann::ordered_json(*f.vram_mib) : nlohmann::ordered_json(nullptr)},
           {"source", memory_floor_source},
           {"measured_by", f.measured_by}});
  }
  const GpuPathView& graph = explanation.graph;
  if (graph.present) {
    bool unknown = !graph.blind_reason.empty() || !graph.undeclared.empty();
    j["gpu_code"] = {
        {"reaches", unknown ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(graph.reaches)},
        {"path", graph.path},
        {"gpu_deps_pattern", graph.pattern},
        {"gpu_rule_class", graph.rule_class},
        {"gpu_file_kind", graph.file_kind},
        {"gpu_linkopt", graph.linkopt},
        {"unknown", unknown}};
    if (!graph.undeclared.empty()) j["gpu_code"]["undeclared"] = graph.undeclared;
    if (!graph.blind.empty()) j["gpu_code"]["blind_rule_class"] = graph.blind;
    if (!graph.used_gpu.empty()) j["gpu_code"]["used_gpu"] = graph.used_gpu;
    if (!graph.suppliers.empty()) j["gpu_code"]["suppliers"] = graph.suppliers;
  }
  j["diagnostics"] = emit::diagnostics_to_json(explanation.diagnostics);
  return j.dump(2) + "\n";
}

}  // namespace gpuplan
