#pragma once
// List scheduling with insertion: a unit may start in an idle gap before units placed earlier.
#include <vector>

#include "solve/schedule.hpp"

namespace gpuplan::solve {

/// Jobs in `order`, each at the earliest time some node has a fitting GPU set idle for the
/// job's whole duration, gaps left before earlier jobs included (ties: the first node in
/// fleet order). A shared unit under `pack` takes its GPU to itself here. The reference the
/// planner's default must never be worse than; time grows with the gaps a node keeps.
Schedule insertion_schedule(const Problem& problem, const std::vector<int>& order);

}  // namespace gpuplan::solve
