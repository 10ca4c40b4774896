// The event-free list scheduler: per-node GPU free times and, per shape, a tree of node start times.
#include "solve/schedule.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cstdint>
#include <limits>
#include <numeric>
#include <optional>
#include <random>
#include <span>

#include "solve/insertion.hpp"

namespace gpuplan::solve {

namespace {

constexpr double never = std::numeric_limits<double>::infinity();

/// Jobs × nodes up to which the default plan also tries insertion (about a second at most on
/// the 2-core development machine; 10,000 jobs on 125 nodes took 4-6 s), and how many a second
/// of time limit buys.
constexpr double insertion_work_by_default = 2.5e5;
constexpr double insertion_work_per_second = 2.5e5;

/// The smallest of n keys and where it is (the lowest position on ties), updated in O(log n).
/// Eight children a node, each level's keys side by side (the leaves first, then their parents,
/// up to the root): a node's children are one cache line of keys, compared without branches, so
/// that an update costs about four lines, where a binary tree of 1,000 nodes cost twenty.
/// Each inner node keeps its subtree's smallest key and that key's position, read at the root.
class MinTree {
 public:
  explicit MinTree(size_t n) {
    // Each level padded to whole groups of eight (keys never, which no real key loses a tie to:
    // the padding lies to the right), up to a root of one.
    for (size_t len = std::max<size_t>(n, 1);; len = (len + arity - 1) / arity) {
      level_.push_back(key_.size());
      size_t width = len == 1 ? 1 : (len + arity - 1) / arity * arity;
      key_.resize(key_.size() + width, never);
      if (len == 1) break;
    }
    level_.push_back(key_.size());
    at_.assign(key_.size(), 0);
    std::fill_n(key_.begin(), n, 0.0);
    for (size_t l = 1; l + 1 < level_.size(); ++l)
      for (size_t i = 0; i < (level_[l] - level_[l - 1]) / arity; ++i) pull(l, i);
  }
  void set(size_t slot, double key) {
    if (key_[slot] == key) return;
    key_[slot] = key;
    // Up to the first ancestor whose smallest key and position stay what they were.
    for (size_t l = 1, i = slot / arity; l + 1 < level_.size(); ++l, i /= arity)
      if (!pull(l, i)) break;
  }
  double key(size_t slot) const { return key_[slot]; }
  double top() const { return key_[level_[level_.size() - 2]]; }
  size_t argmin() const { return level_.size() == 2 ? 0 : at_[level_[level_.size() - 2]]; }

 private:
  static constexpr size_t arity = 8;

  /// Node i of level l from its children (the leftmost of the smallest: the lowest position);
  /// whether it changed.
  bool pull(size_t l, size_t i) {
    const double* child = &key_[level_[l - 1] + i * arity];
    double least = child[0];
    for (size_t c = 1; c < arity; ++c) least = std::min(least, child[c]);
    unsigned ties = 0;
    for (size_t c = 0; c < arity; ++c) ties |= unsigned(child[c] == least) << c;
    size_t from = i * arity + static_cast<size_t>(std::countr_zero(ties));
    std::uint32_t at = l == 1 ? static_cast<std::uint32_t>(from) : at_[level_[l - 1] + from];
    size_t here = level_[l] + i;
    if (key_[here] == least && at_[here] == at) return false;
    key_[here] = least;
    at_[here] = at;
    return true;
  }

  std::vector<size_t> level_;  ///< where each level starts in key_ and at_, and the end
  std::vector<double> key_;
  std::vector<std::uint32_t> at_;  ///< per inner node, the position of its smallest key
};

bool is_wide(const Shape& shape) { return shape.occupancy == Occupancy::gpus && shape.gpus > 1; }

/// A node's GPUs in the order they are next free (ties: the lower index first).
struct GpusByFree {
  std::array<double, max_gpus_per_node> free;  // the first `count` are set
  std::array<int, max_gpus_per_node> gpu;
  int count = 0;

