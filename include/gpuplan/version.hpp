#pragma once
// Dotted version numbers (CUDA 12.4, compute capability 9.0, driver 550.54.15) and constraints on them.
#include <compare>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/result.hpp"

namespace gpuplan {

/// This gpuplan's own version ("0.1.0", CMake's project version): what `--version` says and
/// what a new plan's generator_version records.
const char* program_version();

/// Compared as numbers, part by part: 12.10 > 12.4, and 12 == 12.0.
struct Version {
  std::vector<int> parts;

  /// Strict: digits separated by single dots, nothing else ("12.4", "9.0", "550.54.15").
  static Result<Version> parse(std::string_view text);
  std::string str() const;
  bool empty() const { return parts.empty(); }

  std::strong_ordering operator<=>(const Version& other) const;
  bool operator==(const Version& other) const { return std::is_eq(*this <=> other); }
};

/// One comparison such as ">=12.4"; several of them (comma-joined in tags) must all hold.
struct VersionConstraint {
  enum class Op { ge, gt, le, lt, eq };
  Op op = Op::ge;
  Version version;

  /// ">=12.4", ">12", "<=8.9", "<12.0", "==9.0"; a bare "12.4" or ":12.4" is not accepted here.
  static Result<VersionConstraint> parse(std::string_view text);
  /// False for an empty version: a node or GPU with none (AMD, Intel) meets no constraint.
  bool satisfied_by(const Version& actual) const;
  std::string str() const;  ///< ">=12.4"
  bool operator==(const VersionConstraint&) const = default;
};

/// Comma-joined constraints as they appear in tags and the plan: ">=12.0,<13".
Result<std::vector<VersionConstraint>> parse_constraints(std::string_view text);
std::string to_string(const std::vector<VersionConstraint>& constraints);

}  // namespace gpuplan
