// Tags against the graph: the tests whose annotation and dependencies disagree, and
// `--classify-by-deps`, which acts on the first kind.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
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
  // The query shows the tags the macro gave, not which of them its call wrote: one the macro adds
  // itself (a team's gpu_test appending team-gpus-N) no edit of the call removes.
  if (!parts.empty() && !macro.empty())
    parts.back() += fmt::format(
        " (in the call of macro {}; a tag the macro adds itself stays: then add tag "
        "cpu-only to the call)",
        macro);
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

Audit audit(const Classification& tests, const DepGraph& graph, const GpuReach& reach,
            const std::map<std::string, std::string>& used_gpu) {
  Audit result;
  result.blind = blind_tests(tests, graph, reach, used_gpu);
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
    } else if (gpu && !reaches && blind.contains(label, test.target.rule_class.str())) {
      ++package.unknown;
      entry.kind = Disagreement::unknown;
      entry.reason = blind.reason(label, test.target.rule_class.str());
      if (blind.unsupplied.contains(label))
        entry.suppliers = blind.suppliers.at(test.target.rule_class.str());
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

namespace {

/// For each of `tests`, whether it reaches a label of one of `suppliers`: one depth-first pass
/// over the rules' inputs, each node once; configuration rules are not passed through (a
/// select() key such as @local_config_cuda//cuda:using_nvcc is no code a test gets), nor are
/// the branches cquery's configuration did not take.
std::vector<bool> reach_suppliers(const DepGraph& graph, const std::vector<DepGraph::Node>& tests,
                                  const std::vector<std::string>& suppliers) {
  using Node = DepGraph::Node;
  // Each node's entries among the rules (cquery lists a rule once per configuration).
  std::vector<std::uint32_t> first(graph.node_count() + 1, 0), entries(graph.rule_count());
  for (std::size_t e = 0; e < graph.rule_count(); ++e) ++first[graph.rule_node(e) + 1];
  for (std::size_t n = 1; n < first.size(); ++n) first[n] += first[n - 1];
  {
    std::vector<std::uint32_t> fill(first.begin(), first.end() - 1);
    for (std::size_t e = 0; e < graph.rule_count(); ++e)
      entries[fill[graph.rule_node(e)]++] = static_cast<std::uint32_t>(e);
  }
  enum : std::uint8_t { unseen, open, without, with };
  std::vector<std::uint8_t> state(graph.node_count(), unseen);
  // A node's own state before its inputs are looked at: with where it is a supplier's.
  const std::vector<bool> untaken = graph.untaken_branches();
  auto start = [&](Node node) {
    if (untaken[node] || is_configuration_rule(graph.rule_class(node))) return without;
    for (const auto& supplier : suppliers)
      if (from_supplier(supplier, graph.label(node))) return with;
    return open;
  };
  struct Frame {
    Node node;
    std::uint32_t entry;  ///< index into entries of the entry looked at
    std::size_t input;    ///< the input of that entry looked at
  };
  std::vector<Frame> stack;
  std::vector<bool> reached;
  for (Node test : tests) {
    if (state[test] == unseen && (state[test] = start(test)) == open) stack.push_back({test, first[test], 0});
    while (!stack.empty()) {
      Frame& frame = stack.back();
      std::optional<Node> deeper;
      bool found = false;
      for (; frame.entry < first[frame.node + 1]; ++frame.entry, frame.input = 0) {
        auto inputs = graph.rule_inputs(entries[frame.entry]);
        for (; frame.input < inputs.size(); ++frame.input) {
          Node input = inputs[frame.input];
          if (state[input] == unseen && (state[input] = start(input)) == open) {
            deeper = input;
            break;
          }
          if (state[input] == with) {
            found = true;
            break;
          }
        }
        if (found || deeper) break;
      }
      if (deeper) {
        stack.push_back({*deeper, first[*deeper], 0});
        continue;
      }
      state[frame.node] = found ? with : without;  // an input still open is a cycle: it adds nothing
      stack.pop_back();
    }
    reached.push_back(state[test] == with);
  }
  return reached;
}

/// Whether the graph holds what Bazel adds to every test (`@bazel_tools//tools/test:test_setup`,
/// `:collect_coverage`, ...), which `--noimplicit_deps` leaves out, and with it what a test rule
/// adds itself.
bool has_implicit_deps(const DepGraph& graph) {
  for (DepGraph::Node node = 0; node < graph.node_count(); ++node) {
    std::string_view label = graph.label(node);
    if (label.starts_with("@")) label.remove_prefix(label.starts_with("@@") ? 2 : 1);
    if (label.starts_with("bazel_tools//tools/test:")) return true;
  }
  return false;
}

/// Test rules whose implicit deps are Bazel's test support and a language's toolchain, never GPU code.
bool common_test_rule(std::string_view rule_class) {
  static constexpr std::string_view common[] = {"cc_test",   "py_test", "sh_test",
                                                "java_test", "go_test", "rust_test"};
  return std::ranges::find(common, rule_class) != std::end(common);
}

}  // namespace

BlindTests blind_tests(const Classification& tests, const DepGraph& graph, const GpuReach& reach,
                       const std::map<std::string, std::string>& used_gpu) {
  BlindTests blind;
  std::optional<bool> implicit;  // looked for once, when a test of another rule class needs it
  std::map<std::string, std::set<std::string>> suppliers;  // class → of its GPU code; "": the main repository
  // class → its GPU tests without GPU code
  std::map<std::string, std::vector<const ClassifiedTest*>> gpu_free;
  for (const auto& test : tests.tests) {
    if (test.bucket == Bucket::skipped) continue;
    auto node = graph.find(canonical_label(test.target.label));
    if (!node) continue;
    const std::string& rule_class = test.target.rule_class.str();
    if (reach.reaches(*node)) {
      DepGraph::Node gpu_code = reach.path(*node).back();
      suppliers[rule_class].insert(gpu_supplier(graph.label(gpu_code), reach.matched_pattern(gpu_code)));
    } else if (test.bucket == Bucket::gpu && !reach.unknown(*node)) {
      if (auto used = used_gpu.find(label_identity(test.target.label)); used != used_gpu.end()) {
        blind.used_gpu.insert(*used);  // its runs say more than its class
      } else if (!common_test_rule(rule_class) &&
                 !(implicit ? *implicit : *(implicit = has_implicit_deps(graph)))) {
        blind.without_implicit[canonical_label(test.target.label)] = rule_class;
      } else {
        gpu_free[rule_class].push_back(&test);
      }
    }
  }
  for (const auto& [rule_class, candidates] : gpu_free) {
    auto found = suppliers.find(rule_class);
    if (found == suppliers.end()) {
      blind.classes[rule_class] = static_cast<long>(candidates.size());
      continue;
    }
    if (found->second.contains("")) continue;  // the main repository's GPU code: every test reaches it
    std::vector<std::string> hubs(found->second.begin(), found->second.end());
    std::vector<DepGraph::Node> nodes;
    for (const auto* test : candidates) nodes.push_back(*graph.find(canonical_label(test->target.label)));
    auto supplied = reach_suppliers(graph, nodes, hubs);
    for (std::size_t i = 0; i < candidates.size(); ++i)
      if (!supplied[i]) blind.unsupplied[canonical_label(candidates[i]->target.label)] = rule_class;
    if (std::find(supplied.begin(), supplied.end(), false) != supplied.end())
      blind.suppliers[rule_class] = hubs;
  }
  return blind;
}

namespace {

/// "@pypi", "@pypi or @cuda", "@a, @b or @c"; each written by `repository` where given.
std::string repositories(const std::vector<std::string>& names,
                         std::string (*repository)(std::string_view) = nullptr) {
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    std::string name = "@" + names[i];
    text += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + (repository ? repository(name) : name);
  }
  return text;
}

/// The first five of `labels`, then how many more: "//a:x, //a:y and 3 more".
std::string listed_labels(const std::vector<std::string>& labels) {
  constexpr std::size_t shown = 5;
  std::string listed =
      fmt::format("{}", fmt::join(labels.begin(), labels.begin() + std::min(shown, labels.size()), ", "));
  if (labels.size() > shown) listed += fmt::format(" and {} more", labels.size() - shown);
  return listed;
}

}  // namespace

