#pragma once
// From a test's tags and attributes to its requirements and bucket (SPEC section 2).
#include <string>
#include <vector>

#include "gpuplan/diagnostic.hpp"
#include "gpuplan/requirements.hpp"
#include "gpuplan/rules.hpp"
#include "gpuplan/target.hpp"

namespace gpuplan {

enum class Bucket { gpu, cpu, skipped };
std::string_view to_string(Bucket bucket);

/// A test, what it needs, and which bucket that puts it in.
struct ClassifiedTest {
  Target target;
  Bucket bucket = Bucket::cpu;
  /// Why, for a person: "tag requires-gpu-sm80 → 1 GPU with compute capability ≥ 8.0",
  /// "no GPU annotation", "tagged manual".
  std::string reason;
  Requirement requirement;
};

struct Classification {
  std::vector<ClassifiedTest> tests;  ///< sorted by canonical label
  Diagnostics diagnostics;            ///< errors only under `strict`
  DroppedCounts dropped;
};

struct ClassifyOptions {
  bool include_manual = false;  ///< plan `manual` tests instead of skipping them
  bool strict = false;          ///< conflicts and malformed annotations are errors, not warnings
};

/// Classifies every test. Never throws for a bad annotation: it becomes a diagnostic.
Classification classify(const TargetList& targets, const Rules& rules, const ClassifyOptions& options);

}  // namespace gpuplan
