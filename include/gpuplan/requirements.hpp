#pragma once
// What a test needs from a GPU node, each field with where it came from (SPEC section 2).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuplan/symbol.hpp"
#include "gpuplan/version.hpp"

namespace gpuplan {

/// A value and the annotation that set it: "tag gpu:2", "exec_properties resources:gpu=4",
/// "rule examples/rules.yaml:12:5", "default".
template <class T>
struct Sourced {
  T value{};
  Symbol source;
  bool operator==(const Sourced&) const = default;
};

/// A GPU test's needs. A CPU test has gpus.value == 0.
struct Requirement {
  Sourced<int> gpus;                                            ///< GPUs on one node
  std::optional<Sourced<std::int64_t>> gpu_mem_mib;             ///< at least this much on each GPU
  std::vector<Sourced<VersionConstraint>> cuda;                 ///< all must hold for the node's CUDA version
  std::vector<Sourced<VersionConstraint>> compute_capability;   ///< all must hold for each GPU
  std::optional<Sourced<std::vector<std::string>>> gpu_models;  ///< lower-case; model or family
  std::optional<Sourced<bool>> nvlink;                          ///< the GPUs pairwise NVLink-connected
  std::optional<Sourced<bool>> exclusive;                       ///< the whole node to itself
  std::optional<Sourced<std::string>> vendor;                   ///< "nvidia", "amd", "intel": only its GPUs
  /// Exclusive with no GPU count given: it is given every GPU of the node it holds (that it may
  /// use), as Bazel runs an `exclusive` test alone with all of the machine's; `gpus` is the least.
  std::optional<Sourced<bool>> every_node_gpu;

  bool needs_nvlink() const { return nvlink && nvlink->value; }
  bool is_exclusive() const { return exclusive && exclusive->value; }
  bool takes_every_node_gpu() const { return every_node_gpu && every_node_gpu->value; }
};

/// A Requirement held once for every test and unit that needs the same (the tests that declare
/// the same tags, the shards of a test): one pointer in a `ClassifiedTest` or `Unit`, not 224
/// bytes each (issue 14). Reads as a `const Requirement` (`->`, `*`, or where a `const
/// Requirement&` is wanted); `edit()` gives it a copy of its own to change, so a change never
/// reaches the others that share it.
class SharedRequirement {
 public:
  SharedRequirement();                         ///< the empty Requirement, one copy for all
  SharedRequirement(Requirement requirement);  // NOLINT(google-explicit-constructor): `unit.requirement = r`

  const Requirement& operator*() const { return *requirement_; }
  const Requirement* operator->() const { return requirement_.get(); }
  operator const Requirement&() const { return *requirement_; }  // NOLINT(google-explicit-constructor)
  /// This holder's own copy, to change.
  Requirement& edit();

 private:
  std::shared_ptr<Requirement> requirement_;
};

/// The requirement in a few words: "2 GPUs, ≥ 40GiB each, CUDA ≥ 12.4, NVLink"; "no GPU" for a CPU test.
std::string describe(const Requirement& requirement);

/// A vendor as people write it: "nvidia" → "NVIDIA", "amd" → "AMD", "intel" → "Intel".
std::string vendor_display(std::string_view vendor);

/// A constraint as people read it: ">=8.0" → "≥ 8.0", "==9.0" → "= 9.0".
std::string describe(const VersionConstraint& constraint);

}  // namespace gpuplan