  explicit GpusByFree(const NodeView& view) : count(view.gpus) {
    for (int g = 0; g < count; ++g) {  // insertion sort: a node has a handful of GPUs
      double t = view.gpu_free[g];
      int at = g;
      for (; at > 0 && free[static_cast<size_t>(at - 1)] > t; --at) {
        free[static_cast<size_t>(at)] = free[static_cast<size_t>(at - 1)];
        gpu[static_cast<size_t>(at)] = gpu[static_cast<size_t>(at - 1)];
      }
      free[static_cast<size_t>(at)] = t;
      gpu[static_cast<size_t>(at)] = g;
    }
  }

  /// The k-th smallest (1-based) free time of the GPUs in `mask`: the k-th of them met in order.
  double kth(GpuMask mask, int k) const {
    for (int i = 0; i < count; ++i)
      if ((mask >> gpu[static_cast<size_t>(i)] & 1) && --k == 0) return free[static_cast<size_t>(i)];
    return never;
  }
};

/// earliest_start (gpu_choice.cpp), the same value, from the node's GPUs already in order of
/// their free times, which every shape of the node's type shares after a placement.
double earliest_start(const Shape& shape, const NodeView& view, const GpusByFree& by_free) {
  if (shape.occupancy != Occupancy::gpus) return earliest_start(shape, view);
  if (!shape.nvlink || shape.complete) return by_free.kth(shape.eligible, shape.gpus);
  double best = never;
  for (GpuMask island : shape.islands) best = std::min(best, by_free.kth(island, shape.gpus));
  for (GpuMask set : shape.cliques) {
    double last = 0;
    for (GpuMask m = set; m; m &= m - 1) last = std::max(last, view.gpu_free[std::countr_zero(m)]);
    best = std::min(best, last);
  }
  return best;
}

/// No GPU offers the start (it is never).
constexpr std::uint8_t no_witness = 0xff;

/// earliest_start (gpu_choice.cpp) for a shape that shares a GPU, the same value, and the first
/// GPU that offers it (`witness`): while that GPU is not placed on, the node's start stays.
double earliest_shared_start(const Shape& shape, const NodeView& view, std::uint8_t& witness) {
  double best = never;
  witness = no_witness;
  for (GpuMask m = shape.eligible; m; m &= m - 1) {
    int gpu = std::countr_zero(m);
    std::int64_t usable = shape.usable_mib[static_cast<size_t>(gpu)];
    // A shared unit starts no earlier than its GPU's frontier: such a GPU cannot offer less.
    if (usable == 0 || view.shares[gpu].frontier >= best) continue;
    double start = earliest_share(view.shares[gpu], shape.memory_mib, usable, view.max_sharing);
    if (start < best) best = start, witness = static_cast<std::uint8_t>(gpu);
  }
  return best;
}

/// How much of a node a job takes on its least demanding type, for ordering.
double width(const Problem& p, int demand) {
  double w = never;
  for (int s : p.demand_shapes[static_cast<size_t>(demand)]) {
    const Shape& shape = p.shapes[static_cast<size_t>(s)];
    const NodeType& type = p.fleet->types[static_cast<size_t>(shape.type)];
    switch (shape.occupancy) {
      case Occupancy::gpus: w = std::min(w, double(shape.gpus)); break;
      case Occupancy::whole_node: w = std::min(w, double(type.gpus)); break;
      case Occupancy::shared:
        for (std::int64_t usable : shape.usable_mib)
          if (usable > 0) w = std::min(w, std::min(1.0, double(shape.memory_mib) / double(usable)));
        break;
    }
  }
  return w;
}

/// How many GPUs a job could ever use: fewer means more constrained.
double reach(const Problem& p, int demand) {
  double r = 0;
  for (int s : p.demand_shapes[static_cast<size_t>(demand)]) {
    const Shape& shape = p.shapes[static_cast<size_t>(s)];
    r += double(count(shape.eligible)) * double(p.fleet->types[static_cast<size_t>(shape.type)].nodes.size());
  }
  return r;
}

/// The jobs `jobs` in each priority order: longest first; most GPU-seconds first; widest first;
/// most constrained first (ties: as listed, then job order).
std::vector<std::vector<int>> priority_orders(const Problem& p, const std::vector<int>& jobs) {
  size_t n = jobs.size();
  std::vector<double> demand_width(p.demand_shapes.size()), demand_reach(p.demand_shapes.size());
  for (size_t d = 0; d < p.demand_shapes.size(); ++d) {
    demand_width[d] = width(p, static_cast<int>(d));
    demand_reach[d] = reach(p, static_cast<int>(d));
  }
  // Sorting keys side by side with the job (not looked up through it) keeps the sorts cache-friendly.
  struct Keyed {
    double first, second, third;
    int job;
    bool operator<(const Keyed& o) const {
      if (first != o.first) return first < o.first;
      if (second != o.second) return second < o.second;
      if (third != o.third) return third < o.third;
      return job < o.job;
    }
  };
  // Durations from size defaults give a few distinct keys among many jobs: then the order is
  // the jobs of each key in turn (keys sorted), in the order they came, when that is job order
  // (ties fall by job, as in the sort). Nullopt when there are too many keys for that.
  auto bucketed = [&](const std::vector<Keyed>& keyed) -> std::optional<std::vector<int>> {
    constexpr size_t most_keys = 32;
    if (!std::is_sorted(jobs.begin(), jobs.end())) return std::nullopt;
    auto same = [](const Keyed& a, const Keyed& b) {
      return a.first == b.first && a.second == b.second && a.third == b.third;
    };
    std::vector<Keyed> keys;  // distinct, in order of appearance; .job counts the jobs
    std::vector<std::uint8_t> key_of(n);
    size_t last = 0;
    for (size_t i = 0; i < n; ++i) {
      if (keys.empty() || !same(keys[last], keyed[i])) {
        last = 0;
        while (last < keys.size() && !same(keys[last], keyed[i])) ++last;
        if (last == keys.size()) {
          if (keys.size() == most_keys) return std::nullopt;
          keys.push_back(keyed[i]);
          keys.back().job = 0;
        }
      }
      ++keys[last].job;
      key_of[i] = static_cast<std::uint8_t>(last);
    }
    std::vector<size_t> rank(keys.size());
    std::iota(rank.begin(), rank.end(), size_t{0});
    std::sort(rank.begin(), rank.end(), [&](size_t a, size_t b) {
      Keyed x = keys[a], y = keys[b];
      x.job = y.job = 0;
      return x < y;
    });
    std::vector<size_t> begin(keys.size());  // where each key's jobs start in the order
    for (size_t r = 0, at = 0; r < rank.size(); ++r) {
      begin[rank[r]] = at;
      at += static_cast<size_t>(keys[rank[r]].job);
    }
    std::vector<int> order(n);
    for (size_t i = 0; i < n; ++i) order[begin[key_of[i]]++] = keyed[i].job;
    return order;
  };
  auto sorted = [&](auto keys_of) {
    std::vector<Keyed> keyed(n);
    for (size_t i = 0; i < n; ++i) {
      const Job& job = p.jobs[static_cast<size_t>(jobs[i])];
      auto d = static_cast<size_t>(job.demand);
      keyed[i] = keys_of(job.duration, demand_width[d], demand_reach[d]);
      keyed[i].job = jobs[i];
    }
    if (auto order = bucketed(keyed)) return *order;
    std::sort(keyed.begin(), keyed.end());
    std::vector<int> order(n);
    for (size_t i = 0; i < n; ++i) order[i] = keyed[i].job;
    return order;
  };
  return {
      sorted([](double d, double w, double) {
        return Keyed{-d, -w, 0, 0};
      }),  // longest first
      sorted([](double d, double w, double) {
        return Keyed{-w * d, -d, 0, 0};
      }),  // most GPU-seconds first
      sorted([](double d, double w, double) {
        return Keyed{-w, -d, 0, 0};
      }),  // widest first
      sorted([](double d, double w, double r) {
        return Keyed{r, -d, -w, 0};
      }),  // most constrained first
  };
}

std::vector<std::vector<int>> priority_orders(const Problem& p) {
  std::vector<int> all(p.jobs.size());
  std::iota(all.begin(), all.end(), 0);
  return priority_orders(p, all);
}

}  // namespace

namespace {

/// The list scheduler between two placements: per GPU when it is next free (and under `pack`
/// what shares it), per shape a tree of its nodes' earliest starts, and the jobs still to come.
/// A copy resumes from the same point, so that the tail of an order can be tried several ways.
class ListState {
 public:
  explicit ListState(const Problem& p) : p_(&p) {
    const FleetIndex& fleet = *p.fleet;
    size_t node_count = fleet.type_of_node.size();
    first_gpu_.assign(node_count + 1, 0);
    for (size_t n = 0; n < node_count; ++n)
      first_gpu_[n + 1] =
          first_gpu_[n] + static_cast<size_t>(fleet.types[static_cast<size_t>(fleet.type_of_node[n])].gpus);
    gpu_free_.assign(first_gpu_.back(), 0);
    bool sharing = std::any_of(p.shapes.begin(), p.shapes.end(),
                               [](const Shape& shape) { return shape.occupancy == Occupancy::shared; });
    shares_.resize(sharing ? first_gpu_.back() : 0);
    shapes_of_type_.resize(fleet.types.size());
    local_.resize(p.shapes.size());
    for (size_t s = 0; s < p.shapes.size(); ++s) {
      size_t type = static_cast<size_t>(p.shapes[s].type);
      trees_.emplace_back(fleet.types[type].nodes.size());
      local_[s] = shapes_of_type_[type].size();
      shapes_of_type_[type].push_back(static_cast<int>(s));
    }
    known_.resize(fleet.types.size());
    for (size_t type = 0; type < fleet.types.size(); ++type)
      known_[type].resize(fleet.types[type].nodes.size() * shapes_of_type_[type].size());
    // Jobs still to place per shape (a shape nobody needs any more is not kept up to date),
    // and wide jobs still to come per type (while there are some, GPU choice keeps NVLink groups whole).
    waiting_.assign(p.shapes.size(), 0);
    wide_waiting_.assign(fleet.types.size(), 0);
    for (const Job& job : p.jobs)
      for (int s : p.demand_shapes[static_cast<size_t>(job.demand)]) {
        ++waiting_[static_cast<size_t>(s)];
        if (is_wide(p.shapes[static_cast<size_t>(s)]))
          ++wide_waiting_[static_cast<size_t>(p.shapes[static_cast<size_t>(s)].type)];
      }
  }

