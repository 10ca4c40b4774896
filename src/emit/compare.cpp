// `gpuplan compare`: the numbers that say what a policy or a bigger fleet buys.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "emit/gantt.hpp"
#include "gpuplan/emit.hpp"

namespace gpuplan {

namespace {

/// Total length of the union of [start, end) intervals.
double covered(std::vector<std::pair<double, double>> spans) {
  std::sort(spans.begin(), spans.end());
  double total = 0, from = 0, to = -1;
  for (const auto& [start, end] : spans) {
    if (start > to) {
      total += std::max(0.0, to - from);
      from = start;
    }
    to = std::max(to, end);
  }
  return total + std::max(0.0, to - from);
}

double rounded(double value, double unit) { return std::round(value / unit) * unit; }

}  // namespace

Comparison compare(const Plan& plan, const Fleet& fleet) {
  Comparison c;
  c.fleet = fleet.source;
  c.policy = plan.policy;
  for (const auto& node : fleet.nodes) c.fleet_gpus += static_cast<int>(node.gpus.size());
  c.summary = plan.summary;
  std::map<std::pair<std::string, int>, std::vector<std::pair<double, double>>> held;
  for (const auto& a : plan.assignments) {
    for (int g : std::set<int>(a.gpus.begin(), a.gpus.end())) held[{a.node, g}].push_back({a.start_s, a.end_s});
    c.gpu_hours_used += a.unit.requirement.gpus.value * (a.end_s - a.start_s) / 3600;
  }
  for (const auto& [gpu, spans] : held) c.gpu_hours_reserved += covered(spans) / 3600;
  double capacity = c.fleet_gpus * plan.summary.makespan_s / 3600;
  c.utilization = capacity > 0 ? c.gpu_hours_reserved / capacity : 0;
  return c;
}

std::string render_comparison(const std::vector<Comparison>& rows, const TextOptions& options) {
  std::vector<std::vector<std::string>> table{
      {"fleet", "GPUs", "policy", "makespan", "bound", "gap", "GPU-h reserved", "GPU-h used", "util", "unsched"}};
  for (const auto& c : rows) {
    const auto& s = c.summary;
    table.push_back({emit::printable(c.fleet), std::to_string(c.fleet_gpus), std::string(to_string(c.policy)),
                     emit::format_seconds(s.makespan_s), emit::format_seconds(s.lower_bound_s),
                     s.lower_bound_s > 0 ? fmt::format("{:.1f}%", (s.makespan_s / s.lower_bound_s - 1) * 100) : "-",
                     fmt::format("{:.2f}", c.gpu_hours_reserved), fmt::format("{:.2f}", c.gpu_hours_used),
                     fmt::format("{:.1f}%", c.utilization * 100), std::to_string(s.unschedulable_units)});
  }
  std::vector<int> widths(table[0].size(), 0);
  for (const auto& row : table)
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], emit::columns(row[i]));
  int total = 0;
  for (int w : widths) total += w + 2;
  total -= 2;
  if (total > options.width) widths[0] = std::max(8, widths[0] - (total - options.width));
  std::string out;
  for (size_t r = 0; r < table.size(); ++r) {
    std::string line;
    for (size_t i = 0; i < table[r].size(); ++i) {
      auto cell = emit::fit(table[r][i], widths[i]);
      auto pad = std::string(static_cast<size_t>(widths[i] - emit::columns(cell)), ' ');
      bool text_column = i == 0 || i == 2;
      line += text_column ? cell + pad : pad + cell;
      if (i + 1 < table[r].size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    if (r == 0 && options.color) line = "\x1b[1m" + line + "\x1b[0m";
    out += line + '\n';
  }
  return out;
}

nlohmann::ordered_json comparison_to_json(const std::vector<Comparison>& rows) {
  auto list = nlohmann::ordered_json::array();
  for (const auto& c : rows) {
    const auto& s = c.summary;
    list.push_back({{"fleet", c.fleet},
                    {"fleet_gpus", c.fleet_gpus},
                    {"policy", to_string(c.policy)},
                    {"makespan_s", rounded(s.makespan_s, 0.001)},
                    {"lower_bound_s", rounded(s.lower_bound_s, 0.001)},
                    {"gap", s.lower_bound_s > 0 ? rounded(s.makespan_s / s.lower_bound_s - 1, 0.0001) : 0.0},
                    {"gpu_hours_reserved", rounded(c.gpu_hours_reserved, 0.001)},
                    {"gpu_hours_used", rounded(c.gpu_hours_used, 0.001)},
                    {"gpu_utilization", rounded(c.utilization, 0.0001)},
                    {"scheduled_units", s.scheduled_units},
                    {"unschedulable_units", s.unschedulable_units}});
  }
  return {{"comparisons", list}};
}

}  // namespace gpuplan
