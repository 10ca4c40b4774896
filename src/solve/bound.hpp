#pragma once
// A makespan no schedule of the problem can beat.
#include "solve/schedule.hpp"

namespace gpuplan::solve {

/// The largest of: the longest job; for every set of node types that some jobs are confined to
/// (and unions of such sets), those jobs' GPU-seconds over the set's GPUs; and the same for jobs
/// that cannot share a node (exclusive, or more than half of every node they fit) over its nodes,
/// and, for those, that a set of nodes given more of them than it has nodes runs two on one
/// in turn (or one holding a whole node and any other unit).
double lower_bound(const Problem& problem);

}  // namespace gpuplan::solve
