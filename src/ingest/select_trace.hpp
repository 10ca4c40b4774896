#pragma once
// The trace a select()ed exec_properties leaves in bazel query output, which prints it as its
// branches merged with no mark (--output=xml, and JSON under its default
// --proto:flatten_selects): a config_setting among the test's rule-inputs that none of its
// printed label attributes names. Judged the same way for XML and JSON.
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/target.hpp"

namespace gpuplan::ingest {

/// Whether `label`, a rule-input of a test, is one Bazel adds to a test rule itself (its implicit
/// attributes, which --output=xml does not print): @bazel_tools, @local_config_*, the rule sets'
/// repositories and //external: bindings, also by bzlmod's canonical names.
bool is_implicit_input(std::string_view label);

/// Of one test at a time: the labels its printed attributes name, and the first of its
/// rule-inputs that none names and that is no implicit dependency (a config_setting's trace).
/// Labels are added before inputs are judged, as Bazel prints a rule's attributes before its
/// rule-inputs; so a test of millions of inputs is judged in bounded memory.
class SelectTrace {
 public:
  /// Starts the next test.
  void clear();
  /// A label one of the test's printed attributes names.
  void add_label(std::string_view label);
  /// Notes `input`, a rule-input of `test`, in test.selected_exec_properties (with `how`) when it
  /// is the first that nothing explains. Nothing when the test has no exec_properties (then the
  /// merge plans nothing) or already has such a note.
  void judge_input(std::string_view input, Target& test, SelectedExecProperties::Trace how);
  /// Whether one of the test's printed attributes names `label`.
  bool names(std::string_view label);

 private:
  std::vector<std::string> labels_;
  bool sorted_ = false;
};

/// Whether `test`'s target_compatible_with holds @platforms//:incompatible (itself, or one
/// branch of a select(), which query prints merged): then its select()s' conditions are kept.
bool has_incompatible_marker(const Target& test);

/// Keeps `label`, a condition of one of the select()s of `test`, whose target_compatible_with
/// holds @platforms//:incompatible, as a Constraint::condition: rules_cuda's
/// requires_cuda_enabled() is `select({"@rules_cuda//cuda:is_cuda_enabled": [],
/// "//conditions:default": ["@platforms//:incompatible"]})`, and classify reads a condition that
/// names a GPU stack. Not Bazel's own (@bazel_tools, @platforms, //external:), nor past 16.
void note_compatibility_condition(Target& test, std::string_view label);

/// Notes in `test` that `label` is a config_setting of one of its select()s (the trace `how`),
/// unless the test has no exec_properties or a note already.
void note_select_trace(Target& test, std::string_view label, SelectedExecProperties::Trace how);

}  // namespace gpuplan::ingest
