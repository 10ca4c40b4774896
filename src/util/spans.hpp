#pragma once
// Time a set of intervals covers: the busy time of a GPU whose units may overlap (pack shares a
// GPU among units, and its time counts once).
#include <algorithm>
#include <utility>
#include <vector>

namespace gpuplan::util {

/// Total length of the union of [start, end) intervals.
inline double covered(std::vector<std::pair<double, double>> spans) {
  std::sort(spans.begin(), spans.end());
  double total = 0, from = 0, to = -1;
  for (const auto& [start, end] : spans) {
    if (start > to) {
      total += std::max(0.0, to - from);
      from = start;
    }
    to = std::max(to, end);
  }
  return total + std::max(0.0, to - from);
}

}  // namespace gpuplan::util
