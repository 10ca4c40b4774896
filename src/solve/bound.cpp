// Lower bounds: longest job, GPU-seconds per group of nodes, node-blocking jobs per group.
#include "solve/bound.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <vector>

namespace gpuplan::solve {

namespace {

/// Node types are sets (bits of a TypeSet) only up to this many; beyond, jobs count fleet-wide.
constexpr size_t max_types_as_sets = 64;
/// Up to this many types, every union of types is bounded (2^types sums); beyond, pairs of groups.
constexpr size_t max_types_for_all_unions = 16;
/// How many groups the pairwise unions take, and how many groups get pigeonhole bounds.
constexpr size_t max_groups_paired = 256;
constexpr size_t max_groups_pigeonholed = 64;

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

double pigeonhole_bounds(const Confined& jobs, size_t nodes) {
  return std::max(pigeonhole_bound(jobs.blocking, nodes),
                  one_more_bound(jobs.holding_node, jobs.longest_other, nodes));
}

/// The GPUs a job of `shape` holds on its type, as GPU-seconds count it.
double gpus_held(const Problem& p, const Shape& shape, Sharing sharing) {
  switch (shape.occupancy) {
    case Occupancy::gpus: return shape.gpus;
    case Occupancy::whole_node: return p.fleet->types[static_cast<size_t>(shape.type)].gpus;
    case Occupancy::shared: {
      if (sharing == Sharing::by_count) return 1.0 / p.max_sharing;
      double held = std::numeric_limits<double>::infinity();
      for (std::int64_t usable : shape.usable_mib)
        if (usable > 0) held = std::min(held, std::min(1.0, double(shape.least_memory_mib) / double(usable)));
      return held;
    }
  }
  return 0;
}

/// The jobs' loads and pigeonhole lists per set of types they are confined to.
struct Grouped {
  std::map<TypeSet, Load> loads;
  std::map<TypeSet, Confined> confined;
  Load everything;
  Confined everywhere;
};

Grouped group_jobs(const Problem& p, const std::vector<DemandProfile>& profiles) {
  Grouped g;
  for (const Job& job : p.jobs) {
    const DemandProfile& d = profiles[static_cast<size_t>(job.demand)];
    for (Load* l : {&g.loads[d.types], &g.everything}) {
      l->gpu_seconds += d.gpus_held * job.duration;
      if (d.blocks_node) l->node_seconds += job.duration;
    }
    for (Confined* c : {&g.confined[d.types], &g.everywhere}) {
      if (d.blocks_node) c->blocking.push_back(job.duration);
      if (d.holds_node)
        c->holding_node.push_back(job.duration);
      else
        c->longest_other = std::max(c->longest_other, job.duration);
    }
  }
  return g;
}

Capacity capacity_of(const FleetIndex& fleet, TypeSet set) {
  Capacity c;
  for (size_t t = 0; t < fleet.types.size(); ++t)
    if (set >> t & 1) {
      c.gpus += double(fleet.types[t].gpus) * double(fleet.types[t].nodes.size());
      c.nodes += double(fleet.types[t].nodes.size());
    }
  return c;
}

/// For each group of types with node-blocking jobs: the pigeonhole bounds of the jobs confined within it.
double confined_pigeonhole_bound(const FleetIndex& fleet, const Grouped& g) {
  double bound = 0;
  size_t groups_checked = 0;
  for (const auto& [group, jobs] : g.confined) {
    if (jobs.blocking.empty()) continue;
    if (++groups_checked > max_groups_pigeonholed) break;
    Confined within;
    for (const auto& [set, more] : g.confined)
      if ((set & ~group) == 0) within.add(more);
    bound = std::max(bound, pigeonhole_bounds(within, static_cast<size_t>(capacity_of(fleet, group).nodes)));
  }
  return bound;
}

/// The work bound of every union of types: loads summed over subsets (a zeta transform), 2^T·T steps.
double all_unions_work_bound(const FleetIndex& fleet, const Grouped& g) {
  size_t subsets = size_t{1} << fleet.types.size();
  std::vector<Load> within(subsets);
  for (const auto& [s, load] : g.loads) within[s] = load;
  for (size_t t = 0; t < fleet.types.size(); ++t)
    for (size_t s = 0; s < subsets; ++s)
      if (s >> t & 1) {
        within[s].gpu_seconds += within[s ^ (size_t{1} << t)].gpu_seconds;
        within[s].node_seconds += within[s ^ (size_t{1} << t)].node_seconds;
      }
  double bound = 0;
  for (size_t s = 1; s < subsets; ++s) bound = std::max(bound, work_bound(within[s], capacity_of(fleet, s)));
  return bound;
}

/// Many types: the work bound of the groups themselves and their pairwise unions.
double paired_groups_work_bound(const FleetIndex& fleet, const Grouped& g) {
  auto load_within = [&](TypeSet set) {
    Load sum;
    for (const auto& [s, load] : g.loads)
      if ((s & ~set) == 0) sum.gpu_seconds += load.gpu_seconds, sum.node_seconds += load.node_seconds;
    return sum;
  };
  std::vector<TypeSet> groups;
  for (const auto& entry : g.loads) groups.push_back(entry.first);
  double bound = 0;
  for (size_t a = 0; a < groups.size() && a < max_groups_paired; ++a)
    for (size_t b = a; b < groups.size() && b < max_groups_paired; ++b) {
      TypeSet set = groups[a] | groups[b];
      bound = std::max(bound, work_bound(load_within(set), capacity_of(fleet, set)));
    }
  return bound;
}

double bound_with(const Problem& p, Sharing sharing) {
  const FleetIndex& fleet = *p.fleet;
  Grouped g = group_jobs(p, demand_profiles(p, sharing));
  Capacity all = capacity_of(fleet, ~TypeSet{0});
  if (fleet.types.size() > max_types_as_sets) {  // beyond 64 types, TypeSet has no bit for them all
    all = {};
    for (const auto& type : fleet.types) {
      all.gpus += double(type.gpus) * double(type.nodes.size());
      all.nodes += double(type.nodes.size());
    }
  }
  double bound = std::max(work_bound(g.everything, all),
                          pigeonhole_bounds(g.everywhere, static_cast<size_t>(all.nodes)));
  if (fleet.types.size() > max_types_as_sets) return bound;
  bound = std::max(bound, confined_pigeonhole_bound(fleet, g));
  if (fleet.types.size() <= max_types_for_all_unions) return std::max(bound, all_unions_work_bound(fleet, g));
  return std::max(bound, paired_groups_work_bound(fleet, g));
}

}  // namespace

std::vector<DemandProfile> demand_profiles(const Problem& p, Sharing sharing) {
  const auto& types = p.fleet->types;
  bool as_sets = types.size() <= max_types_as_sets;
  std::vector<DemandProfile> profiles(p.demand_shapes.size());
  for (size_t d = 0; d < p.demand_shapes.size(); ++d) {
    DemandProfile& profile = profiles[d];
    profile.gpus_held = std::numeric_limits<double>::infinity();
    for (int s : p.demand_shapes[d]) {
      const Shape& shape = p.shapes[static_cast<size_t>(s)];
      int type_gpus = types[static_cast<size_t>(shape.type)].gpus;
      profile.gpus_held = std::min(profile.gpus_held, gpus_held(p, shape, sharing));
      profile.blocks_node =
          profile.blocks_node && (shape.occupancy == Occupancy::whole_node ||
                                  (shape.occupancy == Occupancy::gpus && 2 * shape.gpus > type_gpus));
      profile.holds_node = profile.holds_node && shape.occupancy == Occupancy::whole_node;
      if (as_sets) profile.types |= TypeSet{1} << shape.type;
    }
  }
  return profiles;
}

double work_bound(const Load& load, const Capacity& capacity) {
  double b = 0;
  if (capacity.gpus > 0) b = std::max(b, load.gpu_seconds / capacity.gpus);
  if (capacity.nodes > 0) b = std::max(b, load.node_seconds / capacity.nodes);
  return b;
}

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

double one_more_bound(std::vector<double> holding_node, double other, size_t nodes) {
  if (nodes == 0 || other <= 0 || holding_node.size() < nodes) return 0;
  auto last = holding_node.begin() + static_cast<std::ptrdiff_t>(nodes - 1);
  std::nth_element(holding_node.begin(), last, holding_node.end(), std::greater<>());
  if (nodes == 1) return *last + other;
  return *last + std::min(other, *std::min_element(holding_node.begin(), last));
}

double lower_bound(const Problem& p) {
  double bound = 0;
  for (const Job& job : p.jobs) bound = std::max(bound, job.duration);
  bound = std::max(bound, bound_with(p, Sharing::by_memory));
  if (p.max_sharing > 1) bound = std::max(bound, bound_with(p, Sharing::by_count));
  return granular_bound(bound, duration_step(p));
}

double duration_step(const Problem& p) {
  constexpr double exact = 9007199254740992.0;  // 2^53: every whole number below it is a double
  std::uint64_t step = 0;
  for (const Job& job : p.jobs) {
    if (!(job.duration >= 0 && job.duration < exact) || job.duration != std::floor(job.duration)) return 0;
    step = std::gcd(step, static_cast<std::uint64_t>(job.duration));
  }
  return static_cast<double>(step);
}

double granular_bound(double bound, double step) {
  if (step <= 0 || bound <= 0) return bound;
  // 1e-9 of a step: a work bound that is a whole number of steps but for rounding stays that
  // number (below the bound by as little, so still below every schedule's makespan).
  return std::ceil(bound / step - 1e-9) * step;
}

}  // namespace gpuplan::solve
