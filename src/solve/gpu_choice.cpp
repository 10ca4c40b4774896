// Which GPU set on a node: NVLink-aware, keeping NVLink groups whole for wide units to come.
#include "solve/gpu_choice.hpp"

#include <algorithm>
#include <array>
#include <bit>
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
    int next = std::countr_zero(candidates);
    candidates &= candidates - 1;
    extend(links, chosen | bit(next), candidates & links[static_cast<size_t>(next)], left - 1, limit, out);
  }
}

/// The k-th smallest (1-based) of `values` at the indices in `mask`.
double kth_smallest(const double* values, GpuMask mask, int k) {
  std::array<double, max_gpus_per_node> picked;  // the first n are set (no zeroing: it was hot)
  int n = 0;
  for (GpuMask m = mask; m; m &= m - 1) picked[static_cast<size_t>(n++)] = values[std::countr_zero(m)];
  if (n < k) return never;
  std::nth_element(picked.begin(), picked.begin() + (k - 1), picked.begin() + n);
  return picked[static_cast<size_t>(k - 1)];
}

double latest(const double* values, GpuMask mask) {
  double last = 0;
  for (GpuMask m = mask; m; m &= m - 1) last = std::max(last, values[std::countr_zero(m)]);
  return last;
}

/// A GPU with the scores it is chosen by, lowest first (ties: the lower index). A plain struct,
/// not a tuple: arrays of it are not zeroed first (a tuple's constructor zeroes, and zeroing
/// arrays of 64 was a quarter of choose_gpus's time).
struct Ranked {
  double first, second;
  int gpu;
  bool operator<(const Ranked& o) const {
    if (first != o.first) return first < o.first;
    if (second != o.second) return second < o.second;
    return gpu < o.gpu;
  }
};

/// The `k` GPUs of `mask` that became free latest by `start` (ties: the lowest indices); 0 when
/// `mask` has fewer than `k`.
GpuMask least_idle(const NodeView& node, GpuMask mask, int k, double start) {
  if (count(mask) < k) return 0;
  std::array<Ranked, max_gpus_per_node> ranked;  // the first n are set
  int n = 0;
  for (GpuMask m = mask; m; m &= m - 1) {
    int gpu = std::countr_zero(m);
    ranked[static_cast<size_t>(n++)] = {start - node.gpu_free[gpu], 0, gpu};
  }
  std::partial_sort(ranked.begin(), ranked.begin() + k, ranked.begin() + n);
  GpuMask chosen = 0;
  for (int i = 0; i < k; ++i) chosen |= bit(ranked[static_cast<size_t>(i)].gpu);
  return chosen;
}

}  // namespace

double earliest_share(const GpuShare& share, std::int64_t need, std::int64_t usable, int max_sharing) {
  need = std::min(need, usable);  // more than fits: it runs alone
  std::int64_t used = 0;
  for (const auto& running : share.running) used += running.second;
  auto left = static_cast<int>(share.running.size());
  double start = share.frontier;
  for (size_t i = 0; used + need > usable || left + 1 > max_sharing; ++i) {  // wait for the next to end
    if (i == share.running.size()) return never;
    used -= share.running[i].second;
    --left;
    start = std::max(start, share.running[i].first);
  }
  return start;
}

void add_share(GpuShare& share, double start, double end, std::int64_t need) {
  share.frontier = std::max(share.frontier, start);
  std::erase_if(share.running, [&](const auto& running) { return running.first <= share.frontier; });
  auto at = std::upper_bound(share.running.begin(), share.running.end(), std::pair{end, need});
  share.running.insert(at, {end, need});
}

std::optional<std::vector<GpuMask>> islands_of(const std::vector<GpuMask>& links, GpuMask within) {
  std::vector<GpuMask> islands;
  for (GpuMask left = within; left;) {
    int first = std::countr_zero(left);
    GpuMask island = (links[static_cast<size_t>(first)] & within) | bit(first);
    for (GpuMask m = island; m; m &= m - 1) {  // each member linked to exactly the others
      int gpu = std::countr_zero(m);
      if (((links[static_cast<size_t>(gpu)] & within) | bit(gpu)) != island) return std::nullopt;
    }
    islands.push_back(island);
    left &= ~island;
  }
  return islands;
}

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
      for (GpuMask island : shape.islands)
        best = std::min(best, kth_smallest(node.gpu_free, island, shape.gpus));
      for (GpuMask set : shape.cliques) best = std::min(best, latest(node.gpu_free, set));
      return best;
    }
    case Occupancy::shared: {
      double best = never;
      for (GpuMask m = shape.eligible; m; m &= m - 1) {
        int gpu = std::countr_zero(m);
        std::int64_t usable = shape.usable_mib[static_cast<size_t>(gpu)];
        if (usable > 0)
          best = std::min(best, earliest_share(node.shares[gpu], shape.memory_mib, usable, node.max_sharing));
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

  if (shape.occupancy == Occupancy::shared) {
    // Of the GPUs that can take it at `start`, the one with the least memory left after it,
    // so that emptier GPUs stay free for larger units.
    GpuMask best = 0;
    std::int64_t best_left = 0;
    for (GpuMask m = shape.eligible; m; m &= m - 1) {
      int gpu = std::countr_zero(m);
      std::int64_t usable = shape.usable_mib[static_cast<size_t>(gpu)];
      const GpuShare& share = node.shares[gpu];
      if (usable == 0 || earliest_share(share, shape.memory_mib, usable, node.max_sharing) > start) continue;
      std::int64_t left = usable - std::min(shape.memory_mib, usable);
      for (const auto& [end, mib] : share.running)
        if (end > start) left -= mib;
      if (!best || left < best_left) best = bit(gpu), best_left = left;
    }
    return best;
  }

  GpuMask candidates = shape.eligible & free;
  auto cut_off = [&](GpuMask set) {  // free NVLink partners that the set leaves behind
    int cut = 0;
    for (GpuMask m = set; m; m &= m - 1)
      cut += count(links[static_cast<size_t>(std::countr_zero(m))] & free & ~set);
    return cut;
  };
  auto idle = [&](GpuMask set) {
    double wasted = 0;
    for (GpuMask m = set; m; m &= m - 1) wasted += start - node.gpu_free[std::countr_zero(m)];
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
    for (GpuMask island : shape.islands) {
      // Within an island every set cuts off the same free partners: take the GPUs idle least.
      GpuMask set = least_idle(node, island & candidates, shape.gpus, start);
      if (!set) continue;
      auto s = score(set);
      if (!best || s < best_score) best = set, best_score = s;
    }
    for (GpuMask set : shape.cliques) {
      if ((set & candidates) != set) continue;
      auto s = score(set);
      if (!best || s < best_score) best = set, best_score = s;
    }
    if (best || shape.nvlink) return best;
  }
  // Any GPUs are as connected as any others (or none are): pick one by one.
  std::array<Ranked, max_gpus_per_node> ranked;  // the first n are set
  int n = 0;
  for (GpuMask m = candidates; m; m &= m - 1) {
    int gpu = std::countr_zero(m);
    auto [first, second] = score(bit(gpu));
    ranked[static_cast<size_t>(n++)] = {first, second, gpu};
  }
  if (n < shape.gpus) return 0;
  std::partial_sort(ranked.begin(), ranked.begin() + shape.gpus, ranked.begin() + n);
  GpuMask chosen = 0;
  for (int i = 0; i < shape.gpus; ++i) chosen |= bit(ranked[static_cast<size_t>(i)].gpu);
  return chosen;
}

}  // namespace gpuplan::solve
