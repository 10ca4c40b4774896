#pragma once
// Building targets by hand and classifying one of them, for the annotate tests.
#include <algorithm>
#include <iterator>
#include <string>
#include <vector>

#include "gpuplan/classify.hpp"

namespace gpuplan::testing {

inline Target make_target(std::string label, std::vector<std::string> tags,
                          ExecProperties exec_properties = {}) {
  Target t;
  t.label = std::move(label);
  t.rule_class = "py_test";
  t.tags.assign(tags.begin(), tags.end());
  t.exec_properties = std::move(exec_properties);
  t.has_attributes = true;
  return t;
}

/// The classification of a single test.
inline Classification classify_one(const Target& target, const Rules& rules = {},
                                   ClassifyOptions options = {}) {
  TargetList list;
  list.format = "xml";
  list.tests.push_back(target);
  return classify(list, rules, options);
}

inline ClassifiedTest classified(std::vector<std::string> tags, ExecProperties exec = {},
                                 const Rules& rules = {}) {
  return classify_one(make_target("//t:t", std::move(tags), std::move(exec)), rules).tests.at(0);
}

/// What a user sees of a classification besides its notes: the warnings (and errors).
inline std::vector<Diagnostic> warnings_of(const Classification& c) {
  std::vector<Diagnostic> out;
  std::copy_if(c.diagnostics.begin(), c.diagnostics.end(), std::back_inserter(out),
               [](const Diagnostic& d) { return d.severity != Severity::note; });
  return out;
}

}  // namespace gpuplan::testing
