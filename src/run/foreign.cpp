// Dynamic execution: whether a unit planned on another node can run on this one, and where.
#include <algorithm>

#include "gpuplan/run.hpp"
#include "solve/eligibility.hpp"

namespace gpuplan {

std::optional<std::vector<int>> gpus_here(const Assignment& a, const Node& node,
                                          const std::vector<int>& free) {
  const Requirement& r = a.unit.requirement;
  const int wanted = std::max(static_cast<int>(a.gpus.size()), r.gpus.value);
  const auto eligible = solve::eligible_gpus(r, node);
  std::vector<int> usable;
  for (int gpu : free)
    if (gpu >= 0 && gpu < static_cast<int>(node.gpus.size()) && (eligible & solve::bit(gpu)))
      usable.push_back(gpu);
  if (wanted == 0 || static_cast<int>(usable.size()) < wanted) return std::nullopt;
  if (r.needs_nvlink() && wanted > 1) {
    for (const auto& set : node.connected_sets(wanted))
      if (std::all_of(set.begin(), set.end(),
                      [&](int gpu) { return std::find(usable.begin(), usable.end(), gpu) != usable.end(); }))
        return set;
    return std::nullopt;
  }
  usable.resize(static_cast<size_t>(wanted));
  return usable;
}

}  // namespace gpuplan
