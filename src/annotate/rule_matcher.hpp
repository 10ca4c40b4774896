#pragma once
// One rule of a rules file, ready to match targets: its tag regex compiled once.
#include <regex>
#include <string>
#include <string_view>
#include <vector>

#include "annotate/claim.hpp"
#include "gpuplan/rules.hpp"
#include "gpuplan/target.hpp"

namespace gpuplan::annotate {

/// Checks a label pattern ("//pkg/...", "//pkg:*", "//pkg:all", "//pkg:name", "//pkg");
/// returns the problem, empty when it is valid.
std::string label_pattern_problem(std::string_view pattern);

/// True when `label` (any spelling of the main repository) falls under a valid `pattern`.
bool label_matches(std::string_view pattern, std::string_view label);

/// The number of capture groups `regex` has (for checking $N in values); throws std::regex_error.
unsigned capture_count(const std::string& regex);

class RuleMatcher {
 public:
  explicit RuleMatcher(const Rule& rule);

  /// One reading per match: one per matching tag when the rule has a tag regex, else one.
  /// A value that is wrong after its captures are put in is a reading with a problem.
  std::vector<Reading> apply(const Target& target) const;

  /// The rule has a tag regex that matches this whole tag.
  bool reads_tag(const std::string& tag) const;

 private:
  Reading read(const std::smatch* captures, std::string_view tag) const;

  const Rule& rule_;
  std::optional<std::regex> tag_;
};

}  // namespace gpuplan::annotate
