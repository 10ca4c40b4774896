// Lower bounds: longest job, GPU-seconds per group of nodes, node-blocking jobs per group.
#include "solve/bound.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <map>
#include <vector>

namespace gpuplan::solve {

namespace {

/// Work confined to one set of node types.
struct Load {
  double gpu_seconds = 0;   ///< at least this many GPU-seconds
  double node_seconds = 0;  ///< of jobs no two of which can share a node
};

struct TypeSetCapacity {
  double gpus = 0;
  double nodes = 0;
};

using TypeSet = std::uint64_t;

double bound_for(const Load& load, const TypeSetCapacity& capacity) {
  double b = 0;
  if (capacity.gpus > 0) b = std::max(b, load.gpu_seconds / capacity.gpus);
  if (capacity.nodes > 0) b = std::max(b, load.node_seconds / capacity.nodes);
  return b;
}

/// The jobs confined to one set of node types, as the pigeonhole bounds need them.
struct Confined {
  std::vector<double> blocking;      ///< no two of these run on one node at once
  std::vector<double> holding_node;  ///< those of them that have their node to themselves
  double longest_other = 0;          ///< the longest job that does not have its node to itself

  void add(const Confined& other) {
    blocking.insert(blocking.end(), other.blocking.begin(), other.blocking.end());
    holding_node.insert(holding_node.end(), other.holding_node.begin(), other.holding_node.end());
    longest_other = std::max(longest_other, other.longest_other);
  }
};

/// Jobs no two of which can share a node, confined to `nodes` nodes: when there are more than
/// k·nodes of them, some node runs k+1 of the k·nodes+1 longest one after another, so the
/// k+1 shortest of those bound the makespan.
double pigeonhole_bound(std::vector<double> durations, size_t nodes) {
  if (nodes == 0 || durations.size() <= nodes) return 0;
  std::sort(durations.begin(), durations.end(), std::greater<>());
  std::vector<double> prefix(durations.size() + 1, 0);  // prefix[i]: the i longest together
  for (size_t i = 0; i < durations.size(); ++i) prefix[i + 1] = prefix[i] + durations[i];
  double bound = 0;
  for (size_t k = 1; k * nodes < durations.size(); ++k)
    bound = std::max(bound, prefix[k * nodes + 1] - prefix[k * nodes - k]);
  return bound;
}

/// At least `nodes` jobs that have their node to themselves and one job more, all confined to
/// `nodes` nodes: none of them runs beside another, so some node runs two of the `nodes`
/// longest and that one in turn, and the two shortest of those bound the makespan.
double one_more_bound(std::vector<double> holding_node, double other, size_t nodes) {
  if (nodes == 0 || other <= 0 || holding_node.size() < nodes) return 0;
  auto last = holding_node.begin() + static_cast<std::ptrdiff_t>(nodes - 1);
  std::nth_element(holding_node.begin(), last, holding_node.end(), std::greater<>());
  if (nodes == 1) return *last + other;
  return *last + std::min(other, *std::min_element(holding_node.begin(), last));
}

double pigeonhole_bounds(const Confined& jobs, size_t nodes) {
  return std::max(pigeonhole_bound(jobs.blocking, nodes),
                  one_more_bound(jobs.holding_node, jobs.longest_other, nodes));
}

}  // namespace

double lower_bound(const Problem& p) {
  const auto& types = p.fleet->types;
  double bound = 0;
  // Per demand: the least GPUs it holds on any type it fits, whether it blocks a node everywhere.
  std::vector<double> gpus_held(p.demand_shapes.size(), std::numeric_limits<double>::infinity());
  std::vector<bool> blocks_node(p.demand_shapes.size(), true);
  std::vector<bool> holds_node(p.demand_shapes.size(), true);
  std::vector<TypeSet> type_set(p.demand_shapes.size(), 0);
  bool few_types = types.size() <= 64;
  for (size_t d = 0; d < p.demand_shapes.size(); ++d)
    for (int s : p.demand_shapes[d]) {
      const Shape& shape = p.shapes[static_cast<size_t>(s)];
      int type_gpus = types[static_cast<size_t>(shape.type)].gpus;
      double held = 0;
      switch (shape.occupancy) {
        case Occupancy::gpus: held = shape.gpus; break;
        case Occupancy::whole_node: held = type_gpus; break;
        case Occupancy::shared:
          held = std::numeric_limits<double>::infinity();
          for (std::int64_t usable : shape.usable_mib)
            if (usable > 0) held = std::min(held, std::min(1.0, double(shape.memory_mib) / double(usable)));
          break;
      }
      gpus_held[d] = std::min(gpus_held[d], held);
      bool blocks = shape.occupancy == Occupancy::whole_node ||
                    (shape.occupancy == Occupancy::gpus && 2 * shape.gpus > type_gpus);
      blocks_node[d] = blocks_node[d] && blocks;
      holds_node[d] = holds_node[d] && shape.occupancy == Occupancy::whole_node;
      if (few_types) type_set[d] |= TypeSet{1} << shape.type;
    }

  std::map<TypeSet, Load> loads;
  std::map<TypeSet, Confined> confined;
  Confined everywhere;
  Load everything;
  for (const Job& job : p.jobs) {
    auto d = static_cast<size_t>(job.demand);
    bound = std::max(bound, job.duration);
    TypeSet set = few_types ? type_set[d] : 0;
    Load& load = loads[set];
    for (Load* l : {&load, &everything}) {
      l->gpu_seconds += gpus_held[d] * job.duration;
      if (blocks_node[d]) l->node_seconds += job.duration;
    }
    for (Confined* c : {&confined[set], &everywhere}) {
      if (blocks_node[d]) c->blocking.push_back(job.duration);
      if (holds_node[d])
        c->holding_node.push_back(job.duration);
      else
        c->longest_other = std::max(c->longest_other, job.duration);
    }
  }
  TypeSetCapacity all;
  for (const auto& type : types) {
    all.gpus += double(type.gpus) * double(type.nodes.size());
    all.nodes += double(type.nodes.size());
  }
  bound = std::max(bound, bound_for(everything, all));
  bound = std::max(bound, pigeonhole_bounds(everywhere, static_cast<size_t>(all.nodes)));
  if (!few_types) return bound;

  auto capacity_of = [&](TypeSet set) {
    TypeSetCapacity c;
    for (size_t t = 0; t < types.size(); ++t)
      if (set >> t & 1) {
        c.gpus += double(types[t].gpus) * double(types[t].nodes.size());
        c.nodes += double(types[t].nodes.size());
      }
    return c;
  };
  size_t groups_checked = 0;
  for (const auto& [group, jobs] : confined) {
    if (jobs.blocking.empty()) continue;
    if (++groups_checked > 64) break;
    Confined within;  // the jobs that can only use this group's nodes
    for (const auto& [set, more] : confined)
      if ((set & ~group) == 0) within.add(more);
    bound = std::max(bound, pigeonhole_bounds(within, static_cast<size_t>(capacity_of(group).nodes)));
  }

  auto load_within = [&](TypeSet set) {
    Load sum;
    for (const auto& [s, load] : loads)
      if ((s & ~set) == 0) sum.gpu_seconds += load.gpu_seconds, sum.node_seconds += load.node_seconds;
    return sum;
  };
  if (types.size() <= 16) {
    // Every union of types: sum the loads over subsets (a zeta transform), 2^T·T steps.
    size_t subsets = size_t{1} << types.size();
    std::vector<Load> within(subsets);
    for (const auto& [s, load] : loads) within[s] = load;
    for (size_t t = 0; t < types.size(); ++t)
      for (size_t s = 0; s < subsets; ++s)
        if (s >> t & 1) {
          within[s].gpu_seconds += within[s ^ (size_t{1} << t)].gpu_seconds;
          within[s].node_seconds += within[s ^ (size_t{1} << t)].node_seconds;
        }
    for (size_t s = 1; s < subsets; ++s) bound = std::max(bound, bound_for(within[s], capacity_of(s)));
    return bound;
  }
  // Many types: the groups themselves and their pairwise unions.
  std::vector<TypeSet> groups;
  groups.reserve(loads.size());
  for (const auto& entry : loads) groups.push_back(entry.first);
  for (size_t a = 0; a < groups.size() && a < 256; ++a)
    for (size_t b = a; b < groups.size() && b < 256; ++b) {
      TypeSet set = groups[a] | groups[b];
      bound = std::max(bound, bound_for(load_within(set), capacity_of(set)));
    }
  return bound;
}

}  // namespace gpuplan::solve
