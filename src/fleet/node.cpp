// The planner's questions about one node's NVLink relation.
#include "gpuplan/fleet.hpp"

namespace gpuplan {

bool Node::connected(const std::vector<int>& set) const {
  for (size_t i = 0; i < set.size(); ++i)
    for (size_t j = i + 1; j < set.size(); ++j) {
      auto a = static_cast<size_t>(set[i]), b = static_cast<size_t>(set[j]);
      if (a >= nvlink.size() || b >= nvlink[a].size() || !nvlink[a][b]) return false;
    }
  return true;
}

namespace {

/// Extends `chosen` with GPUs above its last one that link to all of it, depth first,
/// so the sets come out in lexicographic order.
void extend(const Node& node, size_t k, std::vector<int>& chosen, std::vector<std::vector<int>>& sets) {
  if (chosen.size() == k) {
    sets.push_back(chosen);
    return;
  }
  int gpus = static_cast<int>(node.gpus.size());
  int first = chosen.empty() ? 0 : chosen.back() + 1;
  for (int candidate = first; candidate + static_cast<int>(k - chosen.size()) <= gpus; ++candidate) {
    chosen.push_back(candidate);
    if (node.connected(chosen)) extend(node, k, chosen, sets);
    chosen.pop_back();
  }
}

}  // namespace

std::vector<std::vector<int>> Node::connected_sets(int k) const {
  std::vector<std::vector<int>> sets;
  if (k <= 0 || k > static_cast<int>(gpus.size())) return sets;
  std::vector<int> chosen;
  extend(*this, static_cast<size_t>(k), chosen, sets);
  return sets;
}

}  // namespace gpuplan
