// Dynamic execution: the order units are dispatched in, whether a unit can run on this node,
// and on which of its free GPUs (shared by `exec --claims` and `simulate`).
#include <algorithm>
#include <bit>
#include <tuple>

#include "gpuplan/run.hpp"
#include "run/dispatch.hpp"
#include "solve/gpu_choice.hpp"

namespace gpuplan {

bool dispatched_before(const Assignment& x, const Assignment& y) {
  double lx = x.end_s - x.start_s, ly = y.end_s - y.start_s;
  return std::tie(ly, x.start_s, x.unit.id) < std::tie(lx, y.start_s, y.unit.id);
}

std::optional<solve::GpuMask> dispatch_gpus(const DispatchNeed& need, solve::GpuMask usable,
                                            solve::GpuMask free, solve::GpuMask all,
                                            const std::vector<solve::GpuMask>& links) {
  if (need.holds_node) {
    if (free != all || (usable & all) == 0) return std::nullopt;
    if (need.every_gpu) return usable & all;
  }
  usable &= free;
  if (need.gpus <= 0 || solve::count(usable) < need.gpus) return std::nullopt;
  if (need.nvlink && need.gpus > 1) {
    auto sets = solve::cliques_of(links, usable, need.gpus, 1);
    if (sets.empty()) return std::nullopt;
    return sets.front();
  }
  solve::GpuMask taken = 0;
  for (int k = need.gpus; k > 0; --k, usable &= usable - 1) taken |= usable & -usable;
  return taken;
}

Requirement placing_requirement(const Unit& unit) {
  Requirement r = unit.requirement;
  std::int64_t declared = r.gpu_mem_mib ? r.gpu_mem_mib->value : 0;
  if (unit.vram_mib && *unit.vram_mib > declared)
    r.gpu_mem_mib = Sourced<std::int64_t>{*unit.vram_mib, "the memory it reserves (vram_mib)"};
  return r;
}

std::optional<std::vector<int>> gpus_here(const Assignment& a, const Node& node, const std::vector<int>& free,
                                          bool holds_node) {
  const Requirement r = placing_requirement(a.unit);
  const int gpus = static_cast<int>(node.gpus.size());
  std::vector<solve::GpuMask> links(node.gpus.size(), 0);
  for (size_t i = 0; i < node.nvlink.size() && i < links.size(); ++i)
    for (size_t j = 0; j < node.nvlink[i].size() && j < links.size(); ++j)
      if (node.nvlink[i][j]) links[i] |= solve::bit(static_cast<int>(j));
  solve::GpuMask free_mask = 0;
  for (int gpu : free)
    if (gpu >= 0 && gpu < gpus) free_mask |= solve::bit(gpu);
  solve::GpuMask all = gpus >= 64 ? ~solve::GpuMask{0} : solve::bit(gpus) - 1;
  DispatchNeed need{
      r.takes_every_node_gpu() ? r.gpus.value : std::max(static_cast<int>(a.gpus.size()), r.gpus.value),
      r.needs_nvlink(), holds_node, holds_node && r.takes_every_node_gpu()};
  if (!solve::can_run(r, node, links)) return std::nullopt;
  auto chosen = dispatch_gpus(need, solve::eligible_gpus(r, node), free_mask, all, links);
  if (!chosen) return std::nullopt;
  std::vector<int> out;
  for (solve::GpuMask m = *chosen; m; m &= m - 1) out.push_back(std::countr_zero(m));
  return out;
}

}  // namespace gpuplan
