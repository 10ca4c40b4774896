#pragma once
// What one annotation (a tag, an exec_property, a rule) says about a test, before the
// claims of all of a test's annotations are combined into its Requirement.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/result.hpp"
#include "gpuplan/version.hpp"

namespace gpuplan::annotate {

/// The device a backend variant of a test runs on (JAX's `_cpu`/`_gpu`/`_tpu`, XLA's `xla_cpu`, ...).
enum class Backend { cpu, gpu, tpu };
std::string_view to_string(Backend backend);  ///< "cpu", "gpu", "tpu"

/// The GPU vendors a test can be tied to, as plans and fleets spell them.
bool is_vendor(std::string_view vendor);  ///< "nvidia", "amd", "intel"

struct Claim {
  std::string source{};       ///< "tag gpu:2", "exec_properties Pool=gpu-pool", "rule f.yaml:3:5 (tag x)"
  bool gpu = false;           ///< "a GPU test": 1 GPU unless some claim gives a count
  std::optional<int> gpus{};  ///< an explicit count; two different ones conflict
  bool cpu_only = false;      ///< CPU bucket, whatever else the test says
  bool not_cpu_only = false;  ///< a rule's `cpu_only: false`, which a CPU-only tag still overrules
  std::optional<std::int64_t> gpu_mem_mib{};
  std::vector<VersionConstraint> cuda{};
  std::vector<VersionConstraint> compute_capability{};
  std::optional<std::vector<std::string>> gpu_models{};  ///< lower-case
  std::optional<bool> nvlink{};
  std::optional<bool> exclusive{};
  std::optional<std::string> vendor{};  ///< "nvidia", "amd", "intel"
  /// A vendor whose GPUs the test is not for (XLA's `no-oneapi`: not Intel's); asks for no GPU.
  std::optional<std::string> excluded_vendor{};
  std::optional<Backend> backend{};  ///< which variant of a multi-backend macro the test is
  bool counts_accelerators = false;  ///< `gpus` counts devices of whatever backend the test runs on
  bool qualifies_only = false;       ///< never makes a test a GPU test by itself (`cuda-only`, `exclusive`)

  /// Says anything about GPUs (count, memory, versions, models, NVLink, exclusivity).
  bool wants_gpu() const;
  /// What it says, for people: "1 GPU with compute capability ≥ 8.0", "CPU only".
  std::string meaning() const;
};

/// Either a claim, or why the annotation is malformed (then it is ignored).
struct Reading {
  std::string source;  ///< the annotation, as in Claim::source
  std::optional<Claim> claim;
  std::string problem;
  std::string caveat{};       ///< with a claim: what the user should know of it (a note), after the source
  bool caveat_warns = false;  ///< the caveat is a guess: a warning (an error under --strict), not a note
};

// Parsers shared by the built-in conventions and rules; a bad value is the problem in words.
/// "2" → 2; rejects 0, negatives, non-numbers and counts above max_gpus_per_test.
Result<int> parse_gpu_count(std::string_view text);
/// "L4|L40S" → {"l4", "l40s"}.
Result<std::vector<std::string>> parse_models(std::string_view text);
/// What a version constraint is of: each has its own range of versions.
enum class VersionOf { cuda, compute_capability };
/// ">=12.4", "12.4" (meaning ≥), ">=12.0,<13"; a bare version is allowed when `bare_means_at_least`.
/// A version no CUDA or GPU has (cuda 124, compute capability 80 for sm_80) is a problem: as a
/// bound it is met by every GPU or by none.
Result<std::vector<VersionConstraint>> parse_version_constraints(std::string_view text,
                                                                 bool bare_means_at_least, VersionOf of);

/// `claim` with `field` set from a rules-file value: gpus, gpu_mem, cuda, compute_capability,
/// gpu_models, vendor, nvlink, exclusive, cpu_only.
Result<Claim> apply_setting(Claim claim, std::string_view field, std::string_view value);

/// The fields apply_setting knows, in the order the rules file documents them.
const std::vector<std::string_view>& setting_fields();

}  // namespace gpuplan::annotate
