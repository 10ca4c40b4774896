#pragma once
// A makespan no schedule of the problem can beat, and the families of bounds it is the largest of.
#include <cstdint>
#include <vector>

#include "solve/schedule.hpp"

namespace gpuplan::solve {

/// The largest of: the longest job; for every set of node types that some jobs are confined to
/// (and unions of such sets), those jobs' GPU-seconds over the set's GPUs; and the same for jobs
/// that cannot share a node (exclusive, or more than half of every node they fit) over its nodes,
/// and, for those, that a set of nodes given more of them than it has nodes runs two on one
/// in turn (or one holding a whole node and any other unit).
/// Rounded up to a whole number of duration_step (see granular_bound).
double lower_bound(const Problem& problem);

/// The largest duration every job's duration is a whole multiple of, when all are whole seconds
/// (the size defaults, and their shards, are); 0 otherwise.
double duration_step(const Problem& problem);

/// `bound` rounded up to a whole number of `step`s (unchanged for step 0). A bound still:
/// nodes are all free from time 0, so any schedule can be shifted left, job by job, until each
/// job starts at 0 or when another ends, and finishes no later. (Shift the earliest job that
/// does neither back to the last end before its start, or 0: every job running between the two
/// also runs at its start, as none ends in between, so the GPUs, memory and nodes it holds are
/// free there too.) Then every job ends at a sum of durations, a whole number of steps, and so
/// does the last one.
double granular_bound(double bound, double step);

// The families, each a bound on its own (tested one by one).

/// How GPU-seconds count a unit sharing a GPU under `pack`: by its share of the memory, or as
/// one of the `max_sharing` units a GPU may run at once. Either is a bound: at any moment the
/// units on a GPU use at most all its memory and are at most max_sharing. (The larger of the two
/// per unit is not: two half-memory units and two tiny ones fit at once under a limit of four.)
enum class Sharing { by_memory, by_count };

/// A set of node types, bit t for type t (when there are at most 64 types).
using TypeSet = std::uint64_t;

/// What the bounds need of one demand.
struct DemandProfile {
  double gpus_held = 0;     ///< the fewest GPUs (or GPU shares) it holds on any type it fits
  bool blocks_node = true;  ///< no two such units run on one node at once, on every type it fits
  bool holds_node = true;   ///< it has its node to itself on every type it fits
  TypeSet types = 0;        ///< the types it fits
};

std::vector<DemandProfile> demand_profiles(const Problem& problem, Sharing sharing);

/// GPU-seconds of work over GPUs, and node-blocking seconds over nodes: jobs that cannot run
/// in parallel beyond the capacity cannot finish before their total over it.
struct Load {
  double gpu_seconds = 0;   ///< at least this many GPU-seconds
  double node_seconds = 0;  ///< of jobs no two of which can share a node
};
struct Capacity {
  double gpus = 0;
  double nodes = 0;
};
double work_bound(const Load& load, const Capacity& capacity);

/// Jobs no two of which can share a node, confined to `nodes` nodes: when there are more than
/// k·nodes of them, some node runs k+1 of the k·nodes+1 longest one after another, so the
/// k+1 shortest of those bound the makespan.
double pigeonhole_bound(std::vector<double> durations, size_t nodes);

/// At least `nodes` jobs that have their node to themselves and one job more (the longest of
/// the others takes `other`), all confined to `nodes` nodes: none of them runs beside another,
/// so some node runs two of the `nodes` longest, or one of them and that other job, in turn.
double one_more_bound(std::vector<double> holding_node, double other, size_t nodes);

}  // namespace gpuplan::solve
