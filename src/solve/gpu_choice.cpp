// Which GPU set on a node: NVLink-aware, keeping NVLink groups whole for wide units to come.
#include "solve/gpu_choice.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <tuple>

namespace gpuplan::solve {

namespace {

constexpr double never = std::numeric_limits<double>::infinity();

void extend(const std::vector<GpuMask>& links, GpuMask chosen, GpuMask candidates, int left, size_t limit,
            std::vector<GpuMask>& out) {
  if (left == 0) {
    out.push_back(chosen);
    return;
  }
  while (count(candidates) >= left && out.size() < limit) {
    int next = __builtin_ctzll(candidates);
    candidates &= candidates - 1;
    extend(links, chosen | bit(next), candidates & links[static_cast<size_t>(next)], left - 1, limit, out);
  }
}

/// The k-th smallest (1-based) of `values` at the indices in `mask`.
double kth_smallest(const double* values, GpuMask mask, int k) {
  std::array<double, max_gpus_per_node> picked{};
  int n = 0;
  for (GpuMask m = mask; m; m &= m - 1) picked[static_cast<size_t>(n++)] = values[__builtin_ctzll(m)];
  if (n < k) return never;
  std::nth_element(picked.begin(), picked.begin() + (k - 1), picked.begin() + n);
  return picked[static_cast<size_t>(k - 1)];
}

double latest(const double* values, GpuMask mask) {
  double last = 0;
  for (GpuMask m = mask; m; m &= m - 1) last = std::max(last, values[__builtin_ctzll(m)]);
  return last;
}

/// Lanes of one GPU free by `start`, and the idle time the `needed` latest of them waste.
std::pair<int, double> lane_fit(const NodeView& node, int gpu, int needed, double start) {
  const double* lanes = node.lane_free + static_cast<std::ptrdiff_t>(gpu) * node.lanes;
  int free = static_cast<int>(std::upper_bound(lanes, lanes + node.lanes, start) - lanes);
  double hole = 0;
  for (int l = std::max(0, free - needed); l < free; ++l) hole += start - lanes[l];
  return {free, hole};
}

}  // namespace

std::vector<GpuMask> cliques_of(const std::vector<GpuMask>& links, GpuMask within, int size, size_t limit) {
  std::vector<GpuMask> out;
  extend(links, 0, within, size, limit, out);
  return out;
}

double earliest_start(const Shape& shape, const NodeView& node) {
  switch (shape.occupancy) {
    case Occupancy::whole_node:
      return latest(node.gpu_free, node.gpus == 64 ? ~GpuMask{0} : bit(node.gpus) - 1);
    case Occupancy::gpus: {
      if (!shape.nvlink || shape.complete) return kth_smallest(node.gpu_free, shape.eligible, shape.gpus);
      double best = never;
      for (GpuMask set : shape.cliques) best = std::min(best, latest(node.gpu_free, set));
      return best;
    }
    case Occupancy::lanes: {
      double best = never;
      for (GpuMask m = shape.eligible; m; m &= m - 1) {
        int gpu = __builtin_ctzll(m);
        int needed = shape.lanes_needed[static_cast<size_t>(gpu)];
        if (needed > 0) best = std::min(best, node.lane_free[gpu * node.lanes + needed - 1]);
      }
      return best;
    }
  }
  return never;
}

GpuMask choose_gpus(const Shape& shape, const NodeView& node, double start, bool keep_groups) {
  const auto& links = *node.links;
  GpuMask free = 0;
  for (int i = 0; i < node.gpus; ++i)
    if (node.gpu_free[i] <= start) free |= bit(i);

  if (shape.occupancy == Occupancy::lanes) {
    GpuMask best = 0;
    std::tuple<double, int> best_score{never, 0};
    for (GpuMask m = shape.eligible; m; m &= m - 1) {
      int gpu = __builtin_ctzll(m);
      int needed = shape.lanes_needed[static_cast<size_t>(gpu)];
      if (needed == 0) continue;
      auto [free_lanes, hole] = lane_fit(node, gpu, needed, start);
      if (free_lanes < needed) continue;
      // Least idle time wasted, then the fullest GPU, so that others stay free for units of their own.
      std::tuple<double, int> score{hole, free_lanes};
      if (!best || score < best_score) best = bit(gpu), best_score = score;
    }
    return best;
  }

  GpuMask candidates = shape.eligible & free;
  auto cut_off = [&](GpuMask set) {  // free NVLink partners that the set leaves behind
    int cut = 0;
    for (GpuMask m = set; m; m &= m - 1)
      cut += count(links[static_cast<size_t>(__builtin_ctzll(m))] & free & ~set);
    return cut;
  };
  auto idle = [&](GpuMask set) {
    double wasted = 0;
    for (GpuMask m = set; m; m &= m - 1) wasted += start - node.gpu_free[__builtin_ctzll(m)];
    return wasted;
  };
  auto score = [&](GpuMask set) {
    int cut = cut_off(set);
    double wasted = idle(set);
    return keep_groups ? std::tuple<double, double>{cut, wasted} : std::tuple<double, double>{wasted, cut};
  };

  if (shape.gpus > 1 && !shape.complete) {
    GpuMask best = 0;
    std::tuple<double, double> best_score{never, never};
    for (GpuMask set : shape.cliques) {
      if ((set & candidates) != set) continue;
      auto s = score(set);
      if (!best || s < best_score) best = set, best_score = s;
    }
    if (best || shape.nvlink) return best;
  }
  // Any GPUs are as connected as any others (or none are): pick one by one.
  std::array<std::tuple<double, double, int>, max_gpus_per_node> ranked{};
  int n = 0;
  for (GpuMask m = candidates; m; m &= m - 1) {
    int gpu = __builtin_ctzll(m);
    auto [first, second] = score(bit(gpu));
    ranked[static_cast<size_t>(n++)] = {first, second, gpu};
  }
  if (n < shape.gpus) return 0;
  std::partial_sort(ranked.begin(), ranked.begin() + shape.gpus, ranked.begin() + n);
  GpuMask chosen = 0;
  for (int i = 0; i < shape.gpus; ++i) chosen |= bit(std::get<2>(ranked[static_cast<size_t>(i)]));
  return chosen;
}

}  // namespace gpuplan::solve
