// The dynamic executor: each node runs its own list, and GPUs with nothing of their own left
// take units planned elsewhere (as `exec --claims` does), one event at a time across the fleet.
#include <algorithm>
#include <bit>
#include <functional>
#include <limits>
#include <optional>
#include <queue>
#include <set>
#include <tuple>
#include <utility>

#include "gpuplan/run.hpp"
#include "simulate/replay.hpp"
#include "solve/gpu_choice.hpp"

namespace gpuplan::sim {

namespace {

using solve::GpuMask;

constexpr double never = std::numeric_limits<double>::infinity();

GpuMask all_gpus(int gpus) { return gpus >= 64 ? ~GpuMask{0} : solve::bit(gpus) - 1; }

GpuMask mask_of(const std::vector<int>& gpus) {
  GpuMask mask = 0;
  for (int g : gpus) mask |= solve::bit(g);
  return mask;
}

/// The `count` lowest GPUs of `mask`.
GpuMask lowest(GpuMask mask, int count) {
  GpuMask taken = 0;
  for (; count > 0 && mask; --count, mask &= mask - 1) taken |= mask & -mask;
  return taken;
}

class Fleetwide {
 public:
  Fleetwide(const Replay& replay, const std::vector<double>& durations)
      : replay_(replay),
        durations_(durations),
        started_(durations.size()),
        position_(durations.size()),
        held_(durations.size()),
        waiting_(static_cast<size_t>(replay.demands)) {
    result_.started_at.assign(durations.size(), 0);
    size_t nodes = replay.node_units.size();
    for (size_t n = 0; n < nodes; ++n) {
      schedules_.emplace_back(replay.dynamic_lists[n]);
      size_t gpus = replay.fleet->nodes[n].gpus.size();
      busy_.emplace_back(gpus, 0);
      own_left_.emplace_back(gpus, 0);
      for (const auto& a : replay.dynamic_lists[n])
        for (int g : a.gpus) ++own_left_[n][static_cast<size_t>(g)];
      for (size_t k = 0; k < replay.dynamic_units[n].size(); ++k) position_[replay.dynamic_units[n][k]] = k;
    }
    holders_running_.assign(nodes, 0);
    running_ends_.resize(nodes);
    planned_end_.resize(durations.size());
    for (size_t u = 0; u < durations.size(); ++u)
      waiting_[static_cast<size_t>(replay.demand_of[u])].insert({priority(u), u});
  }

  RunResult run() {
    std::set<size_t> touched;
    for (size_t n = 0; n < replay_.node_units.size(); ++n) touched.insert(n);
    double now = 0;
    while (true) {
      for (size_t n : touched) start_own(n, now);
      for (size_t n : touched) start_foreign(n, now);
      touched.clear();
      if (events_.empty()) break;
      now = std::get<0>(events_.top());
      // Everything ending at the same moment ends before anything starts.
      while (!events_.empty() && std::get<0>(events_.top()) == now) {
        auto [when, node, u] = events_.top();
        events_.pop();
        end(node, u);
        touched.insert(node);
      }
      result_.makespan = std::max(result_.makespan, now);
    }
    return result_;
  }

 private:
  using Event = std::tuple<double, size_t, size_t>;  // (when it ends, node it runs on, unit)

  /// Foreign units are taken longest planned first.
  double priority(size_t u) const { return -replay_.planned_seconds[u]; }

  void start(size_t node, size_t u, GpuMask gpus, double now) {
    started_[u] = true;
    result_.started_at[u] = now;
    held_[u] = gpus;
    waiting_[static_cast<size_t>(replay_.demand_of[u])].erase({priority(u), u});
    for (GpuMask m = gpus; m; m &= m - 1) ++busy_[node][static_cast<size_t>(std::countr_zero(m))];
    if (replay_.holds_node[u]) ++holders_running_[node];
    running_ends_[node].insert(now + replay_.planned_seconds[u]);
    planned_end_[u] = now + replay_.planned_seconds[u];
    events_.push({now + durations_[u], node, u});
  }

  void end(size_t node, size_t u) {
    for (GpuMask m = held_[u]; m; m &= m - 1) --busy_[node][static_cast<size_t>(std::countr_zero(m))];
    if (replay_.holds_node[u]) --holders_running_[node];
    running_ends_[node].erase(running_ends_[node].find(planned_end_[u]));
    if (static_cast<size_t>(replay_.node_of[u]) == node) schedules_[node].finished(position_[u]);
  }

