#pragma once
// Which GPUs of a node a unit gets: the earliest a fitting set is free, and which set that is.
#include <cstdint>
#include <optional>
#include <vector>

#include "solve/eligibility.hpp"

namespace gpuplan::solve {

/// How a unit occupies a node.
enum class Occupancy {
  gpus,        ///< its GPUs to itself (every lane of each)
  whole_node,  ///< the whole node: `gpu-exclusive`, or a multi-GPU unit under `whole-node`
  shared,      ///< a share of one GPU under `pack`: `memory_mib` of its `usable_mib[gpu]`
};

/// What a group of units needs from nodes of one type. Units whose needs look the same on a
/// type share a shape, and the scheduler keeps one queue of that type's nodes per shape.
struct Shape {
  int type = 0;
  Occupancy occupancy = Occupancy::gpus;
  int gpus = 1;
  bool nvlink = false;   ///< the GPUs must be pairwise connected
  GpuMask eligible = 0;  ///< the GPUs it may use
  bool complete = true;  ///< every two eligible GPUs are connected: any set is an NVLink set
  /// When not complete but the eligible GPUs fall apart into islands (every two GPUs of an island
  /// linked, none across: pairs, quads, NVSwitch domains): the islands of at least `gpus` GPUs.
  /// Any `gpus` of one island are an NVLink set, so sets are chosen per island, never listed.
  std::vector<GpuMask> islands;
  std::vector<GpuMask> cliques;  ///< otherwise: connected `gpus`-sets within `eligible` (at most 4,096)
  std::int64_t memory_mib = 0;   ///< for Occupancy::shared: the memory it reserves
  /// The least any of its units reserves: memory_mib, or below it where sizes were rounded up
  /// (shape_memory_mib); the lower bound's, which no plan of the exact sizes may beat.
  std::int64_t least_memory_mib = 0;
  std::vector<std::int64_t>
      usable_mib;  ///< per GPU, for Occupancy::shared: memory less headroom; 0: not eligible

  bool operator==(const Shape&) const = default;
};

/// The NVLink islands of `within` (the GPUs linked to each other and to nothing else in it), when
/// every two GPUs of each are linked; nullopt when some are connected only through another.
std::optional<std::vector<GpuMask>> islands_of(const std::vector<GpuMask>& links, GpuMask within);

/// The connected `size`-sets within `within`, at most `limit` of them, in ascending order.
std::vector<GpuMask> cliques_of(const std::vector<GpuMask>& links, GpuMask within, int size, size_t limit);

/// Under `pack`: the units sharing one GPU that still run when the next one may start. A shared
/// unit starts no earlier than the last one placed on the GPU, so that the memory in use from
/// then on only falls as units end: exact in MiB, with no slicing of the GPU.
struct GpuShare {
  double frontier = 0;  ///< no shared unit starts before this: the latest start, or a holder's end
  std::vector<std::pair<double, std::int64_t>> running;  ///< (end, MiB) of those ending after it, by end
};

/// The earliest time from `share.frontier` on at which `need` MiB more fit in `usable` MiB with at
/// most `max_sharing` units at once.
double earliest_share(const GpuShare& share, std::int64_t need, std::int64_t usable, int max_sharing);

/// Records a shared unit on the GPU from `start` (earliest_share or later) to `end`.
void add_share(GpuShare& share, double start, double end, std::int64_t need);

/// One node's state as the scheduler keeps it: when each GPU is next free, and under `pack` what
/// shares it.
struct NodeView {
  const double* gpu_free;  ///< per GPU: when every unit on it has ended
  const GpuShare* shares;  ///< per GPU
  int max_sharing;         ///< units per GPU at once: max_tests_per_gpu under `pack`, else 1
  const std::vector<GpuMask>* links;
  int gpus;
};

/// The earliest time a set of GPUs fitting `shape` is free on the node.
double earliest_start(const Shape& shape, const NodeView& node);

/// The GPUs a unit of `shape` takes when it starts at `start` (the node's earliest_start or later).
/// In this order it prefers: NVLink-connected sets; when `keep_groups` (wider units are still to
/// come), sets that leave the fewest free GPUs cut off from free NVLink partners; GPUs that were
/// free closest to `start`, wasting the least idle time; the lowest indices.
GpuMask choose_gpus(const Shape& shape, const NodeView& node, double start, bool keep_groups);

}  // namespace gpuplan::solve
