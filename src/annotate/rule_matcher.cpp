#include "annotate/rule_matcher.hpp"

#include <fmt/format.h>
#include <re2/re2.h>

#include <cctype>

#include "annotate/conventions.hpp"
#include "gpuplan/graph.hpp"
#include "util/text.hpp"

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
std::string substitute(const std::string& value, const std::vector<std::string_view>* captures) {
  if (!captures) return value;
  std::string out;
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '$' && i + 1 < value.size() && std::isdigit(static_cast<unsigned char>(value[i + 1]))) {
      auto group = static_cast<size_t>(value[i + 1] - '0');
      if (group < captures->size()) out += (*captures)[group];
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

/// RE2 for a tag regex: quiet (errors are reported, not logged), with its default memory budget.
std::unique_ptr<re2::RE2> compile(const std::string& regex) {
  re2::RE2::Options options;
  options.set_log_errors(false);
  return std::make_unique<re2::RE2>(regex, options);
}

/// Capture groups $0..$9 are all a value can name.
constexpr int max_groups = 9;

}  // namespace

std::string label_pattern_problem(std::string_view pattern) {
  // What a rule's label refuses beyond a gpu_deps pattern: blanks, and "*" in a package, which a
  // rule's author meant as //pkg/... (as a gpu_deps glob it would match one level of packages).
  auto canonical = canonical_label(pattern);
  auto parts = split_label(canonical);
  if (!parts || !(parts->repo.empty() || parts->repo.starts_with('@')))
    return fmt::format("\"{}\" is not a label pattern (write //pkg/..., //pkg:* or //pkg:name)",
                       util::excerpt(pattern));
  if (parts->package.find_first_of(" \t") != std::string_view::npos || pattern.starts_with(' ') ||
      pattern.ends_with(' '))
    return fmt::format("\"{}\" has a blank in its package or at an end, which no label has",
                       util::excerpt(pattern));
  if (parts->package.find('*') != std::string_view::npos)
    return fmt::format(
        "\"{}\": \"*\" in a package is no wildcard: write //pkg/... (every package below) or "
        "//pkg:* (the package's targets)",
        util::excerpt(pattern));
  // The rest is what gpu_deps refuses, by the same parser: an empty, "." or ".." segment, "..."
  // inside, a target name after "...".
  return gpu_pattern_problem(canonical);
}

bool label_matches(std::string_view pattern, std::string_view label) {
  // By identity: "@rules_foo//x/..." is every test of @@rules_foo~//x and @@rules_foo+//x too.
  return gpu_pattern_matches(label_identity(pattern), label_identity(label));
}

RegexCheck check_regex(const std::string& regex) {
  auto compiled = compile(regex);
  if (!compiled->ok()) return RegexCheck{compiled->error(), 0};
  return RegexCheck{{}, compiled->NumberOfCapturingGroups()};
}

RuleMatcher::RuleMatcher(const Rule& rule) : rule_(rule) {
  if (rule.tag) tag_ = compile(*rule.tag);
}

bool RuleMatcher::reads_tag(const std::string& tag) const { return tag_ && re2::RE2::FullMatch(tag, *tag_); }

std::vector<Reading> RuleMatcher::apply(const Target& target) const {
  std::vector<Reading> readings;
  if (rule_.label && !label_matches(*rule_.label, target.label)) return readings;
  if (rule_.rule_class && *rule_.rule_class != target.rule_class) return readings;
  if (rule_.generator_function && *rule_.generator_function != target.generator_function) return readings;
  if (!tag_) {
    readings.push_back(read(nullptr, {}));
    return readings;
  }
  int groups = std::min(tag_->NumberOfCapturingGroups(), max_groups) + 1;
  std::vector<re2::StringPiece> found(static_cast<std::size_t>(groups));
  std::vector<std::string_view> captures(found.size());
  auto match = [&](std::string_view tag, std::string_view source) {
    if (!tag_->Match(re2::StringPiece(tag.data(), tag.size()), 0, tag.size(), re2::RE2::ANCHOR_BOTH,
                     found.data(), groups))
      return false;
    for (std::size_t i = 0; i < found.size(); ++i)
      captures[i] = std::string_view(found[i].data(), found[i].size());
    readings.push_back(read(&captures, source));
    return true;
  };
  for (const auto& tag : target.tags) match(tag.str(), fmt::format("tag {}", tag.str()));
  for (const auto& [key, value] : target.exec_properties)
    match(annotate::exec_property_tag(key, value), fmt::format("exec_properties {}={}", key, value));
  // A constraint as the default query prints it ("//:has_4_gpus", "@rules_foo//:x"), then as given:
  // Bazel 7's --consistent_labels and cquery print "@@//:has_4_gpus", "@@rules_foo~//:x".
  for (const auto& constraint : target.constraints) {
    const std::string& label = constraint.label.str();
    if (auto identity = label_identity(label); !match(identity, constraint.source()) && identity != label)
      match(label, constraint.source());
  }
  return readings;
}

Reading RuleMatcher::read(const std::vector<std::string_view>* captures, std::string_view matched) const {
  Claim claim;
  claim.source = rule_.source() + (captures ? fmt::format(" ({})", matched) : "");
  auto source = claim.source;
  for (const auto& [field, value] : rule_.set) {
    auto applied = apply_setting(std::move(claim), field, substitute(value, captures));
    if (!applied)
      return Reading{std::move(source), std::nullopt, fmt::format("{}: {}", field, applied.problem())};
    claim = *std::move(applied);
  }
  return Reading{std::move(source), std::move(claim), {}};
}

}  // namespace gpuplan::annotate
