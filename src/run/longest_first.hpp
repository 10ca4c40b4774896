#pragma once
// The order the dynamic executor runs a node's own units in: longest planned first.
#include <cstddef>
#include <vector>

#include "gpuplan/plan.hpp"

namespace gpuplan {

/// Places a node's units (as node_assignments gives them) again, longest planned first, on the
/// GPUs the plan gave them: each starts once every GPU it holds (all of the node's for a unit
/// that holds the node) is free of the longer ones before it. Rewrites their start_s and end_s
/// and returns the new plan order (start, first GPU, unit id) as positions in `units`. Under
/// duration noise this starts the units most likely to run longest first, wherever the plan put
/// them, so the run does not end on a long unit that started late. Units planned to share a GPU
/// (`pack`) keep the plan's times and order. With exact estimates the node may end a little
/// after its plan (about 1% on the benchmark's shapes); other nodes' idle GPUs take up the rest.
std::vector<size_t> longest_first(std::vector<Assignment>& units, Policy policy);

}  // namespace gpuplan