  double makespan() const { return makespan_; }

  /// Shape `s`'s tree with its smallest key fresh: stale keys from the smallest up found anew.
  const MinTree& fresh_tree(int s) {
    const Problem& p = *p_;
    const Shape& shape = p.shapes[static_cast<size_t>(s)];
    const NodeType& type = p.fleet->types[static_cast<size_t>(shape.type)];
    MinTree& tree = trees_[static_cast<size_t>(s)];
    std::vector<Known>& known = known_[static_cast<size_t>(shape.type)];
    size_t shapes = shapes_of_type_[static_cast<size_t>(shape.type)].size(),
           local = local_[static_cast<size_t>(s)];
    for (size_t slot = tree.argmin(); slot < type.nodes.size(); slot = tree.argmin()) {
      Known& entry = known[slot * shapes + local];
      if (!entry.stale) break;
      entry.stale = 0;
      size_t base = first_gpu_[static_cast<size_t>(type.nodes[slot])];
      NodeView view{&gpu_free_[base], shares_.empty() ? nullptr : &shares_[base], p.max_sharing, &type.links,
                    type.gpus};
      switch (shape.occupancy) {
        case Occupancy::gpus: tree.set(slot, earliest_start(shape, view, GpusByFree(view))); break;
        case Occupancy::whole_node: tree.set(slot, earliest_start(shape, view)); break;
        case Occupancy::shared: tree.set(slot, earliest_shared_start(shape, view, entry.witness)); break;
      }
    }
    return tree;
  }