std::string BlindTests::reason(const std::string& label, const std::string& rule_class,
                               std::string (*repository)(std::string_view)) const {
  if (auto used = used_gpu.find(label_identity(label)); used != used_gpu.end())
    return fmt::format(
        "reaches no GPU code in the graph, but its runs used a GPU ({}): its GPU code is outside "
        "the graph",
        used->second);
  if (classes.contains(rule_class))
    return fmt::format("no {} of the graph reaches GPU code: its own may be outside the graph", rule_class);
  if (without_implicit.contains(label))
    return fmt::format(
        "the graph has no implicit deps (--noimplicit_deps), and a {} may get its GPU code from its rule",
        rule_class);
  if (!unsupplied.contains(label)) return {};
  return fmt::format(
      "reaches no label of {}, where the other {}s get their GPU code: its own may be outside the graph",
      repositories(suppliers.at(rule_class), repository), rule_class);
}

std::vector<std::string> BlindTests::messages() const {
  std::vector<std::string> messages;
  constexpr std::string_view outside =
      "GPU code from outside Bazel's graph (a system Python's torch, CUDA linked by a .bazelrc's "
      "--linkopt, a tool of the machine)";
  auto labels_of = [](const std::map<std::string, std::string>& tests) {
    std::vector<std::string> labels;
    for (const auto& [label, what] : tests) labels.push_back(label);
    return labels;
  };
  if (!used_gpu.empty()) {
    const auto labels = labels_of(used_gpu);
    const bool one = labels.size() == 1;
    messages.push_back(fmt::format(
        "{0} GPU-annotated test{1} reach{2} no GPU code in the dependency graph, but {3} runs used a GPU "
        "(--history): {4}. So {5} {6}, or GPU code under labels that gpu_deps does not name: name it in the "
        "rules file's gpu_deps",
        labels.size(), util::plural(labels.size()), one ? "es" : "", one ? "its" : "their",
        listed_labels(labels), one ? "it uses" : "they use", outside));
  }
  for (const auto& [rule_class, gpu_tests] : classes)
    messages.push_back(fmt::format(
        "no {0} of the dependency graph reaches GPU code (gpu_deps), so the graph cannot tell "
        "whether its {1} GPU-annotated {0}{2} need{3} a GPU: {4} or under labels that gpu_deps does "
        "not name is not in it. Name that code in the rules file's gpu_deps",
        rule_class, gpu_tests, util::plural(gpu_tests), gpu_tests == 1 ? "s" : "", outside));
  if (!without_implicit.empty()) {
    const auto labels = labels_of(without_implicit);
    std::set<std::string> rule_classes;
    for (const auto& [label, rule_class] : without_implicit) rule_classes.insert(rule_class);
    const bool one = labels.size() == 1;
    messages.push_back(fmt::format(
        "the dependency graph has no implicit deps (no test reaches @bazel_tools//tools/test: it was queried "
        "with --noimplicit_deps), so it lacks the GPU code a test rule adds itself (a private attribute's "
        "default, as a custom torch_test rule's runtime): {0} GPU-annotated test{1} of {2} reach{3} no "
        "GPU code in it ({4}). Query without --noimplicit_deps",
        labels.size(), util::plural(labels.size()), fmt::join(rule_classes, ", "), one ? "es" : "",
        listed_labels(labels)));
  }
  for (const auto& [rule_class, hubs] : suppliers) {
    std::vector<std::string> labels;
    for (const auto& [label, of_class] : unsupplied)
      if (of_class == rule_class) labels.push_back(label);
    std::string listed = listed_labels(labels);
    bool one = labels.size() == 1;
    messages.push_back(fmt::format(
        "{0} GPU-annotated {1}{2} reach{3} no label of {4}, where the other {1}s of the dependency graph get "
        "their GPU code, so the graph cannot tell whether {5} a GPU: {6} is not in it ({7}). Name the GPU "
        "code {8} in the rules file's gpu_deps; remove the GPU annotation where none is needed",
        labels.size(), rule_class, util::plural(labels.size()), one ? "es" : "", repositories(hubs),
        one ? "it needs" : "they need", outside, listed, one ? "it uses" : "they use"));
  }
  return messages;
}

long BlindTests::count() const {
  long total = static_cast<long>(unsupplied.size() + used_gpu.size() + without_implicit.size());
  for (const auto& [rule_class, gpu_tests] : classes) total += gpu_tests;
  return total;
}

long classify_by_deps(Classification& tests, const DepGraph& graph, const GpuReach& reach,
                      const BlindTests& blind, bool strict) {
  long moved = 0;
  for (auto& test : tests.tests) {
    std::string label = canonical_label(test.target.label);
    if (unannotated(test)) {  // before, only audit named it: classify and plan were silent
      if (auto node = graph.find(label); node && reach.reaches(*node))
        tests.diagnostics.push_back(Diagnostic{
            strict ? Severity::error : Severity::warning, label, "--classify-by-deps",
            fmt::format(
                "reaches GPU code ({}) but has no GPU annotation: planned as a CPU test, where that "
                "code fails or is skipped. Add tag gpu (or gpu:N), or cpu-only if it never uses the GPU",
                reach.path_text(*node))});
      continue;
    }
    if (test.bucket != Bucket::gpu || blind.contains(label, test.target.rule_class.str())) continue;
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
