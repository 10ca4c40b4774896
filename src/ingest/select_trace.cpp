#include "ingest/select_trace.hpp"

#include <algorithm>
#include <memory>
#include <utility>

namespace gpuplan::ingest {

// A rule-input Bazel adds to a test rule itself: @bazel_tools (launcher, test runtime, C++ and
// Python tools), @local_config_* (toolchains), @remote_coverage_tools, @remote_java_tools*,
// //external: bindings (all seen with Bazel 4), and the rule sets that define test rules in later
// Bazels, whose rules add inputs of their own repository (@rules_python's
// //python/config_settings, @rules_cc, @rules_java, @rules_shell, @io_bazel_rules_go,
// @build_bazel_rules_*), @platforms and @bazel_skylib. Under bzlmod's canonical names too: each
// part of `rules_python+`, `rules_python~0.31.0`, `+ext+local_config_cc` is tried.
bool is_implicit_input(std::string_view label) {
  if (!label.starts_with('@')) return label.starts_with("//external:");
  label.remove_prefix(label.starts_with("@@") ? 2 : 1);
  const std::string_view repository = label.substr(0, label.find("//"));
  auto implicit = [](std::string_view name) {
    return name == "bazel_tools" || name == "platforms" || name == "bazel_skylib" ||
           name.starts_with("local_config_") || name.starts_with("remote_coverage_tools") ||
           name.starts_with("remote_java_tools") || name.starts_with("rules_") ||
           name.starts_with("io_bazel_rules_") || name.starts_with("build_bazel_rules_");
  };
  for (std::size_t begin = 0; begin <= repository.size();) {
    const auto end = std::min(repository.find_first_of("+~", begin), repository.size());
    if (implicit(repository.substr(begin, end - begin))) return true;
    begin = end + 1;
  }
  return false;
}

void SelectTrace::clear() {
  labels_.clear();
  sorted_ = false;
}

void SelectTrace::add_label(std::string_view label) {
  labels_.emplace_back(label);
  sorted_ = false;
}

void SelectTrace::judge_input(std::string_view input, Target& test, SelectedExecProperties::Trace how) {
  if (test.exec_properties.empty() || test.selected_exec_properties) return;
  if (is_implicit_input(input) || names(input)) return;
  note_select_trace(test, input, how);
}

bool SelectTrace::names(std::string_view label) {
  if (!sorted_) std::sort(labels_.begin(), labels_.end());
  sorted_ = true;
  return std::binary_search(labels_.begin(), labels_.end(), label);
}

void note_select_trace(Target& test, std::string_view label, SelectedExecProperties::Trace how) {
  if (test.exec_properties.empty() || test.selected_exec_properties) return;
  SelectedExecProperties trace;
  trace.unexplained_input = label;
  trace.trace = how;
  test.selected_exec_properties = std::make_shared<const SelectedExecProperties>(std::move(trace));
}

bool has_incompatible_marker(const Target& test) {
  return std::any_of(test.constraints.begin(), test.constraints.end(), [](const Constraint& c) {
    return !c.exec && !c.condition && c.label.str().ends_with("//:incompatible");
  });
}

void note_compatibility_condition(Target& test, std::string_view label) {
  static constexpr std::ptrdiff_t max_conditions = 16;
  if (!has_incompatible_marker(test)) return;
  std::string_view repository = label;
  while (repository.starts_with('@')) repository.remove_prefix(1);
  repository = repository.substr(0, repository.find("//"));
  if (label.starts_with("//external:") || repository == "bazel_tools" || repository == "platforms" ||
      repository.starts_with("platforms~") || repository.starts_with("platforms+"))
    return;
  auto& constraints = test.constraints;
  if (std::count_if(constraints.begin(), constraints.end(),
                    [](const Constraint& c) { return c.condition; }) >= max_conditions)
    return;
  constraints.push_back(Constraint{.label = Symbol(label), .condition = true});
}

}  // namespace gpuplan::ingest
