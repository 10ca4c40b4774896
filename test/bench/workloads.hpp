#pragma once
// The planner benchmark's generated fleets and workloads, shared by the benchmarks that plan them
// (solve_bench) and replay the plans (simulate_bench).
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gpuplan/solve.hpp"

namespace gpuplan::bench {

struct NodeKind {
  std::string family;
  std::int64_t vram_mib;
  std::string compute_capability;
  std::string cuda;
  std::string topology;  // nvswitch, pairs, quads, pcie
};

inline const NodeKind h100{"h100", 81920, "9.0", "12.4", "nvswitch"};
inline const NodeKind a100_pairs{"a100", 40960, "8.0", "12.2", "pairs"};
inline const NodeKind a100_quads{"a100", 81920, "8.0", "12.4", "quads"};
inline const NodeKind l4{"l4", 24576, "8.9", "12.6", "pcie"};
inline const NodeKind h200{"h200", 143360, "9.0", "12.6", "nvswitch"};

/// `nodes` nodes of 8 GPUs, the kinds taking turns by the given weights.
inline Fleet make_fleet(int nodes, const std::vector<std::pair<NodeKind, int>>& mix) {
  Fleet fleet;
  fleet.source = "generated";
  int total_weight = 0;
  for (const auto& [kind, weight] : mix) total_weight += weight;
  for (int n = 0; n < nodes; ++n) {
    int pick = n % total_weight;
    const NodeKind* kind = nullptr;
    for (const auto& [k, weight] : mix) {
      if (pick < weight) {
        kind = &k;
        break;
      }
      pick -= weight;
    }
    Node node;
    node.name = fmt::format("{}-{}", kind->family, n);
    node.pool = kind->family + "-" + kind->topology;
    node.cuda = *Version::parse(kind->cuda);
    for (int g = 0; g < 8; ++g)
      node.gpus.push_back(
          {g, kind->family, kind->family, kind->vram_mib, *Version::parse(kind->compute_capability), ""});
    node.nvlink.assign(8, std::vector<bool>(8, false));
    for (int i = 0; i < 8; ++i)
      for (int j = 0; j < 8; ++j)
        node.nvlink[static_cast<size_t>(i)][static_cast<size_t>(j)] =
            i != j && (kind->topology == "nvswitch" || (kind->topology == "pairs" && i / 2 == j / 2) ||
                       (kind->topology == "quads" && i / 4 == j / 4));
    fleet.nodes.push_back(std::move(node));
  }
  return fleet;
}

/// What a generated unit may need, drawn per unit.
struct Workload {
  std::vector<std::pair<int, int>> gpus;  // (GPU count, weight)
  int nvlink_percent = 0;                 // of multi-GPU units (up to nvlink_max_gpus)
  int exclusive_percent = 0;
  int constrained_percent = 0;  // with CUDA / model / compute capability / memory constraints
  int known_vram_percent = 50;
  double duration_spread = 1.0;  // sigma of the log-normal minutes
  int nvlink_max_gpus = 8;
};

inline std::vector<Unit> make_units(long count, const Workload& w, unsigned seed) {
  std::mt19937_64 random(seed);
  std::lognormal_distribution<double> minutes(1.5, w.duration_spread);
  int total_weight = 0;
  for (auto [g, weight] : w.gpus) total_weight += weight;
  auto constraint = [](const char* text) {
    return Sourced<VersionConstraint>{*VersionConstraint::parse(text), "bench"};
  };
  std::vector<Unit> units;
  units.reserve(static_cast<size_t>(count));
  for (long i = 0; i < count; ++i) {
    Unit u;
    // Labels as long as real ones (41 characters), sorted, as make_units gives them.
    u.id = fmt::format("//team{:03}/models/m{:05}:case_{:07}_test", i / 10000, i / 100, i);
    u.label = u.id;
    u.duration_s = std::min(3600.0, 5 + 60 * minutes(random));
    u.duration_source = "size-default";
    int pick = static_cast<int>(random() % static_cast<unsigned>(total_weight));
    int gpus = 1;
    for (auto [g, weight] : w.gpus) {
      if (pick < weight) {
        gpus = g;
        break;
      }
      pick -= weight;
    }
    u.requirement.edit().gpus = {gpus, "bench"};
    if (gpus > 1 && gpus <= w.nvlink_max_gpus && static_cast<int>(random() % 100) < w.nvlink_percent)
      u.requirement.edit().nvlink = Sourced<bool>{true, "bench"};
    if (static_cast<int>(random() % 100) < w.exclusive_percent)
      u.requirement.edit().exclusive = Sourced<bool>{true, "bench"};
    if (static_cast<int>(random() % 100) < w.constrained_percent) {
      switch (random() % 5) {
        case 0: u.requirement.edit().cuda.push_back(constraint(">=12.4")); break;
        case 1: u.requirement.edit().cuda.push_back(constraint(">=12.6")); break;
        case 2: u.requirement.edit().compute_capability.push_back(constraint(">=9.0")); break;
        case 3: u.requirement.edit().gpu_models = Sourced<std::vector<std::string>>{{"a100"}, "bench"}; break;
        case 4: u.requirement.edit().gpu_mem_mib = Sourced<std::int64_t>{65536, "bench"}; break;
      }
    }
    if (static_cast<int>(random() % 100) < w.known_vram_percent)
      u.vram_mib = 1024 * (2 + static_cast<long>(random() % 30));
    units.push_back(std::move(u));
  }
  return units;
}

struct Case {
  std::string name;
  long units;
  int nodes;
  std::vector<std::pair<NodeKind, int>> fleet;
  Workload workload;
};

/// The planner benchmark's cases; `quick`: none over 100,000 units.
inline std::vector<Case> planner_cases(bool quick) {
  Workload mixed{{{1, 70}, {2, 15}, {4, 8}, {8, 4}}, 50, 3, 30, 50};
  Workload singles{{{1, 1}}, 0, 0, 0, 50};
  Workload wide_nvlink{{{1, 30}, {2, 50}, {4, 20}}, 80, 0, 0, 50};
  Workload exclusive{{{1, 60}, {2, 20}, {4, 20}}, 30, 20, 0, 50};
  Workload constrained{{{1, 70}, {2, 20}, {4, 10}}, 40, 0, 90, 50};
  auto mixed_fleet =
      std::vector<std::pair<NodeKind, int>>{{h100, 4}, {a100_pairs, 3}, {a100_quads, 1}, {l4, 2}};
  std::vector<Case> cases;
  for (long n : {10'000L, 100'000L, 1'000'000L})
    if (!quick || n <= 100'000) cases.push_back({"mixed fleet, mixed tests", n, 1000, mixed_fleet, mixed});
  cases.push_back({"many 1-GPU tests", 100'000, 1000, {{h100, 1}}, singles});
  cases.push_back({"wide NVLink tests, pair-linked boards", 100'000, 1000, {{a100_pairs, 1}}, wide_nvlink});
  cases.push_back({"exclusive tests", 100'000, 1000, mixed_fleet, exclusive});
  // Pair-linked boards (NVLink within [0,1], [2,3], ...) under many 2-GPU NVLink units and 4-GPU
  // units among 1-GPU ones, durations alike (so the list scheduler's gaps show).
  Workload nvlink_mix{{{1, 30}, {2, 50}, {4, 20}}, 90, 0, 0, 50, 0.3, 2};
  for (long n : {10'000L, 100'000L})
    cases.push_back(
        {"wide NVLink mix, pair-linked boards", n, static_cast<int>(n / 80), {{a100_pairs, 1}}, nvlink_mix});
  Workload hetero{{{1, 60}, {2, 20}, {4, 15}, {8, 5}}, 50, 10, 70, 50, 0.6};
  for (long n : {10'000L, 100'000L})
    cases.push_back({"heterogeneous: five node types, CUDA/model constraints, exclusive tests",
                     n,
                     static_cast<int>(n / 80),
                     {{h100, 3}, {a100_pairs, 2}, {a100_quads, 2}, {l4, 2}, {h200, 1}},
                     hetero});
  cases.push_back({"heterogeneous CUDA/model constraints",
                   100'000,
                   1000,
                   {{h100, 3}, {a100_pairs, 2}, {a100_quads, 2}, {l4, 2}, {h200, 1}},
                   constrained});
  return cases;
}

}  // namespace gpuplan::bench
