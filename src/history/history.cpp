// The History value: samples per unit, merged across inputs.
#include "gpuplan/history.hpp"

#include <set>
#include <tuple>

namespace gpuplan {

namespace {

/// Leaves out `history`'s runs of the shards of each test that `newer_counts` gives another
/// shard count, noting them in other_shard_counts.
void leave_out_other_shard_counts(History& history, const std::map<std::string, int>& newer_counts) {
  for (const auto& [label, count] : newer_counts) {
    auto older = history.shard_counts.find(label);
    if (older == history.shard_counts.end() || older->second == count) continue;
    auto first = history.samples.lower_bound(SampleKey{label, 0});
    auto last = first;
    long runs = 0;
    for (; last != history.samples.end() && last->first.label == label; ++last)
      runs += static_cast<long>(last->second.size());
    history.samples.erase(first, last);
    auto& noted = history.other_shard_counts[label];
    noted = {older->second, noted.second + runs};
  }
}

}  // namespace

void History::merge(const History& newer) {
  leave_out_other_shard_counts(*this, newer.shard_counts);
  for (auto& [key, samples] : newer.samples) {
    auto& mine = this->samples[key];
    mine.insert(mine.end(), samples.begin(), samples.end());
  }
  for (const auto& [label, count] : newer.shard_counts) shard_counts[label] = count;
  for (const auto& [label, noted] : newer.other_shard_counts) other_shard_counts[label] = noted;
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

long History::merge_new(History&& newer) {
  if (samples.empty()) {
    merge(std::move(newer));
    return 0;
  }
  using Seen = std::tuple<std::int64_t, double, std::int64_t, int, bool, bool, std::string_view>;
  auto seen_as = [](const Sample& s) {
    return Seen{*s.start_ms,
                s.seconds,
                s.peak_vram_mib.value_or(-1),
                s.gpu_touched ? int(*s.gpu_touched) : -1,
                s.timed_out,
                s.failed,
                s.node.str()};
  };
  leave_out_other_shard_counts(*this, newer.shard_counts);
  long left_out = 0;
  for (auto& [key, list] : newer.samples) {
    auto& mine = samples[key];
    std::set<Seen> seen;
    for (const auto& s : mine)
      if (s.start_ms) seen.insert(seen_as(s));
    for (auto& s : list) {
      if (s.start_ms && seen.contains(seen_as(s)))
        ++left_out;
      else
        mine.push_back(std::move(s));
    }
  }
  for (const auto& [label, count] : newer.shard_counts) shard_counts[label] = count;
  for (const auto& [label, noted] : newer.other_shard_counts) other_shard_counts[label] = noted;
  cached_results += newer.cached_results;
  return left_out;
}

}  // namespace gpuplan