  /// The node's own units, as ExecSchedule lets them start; those taken elsewhere are skipped.
  void start_own(size_t node, double now) {
    const auto& units = replay_.dynamic_units[node];
    auto& schedule = schedules_[node];
    for (bool again = true; again;) {
      again = false;
      for (size_t k : schedule.ready()) {
        size_t u = units[k];
        const auto& gpus = replay_.dynamic_lists[node][k].gpus;
        // A unit taken from elsewhere still holds one of its GPUs: it waits, as `exec` waits
        // for the GPU's lock.
        bool blocked = !started_[u] && std::any_of(gpus.begin(), gpus.end(), [&](int g) {
          return busy_[node][static_cast<size_t>(g)] != 0;
        });
        if (blocked) continue;
        for (int g : gpus) --own_left_[node][static_cast<size_t>(g)];
        schedule.started(k);
        if (started_[u]) {
          schedule.finished(k);
          again = true;
          continue;
        }
        start(node, u, mask_of(gpus), now);
        again = true;
      }
    }
  }

  /// GPUs with none of the node's own units left and nothing running take foreign units.
  /// With backfilling, GPUs whose own next unit waits for others still running on the node
  /// also take foreign units planned to end before those are planned to.
  void start_foreign(size_t node, double now) {
    const Node& n = replay_.fleet->nodes[node];
    while (holders_running_[node] == 0) {
      GpuMask free = 0, waiting = 0;
      for (size_t g = 0; g < n.gpus.size(); ++g) {
        if (busy_[node][g] != 0) continue;
        (own_left_[node][g] == 0 ? free : waiting) |= solve::bit(static_cast<int>(g));
      }
      if (take(node, free, never, now)) continue;
      if (!(free | waiting) || running_ends_[node].empty()) return;
      double slack = *running_ends_[node].rbegin() - now;
      if (slack <= 0 || !take(node, free | waiting, slack, now)) return;
    }
  }

  /// Starts on `available` GPUs of `node` the best foreign unit planned to take at most `longest`; false if
  /// none fits.
  bool take(size_t node, GpuMask available, double longest, double now) {
    if (!available) return false;
    const Node& n = replay_.fleet->nodes[node];
    int type = replay_.index.type_of_node[node];
    const auto& links = replay_.index.types[static_cast<size_t>(type)].links;
    size_t types = replay_.index.types.size();
    std::optional<std::pair<double, size_t>> best;
    GpuMask best_gpus = 0;
    for (size_t d = 0; d < waiting_.size(); ++d) {
      GpuMask eligible = replay_.eligible[d * types + static_cast<size_t>(type)];
      if (!eligible || waiting_[d].empty()) continue;
      auto first = waiting_[d].lower_bound({-longest, 0});
      if (first == waiting_[d].end() || (best && *best < *first)) continue;
      auto gpus =
          fit(d, first->second, eligible & available, available, links, static_cast<int>(n.gpus.size()));
      if (!gpus) continue;
      best = *first;
      best_gpus = *gpus;
    }
    if (!best) return false;
    if (static_cast<size_t>(replay_.node_of[best->second]) != node) ++result_.taken_elsewhere;
    start(node, best->second, best_gpus, now);
    return true;
  }

  /// The GPUs unit `u` (of demand `d`) takes here, within `available`; nullopt when it does not fit.
  std::optional<GpuMask> fit(size_t d, size_t u, GpuMask available, GpuMask free,
                             const std::vector<GpuMask>& links, int gpus) const {
    if (replay_.holds_node[u]) {
      if (free != all_gpus(gpus)) return std::nullopt;
      return all_gpus(gpus);
    }
    int needed = replay_.gpus_needed[d];
    if (solve::count(available) < needed) return std::nullopt;
    if (!replay_.nvlink[d] || needed < 2) return lowest(available, needed);
    auto sets = solve::cliques_of(links, available, needed, 1);
    if (sets.empty()) return std::nullopt;
    return sets.front();
  }

  const Replay& replay_;
  const std::vector<double>& durations_;
  std::vector<bool> started_;
  std::vector<size_t> position_;  ///< per unit: where it is in its node's list
  std::vector<GpuMask> held_;
  std::vector<std::set<std::pair<double, size_t>>> waiting_;  ///< per demand: (−planned seconds, unit)
  std::vector<ExecSchedule> schedules_;
  std::vector<std::vector<int>> busy_, own_left_;
  std::vector<int> holders_running_;
  std::vector<std::multiset<double>> running_ends_;  ///< per node: when its running units are planned to end
  std::vector<double> planned_end_;                  ///< per unit, once started
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  RunResult result_;
};

}  // namespace

RunResult run_dynamic(const Replay& replay, const std::vector<double>& durations) {
  return Fleetwide(replay, durations).run();
}

}  // namespace gpuplan::sim
