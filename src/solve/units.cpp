// From classified GPU tests to units: one per shard (or per test with --shards=whole).
#include "gpuplan/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuplan {

Estimator size_default_estimator(const Rules& rules) {
  return [defaults = rules.size_default_seconds](const ClassifiedTest& test, std::optional<int>) {
    const auto& builtin = Rules{}.size_default_seconds;
    auto seconds_for = [&](const std::map<std::string, double>& table) {
      auto it = table.find(test.target.size);
      return it != table.end() && it->second > 0 ? it->second : 0.0;
    };
    double seconds = seconds_for(defaults);
    if (seconds == 0) seconds = seconds_for(builtin);
    if (seconds == 0) seconds = builtin.at("medium");
    return Estimate{seconds, "size-default", std::nullopt};
  };
}

namespace {

/// What a unit reserves on each GPU: the larger of the declared need and the measured peak.
std::optional<std::int64_t> reserved_vram(const Requirement& requirement, std::optional<std::int64_t> peak) {
  std::optional<std::int64_t> reserved = peak;
  if (requirement.gpu_mem_mib) reserved = std::max(reserved.value_or(0), requirement.gpu_mem_mib->value);
  return reserved;
}

/// A duration a schedule can use: positive and finite, whatever an estimator returned.
double usable_seconds(double seconds) { return std::isfinite(seconds) && seconds > 0.001 ? seconds : 0.001; }

Unit unit_of(const ClassifiedTest& test) {
  Unit unit;
  unit.id = test.target.label;
  unit.label = test.target.label;
  unit.requirement = test.requirement;
  unit.size = test.target.size;
  unit.timeout = test.target.timeout;
  unit.flaky = test.target.flaky;
  return unit;
}

}  // namespace

std::vector<Unit> make_units(const Classification& tests, ShardMode mode, const Estimator& estimate,
                             const Rules&) {
  std::vector<Unit> units;
  for (const auto& test : tests.tests) {
    if (test.bucket != Bucket::gpu) continue;
    int shards = std::max(1, test.target.shard_count);
    if (shards == 1) {
      Unit unit = unit_of(test);
      Estimate e = estimate(test, std::nullopt);
      unit.duration_s = usable_seconds(e.seconds);
      unit.duration_source = e.source;
      unit.vram_mib = reserved_vram(unit.requirement, e.peak_vram_mib);
      units.push_back(std::move(unit));
    } else if (mode == ShardMode::per_shard) {
      for (int index = 0; index < shards; ++index) {
        Unit unit = unit_of(test);
        unit.id = fmt::format("{}#shard-{}-of-{}", test.target.label, index, shards);
        unit.shard_index = index;
        unit.shard_count = shards;
        Estimate e = estimate(test, index);
        unit.duration_s = usable_seconds(e.seconds);
        unit.duration_source = e.source;
        unit.vram_mib = reserved_vram(unit.requirement, e.peak_vram_mib);
        units.push_back(std::move(unit));
      }
    } else {
      // The whole test as one unit: Bazel runs its shards one after another.
      Unit unit = unit_of(test);
      unit.shard_count = shards;
      std::vector<std::string> sources;
      std::optional<std::int64_t> peak;
      for (int index = 0; index < shards; ++index) {
        Estimate e = estimate(test, index);
        unit.duration_s += usable_seconds(e.seconds);
        if (std::find(sources.begin(), sources.end(), e.source) == sources.end()) sources.push_back(e.source);
        if (e.peak_vram_mib) peak = std::max(peak.value_or(0), *e.peak_vram_mib);
      }
      unit.duration_source = fmt::format("{}", fmt::join(sources, "+"));
      unit.vram_mib = reserved_vram(unit.requirement, peak);
      units.push_back(std::move(unit));
    }
  }
  std::stable_sort(units.begin(), units.end(), [](const Unit& a, const Unit& b) { return a.id < b.id; });
  // The same test twice (cquery lists one per configuration): plan it once.
  units.erase(
      std::unique(units.begin(), units.end(), [](const Unit& a, const Unit& b) { return a.id == b.id; }),
      units.end());
  return units;
}

}  // namespace gpuplan
