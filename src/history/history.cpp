// The History value: samples per unit, merged across inputs.
#include "gpuplan/history.hpp"

namespace gpuplan {

void History::merge(const History& newer) {
  for (auto& [key, samples] : newer.samples) {
    auto& mine = this->samples[key];
    mine.insert(mine.end(), samples.begin(), samples.end());
  }
  for (const auto& [label, count] : newer.shard_counts) shard_counts[label] = count;
  cached_results += newer.cached_results;
}

void History::merge(History&& newer) {
  if (!samples.empty() || !shard_counts.empty()) return merge(static_cast<const History&>(newer));
  long cached = cached_results;
  *this = std::move(newer);
  cached_results += cached;
}

long History::sample_count() const {
  long count = 0;
  for (const auto& [key, list] : samples) count += static_cast<long>(list.size());
  return count;
}

}  // namespace gpuplan
