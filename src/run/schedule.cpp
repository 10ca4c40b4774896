// The order `exec` starts a node's units in: a dependency count per unit, lowered by events.
#include <algorithm>
#include <map>

#include "gpuplan/run.hpp"

namespace gpuplan {

namespace {

constexpr double tolerance_s = 1e-6;

/// A unit's place in the queue of one GPU, in plan order.
struct Slot {
  size_t unit;
  double start, end;
  bool holder;
  bool shares;  ///< may run beside others on its GPU (a pack plan's single-GPU unit of known memory)
};

}  // namespace

// On one GPU's queue u1, u2, ... (starts ascending) unit k may start when every earlier unit
// has started and each earlier unit j the plan ends by k's start has finished. "Started" is
// one edge from the previous unit (it could only start after the ones before it). "Finished"
// is one edge from j to the first later unit planned to start at or after j's end: every
// unit after that one waits for it to start, so for j too. Only units that share their GPU
// (shares_gpu) run beside each other so: any other unit finishes before the next on its GPU
// starts, whatever the times say (a unit planned to last 0 s, or times that overlap by a
// rounding, had run two units on one GPU at once). A holder of the whole node finishes before
// the next unit on any GPU starts, and starts after all before it finished.
ExecSchedule::ExecSchedule(const std::vector<Assignment>& units, Policy policy)
    : after_start_(units.size()),
      after_finish_(units.size()),
      waiting_(units.size()),
      started_(units.size()) {
  std::vector<int> node_gpus;
  for (const auto& a : units) node_gpus.insert(node_gpus.end(), a.gpus.begin(), a.gpus.end());
  std::sort(node_gpus.begin(), node_gpus.end());
  node_gpus.erase(std::unique(node_gpus.begin(), node_gpus.end()), node_gpus.end());
  if (node_gpus.empty()) node_gpus.push_back(0);

  std::map<int, std::vector<Slot>> queues;
  for (size_t i = 0; i < units.size(); ++i) {
    bool holder = holds_whole_node(units[i], policy);
    for (int gpu : holder ? node_gpus : units[i].gpus)
      queues[gpu].push_back({i, units[i].start_s, units[i].end_s, holder, shares_gpu(units[i].unit, policy)});
  }
  auto wait = [&](std::vector<std::vector<size_t>>& edges, size_t from, size_t to) {
    edges[from].push_back(to);
    ++waiting_[to];
  };
  for (auto& [gpu, queue] : queues) {
    for (size_t k = 1; k < queue.size(); ++k) wait(after_start_, queue[k - 1].unit, queue[k].unit);
    size_t last_holder = 0;
    bool seen_holder = false;
    for (size_t j = 0; j < queue.size(); ++j) {
      if (queue[j].holder) {
        // Everything since the previous holder finishes before it starts; those planned to end
        // by its start already do through the edges below, the others need their own.
        for (size_t m = seen_holder ? last_holder + 1 : 0; m < j; ++m)
          if (queue[m].end > queue[j].start + tolerance_s) wait(after_finish_, queue[m].unit, queue[j].unit);
        if (j + 1 < queue.size()) wait(after_finish_, queue[j].unit, queue[j + 1].unit);
        last_holder = j;
        seen_holder = true;
        continue;
      }
      auto first = std::partition_point(
          queue.begin() + static_cast<long>(j) + 1, queue.end(),
          [&, end = queue[j].end](const Slot& s) { return s.start + tolerance_s < end; });
      // The first unit that may not run beside j: the next one, unless both share.
      auto next = queue.begin() + static_cast<long>(j) + 1;
      if (!queue[j].shares) first = next;
      first = std::find_if(next, first, [](const Slot& s) { return !s.shares; });
      if (first != queue.end()) wait(after_finish_, queue[j].unit, first->unit);
    }
  }
  for (size_t i = 0; i < units.size(); ++i)
    if (waiting_[i] == 0) ready_.insert(i);
}

std::vector<size_t> ExecSchedule::ready() const { return {ready_.begin(), ready_.end()}; }

void ExecSchedule::release(size_t unit) {
  if (--waiting_[unit] == 0 && !started_[unit]) ready_.insert(unit);
}

void ExecSchedule::started(size_t unit) {
  if (started_.at(unit)) return;
  started_[unit] = true;
  ++started_count_;
  ready_.erase(unit);
  for (size_t next : after_start_[unit]) release(next);
}

void ExecSchedule::finished(size_t unit) {
  for (size_t next : after_finish_.at(unit)) release(next);
  after_finish_[unit].clear();
}

void ExecSchedule::skipped(size_t unit) {
  started(unit);
  finished(unit);
}

}  // namespace gpuplan
