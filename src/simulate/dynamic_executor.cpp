// The dynamic executor: wherever GPUs free up, the first waiting unit in dispatch order that
// the node can run on them starts there (as `exec --claims --fleet` does), one event at a time
// across the fleet.
#include <algorithm>
#include <functional>
#include <optional>
#include <queue>
#include <set>
#include <tuple>
#include <utility>

#include "simulate/replay.hpp"

namespace gpuplan::sim {

namespace {

using solve::GpuMask;

GpuMask all_gpus(size_t gpus) { return gpus >= 64 ? ~GpuMask{0} : solve::bit(static_cast<int>(gpus)) - 1; }

class Fleetwide {
 public:
  /// `last_start`: when the run's last unit starts (from an earlier run of the same durations),
  /// to explain where the time went; negative: no explaining.
  Fleetwide(const Replay& replay, const std::vector<double>& durations, double last_start = -1)
      : replay_(replay),
        last_start_(last_start),
        durations_(durations),
        held_(durations.size()),
        waiting_(static_cast<size_t>(replay.demands)) {
    size_t nodes = replay.node_units.size();
    result_.started_at.assign(durations.size(), 0);
    result_.ran_on.assign(durations.size(), -1);
    for (size_t n = 0; n < nodes; ++n) free_.push_back(all_gpus(replay.fleet->nodes[n].gpus.size()));
    all_ = free_;
    holding_.assign(nodes, false);
    for (size_t u = 0; u < durations.size(); ++u)
      waiting_[static_cast<size_t>(replay.demand_of[u])].insert(replay.dispatch_rank[u]);
    by_rank_.resize(durations.size());
    for (size_t u = 0; u < durations.size(); ++u) by_rank_[replay.dispatch_rank[u]] = u;
    if (explaining()) {
      result_.spent.resize(nodes);
      counts_.resize(nodes);
      marked_.assign(nodes, 0);
    }
  }

  RunResult run() {
    std::set<size_t> touched;
    for (size_t n = 0; n < free_.size(); ++n) touched.insert(n);
    double now = 0;
    while (true) {
      for (size_t n : touched)
        while (!holding_[n] && free_[n] && take(n, now)) {
        }
      if (explaining())
        for (size_t n : touched) classify(n);
      touched.clear();
      if (events_.empty()) break;
      now = std::get<0>(events_.top());
      // Everything ending at the same moment ends before anything starts.
      while (!events_.empty() && std::get<0>(events_.top()) == now) {
        auto [when, node, u] = events_.top();
        events_.pop();
        if (explaining() && touched.insert(node).second) account(node, now);
        free_[node] |= held_[u];
        if (replay_.holds_node[u]) holding_[node] = false;
        touched.insert(node);
      }
      result_.makespan = std::max(result_.makespan, now);
    }
    if (explaining())
      for (size_t n = 0; n < counts_.size(); ++n) account(n, result_.makespan);
    return result_;
  }

 private:
  using Event = std::tuple<double, size_t, size_t>;  // (when it ends, node it runs on, unit)

  /// Starts on `node`'s free GPUs the first waiting unit in dispatch order that fits there;
  /// false if none does. The first of each demand is the only one of it that can be first.
  bool take(size_t node, double now) {
    size_t type = static_cast<size_t>(replay_.index.type_of_node[node]);
    size_t types = replay_.index.types.size();
    const auto& links = replay_.index.types[type].links;
    std::optional<size_t> best;
    GpuMask best_gpus = 0;
    for (size_t d = 0; d < waiting_.size(); ++d) {
      GpuMask eligible = replay_.eligible[d * types + type];
      if (!eligible || waiting_[d].empty()) continue;
      size_t rank = *waiting_[d].begin();
      if (best && *best < rank) continue;
      auto gpus = dispatch_gpus(replay_.needs[d], eligible, free_[node], all_[node], links);
      if (!gpus) continue;
      best = rank;
      best_gpus = *gpus;
    }
    if (!best) return false;
    start(node, by_rank_[*best], best_gpus, now);
    return true;
  }

  void start(size_t node, size_t u, GpuMask gpus, double now) {
    result_.started_at[u] = now;
    result_.ran_on[u] = static_cast<int>(node);
    if (static_cast<size_t>(replay_.node_of[u]) != node) ++result_.taken_elsewhere;
    held_[u] = gpus;
    free_[node] &= ~gpus;
    if (replay_.holds_node[u]) holding_[node] = true;
    waiting_[static_cast<size_t>(replay_.demand_of[u])].erase(replay_.dispatch_rank[u]);
    events_.push({now + durations_[u], node, u});
  }

  bool explaining() const { return last_start_ >= 0; }

  /// Adds the node's GPU time since it was last accounted, by the reasons classify() found.
  void account(size_t node, double now) {
    double before = std::min(now, std::max(marked_[node], last_start_));
    double span = before - marked_[node], after = now - before;
    const TimeSpent& c = counts_[node];
    TimeSpent& s = result_.spent[node];
    s.working += c.working * (span + after);
    s.unfit += c.unfit * span;
    s.starved += c.starved * span;
    s.tail += (c.unfit + c.starved) * after;
    marked_[node] = now;
  }

  /// What each GPU of the node does now: works, or idles with units it may run waiting (none
  /// fits the free GPUs), or with none.
  void classify(size_t node) {
    TimeSpent c;
    double gpus = double(replay_.fleet->nodes[node].gpus.size());
    double idle = holding_[node] ? 0 : double(solve::count(free_[node]));
    c.working = gpus - idle;
    size_t type = static_cast<size_t>(replay_.index.type_of_node[node]);
    size_t types = replay_.index.types.size();
    bool any_waiting = false;
    for (size_t d = 0; d < waiting_.size() && !any_waiting; ++d)
      any_waiting = replay_.eligible[d * types + type] && !waiting_[d].empty();
    (any_waiting ? c.unfit : c.starved) = idle;
    counts_[node] = c;
  }

  const Replay& replay_;
  const double last_start_;
  const std::vector<double>& durations_;
  std::vector<GpuMask> held_;              ///< per unit, once started: its GPUs
  std::vector<std::set<size_t>> waiting_;  ///< per demand: dispatch ranks of the units not started
  std::vector<size_t> by_rank_;            ///< dispatch rank → unit
  std::vector<GpuMask> free_, all_;        ///< per node
  std::vector<bool> holding_;              ///< per node: a unit that holds it runs
  std::vector<TimeSpent> counts_;          ///< per node, explaining: its GPUs by what they do now
  std::vector<double> marked_;             ///< per node, explaining: accounted up to then
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  RunResult result_;
};

}  // namespace

TimeSpent& TimeSpent::operator+=(const TimeSpent& o) {
  working += o.working;
  unfit += o.unfit;
  starved += o.starved;
  tail += o.tail;
  return *this;
}

RunResult run_dynamic(const Replay& replay, const std::vector<double>& durations, bool explain) {
  RunResult result = Fleetwide(replay, durations).run();
  if (!explain) return result;
  double last_start = 0;
  for (double s : result.started_at) last_start = std::max(last_start, s);
  return Fleetwide(replay, durations, last_start).run();
}

}  // namespace gpuplan::sim
