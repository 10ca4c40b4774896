// The static executor: every node runs its own planned list, in ExecSchedule's order.
#include <algorithm>
#include <functional>
#include <queue>
#include <utility>

#include "gpuplan/run.hpp"
#include "simulate/replay.hpp"

namespace gpuplan::sim {

RunResult run_static(const Replay& replay, const std::vector<double>& durations) {
  RunResult result;
  result.started_at.assign(durations.size(), 0);
  using Finish = std::pair<double, size_t>;  // (when, position in the node's list)
  for (size_t n = 0; n < replay.node_units.size(); ++n) {
    const auto& units = replay.node_units[n];
    if (units.empty()) continue;
    ExecSchedule schedule(replay.node_lists[n], replay.policy);
    std::priority_queue<Finish, std::vector<Finish>, std::greater<>> running;
    double now = 0;
    while (true) {
      // A start can make others ready at once (a pack plan's units that share a GPU).
      for (auto ready = schedule.ready(); !ready.empty(); ready = schedule.ready()) {
        for (size_t k : ready) {
          schedule.started(k);
          result.started_at[units[k]] = now;
          running.push({now + durations[units[k]], k});
        }
      }
      if (running.empty()) break;
      now = running.top().first;
      // Everything ending at the same moment ends before anything starts.
      while (!running.empty() && running.top().first == now) {
        schedule.finished(running.top().second);
        running.pop();
      }
      result.makespan = std::max(result.makespan, now);
    }
  }
  return result;
}

}  // namespace gpuplan::sim
