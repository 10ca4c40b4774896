#include "gpuplan/version.hpp"

#include <fmt/format.h>

#include <charconv>

#include "util/text.hpp"

namespace gpuplan {

Result<Version> Version::parse(std::string_view text) {
  auto not_a_version = [whole = text] {
    return Problem{fmt::format("\"{}\" is not a version (write e.g. 12.4)", util::excerpt(whole))};
  };
  Version version;
  if (text.empty()) return not_a_version();
  while (true) {
    auto dot = text.find('.');
    auto part = text.substr(0, dot);
    if (part.empty() || part.size() > 6 || part.find_first_not_of("0123456789") != std::string_view::npos)
      return not_a_version();
    int value = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), value);
    if (ec != std::errc() || end != part.data() + part.size()) return not_a_version();
    version.parts.push_back(value);
    if (dot == std::string_view::npos) break;
    text.remove_prefix(dot + 1);
  }
  return version;
}

std::string Version::str() const { return fmt::format("{}", fmt::join(parts, ".")); }

std::strong_ordering Version::operator<=>(const Version& other) const {
  auto n = std::max(parts.size(), other.parts.size());
  for (size_t i = 0; i < n; ++i) {
    int a = i < parts.size() ? parts[i] : 0;
    int b = i < other.parts.size() ? other.parts[i] : 0;
    if (a != b) return a <=> b;
  }
  return std::strong_ordering::equal;
}

Result<VersionConstraint> VersionConstraint::parse(std::string_view text) {
  auto not_a_constraint = [text] {
    return Problem{fmt::format("\"{}\" is not a version constraint (write e.g. >=12.4, <13 or ==9.0)",
                               util::excerpt(text))};
  };
  static constexpr std::pair<std::string_view, Op> ops[] = {
      {">=", Op::ge}, {"<=", Op::le}, {"==", Op::eq}, {">", Op::gt}, {"<", Op::lt}};
  for (auto [prefix, op] : ops) {
    if (text.starts_with(prefix)) {
      auto version = Version::parse(text.substr(prefix.size()));
      if (!version) return not_a_constraint();
      return VersionConstraint{op, *version};
    }
  }
  return not_a_constraint();
}

bool VersionConstraint::satisfied_by(const Version& actual) const {
  if (actual.empty()) return false;  // none known (an AMD node's CUDA): not below 12.0 either
  auto order = actual <=> version;
  switch (op) {
    case Op::ge: return std::is_gteq(order);
    case Op::gt: return std::is_gt(order);
    case Op::le: return std::is_lteq(order);
    case Op::lt: return std::is_lt(order);
    case Op::eq: return std::is_eq(order);
  }
  return false;
}

std::string VersionConstraint::str() const {
  static constexpr std::string_view names[] = {">=", ">", "<=", "<", "=="};
  return fmt::format("{}{}", names[static_cast<int>(op)], version.str());
}

Result<std::vector<VersionConstraint>> parse_constraints(std::string_view text) {
  std::vector<VersionConstraint> constraints;
  while (true) {
    auto comma = text.find(',');
    auto constraint = VersionConstraint::parse(text.substr(0, comma));
    if (!constraint) return Problem{constraint.problem()};
    constraints.push_back(*constraint);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
  }
  return constraints;
}

std::string to_string(const std::vector<VersionConstraint>& constraints) {
  std::string text;
  for (const auto& c : constraints) {
    if (!text.empty()) text += ',';
    text += c.str();
  }
  return text;
}

}  // namespace gpuplan
