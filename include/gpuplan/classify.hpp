#pragma once
// From a test's tags and attributes to its requirements and bucket (SPEC section 2).
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/boxed.hpp"
#include "gpuplan/diagnostic.hpp"
#include "gpuplan/requirements.hpp"
#include "gpuplan/rules.hpp"
#include "gpuplan/target.hpp"

namespace gpuplan {

enum class Bucket { gpu, cpu, skipped };
std::string_view to_string(Bucket bucket);  ///< "gpu", "cpu", "skipped"

/// One annotation read from a test, and what gpuplan made of it: for `explain`.
struct Annotation {
  std::string
      source;  ///< "tag gpu:2", "exec_properties Pool=gpu-pool", "rule rules.yaml:4:5 (tag team-gpus-4)"
  std::string meaning;  ///< "2 GPUs", "ignored: the GPU count must be at least 1"
  /// Made by the macro that made the test, not written in its call: a backend variant's tag or
  /// name suffix (JAX's and XLA's macros make a test per backend), which no edit of the call removes.
  bool by_macro = false;
};

/// A test, what it needs, and which bucket that puts it in.
struct ClassifiedTest {
  Target target;
  Bucket bucket = Bucket::cpu;
  /// Why, for a person: "tag requires-gpu-sm80 → 1 GPU with compute capability ≥ 8.0",
  /// "no GPU annotation", "tagged manual". A Symbol: the tests that declare the same needs give
  /// the same words, held once (issue 14).
  Symbol reason;
  SharedRequirement requirement;  ///< also filled for skipped tests; gpus.value == 0 for CPU tests
  /// Every annotation read, in the order read; one pointer while empty, as in the tests of
  /// `plan` and `classify`, which keep none (ClassifyOptions::annotations).
  BoxedVector<Annotation> annotations;
};

struct Classification {
  std::vector<ClassifiedTest> tests;  ///< sorted by canonical label
  Diagnostics diagnostics;            ///< by test, in the order found; errors only under `strict`
  DroppedCounts dropped;
};

struct ClassifyOptions {
  bool include_manual = false;  ///< plan `manual` tests instead of skipping them
  bool strict = false;          ///< conflicts and malformed annotations are errors, not warnings
  bool annotations = true;      ///< keep every test's `annotations` (for `explain`); off, they cost nothing
  /// Keep each target's location, tags and exec_properties; off, they are freed as each test is
  /// classified (`plan` and `classify` never read them again: about 100 bytes a test).
  bool inputs = true;
};

/// Classifies tests one at a time, as a reader hands them over, so that a large query is never
/// held both as targets and as classified tests (issue 14). add() takes the targets in any
/// order; finish() puts the tests in canonical-label order and gives what classify() gives.
/// It reads `rules` as it goes: they must outlive it.
class Classifier {
 public:
  Classifier(const Rules& rules, const ClassifyOptions& options);
  Classifier(const Classifier&) = delete;
  Classifier& operator=(const Classifier&) = delete;
  ~Classifier();
  void add(Target&& target);
  std::size_t size() const;
  /// The tests by canonical label (then configuration, then the order added); `dropped` is
  /// what the input held besides tests.
  Classification finish(const DroppedCounts& dropped);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

/// Classifies every test. Never throws for a bad annotation: it becomes a diagnostic.
Classification classify(const TargetList& targets, const Rules& rules, const ClassifyOptions& options);
/// The same, moving each target into its ClassifiedTest instead of copying it.
Classification classify(TargetList&& targets, const Rules& rules, const ClassifyOptions& options);

}  // namespace gpuplan
