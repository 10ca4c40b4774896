#pragma once
// From classified GPU tests to schedulable units, with their planned durations (SPEC section 3).
#include <cmath>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/classify.hpp"
#include "gpuplan/plan.hpp"
#include "gpuplan/rules.hpp"

namespace gpuplan {

/// How long one unit will take and how much GPU memory it was seen to use.
struct Estimate {
  double seconds = 0;
  std::string source;  ///< "history-p90", "size-median", "size-default", ...
  /// Per-GPU memory to reserve: the largest peak of the recent runs plus the headroom, once a
  /// run that passed measured one; empty otherwise.
  std::optional<std::int64_t> peak_vram_mib;
  /// The same of runs that only failed or were cut short: what the test uses at least (it may
  /// have ended before its GPU work), which a `gpu-mem` tag below it does not lower.
  std::optional<std::int64_t> least_vram_mib = std::nullopt;
};

/// The memory a measured peak reserves with the VRAM headroom (rounded up), and back: the peak a
/// reservation was made from (what a unit's runs are known to have used at least).
inline std::int64_t with_headroom(std::int64_t peak_mib, double headroom) {
  return static_cast<std::int64_t>(std::ceil(static_cast<double>(peak_mib) * (1 + headroom)));
}
inline std::int64_t without_headroom(std::int64_t reserved_mib, double headroom) {
  return static_cast<std::int64_t>(static_cast<double>(reserved_mib) / (1 + headroom) + 1e-6);
}

/// The source of a gpu_mem_mib that runs set, not a `gpu-mem` tag: the memory floor of a unit
/// whose runs (or its test's other shards') used more than it reserves (memory_floor in
/// units.cpp). The plan JSON marks it `"gpu_mem_measured": true`, so that what reads a plan
/// (`history suggest`) tells it from a declared one.
inline constexpr std::string_view memory_floor_source = "the most its runs were seen to use (--history)";
/// gpu_mem_mib is such a floor, not a declared gpu-mem.
inline bool gpu_mem_measured(const Requirement& r) {
  return r.gpu_mem_mib && r.gpu_mem_mib->source == memory_floor_source;
}

/// Estimates one shard (0-based) of a test, or the whole test when `shard_index` is empty.
using Estimator = std::function<Estimate(const ClassifiedTest& test, std::optional<int> shard_index)>;

/// Per-size defaults from the rules (source "size-default"); never zero. A test with a `timeout`
/// attribute gets the default of the size whose timeout that is (source "timeout-default").
Estimator size_default_estimator(const Rules& rules);

enum class ShardMode {
  per_shard,  ///< one unit per shard (the default)
  whole,      ///< one unit per test, lasting the sum of its shards (--shards=whole)
};

/// One unit per GPU shard or test, sorted by unit id. CPU and skipped tests make no units.
std::vector<Unit> make_units(const Classification& tests, ShardMode mode, const Estimator& estimate,
                             const Rules& rules);
/// The same units, for a caller done with the GPU tests once their units are made (`plan`,
/// `compare`): each GPU test's label moves into its last unit instead of being copied, so the
/// GPU tests are left without labels. A million labels are not held twice.
std::vector<Unit> take_units(Classification& tests, ShardMode mode, const Estimator& estimate,
                             const Rules& rules);

}  // namespace gpuplan
