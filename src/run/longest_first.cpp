// A node's units placed again longest planned first, for the dynamic executor (exec --claims
// and its simulation).
#include "run/longest_first.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

#include "gpuplan/run.hpp"

namespace gpuplan {

namespace {

constexpr double tolerance_s = 1e-6;

/// Whether two units are planned on one GPU at once (`pack`).
bool shares_a_gpu(const std::vector<Assignment>& units) {
  std::map<int, std::vector<std::pair<double, double>>> spans;
  for (const auto& a : units)
    for (int g : a.gpus) spans[g].emplace_back(a.start_s, a.end_s);
  for (auto& [gpu, list] : spans) {
    std::sort(list.begin(), list.end());
    double end = -1;
    for (auto [s, e] : list) {
      if (s + tolerance_s < end) return true;
      end = std::max(end, e);
    }
  }
  return false;
}

}  // namespace

std::vector<size_t> longest_first(std::vector<Assignment>& units, Policy policy) {
  std::vector<size_t> order(units.size());
  std::iota(order.begin(), order.end(), size_t{0});
  if (shares_a_gpu(units)) return order;
  std::vector<int> node_gpus;
  for (const auto& a : units) node_gpus.insert(node_gpus.end(), a.gpus.begin(), a.gpus.end());
  std::sort(node_gpus.begin(), node_gpus.end());
  node_gpus.erase(std::unique(node_gpus.begin(), node_gpus.end()), node_gpus.end());

  auto planned = [&](size_t i) { return units[i].end_s - units[i].start_s; };
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return planned(x) > planned(y); });
  std::map<int, double> free_at;
  for (size_t i : order) {
    const auto& gpus = holds_whole_node(units[i], policy) ? node_gpus : units[i].gpus;
    double start = 0;
    for (int g : gpus) start = std::max(start, free_at[g]);
    double length = planned(i);
    units[i].start_s = start;
    units[i].end_s = start + length;
    for (int g : gpus) free_at[g] = units[i].end_s;
  }
  auto first_gpu = [&](size_t i) { return units[i].gpus.empty() ? -1 : units[i].gpus.front(); };
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) {
    int gx = first_gpu(x), gy = first_gpu(y);
    return std::tie(units[x].start_s, gx, units[x].unit.id) <
           std::tie(units[y].start_s, gy, units[y].unit.id);
  });
  return order;
}

}  // namespace gpuplan
