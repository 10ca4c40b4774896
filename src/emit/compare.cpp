// `gpuplan compare`: the numbers that say what a policy or a bigger fleet buys.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "emit/gantt.hpp"
#include "gpuplan/emit.hpp"
#include "util/rounding.hpp"
#include "util/spans.hpp"
#include "util/text.hpp"

namespace gpuplan {

Comparison compare(const Plan& plan, const Fleet& fleet) {
  Comparison c;
  c.fleet = fleet.source;
  c.policy = plan.policy;
  c.fleet_nodes = static_cast<int>(fleet.nodes.size());
  for (const auto& node : fleet.nodes) c.fleet_gpus += static_cast<int>(node.gpus.size());
  c.summary = plan.summary;
  std::map<std::string, int> node_gpus;
  for (const auto& node : fleet.nodes) node_gpus[node.name] = static_cast<int>(node.gpus.size());
  std::map<std::pair<std::string, int>, std::vector<std::pair<double, double>>> held, busy;
  for (const auto& a : plan.assignments) {
    std::set<int> gpus(a.gpus.begin(), a.gpus.end());
    for (int g : gpus) busy[{a.node, g}].push_back({a.start_s, a.end_s});
    // A node-exclusive unit, and a multi-GPU unit under whole-node, hold every GPU of their node.
    if (holds_whole_node(a, plan.policy))
      for (int g = 0; g < node_gpus[a.node]; ++g) gpus.insert(g);
    for (int g : gpus) held[{a.node, g}].push_back({a.start_s, a.end_s});
    // Asked for: its count, or every GPU of the node it holds where it gives none (every_node_gpu).
    const double asked =
        a.unit.requirement->takes_every_node_gpu() ? double(a.gpus.size()) : a.unit.requirement->gpus.value;
    c.gpu_hours_used += asked * (a.end_s - a.start_s) / 3600;
  }
  for (const auto& [gpu, spans] : held) c.gpu_hours_reserved += util::covered(spans) / 3600;
  double busy_hours = 0;
  for (const auto& [gpu, spans] : busy) busy_hours += util::covered(spans) / 3600;
  double capacity = c.fleet_gpus * plan.summary.makespan_s / 3600;
  c.utilization = capacity > 0 ? busy_hours / capacity : 0;
  c.held = capacity > 0 ? c.gpu_hours_reserved / capacity : 0;
  return c;
}

std::string render_comparison(const std::vector<Comparison>& rows, const TextOptions& options) {
  const std::vector<std::string> header{"policy", "makespan", "bound", "gap",    "reserved",
                                        "used",   "held",     "util",  "unsched"};
  std::vector<std::vector<std::string>> cells;
  for (const auto& c : rows) {
    const auto& s = c.summary;
    cells.push_back(
        {std::string(to_string(c.policy)), emit::format_seconds(s.makespan_s),
         emit::format_seconds(s.lower_bound_s),
         s.lower_bound_s > 0 ? fmt::format("{:.1f}%", (s.makespan_s / s.lower_bound_s - 1) * 100) : "-",
         fmt::format("{:.2f}", c.gpu_hours_reserved), fmt::format("{:.2f}", c.gpu_hours_used),
         fmt::format("{:.1f}%", c.held * 100), fmt::format("{:.1f}%", c.utilization * 100),
         std::to_string(s.unschedulable_units)});
  }
  std::vector<int> widths;
  widths.reserve(header.size());
  for (const auto& h : header) widths.push_back(emit::columns(h));
  for (const auto& row : cells)
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], emit::columns(row[i]));
  auto line = [&](const std::vector<std::string>& row) {
    std::string out = " ";
    for (size_t i = 0; i < row.size(); ++i) {
      auto pad = std::string(static_cast<size_t>(widths[i] - emit::columns(row[i])), ' ');
      out += "  " + (i == 0 ? row[i] + pad : pad + row[i]);
    }
    while (out.back() == ' ') out.pop_back();
    return out + '\n';
  };
  auto bold = [&](const std::string& text) { return options.color ? "\x1b[1m" + text + "\x1b[0m" : text; };
  std::string out;
  for (size_t r = 0; r < rows.size(); ++r) {
    if (r == 0 || rows[r].fleet != rows[r - 1].fleet) {
      if (r > 0) out += '\n';
      auto title = fmt::format("{} GPU{} on {} node{}", rows[r].fleet_gpus, util::plural(rows[r].fleet_gpus),
                               rows[r].fleet_nodes, util::plural(rows[r].fleet_nodes));
      auto name = emit::fit(emit::printable(rows[r].fleet), options.width - emit::columns(title) - 2);
      out += bold(fmt::format("{}: {}", name, title)) + '\n' + line(header);
    }
    out += line(cells[r]);
  }
  std::string legend;
  for (const auto* part :
       {"GPU-hours reserved: GPU time held by units (a GPU shared under pack counts once;",
        "a whole-node unit holds its node);",
        "used: GPUs asked × planned duration; held: reserved / (fleet GPUs × makespan);",
        "util: GPU time running units / (fleet GPUs × makespan), the plan's GPU utilisation."}) {
    legend += part;
    legend += ' ';
  }
  std::string current;
  out += '\n';
  for (size_t at = 0; at < legend.size();) {
    auto space = legend.find(' ', at);
    auto word = legend.substr(at, space - at);
    at = space + 1;
    if (!current.empty() && emit::columns(current) + 1 + emit::columns(word) > options.width) {
      out += current + '\n';
      current.clear();
    }
    current += (current.empty() ? "" : " ") + word;
  }
  return out + current + '\n';
}

nlohmann::ordered_json comparison_to_json(const std::vector<Comparison>& rows) {
  auto list = nlohmann::ordered_json::array();
  for (const auto& c : rows) {
    const auto& s = c.summary;
    list.push_back({{"fleet", c.fleet},
                    {"fleet_gpus", c.fleet_gpus},
                    {"fleet_nodes", c.fleet_nodes},
                    {"policy", to_string(c.policy)},
                    {"makespan_s", util::json_seconds(s.makespan_s)},
                    {"lower_bound_s", util::json_seconds(s.lower_bound_s)},
                    {"gap", s.lower_bound_s > 0 ? util::json_ratio(s.makespan_s / s.lower_bound_s - 1) : 0.0},
                    {"gpu_hours_reserved", util::round_to(c.gpu_hours_reserved, 3)},
                    {"gpu_hours_used", util::round_to(c.gpu_hours_used, 3)},
                    {"gpu_held", util::json_ratio(c.held)},
                    {"gpu_utilization", util::json_ratio(c.utilization)},
                    {"scheduled_units", s.scheduled_units},
                    {"unschedulable_units", s.unschedulable_units}});
  }
  return {{"comparisons", list}};
}

}  // namespace gpuplan
