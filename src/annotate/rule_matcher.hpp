#pragma once
// One rule of a rules file, ready to match targets: its tag regex compiled once, on RE2
// (linear time in the tag, bounded stack: a rules file and the tags it meets are untrusted).
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "annotate/claim.hpp"
#include "gpuplan/rules.hpp"
#include "gpuplan/target.hpp"

namespace re2 {
class RE2;
}

namespace gpuplan::annotate {

/// Checks a rule's label pattern ("//pkg/...", "//pkg:*", "//pkg:all", "//pkg:name", "//pkg"):
/// a gpu_deps pattern (gpu_pattern_problem, one parser for both) without a blank or a "*" in
/// its package. Returns the problem, empty when it is valid.
std::string label_pattern_problem(std::string_view pattern);

/// True when `label` (any spelling of the main repository, a canonical repository name by its
/// apparent one) falls under a valid `pattern`, as gpu_pattern_matches says.
bool label_matches(std::string_view pattern, std::string_view label);

/// A tag regex checked: why it is not one RE2 accepts, or how many capture groups it has
/// (for checking $N in values).
struct RegexCheck {
  std::string problem;  ///< empty when the regex compiles
  int captures = 0;
};
RegexCheck check_regex(const std::string& regex);

class RuleMatcher {
 public:
  explicit RuleMatcher(const Rule& rule);

  /// One reading per match: one per matching tag when the rule has a tag regex, else one.
  /// A value that is wrong after its captures are put in is a reading with a problem.
  std::vector<Reading> apply(const Target& target) const;

  /// The rule has a tag regex that matches this whole tag.
  bool reads_tag(const std::string& tag) const;

 private:
  Reading read(const std::vector<std::string_view>* captures, std::string_view matched) const;

  const Rule& rule_;
  std::shared_ptr<const re2::RE2> tag_;  ///< null without a tag regex
};

}  // namespace gpuplan::annotate
