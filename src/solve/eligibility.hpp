#pragma once
// Which nodes, and which of their GPUs, a requirement can ever use; and why not.
#include <bit>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/fleet.hpp"
#include "gpuplan/limits.hpp"
#include "gpuplan/requirements.hpp"

namespace gpuplan::solve {

/// A set of GPUs of one node, bit i for GPU index i (max_gpus_per_node bits).
using GpuMask = std::uint64_t;

inline int count(GpuMask mask) {
#if defined(__POPCNT__)
  return std::popcount(mask);
#else
  // Without the POPCNT instruction (plain x86-64) std::popcount is a call into libgcc, and the
  // scheduler counts GPU sets millions of times: the same count, inline.
  mask -= (mask >> 1) & 0x5555555555555555;
  mask = (mask & 0x3333333333333333) + ((mask >> 2) & 0x3333333333333333);
  mask = (mask + (mask >> 4)) & 0x0f0f0f0f0f0f0f0f;
  return static_cast<int>((mask * 0x0101010101010101) >> 56);
#endif
}
inline GpuMask bit(int index) { return GpuMask{1} << index; }

/// Nodes with the same GPUs, CUDA version and NVLink wiring: eligibility and GPU choice
/// are worked out once per type, not once per node.
struct NodeType {
  std::vector<int> nodes;      ///< indices into Fleet::nodes, ascending
  int gpus = 0;                ///< GPUs per node
  std::vector<GpuMask> links;  ///< links[i]: the GPUs NVLink-connected to GPU i
};

struct FleetIndex {
  std::vector<NodeType> types;    ///< in order of their first node
  std::vector<int> type_of_node;  ///< Fleet::nodes index → type
  std::vector<int> slot_of_node;  ///< Fleet::nodes index → position in its type's `nodes`
};

/// Groups the fleet's nodes into types. Throws InputError for a node of more than 64 GPUs.
FleetIndex index_fleet(const Fleet& fleet);

/// The GPUs of `node` that satisfy the per-GPU needs (memory, model, compute capability);
/// none when the node's CUDA version does not satisfy `requirement`.
GpuMask eligible_gpus(const Requirement& requirement, const Node& node);

/// The memory `pack` may fill on `gpu`: its memory less the headroom (a fraction), in whole MiB (as
/// verify has it). A unit that reserves more has its GPU to itself.
std::int64_t shareable_mib(const Gpu& gpu, double headroom);

/// True when some `size` GPUs of `within` are pairwise connected.
bool has_clique(const std::vector<GpuMask>& links, GpuMask within, int size);

/// True when `node` could run a unit with `requirement` given the node to itself.
bool can_run(const Requirement& requirement, const Node& node, const std::vector<GpuMask>& links);

/// The source of a placing requirement's memory when a unit's measured peak or reservation set it
/// (no annotation the unschedulable reason could advise changing).
inline constexpr std::string_view measured_memory_source = "its measured peak or reservation (vram_mib)";

/// When a declared `gpu-mem:NGiB` alone keeps `requirement` off GPUs sold as that size (an
/// "80 GB" H100's 81559 MiB against gpu-mem:80GB's 81920): a sentence naming them and the need
/// that fits them; empty otherwise, and for a need a measured peak set.
std::string memory_passed_over(const Requirement& requirement, const Fleet& fleet, const FleetIndex& index);

/// Why no node of `fleet` (indexed as `index`) can run `requirement`, naming the requirement and
/// the closest node: "needs compute capability == 9.0 with CUDA >= 12.6; the h100 nodes have CUDA 12.4".
std::string unschedulable_reason(const Requirement& requirement, const Fleet& fleet, const FleetIndex& index);

}  // namespace gpuplan::solve
