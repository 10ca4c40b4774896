// From classified GPU tests to units: one per shard (or per test with --shards=whole).
#include "gpuplan/units.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>

#include "gpuplan/error.hpp"

namespace gpuplan {

Estimator size_default_estimator(const Rules& rules) {
  return [defaults = rules.size_default_seconds, builtin = Rules{}.size_default_seconds](
             const ClassifiedTest& test, std::optional<int>) {
    // A `timeout` attribute stands for the size whose default timeout it is, as in Bazel, where
    // it replaces the one the size implies: a small test with timeout eternal may run an hour,
    // and the job limits the exports derive from planned ends must let it.
    static const std::map<std::string_view, std::string_view> size_of_timeout{
        {"short", "small"}, {"moderate", "medium"}, {"long", "large"}, {"eternal", "enormous"}};
    auto by_timeout = size_of_timeout.find(test.target.timeout.str());
    std::string_view size = by_timeout != size_of_timeout.end() ? by_timeout->second : test.target.size.str();
    auto seconds_for = [&](const std::map<std::string, double>& table) {
      auto it = table.find(std::string(size));
      return it != table.end() && it->second > 0 ? it->second : 0.0;
    };
    double seconds = seconds_for(defaults);
    if (seconds == 0) seconds = seconds_for(builtin);
    if (seconds == 0) seconds = builtin.at("medium");
    return Estimate{seconds, by_timeout != size_of_timeout.end() ? "timeout-default" : "size-default",
                    std::nullopt};
  };
}

namespace {

/// What a unit reserves on each GPU: the larger of the declared need and the measured peak.
std::optional<std::int64_t> reserved_vram(const Requirement& requirement, const Estimate& e) {
  std::optional<std::int64_t> reserved = e.peak_vram_mib;
  // A gpu-mem tag below what runs that failed used (an OOM, say) is no measure of the need: those
  // runs' peaks count, or pack would share the GPU on the tag's word (three such units on one GPU
  // had measured 110 GiB on an 80 GB GPU).
  if (requirement.gpu_mem_mib)
    reserved = std::max({reserved.value_or(0), requirement.gpu_mem_mib->value, e.least_vram_mib.value_or(0)});
  return reserved;
}

/// A unit whose runs used at least some memory that it does not reserve (runs that failed, a
/// shard of a test planned whole, a shard's siblings): no GPU with less may run it. The floor,
/// the peak without the headroom, becomes its requirement's gpu_mem_mib, which every policy,
/// verify and the executors place it by; its reservation stays unknown, so pack shares no GPU
/// on its word. Before, it was nothing, and a test that peaked at 30,000 MiB went to a 24 GB L4.
void memory_floor(Unit& unit, const Estimate& e, double headroom) {
  if (!e.least_vram_mib || (unit.vram_mib && *unit.vram_mib >= *e.least_vram_mib)) return;
  const auto floor = without_headroom(*e.least_vram_mib, headroom);
  const auto& asked = unit.requirement->gpu_mem_mib;
  if (asked && asked->value >= floor) return;
  unit.requirement.edit().gpu_mem_mib = Sourced<std::int64_t>{floor, memory_floor_source};
}

/// A duration a schedule can use: positive and finite, whatever an estimator returned.
double usable_seconds(double seconds) { return std::isfinite(seconds) && seconds > 0.001 ? seconds : 0.001; }

/// A unit of `test` with the given id and label (the test's label, copied or moved by the
/// caller, which may have taken it from the test already).
Unit unit_of(const ClassifiedTest& test, std::string id, std::string label) {
  Unit unit;
  unit.id = std::move(id);
  unit.label = std::move(label);
  unit.requirement = test.requirement;
  unit.size = test.target.size;
  unit.timeout = test.target.timeout;
  unit.flaky = test.target.flaky;
  return unit;
}

/// Sorts by unit id, keeping the order of equal ids. The tests come sorted by canonical label,
/// so the units almost always are already: checked in one pass. Otherwise the positions are
/// sorted and the units moved once each, not the O(N log N) moves of a sort of 360-byte units
/// with its buffer of half of them.
void sort_by_id(std::vector<Unit>& units) {
  auto before = [](const Unit& a, const Unit& b) { return a.id < b.id; };
  if (std::is_sorted(units.begin(), units.end(), before)) return;
  std::vector<std::size_t> order(units.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return before(units[a], units[b]); });
  // order[i] is the unit that goes to place i: follow each cycle, moving one unit at a time.
  for (std::size_t start = 0; start < units.size(); ++start) {
    if (order[start] == start) continue;
    Unit held = std::move(units[start]);
    std::size_t to = start;
    for (std::size_t from = order[start]; from != start; from = order[from]) {
      units[to] = std::move(units[from]);
      order[to] = to;
      to = from;
    }
    units[to] = std::move(held);
    order[to] = to;
  }
}

/// make_units and take_units: `Tests` is const Classification for the first. A test's label
/// is read (for the estimates and unit ids) before its last unit takes it.
template <typename Tests>
std::vector<Unit> units_of(Tests& tests, ShardMode mode, const Estimator& estimate, double headroom) {
  auto last_use_of_label = [](auto& test) -> std::string {
    if constexpr (std::is_const_v<Tests>)
      return test.target.label;
    else
      return std::move(test.target.label);
  };
  std::vector<Unit> units;
  // Exactly as many as will be made: a vector grown by doubling would hold up to three times
  // the units at its last growth (the largest allocation of `plan`, issue 14).
  std::size_t count = 0;
  for (const auto& test : tests.tests)
    if (test.bucket == Bucket::gpu)
      count +=
          mode == ShardMode::per_shard ? static_cast<std::size_t>(std::max(1, test.target.shard_count)) : 1;
  units.reserve(count);
  for (auto& test : tests.tests) {
    if (test.bucket != Bucket::gpu) continue;
    int shards = std::max(1, test.target.shard_count);
    if (shards == 1) {
      Estimate e = estimate(test, std::nullopt);
      std::string id = test.target.label;  // before the label is taken: arguments have no order
      Unit unit = unit_of(test, std::move(id), last_use_of_label(test));
      unit.duration_s = usable_seconds(e.seconds);
      unit.duration_source = e.source;
      unit.vram_mib = reserved_vram(unit.requirement, e);
      memory_floor(unit, e, headroom);
      units.push_back(std::move(unit));
    } else if (mode == ShardMode::per_shard) {
      for (int index = 0; index < shards; ++index) {
        Estimate e = estimate(test, index);
        std::string id = fmt::format("{}#shard-{}-of-{}", test.target.label, index, shards);
        Unit unit =
            unit_of(test, std::move(id), index + 1 < shards ? test.target.label : last_use_of_label(test));
        unit.shard_index = index;
        unit.shard_count = shards;
        unit.duration_s = usable_seconds(e.seconds);
        unit.duration_source = e.source;
        unit.vram_mib = reserved_vram(unit.requirement, e);
        memory_floor(unit, e, headroom);
        units.push_back(std::move(unit));
      }
    } else {
      // The whole test as one unit: Bazel runs its shards one after another.
      double seconds = 0;
      std::vector<std::string> sources;
      Estimate most;  // of the shards' memory
      bool every_peak = true;
      for (int index = 0; index < shards; ++index) {
        Estimate e = estimate(test, index);
        seconds += usable_seconds(e.seconds);
        if (std::find(sources.begin(), sources.end(), e.source) == sources.end()) sources.push_back(e.source);
        every_peak = every_peak && e.peak_vram_mib;
        if (e.peak_vram_mib) most.peak_vram_mib = std::max(most.peak_vram_mib.value_or(0), *e.peak_vram_mib);
        if (e.least_vram_mib)
          most.least_vram_mib = std::max(most.least_vram_mib.value_or(0), *e.least_vram_mib);
      }
      // A shard never measured may be the one that needs the memory: the others' peak is then only
      // what the test uses at least (before, pack reserved it as known, and could share the GPU).
      if (!every_peak && most.peak_vram_mib) {
        most.least_vram_mib = std::max(most.least_vram_mib.value_or(0), *most.peak_vram_mib);
        most.peak_vram_mib.reset();
      }
      std::string id = test.target.label;
      Unit unit = unit_of(test, std::move(id), last_use_of_label(test));
      unit.shard_count = shards;
      unit.duration_s = seconds;
      unit.duration_source = fmt::format("{}", fmt::join(sources, "+"));
      unit.vram_mib = reserved_vram(unit.requirement, most);
      memory_floor(unit, most, headroom);
      units.push_back(std::move(unit));
    }
  }
  sort_by_id(units);
  // Two tests whose units share an id (a test named like another's shard, "//a:t#shard-0-of-2",
  // which Bazel allows): one of them was dropped as a repeat, never run, without a word.
  for (std::size_t i = 1; i < units.size(); ++i)
    if (units[i].id == units[i - 1].id && units[i].label != units[i - 1].label) {
      const Unit& shard = units[i].shard_index ? units[i] : units[i - 1];
      const Unit& other = units[i].shard_index ? units[i - 1] : units[i];
      throw InputError(
          Position{std::string(other.label)},
          fmt::format("the test's name is the unit id of shard {} of {} of {} (LABEL#shard-I-of-N), "
                      "so one of them would not be planned; rename the test",
                      *shard.shard_index, shard.shard_count, shard.label));
    }
  // The same test twice (cquery lists one per configuration): plan it once.
  units.erase(
      std::unique(units.begin(), units.end(), [](const Unit& a, const Unit& b) { return a.id == b.id; }),
      units.end());
  return units;
}

}  // namespace

std::vector<Unit> make_units(const Classification& tests, ShardMode mode, const Estimator& estimate,
                             const Rules& rules) {
  return units_of(tests, mode, estimate, rules.vram_headroom);
}

std::vector<Unit> take_units(Classification& tests, ShardMode mode, const Estimator& estimate,
                             const Rules& rules) {
  return units_of(tests, mode, estimate, rules.vram_headroom);
}

}  // namespace gpuplan