  /// Places job `j` at the earliest start any node offers it (ties: the first node).
  Placement place(int j) {
    const Problem& p = *p_;
    const FleetIndex& fleet = *p.fleet;
    const Job& job = p.jobs[static_cast<size_t>(j)];
    const auto& candidates = p.demand_shapes[static_cast<size_t>(job.demand)];
    double start = never;
    int node = -1, chosen = -1;
    for (int s : candidates) {
      const MinTree& tree = fresh_tree(s);
      double key = tree.top();
      if (key > start) continue;
      int n = fleet.types[static_cast<size_t>(p.shapes[static_cast<size_t>(s)].type)].nodes[tree.argmin()];
      if (key < start || n < node) start = key, node = n, chosen = s;
    }
    for (int s : candidates) {
      --waiting_[static_cast<size_t>(s)];
      if (is_wide(p.shapes[static_cast<size_t>(s)]))
        --wide_waiting_[static_cast<size_t>(p.shapes[static_cast<size_t>(s)].type)];
    }

    const Shape& shape = p.shapes[static_cast<size_t>(chosen)];
    const NodeType& type = fleet.types[static_cast<size_t>(shape.type)];
    size_t base = first_gpu_[static_cast<size_t>(node)];
    NodeView view{&gpu_free_[base], shares_.empty() ? nullptr : &shares_[base], p.max_sharing, &type.links,
                  type.gpus};
    GpuMask gpus = choose_gpus(shape, view, start, wide_waiting_[static_cast<size_t>(shape.type)] > 0);
    double end = start + job.duration;
    GpuMask touched = shape.occupancy == Occupancy::shared ? gpus
                      : shape.occupancy == Occupancy::whole_node
                          ? (type.gpus == 64 ? ~GpuMask{0} : bit(type.gpus) - 1)
                          : gpus;
    std::array<double, max_gpus_per_node> before;  // the touched GPUs' free times before it
    for (GpuMask m = touched; m; m &= m - 1) {
      auto gpu = static_cast<size_t>(std::countr_zero(m));
      before[gpu] = gpu_free_[base + gpu];
    }
    if (shape.occupancy == Occupancy::shared) {
      auto gpu = static_cast<size_t>(std::countr_zero(gpus));
      std::int64_t need = std::min(shape.memory_mib, shape.usable_mib[gpu]);
      add_share(shares_[base + gpu], start, end, need);
      gpu_free_[base + gpu] = std::max(gpu_free_[base + gpu], end);
    } else {
      for (GpuMask m = touched; m; m &= m - 1) {
        auto gpu = static_cast<size_t>(std::countr_zero(m));
        gpu_free_[base + gpu] = end;
        if (!shares_.empty()) shares_[base + gpu] = {end, {}};
      }
    }
    makespan_ = std::max(makespan_, end);
    // The node's earliest start for each shape of its type is found when a job of that shape looks
    // for a node, not now: most shapes (under pack, one a memory slice) are not asked for again
    // before the node changes once more. Only the shapes whose start the placement can have moved
    // are marked: a start stays while the GPUs it was found on are untouched.
    size_t slot = static_cast<size_t>(fleet.slot_of_node[static_cast<size_t>(node)]);
    const auto& shapes = shapes_of_type_[static_cast<size_t>(shape.type)];
    Known* row = &known_[static_cast<size_t>(shape.type)][slot * shapes.size()];
    for (size_t local = 0; local < shapes.size(); ++local) {
      auto s = static_cast<size_t>(shapes[local]);
      if (row[local].stale || waiting_[s] == 0) continue;
      const Shape& other = p.shapes[s];
      bool moved = false;
      switch (other.occupancy) {
        case Occupancy::shared:  // its start is the witness GPU's
          moved = row[local].witness == no_witness || (touched >> row[local].witness & 1);
          break;
        case Occupancy::gpus: {  // the GPUs it was found on were free by then, and are untouched
          double key = trees_[s].key(slot);
          for (GpuMask m = touched & other.eligible; m && !moved; m &= m - 1)
            moved = before[static_cast<size_t>(std::countr_zero(m))] <= key;
          break;
        }
        case Occupancy::whole_node: {  // the latest free time of the node's GPUs
          double key = trees_[s].key(slot);
          for (GpuMask m = touched; m && !moved; m &= m - 1)
            moved = gpu_free_[base + static_cast<size_t>(std::countr_zero(m))] > key;
          break;
        }
      }
      row[local].stale = moved;
    }
    return {node, gpus, start};
  }

