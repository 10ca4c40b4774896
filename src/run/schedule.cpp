// The order `exec` starts a node's units in.
#include <algorithm>

#include "gpuplan/run.hpp"

namespace gpuplan {

namespace {
bool share_a_gpu(const Assignment& x, const Assignment& y) {
  return std::any_of(x.gpus.begin(), x.gpus.end(),
                     [&](int g) { return std::find(y.gpus.begin(), y.gpus.end(), g) != y.gpus.end(); });
}
}  // namespace

ExecSchedule::ExecSchedule(const std::vector<Assignment>& units)
    : waits_(units.size()), started_(units.size()), finished_(units.size()) {
  constexpr double tolerance = 1e-6;
  for (size_t i = 0; i < units.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      if (share_a_gpu(units[i], units[j]))
        waits_[i].push_back({j, units[j].end_s <= units[i].start_s + tolerance});
}

std::vector<size_t> ExecSchedule::ready() const {
  std::vector<size_t> ready;
  for (size_t i = 0; i < waits_.size(); ++i) {
    if (started_[i]) continue;
    bool free = std::all_of(waits_[i].begin(), waits_[i].end(), [&](const Wait& w) {
      return w.until_finished ? finished_[w.unit] : started_[w.unit];
    });
    if (free) ready.push_back(i);
  }
  return ready;
}

void ExecSchedule::started(size_t unit) { started_.at(unit) = true; }
void ExecSchedule::finished(size_t unit) { finished_.at(unit) = true; }
bool ExecSchedule::all_started() const {
  return std::all_of(started_.begin(), started_.end(), [](bool s) { return s; });
}

}  // namespace gpuplan
