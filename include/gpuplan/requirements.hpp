#pragma once
// What a test needs from a GPU node, each field with where it came from (SPEC section 2).
#include <cstdint>
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

  bool needs_nvlink() const { return nvlink && nvlink->value; }
  bool is_exclusive() const { return exclusive && exclusive->value; }
};

/// The requirement in a few words: "2 GPUs, ≥ 40GiB each, CUDA ≥ 12.4, NVLink"; "no GPU" for a CPU test.
std::string describe(const Requirement& requirement);

/// A vendor as people write it: "nvidia" → "NVIDIA", "amd" → "AMD", "intel" → "Intel".
std::string vendor_display(std::string_view vendor);

/// A constraint as people read it: ">=8.0" → "≥ 8.0", "==9.0" → "= 9.0".
std::string describe(const VersionConstraint& constraint);

}  // namespace gpuplan
