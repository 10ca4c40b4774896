// Tags against the graph: the tests whose annotation and dependencies disagree, and
// `--classify-by-deps`, which acts on the first kind.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "gpuplan/graph.hpp"
#include "util/text.hpp"

namespace gpuplan {

std::string gpu_annotation_removal(const ClassifiedTest& test) {
  std::vector<std::string> tags, properties, rules, made;
  for (const auto& a : test.annotations) {
    std::string_view source = a.source;
    if (source == "tag manual") continue;
    if (a.by_macro) {
      made.emplace_back(source.substr(0, source.find(" (")));  // "name suffix _gpu (xla_test variant)"
    } else if (util::strip_prefix(source, "tag ")) {
      tags.emplace_back(source);
    } else if (util::strip_prefix(source, "exec_properties ")) {
      properties.emplace_back(source.substr(0, source.find('=')));
    } else if (auto tag = source.find("(tag "); tag != std::string_view::npos && source.ends_with(')')) {
      tags.emplace_back(source.substr(tag + 5, source.size() - tag - 6));
    } else {
      rules.emplace_back(source);
    }
  }
  const std::string& macro = test.target.generator_function.str();
  // What the macro adds to the variant no edit of its call removes: the variant goes, or a
  // cpu-only overrules it.
  if (!made.empty())
    return fmt::format(
        "leave the GPU backend out of the call of macro {}, which gives this variant {}; or add tag cpu-only "
        "to the call, or a rule {{label: {}, set: {{cpu_only: true}}}} to the rules file",
        macro, fmt::join(made, " and "), canonical_label(test.target.label));
  std::vector<std::string> parts;
  if (!tags.empty())
    parts.push_back(fmt::format("remove tag{} {}", util::plural(tags.size()), fmt::join(tags, ", ")));
  if (!properties.empty())
    parts.push_back(fmt::format("remove exec_properties {}", fmt::join(properties, ", ")));
  if (!parts.empty() && !macro.empty()) parts.back() += fmt::format(" (in the call of macro {})", macro);
  if (!rules.empty()) parts.push_back(fmt::format("exclude it from {}", fmt::join(rules, ", ")));
  return fmt::format("{}", fmt::join(parts, "; "));
}

namespace {

bool unannotated(const ClassifiedTest& test) {
  return test.bucket == Bucket::cpu && std::string_view(test.reason).starts_with("no GPU annotation");
}

}  // namespace

std::string_view to_string(Disagreement kind) {
  switch (kind) {
    case Disagreement::gpu_without_gpu_code: return "gpu-without-gpu-code";
    case Disagreement::gpu_code_without_annotation: return "gpu-code-without-annotation";
    case Disagreement::unknown: return "unknown";
  }
  return "";
}

std::string package_of(std::string_view label) {
  auto colon = label.find(':', label.find("//"));
  return std::string(label.substr(0, colon));
}

Audit audit(const Classification& tests, const DepGraph& graph, const GpuReach& reach) {
  Audit result;
  result.blind = blind_rule_classes(tests, graph, reach);
  const auto& blind = result.blind;
  std::map<std::string, PackageAudit> packages;
  for (const auto& test : tests.tests) {
    if (test.bucket == Bucket::skipped) continue;
    ++result.tests;
    std::string label = canonical_label(test.target.label);
    auto& package = packages[package_of(label)];
    ++package.tests;
    bool gpu = test.bucket == Bucket::gpu;
    if (gpu) ++package.gpu_annotated;
    auto node = graph.find(label);
    if (!node) {
      ++result.not_in_graph;
      continue;
    }
    AuditEntry entry;
    entry.label = label;
    entry.package = package_of(label);
    entry.kind = Disagreement::gpu_without_gpu_code;
    entry.location = test.target.location;
    bool reaches = reach.reaches(*node);
    if (reaches) ++package.reach_gpu_code;
    if (reach.unknown(*node)) {
      ++package.unknown;
      entry.kind = Disagreement::unknown;
      entry.undeclared = graph.label(reach.first_undeclared(*node));
      entry.reason = fmt::format("reaches {}, which the input did not expand", entry.undeclared);
    } else if (gpu && !reaches && blind.contains(test.target.rule_class.str())) {
      ++package.unknown;
      entry.kind = Disagreement::unknown;
      entry.reason = fmt::format("no {} of the graph reaches GPU code: its own may be outside the graph",
                                 test.target.rule_class.str());
    } else if (gpu && !reaches) {
      ++package.gpu_without_gpu_code;
      entry.tag_change = gpu_annotation_removal(test);
    } else if (!gpu && reaches && unannotated(test)) {
      ++package.gpu_code_without_annotation;
      entry.kind = Disagreement::gpu_code_without_annotation;
      entry.path = reach.path_text(*node);
      entry.tag_change = "add tag gpu (or gpu:N), or cpu-only if it never uses the GPU";
    } else {
      continue;
    }
    result.entries.push_back(std::move(entry));
  }
  std::stable_sort(result.entries.begin(), result.entries.end(),
                   [](const AuditEntry& a, const AuditEntry& b) { return a.kind < b.kind; });
  for (auto& [name, package] : packages) {
    package.package = name;
    result.packages.push_back(std::move(package));
  }
  return result;
}

std::map<std::string, long> blind_rule_classes(const Classification& tests, const DepGraph& graph,
                                               const GpuReach& reach) {
  std::map<std::string, long> gpu_free;
  std::set<std::string> seeing;  // classes some test of which reaches GPU code
  for (const auto& test : tests.tests) {
    if (test.bucket == Bucket::skipped) continue;
    auto node = graph.find(canonical_label(test.target.label));
    if (!node) continue;
    const std::string& rule_class = test.target.rule_class.str();
    if (reach.reaches(*node))
      seeing.insert(rule_class);
    else if (test.bucket == Bucket::gpu && !reach.unknown(*node))
      ++gpu_free[rule_class];
  }
  std::erase_if(gpu_free, [&](const auto& entry) { return seeing.contains(entry.first); });
  return gpu_free;
}

std::string blind_class_message(std::string_view rule_class, long gpu_tests) {
  return fmt::format(
      "no {0} of the dependency graph reaches GPU code (gpu_deps), so the graph cannot tell whether its {1} "
      "GPU-annotated {0}{2} need{3} a GPU: GPU code from outside Bazel's graph (a system Python's torch, "
      "CUDA "
      "linked through linkopts) or under labels that gpu_deps does not name is not in it. Name that code in "
      "the rules file's gpu_deps",
      rule_class, gpu_tests, util::plural(gpu_tests), gpu_tests == 1 ? "s" : "");
}

long classify_by_deps(Classification& tests, const DepGraph& graph, const GpuReach& reach,
                      const std::map<std::string, long>& blind) {
  long moved = 0;
  for (auto& test : tests.tests) {
    if (test.bucket != Bucket::gpu || blind.contains(test.target.rule_class.str())) continue;
    std::string label = canonical_label(test.target.label);
    auto node = graph.find(label);
    if (!node || reach.reaches(*node) || reach.unknown(*node)) continue;
    ++moved;
    std::string why = fmt::format(
        "no path from {} to GPU code (gpu_deps) in the dependency graph; its annotation ({}) is overruled by "
        "--classify-by-deps",
        label, test.reason);
    test.bucket = Bucket::cpu;
    test.reason = "--classify-by-deps: reaches no GPU code (was: " + test.reason.str() + ")";
    auto& gpus = test.requirement.edit().gpus;
    // One text per annotation, not per test: sources are interned.
    gpus.source =
        Symbol("--classify-by-deps: no path to GPU code (gpu_deps), overruling " + gpus.source.str());
    gpus.value = 0;
    tests.diagnostics.push_back(Diagnostic{Severity::warning, label, "--classify-by-deps", why});
  }
  return moved;
}

}  // namespace gpuplan
