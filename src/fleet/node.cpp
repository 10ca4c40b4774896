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

}  // namespace gpuplan
