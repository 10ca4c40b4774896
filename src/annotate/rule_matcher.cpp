#include "annotate/rule_matcher.hpp"

#include <fmt/format.h>

#include <cctype>

namespace gpuplan::annotate {

namespace {

struct LabelParts {
  std::string_view repo;     ///< "" for the main repository, "@foo" otherwise
  std::string_view package;  ///< "a/b"
  std::string_view name;     ///< after ':'; empty when not given
};

std::optional<LabelParts> split_label(std::string_view label) {
  auto slashes = label.find("//");
  if (slashes == std::string_view::npos) return std::nullopt;
  LabelParts parts;
  parts.repo = label.substr(0, slashes);
  auto rest = label.substr(slashes + 2);
  auto colon = rest.find(':');
  parts.package = rest.substr(0, colon);
  if (colon != std::string_view::npos) parts.name = rest.substr(colon + 1);
  return parts;
}

/// "$1" → the first capture; "$$" → "$". Without captures the value is taken as written.
std::string substitute(const std::string& value, const std::smatch* captures) {
  if (!captures) return value;
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '$' && i + 1 < value.size() && std::isdigit(static_cast<unsigned char>(value[i + 1]))) {
      auto group = static_cast<size_t>(value[i + 1] - '0');
      if (group < captures->size()) out += (*captures)[group].str();
      ++i;
    } else if (value[i] == '$' && i + 1 < value.size() && value[i + 1] == '$') {
      out += '$';
      ++i;
    } else {
      out += value[i];
    }
  }
  return out;
}

}  // namespace

std::string label_pattern_problem(std::string_view pattern) {
  auto canonical = canonical_label(pattern);
  auto parts = split_label(canonical);
  if (!parts || !(parts->repo.empty() || parts->repo.starts_with('@')))
    return fmt::format("\"{}\" is not a label pattern (write //pkg/..., //pkg:* or //pkg:name)", pattern);
  auto dots = parts->package.find("...");
  bool recursive = dots != std::string_view::npos;
  if (recursive && (dots + 3 != parts->package.size() || (dots > 0 && parts->package[dots - 1] != '/') ||
                    !parts->name.empty()))
    return fmt::format("\"{}\": \"...\" may only end a pattern, as in //pkg/...", pattern);
  if (parts->name.find_first_of("*/") != std::string_view::npos && parts->name != "*")
    return fmt::format("\"{}\": a target name is a name, \"*\" or \"all\"", pattern);
  return {};
}

bool label_matches(std::string_view pattern, std::string_view label) {
  auto canonical_pattern = canonical_label(pattern);
  auto canonical = canonical_label(label);
  auto want = split_label(canonical_pattern);
  auto have = split_label(canonical);
  if (!want || !have || want->repo != have->repo) return false;
  if (want->package.ends_with("...")) {
    auto prefix = want->package.substr(0, want->package.size() - 3);  // "" or "pkg/"
    if (prefix.empty()) return true;
    auto package = prefix.substr(0, prefix.size() - 1);
    return have->package == package || have->package.starts_with(prefix);
  }
  if (want->package != have->package) return false;
  if (want->name == "*" || want->name == "all") return true;
  auto name = want->name.empty() ? want->package.substr(want->package.rfind('/') + 1) : want->name;
  return have->name == name;
}

unsigned capture_count(const std::string& regex) { return std::regex(regex).mark_count(); }

RuleMatcher::RuleMatcher(const Rule& rule) : rule_(rule) {
  if (rule.tag) tag_.emplace(*rule.tag);
}

bool RuleMatcher::reads_tag(const std::string& tag) const { return tag_ && std::regex_match(tag, *tag_); }

std::vector<Reading> RuleMatcher::apply(const Target& target) const {
  std::vector<Reading> readings;
  if (rule_.label && !label_matches(*rule_.label, target.label)) return readings;
  if (rule_.rule_class && *rule_.rule_class != target.rule_class) return readings;
  if (rule_.generator_function && *rule_.generator_function != target.generator_function) return readings;
  if (!tag_) {
    readings.push_back(read(nullptr, {}));
    return readings;
  }
  for (const auto& tag : target.tags) {
    std::smatch captures;
    if (std::regex_match(tag.str(), captures, *tag_)) readings.push_back(read(&captures, tag));
  }
  return readings;
}

Reading RuleMatcher::read(const std::smatch* captures, std::string_view tag) const {
  Claim claim;
  claim.source = rule_.source() + (captures ? fmt::format(" (tag {})", tag) : "");
  for (const auto& [field, value] : rule_.set) {
    auto problem = apply_setting(claim, field, substitute(value, captures));
    if (!problem.empty()) return Reading{claim.source, std::nullopt, fmt::format("{}: {}", field, problem)};
  }
  auto source = claim.source;
  return Reading{std::move(source), std::move(claim), {}};
}

}  // namespace gpuplan::annotate
