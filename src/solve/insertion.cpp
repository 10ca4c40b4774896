// Insertion list scheduling: per GPU its busy intervals, per node the earliest idle moment.
#include "solve/insertion.hpp"

#include <algorithm>
#include <bit>
#include <limits>
#include <stdexcept>

namespace gpuplan::solve {

namespace {

constexpr double never = std::numeric_limits<double>::infinity();

struct Interval {
  double start, end;
  bool operator<(const Interval& o) const { return start < o.start; }
};

/// Busy intervals of each GPU of each node, and the earliest moment any GPU of a node is idle.
class Timeline {
 public:
  Timeline(const FleetIndex& fleet) : fleet_(fleet) {
    size_t nodes = fleet.type_of_node.size();
    first_gpu_.assign(nodes + 1, 0);
    for (size_t n = 0; n < nodes; ++n)
      first_gpu_[n + 1] =
          first_gpu_[n] + static_cast<size_t>(fleet.types[static_cast<size_t>(fleet.type_of_node[n])].gpus);
    busy_.resize(first_gpu_.back());
    idle_from_.assign(nodes, 0);
  }

  double idle_from(int node) const { return idle_from_[static_cast<size_t>(node)]; }

  /// Whether GPU `g` of `node` is idle over [start, end).
  bool idle(int node, int g, double start, double end) const {
    const auto& busy = gpu(node, g);
    auto after = std::upper_bound(busy.begin(), busy.end(), Interval{start, start});
    if (after != busy.end() && after->start < end) return false;
    return after == busy.begin() || std::prev(after)->end <= start;
  }

  /// The moments a job may start at on `node` from `from` on: `from` and the ends of busy intervals.
  void moments(int node, double from, std::vector<double>& out) const {
    out.assign(1, from);
    int gpus = fleet_.types[static_cast<size_t>(fleet_.type_of_node[static_cast<size_t>(node)])].gpus;
    for (int g = 0; g < gpus; ++g)
      for (const Interval& i : gpu(node, g))
        if (i.end > from) out.push_back(i.end);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }

  /// When GPU `g` of `node` was last busy before `start` (its idle time runs from then).
  double free_since(int node, int g, double start) const {
    const auto& busy = gpu(node, g);
    auto after = std::upper_bound(busy.begin(), busy.end(), Interval{start, start});
    return after == busy.begin() ? 0 : std::prev(after)->end;
  }

  void hold(int node, GpuMask gpus, double start, double end) {
    for (GpuMask m = gpus; m; m &= m - 1) {
      auto& busy = gpu(node, std::countr_zero(m));
      busy.insert(std::upper_bound(busy.begin(), busy.end(), Interval{start, end}), Interval{start, end});
    }
    int count = fleet_.types[static_cast<size_t>(fleet_.type_of_node[static_cast<size_t>(node)])].gpus;
    double earliest = never;
    for (int g = 0; g < count; ++g) {
      double t = 0;
      for (const Interval& i : gpu(node, g)) {
        if (i.start > t) break;
        t = std::max(t, i.end);
      }
      earliest = std::min(earliest, t);
    }
    idle_from_[static_cast<size_t>(node)] = earliest;
  }

 private:
  const std::vector<Interval>& gpu(int node, int g) const {
    return busy_[first_gpu_[static_cast<size_t>(node)] + static_cast<size_t>(g)];
  }
  std::vector<Interval>& gpu(int node, int g) {
    return busy_[first_gpu_[static_cast<size_t>(node)] + static_cast<size_t>(g)];
  }

  const FleetIndex& fleet_;
  std::vector<size_t> first_gpu_;
  std::vector<std::vector<Interval>> busy_;
  std::vector<double> idle_from_;
};

/// Whether `idle` (the GPUs idle over the whole run) holds a set fitting `shape`.
bool fits(const Shape& shape, GpuMask idle, int type_gpus) {
  GpuMask all = type_gpus == 64 ? ~GpuMask{0} : bit(type_gpus) - 1;
  switch (shape.occupancy) {
    case Occupancy::whole_node: return (idle & all) == all;
    case Occupancy::shared: return (idle & shape.eligible) != 0;
    case Occupancy::gpus: break;
  }
  GpuMask usable = idle & shape.eligible;
  if (count(usable) < shape.gpus) return false;
  if (!shape.nvlink || shape.complete) return true;
  for (GpuMask island : shape.islands)
    if (count(island & usable) >= shape.gpus) return true;
  for (GpuMask set : shape.cliques)
    if ((set & usable) == set) return true;
  return false;
}

}  // namespace

Schedule insertion_schedule(const Problem& p, const std::vector<int>& order) {
  const FleetIndex& fleet = *p.fleet;
  Timeline timeline(fleet);
  Schedule result;
  result.placements.resize(p.jobs.size());
  std::vector<double> moments, free_since(max_gpus_per_node);
  for (int j : order) {
    const Job& job = p.jobs[static_cast<size_t>(j)];
    double best = never;
    int best_node = -1, best_shape = -1;
    GpuMask best_idle = 0;
    for (int s : p.demand_shapes[static_cast<size_t>(job.demand)]) {
      const Shape& shape = p.shapes[static_cast<size_t>(s)];
      const NodeType& type = fleet.types[static_cast<size_t>(shape.type)];
      for (int node : type.nodes) {
        double from = timeline.idle_from(node);
        if (from > best || (from == best && node > best_node)) continue;
        timeline.moments(node, from, moments);
        for (double t : moments) {
          if (t > best || (t == best && node > best_node)) break;
          GpuMask idle = 0;
          for (int g = 0; g < type.gpus; ++g)
            if (timeline.idle(node, g, t, t + job.duration)) idle |= bit(g);
          if (!fits(shape, idle, type.gpus)) continue;
          best = t, best_node = node, best_shape = s, best_idle = idle;
          break;
        }
      }
    }
    if (best_shape < 0)  // eligibility promised a node of some shape
      throw std::logic_error("insertion_schedule: no node fits a unit its shapes allow");
    const Shape& shape = p.shapes[static_cast<size_t>(best_shape)];
    const NodeType& type = fleet.types[static_cast<size_t>(shape.type)];
    // choose_gpus sees the idle GPUs as free since their last unit ended, the others as busy.
    for (int g = 0; g < type.gpus; ++g)
      free_since[static_cast<size_t>(g)] =
          best_idle >> g & 1 ? timeline.free_since(best_node, g, best) : never;
    Shape whole = shape;
    if (whole.occupancy == Occupancy::shared) whole.occupancy = Occupancy::gpus, whole.gpus = 1;
    NodeView view{free_since.data(), nullptr, 1, &type.links, type.gpus};
    GpuMask gpus = choose_gpus(whole, view, best, true);
    GpuMask held = shape.occupancy == Occupancy::whole_node
                       ? (type.gpus == 64 ? ~GpuMask{0} : bit(type.gpus) - 1)
                       : gpus;
    timeline.hold(best_node, held, best, best + job.duration);
    result.placements[static_cast<size_t>(j)] = {best_node, gpus, best};
    result.makespan = std::max(result.makespan, best + job.duration);
  }
  return result;
}

}  // namespace gpuplan::solve
