// A plan's assignments resolved against the fleet once: nodes, plan order, needs per node type.
#include "simulate/replay.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <tuple>
#include <unordered_map>

#include "gpuplan/error.hpp"
#include "gpuplan/run.hpp"
#include "run/dispatch.hpp"

namespace gpuplan::sim {

namespace {

/// Units with equal keys can be taken by the same nodes onto the same GPUs.
std::string need_key(const Requirement& r, bool holds_node) {
  std::string key = fmt::format("{}|{}|{}|{}|{}", r.gpus.value, r.gpu_mem_mib ? r.gpu_mem_mib->value : 0,
                                r.needs_nvlink(), holds_node, r.takes_every_node_gpu());
  for (const auto& c : r.cuda) key += "|c" + c.value.str();
  for (const auto& c : r.compute_capability) key += "|k" + c.value.str();
  if (r.gpu_models)
    for (const auto& m : r.gpu_models->value) key += "|m" + m;
  if (r.vendor) key += "|v" + r.vendor->value;
  return key;
}

}  // namespace

Replay prepare_replay(const Plan& plan, const Fleet& fleet) {
  Replay replay;
  replay.fleet = &fleet;
  replay.policy = plan.policy;
  replay.index = solve::index_fleet(fleet);
  std::unordered_map<std::string, int> node_index;
  for (size_t n = 0; n < fleet.nodes.size(); ++n)
    node_index.emplace(fleet.nodes[n].name, static_cast<int>(n));

  size_t count = plan.assignments.size();
  replay.node_of.resize(count);
  replay.holds_node.resize(count);
  replay.planned_seconds.resize(count);
  replay.planned_start.resize(count);
  replay.demand_of.resize(count);
  replay.node_units.resize(fleet.nodes.size());
  replay.node_lists.resize(fleet.nodes.size());
  std::unordered_map<std::string, int> demand_of_key;
  std::vector<Requirement> needs;
  std::vector<bool> holders;
  for (size_t i = 0; i < count; ++i) {
    const Assignment& a = plan.assignments[i];
    auto found = node_index.find(a.node.str());
    if (found == node_index.end())
      throw InputError(Position{fleet.source},
                       fmt::format("the plan puts {} on node {}, which this fleet does not have", a.unit.id,
                                   a.node.str()));
    int node = found->second;
    int gpus = static_cast<int>(fleet.nodes[static_cast<size_t>(node)].gpus.size());
    for (int gpu : a.gpus)
      if (gpu < 0 || gpu >= gpus)
        throw InputError(Position{fleet.source},
                         fmt::format("the plan puts {} on GPU {} of {}, which has {} GPUs", a.unit.id, gpu,
                                     a.node.str(), gpus));
    replay.node_of[i] = node;
    replay.holds_node[i] = holds_whole_node(a, plan.policy);
    replay.planned_seconds[i] = a.unit.duration_s;
    replay.planned_start[i] = a.start_s;
    replay.node_units[static_cast<size_t>(node)].push_back(i);
    Requirement placing = placing_requirement(a.unit);
    auto [it, added] =
        demand_of_key.try_emplace(need_key(placing, replay.holds_node[i]), static_cast<int>(needs.size()));
    if (added) {
      needs.push_back(std::move(placing));
      holders.push_back(replay.holds_node[i]);
    }
    replay.demand_of[i] = it->second;
  }

  // Plan order on each node, as `exec` reads it: by start, then first GPU, then unit id.
  auto first_gpu = [&](size_t i) {
    return plan.assignments[i].gpus.empty() ? -1 : plan.assignments[i].gpus[0];
  };
  for (size_t n = 0; n < fleet.nodes.size(); ++n) {
    auto& units = replay.node_units[n];
    std::stable_sort(units.begin(), units.end(), [&](size_t x, size_t y) {
      const auto& a = plan.assignments[x];
      const auto& b = plan.assignments[y];
      int gx = first_gpu(x), gy = first_gpu(y);
      return std::tie(a.start_s, gx, a.unit.id) < std::tie(b.start_s, gy, b.unit.id);
    });
    auto& list = replay.node_lists[n];
    list.reserve(units.size());
    std::vector<int> all_gpus;
    for (const auto& gpu : fleet.nodes[n].gpus) all_gpus.push_back(gpu.index);
    for (size_t i : units) {
      list.push_back(plan.assignments[i]);
      if (replay.holds_node[i]) list.back().gpus = all_gpus;
    }
  }
  replay.dispatch_rank.resize(count);
  std::vector<size_t> order(count);
  for (size_t i = 0; i < count; ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t x, size_t y) { return dispatched_before(plan.assignments[x], plan.assignments[y]); });
  for (size_t k = 0; k < count; ++k) replay.dispatch_rank[order[k]] = k;

  replay.demands = static_cast<int>(needs.size());
  size_t types = replay.index.types.size();
  replay.eligible.assign(needs.size() * types, 0);
  for (size_t d = 0; d < needs.size(); ++d) {
    replay.needs.push_back({needs[d].gpus.value, needs[d].needs_nvlink(), holders[d],
                            holders[d] && needs[d].takes_every_node_gpu()});
    for (size_t t = 0; t < types; ++t) {
      const auto& type = replay.index.types[t];
      const Node& node = fleet.nodes[static_cast<size_t>(type.nodes.front())];
      if (solve::can_run(needs[d], node, type.links))
        replay.eligible[d * types + t] = solve::eligible_gpus(needs[d], node);
    }
  }
  return replay;
}

}  // namespace gpuplan::sim
