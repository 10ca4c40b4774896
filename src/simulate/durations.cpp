// Real durations for simulated runs: log-normal noise on the plan, or a unit's own history.
#include "simulate/durations.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <random>

#include "gpuplan/target.hpp"

namespace gpuplan::sim {

namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/// Uniform in (0, 1], from the top 53 bits.
double uniform(std::mt19937_64& random) { return (double(random() >> 11) + 1) * 0x1.0p-53; }

/// One of assignment i's samples; a lower bound becomes a finished sample at least that long.
double draw_sample(const DurationSource& source, size_t i, std::mt19937_64& random) {
  const auto& samples = source.samples[i];
  const auto& lower_bound = source.lower_bound[i];
  size_t k = random() % samples.size();
  if (!lower_bound[k]) return samples[k];
  auto longer = [&](size_t j) { return !lower_bound[j] && samples[j] >= samples[k]; };
  size_t count = 0;
  for (size_t j = 0; j < samples.size(); ++j) count += longer(j);
  if (count == 0) return samples[k];
  for (size_t j = 0, pick = random() % count;; ++j)
    if (longer(j) && pick-- == 0) return samples[j];
}

/// The test's runs were of another shard count than `shard_count` now: the history says so, or
/// has runs of a shard it has not now.
bool measured_with_other_shards(const History& history, const std::string& label, int shard_count) {
  const int now = std::max(shard_count, 1);
  if (auto then = history.shard_counts.find(label); then != history.shard_counts.end())
    return then->second != now;
  auto beyond = history.samples.lower_bound(SampleKey{label, now});
  return beyond != history.samples.end() && beyond->first.label == label;
}

}  // namespace

DurationSource duration_source(const Plan& plan, const DurationNoise& noise, int history_window) {
  DurationSource source;
  source.sigma = noise.sigma;
  source.from_history = noise.history != nullptr;
  source.samples.resize(plan.assignments.size());
  source.lower_bound.resize(plan.assignments.size());
  for (size_t i = 0; i < plan.assignments.size(); ++i) {
    const Unit& unit = plan.assignments[i].unit;
    source.planned.push_back(unit.duration_s);
    if (!noise.history) continue;
    const auto label = label_identity(unit.label);
    auto found = noise.history->samples.find(SampleKey{label, unit.shard_index});
    // A whole test's runs are used as they are, as the plan uses them (shard rows beside them are
    // of another time).
    if (found != noise.history->samples.end() && unit.shard_index &&
        measured_with_other_shards(*noise.history, label, unit.shard_count)) {
      ++source.resharded;
      found = noise.history->samples.end();
    }
    // The runs the plan's estimate uses (partial_run): not one filtered to some test cases, nor
    // one given fewer GPUs than the unit needs (before, its 0.3 s was drawn as the unit's time).
    const int gpus = std::max(1, unit.requirement->gpus.value);
    if (found != noise.history->samples.end())
      for (const Sample& s : recent_samples(found->second, history_window)) {
        if (partial_run(s, gpus, unit.requirement->takes_every_node_gpu()) != PartialRun::whole) continue;
        source.samples[i].push_back(s.seconds);
        source.lower_bound[i].push_back(s.timed_out);
      }
    if (source.samples[i].empty()) ++source.without_history;
  }
  return source;
}

std::vector<double> draw_durations(const DurationSource& source, std::uint64_t seed, int run) {
  std::mt19937_64 random(splitmix64(seed ^ splitmix64(static_cast<std::uint64_t>(run))));
  std::vector<double> durations(source.planned.size());
  for (size_t k = 0; k < durations.size(); ++k) {
    const size_t i = source.draw_order.empty() ? k : source.draw_order[k];
    const auto& samples = source.samples[i];
    if (source.from_history) {
      durations[i] = samples.empty() ? source.planned[i] : draw_sample(source, i, random);
      continue;
    }
    // Box-Muller: one standard normal value from two uniform ones.
    double z = std::sqrt(-2 * std::log(uniform(random))) * std::cos(2 * std::numbers::pi * uniform(random));
    durations[i] = source.planned[i] * std::exp(source.sigma * z);
  }
  return durations;
}

}  // namespace gpuplan::sim
