// The History value: samples per unit, merged across inputs.
#include "gpuplan/history.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace gpuplan {

bool History::set_shard_count(const std::string& label, int count, std::optional<std::int64_t> start_ms) {
  auto [current, first] = shard_counts.emplace(label, count);
  auto since = shard_count_latest_ms.find(label);
  auto seen_at = [&] {
    if (!start_ms) return;
    auto& latest = shard_count_latest_ms[label];
    latest = std::max(latest, *start_ms);
  };
  if (first) {
    // Runs read before any count was (a CSV without shard_count) of shards this count has not:
    // of a time the test had more.
    auto from = samples.lower_bound(SampleKey{label, count});
    auto to = from;
    long runs = 0;
    int highest = count;
    for (; to != samples.end() && to->first.label == label; ++to) {
      runs += static_cast<long>(to->second.size());
      highest = std::max(highest, to->first.shard.value_or(0));
    }
    if (runs > 0) {
      samples.erase(from, to);
      auto& noted = other_shard_counts[label];
      noted = {highest + 1, noted.second + runs};
    }
  }
  if (first || current->second == count) {
    seen_at();
    return true;
  }
  // A run of another count that started before the latest of the current count's: it is older
  // (a CSV sorted by label and shard, not by time), and is the one left out.
  if (start_ms && since != shard_count_latest_ms.end() && *start_ms < since->second) {
    auto& noted = other_shard_counts[label];
    noted = {count, noted.second + 1};
    return false;
  }
  auto from = samples.lower_bound(SampleKey{label, 0});
  auto to = from;
  long runs = 0;
  for (; to != samples.end() && to->first.label == label; ++to) runs += static_cast<long>(to->second.size());
  samples.erase(from, to);
  auto& noted = other_shard_counts[label];
  noted = {current->second, noted.second + runs};
  current->second = count;
  shard_count_latest_ms.erase(label);
  seen_at();
  return true;
}

void History::merge(const History& newer) {
  for (const auto& [label, count] : newer.shard_counts) set_shard_count(label, count);
  for (auto& [key, samples] : newer.samples) {
    auto& mine = this->samples[key];
    mine.insert(mine.end(), samples.begin(), samples.end());
  }
  for (const auto& [label, noted] : newer.other_shard_counts) {
    auto& mine = other_shard_counts[label];
    mine = {noted.first, mine.second + noted.second};
  }
  cached_results += newer.cached_results;
  skipped_runs += newer.skipped_runs;
}

void History::merge(History&& newer) {
  if (!samples.empty() || !shard_counts.empty()) return merge(static_cast<const History&>(newer));
  long cached = cached_results, skipped = skipped_runs;
  *this = std::move(newer);
  cached_results += cached;
  skipped_runs += skipped;
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
  for (const auto& [label, count] : newer.shard_counts) set_shard_count(label, count);
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
  for (const auto& [label, noted] : newer.other_shard_counts) {
    auto& mine = other_shard_counts[label];
    mine = {noted.first, mine.second + noted.second};
  }
  cached_results += newer.cached_results;
  skipped_runs += newer.skipped_runs;
  return left_out;
}

long History::drop_tests_older_than(std::int64_t max_age_ms) {
  // Each test's newest start, or none where a run of it has no start.
  std::map<std::string, std::optional<std::int64_t>> newest;
  std::optional<std::int64_t> latest;
  for (const auto& [key, runs] : samples) {
    auto it = newest.try_emplace(key.label, std::numeric_limits<std::int64_t>::min()).first;
    for (const auto& sample : runs) {
      if (!sample.start_ms) {
        it->second.reset();
        break;
      }
      if (it->second) it->second = std::max(*it->second, *sample.start_ms);
      latest = std::max(latest.value_or(*sample.start_ms), *sample.start_ms);
    }
  }
  if (!latest) return 0;
  long dropped = 0;
  for (const auto& [label, start] : newest) {
    if (!start || *latest - *start <= max_age_ms) continue;
    ++dropped;
    auto runs = samples.lower_bound(SampleKey{label, std::nullopt});
    while (runs != samples.end() && runs->first.label == label) runs = samples.erase(runs);
    shard_counts.erase(label);
    other_shard_counts.erase(label);
    shard_count_latest_ms.erase(label);
  }
  return dropped;
}

}  // namespace gpuplan