 private:
  const Problem* p_;
  std::vector<size_t> first_gpu_;
  std::vector<double> gpu_free_;
  std::vector<GpuShare> shares_;
  std::vector<MinTree> trees_;
  /// What is known of a node's key in a shape's tree. `stale`: the node was placed on since the
  /// key was found, in a way that can have moved it. A placement only ever delays a node's
  /// earliest start, so a stale key is a lower bound: once the smallest key is fresh, it is the
  /// earliest start, on the node the tree would name had every key been fresh.
  struct Known {
    std::uint8_t stale = 0;
    std::uint8_t witness = no_witness;  ///< under Occupancy::shared: the GPU that offers the key
  };
  /// Per type, per node (in slot order), per shape of the type (its `local_` index): side by side,
  /// so that a placement marks the shapes of its node in one row.
  std::vector<std::vector<Known>> known_;
  std::vector<std::vector<int>> shapes_of_type_;
  std::vector<size_t> local_;  ///< per shape, its index in shapes_of_type_
  std::vector<long> waiting_, wide_waiting_;
  double makespan_ = 0;
};

/// The last jobs of an order, as shares of all jobs, whose placement the tail pass tries again:
/// long tails first, then shorter ones within the improved order. Up to `small_problem` jobs,
/// fine steps on every priority order (a few hundredths of a second); up to `large_problem`,
/// coarser steps on the two best orders; beyond, short tails of the best order only, so that a
/// million units cost about a tenth more than the list schedules themselves (the tail matters
/// less there: a million units end within 0.01% of the bound).
constexpr double fine_tail_shares[] = {0.5, 0.3, 0.2, 0.1, 0.05, 0.03, 0.02, 0.01, 0.005, 0.002};
constexpr double coarse_tail_shares[] = {0.5, 0.25, 0.1, 0.03, 0.01};
constexpr double short_tail_shares[] = {0.1, 0.03, 0.01};
constexpr size_t small_problem = 20'000;
constexpr size_t large_problem = 200'000;

std::span<const double> tail_shares(size_t jobs) {
  if (jobs <= small_problem) return fine_tail_shares;
  if (jobs <= large_problem) return coarse_tail_shares;
  return short_tail_shares;
}

/// Improves `schedule` (made by list scheduling `order`) at its end, where a list schedule
/// loses most: for each tail share, the jobs before the tail stay where they are and the
/// tail's jobs are placed again in each priority order from the state the others left (wide
/// units first, say, so that the last gaps fill with narrow ones); a better tail is kept, and
/// the next, shorter tail is tried within the improved order. Each try costs the tail's
/// placements only; the result depends only on the problem.
void improve_tail(const Problem& p, const std::vector<std::vector<int>>& orders, std::vector<int> order,
                  Schedule& schedule, double bound) {
  size_t n = order.size();
  ListState state(p);
  size_t placed = 0;
  std::vector<char> in_tail(p.jobs.size());
  for (double share : tail_shares(n)) {
    auto tail = static_cast<size_t>(double(n) * share);
    if (tail < 2 || tail >= n) continue;
    for (; placed < n - tail; ++placed) state.place(order[placed]);
    // No tail can end before the jobs already placed, nor any schedule before the bound.
    if (state.makespan() >= schedule.makespan || schedule.makespan <= bound) return;
    // The tail in each priority order: each order is a strict total order (job order breaks
    // ties), so the tail's jobs as they stand in the order of all jobs are the tail sorted by it,
    // found in one pass instead of a sort.
    std::fill(in_tail.begin(), in_tail.end(), 0);
    for (size_t i = placed; i < n; ++i) in_tail[static_cast<size_t>(order[i])] = 1;
    for (const auto& all : orders) {
      std::vector<int> tried;
      tried.reserve(tail);
      for (int j : all)
        if (in_tail[static_cast<size_t>(j)]) tried.push_back(j);
      ListState from = state;
      std::vector<Placement> placements;
      placements.reserve(tail);
      for (int j : tried) placements.push_back(from.place(j));
      if (from.makespan() >= schedule.makespan) continue;
      schedule.makespan = from.makespan();
      for (size_t i = 0; i < tail; ++i) schedule.placements[static_cast<size_t>(tried[i])] = placements[i];
      std::copy(tried.begin(), tried.end(), order.begin() + static_cast<std::ptrdiff_t>(placed));
    }
  }
}

}  // namespace

Schedule list_schedule(const Problem& p, const std::vector<int>& order) {
  ListState state(p);
  Schedule result;
  result.placements.resize(p.jobs.size());
  for (int j : order) result.placements[static_cast<size_t>(j)] = state.place(j);
  result.makespan = state.makespan();
  return result;
}

std::vector<int> longest_first(const Problem& p) { return priority_orders(p).front(); }

Schedule best_schedule(const Problem& p, double time_limit_s, double bound) {
  auto began = std::chrono::steady_clock::now();
  Schedule best;
  bool first = true;
  auto keep = [&](Schedule candidate) {
    if (first || candidate.makespan < best.makespan) best = std::move(candidate), first = false;
  };
  // A schedule that ends at the bound is the answer: every step below keeps a schedule only
  // when it is strictly shorter, so stopping there changes nothing but the time taken.
  auto at_bound = [&] { return !first && best.makespan <= bound; };
  auto orders = priority_orders(p);
  // Every order's list schedule; then the tails of the best `tries` are tried again (a good tail
  // often follows another order's beginning: widest first, then longest first, say). Only those
  // are kept, best first (the earlier order first among equals): the others cannot win, as
  // improve_tail never makes a schedule longer; a million jobs' schedule is 24 MB.
  size_t tries = p.jobs.size() <= small_problem ? orders.size() : p.jobs.size() <= large_problem ? 2 : 1;
  std::vector<std::pair<Schedule, size_t>> ranked;  // with the index of its order
  for (size_t o = 0; o < orders.size(); ++o) {
    Schedule listed = list_schedule(p, orders[o]);
    if (listed.makespan <= bound) {  // none before it was; it is the first of those that are
      keep(std::move(listed));
      return best;
    }
    auto at = std::find_if(ranked.begin(), ranked.end(),
                           [&](const auto& r) { return listed.makespan < r.first.makespan; });
    if (static_cast<size_t>(at - ranked.begin()) >= tries) continue;
    ranked.insert(at, {std::move(listed), o});
    if (ranked.size() > tries) ranked.pop_back();
  }
  for (auto& [listed, o] : ranked) {
    if (at_bound()) return best;
    improve_tail(p, orders, orders[o], listed, bound);
    keep(std::move(listed));
  }
  if (at_bound()) return best;
  // Longest first with insertion fills the gaps wide units leave, but looks at every node for
  // every job: by default only while that stays small, with a time limit as far as it affords.
  double work = double(p.jobs.size()) * double(p.fleet->type_of_node.size());
  if (work <= insertion_work_by_default || work <= insertion_work_per_second * time_limit_s)
    keep(insertion_schedule(p, orders.front()));
  if (time_limit_s <= 0 || p.jobs.empty()) return best;

  // Within the budget: longest first again, with durations blurred a little, so that near-ties
  // fall differently. A fixed seed: each try is the same from run to run.
  std::mt19937_64 random(20260601);
  std::vector<int> order(p.jobs.size());
  std::vector<double> blurred(p.jobs.size());
  for (double spread = 0.02;; spread = std::min(0.3, spread * 1.25)) {
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    if (elapsed >= time_limit_s || at_bound()) break;
    std::uniform_real_distribution<double> noise(1 - spread, 1 + spread);
    for (size_t j = 0; j < p.jobs.size(); ++j) blurred[j] = p.jobs[j].duration * noise(random);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
      return blurred[static_cast<size_t>(a)] > blurred[static_cast<size_t>(b)];
    });
    keep(list_schedule(p, order));
  }
  return best;
}

}  // namespace gpuplan::solve
