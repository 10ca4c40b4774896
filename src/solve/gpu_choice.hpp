#pragma once
// Which GPUs of a node a unit gets: the earliest a fitting set is free, and which set that is.
#include <cstdint>
#include <vector>

#include "solve/eligibility.hpp"

namespace gpuplan::solve {

/// How a unit occupies a node.
enum class Occupancy {
  gpus,        ///< its GPUs to itself (every lane of each)
  whole_node,  ///< the whole node: `gpu-exclusive`, or a multi-GPU unit under `whole-node`
  lanes,       ///< a share of one GPU under `pack`: `lanes_needed[gpu]` of its lanes
};

/// What a group of units needs from nodes of one type. Units whose needs look the same on a
/// type share a shape, and the scheduler keeps one queue of that type's nodes per shape.
struct Shape {
  int type = 0;
  Occupancy occupancy = Occupancy::gpus;
  int gpus = 1;
  bool nvlink = false;            ///< the GPUs must be pairwise connected
  GpuMask eligible = 0;           ///< the GPUs it may use
  bool complete = true;           ///< every two eligible GPUs are connected: any set is an NVLink set
  std::vector<GpuMask> cliques;   ///< connected `gpus`-sets within `eligible`, when not complete
  std::vector<int> lanes_needed;  ///< per GPU, for Occupancy::lanes; 0: this GPU cannot hold it

  bool operator==(const Shape&) const = default;
};

/// The connected `size`-sets within `within`, at most `limit` of them, in ascending order.
std::vector<GpuMask> cliques_of(const std::vector<GpuMask>& links, GpuMask within, int size, size_t limit);

/// One node's state as the scheduler keeps it: when each lane and each GPU is next free.
/// A GPU has `lanes` lanes (1 unless `pack` shares GPUs); a GPU is free when all its lanes are.
struct NodeView {
  const double* gpu_free;   ///< per GPU
  const double* lane_free;  ///< per GPU, `lanes` consecutive values in ascending order
  int lanes;
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
