// The Gantt chart as one self-contained HTML page: the plan's layout as data, drawn on a
// canvas by the page's own script (so 20,000 units zoom and pan smoothly), the unschedulable
// units and the diagnostics as HTML.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>

#include "emit/chart.hpp"
#include "emit/gantt.hpp"
#include "emit/html_page.hpp"
#include "gpuplan/emit.hpp"
#include "gpuplan/requirements.hpp"

namespace gpuplan {

namespace {

/// "//ml/vision:resnet_test" → "//ml/vision"; a label without ':' keeps everything up to its last '/'.
std::string package_of(std::string_view label) {
  auto cut = label.find(':');
  if (cut == std::string_view::npos) cut = label.rfind('/');
  return std::string(cut == std::string_view::npos ? label : label.substr(0, cut));
}

/// Strings many units repeat (requirements, duration sources, sizes), stored once.
class StringTable {
 public:
  int operator()(const std::string& text) {
    auto [it, added] = index_.try_emplace(text, static_cast<int>(strings_.size()));
    if (added) strings_.push_back(text);
    return it->second;
  }
  const std::vector<std::string>& strings() const { return strings_; }

 private:
  std::map<std::string, int> index_;
  std::vector<std::string> strings_;
};

/// The layout the page's script draws: rows are lane rows and node headers, numbered from the top.
nlohmann::json chart_data(const Plan& plan, const Fleet* fleet) {
  auto gantt = emit::layout(plan, fleet);
  std::map<const Assignment*, std::vector<int>> rows_of;  // unit → its rows, ascending
  std::map<std::string, int> node_index;
  nlohmann::json nodes = nlohmann::json::array();
  int row = 0;
  for (const auto& node : gantt.nodes) {
    node_index[node.name] = static_cast<int>(nodes.size());
    nlohmann::json lanes = nlohmann::json::array();
    int header = row++;
    for (const auto& lane : node.lanes) {
      auto count = std::max<int>(static_cast<int>(lane.rows.size()), 1);
      lanes.push_back({lane.gpu, row, count});
      for (const auto& lane_row : lane.rows) {
        for (const auto* a : lane_row) rows_of[a].push_back(row);
        ++row;
      }
      if (lane.rows.empty()) ++row;
    }
    nodes.push_back({{"name", emit::printable(node.name)},
                     {"row", header},
                     {"lanes", std::move(lanes)},
                     {"units", node.units},
                     {"busy", node.busy_until_s}});
  }

  StringTable strings;
  std::map<std::string, std::pair<int, int>> packages;  // package → index, units
  for (const auto& a : plan.assignments) packages.try_emplace(package_of(a.unit.label), 0, 0);
  nlohmann::json groups = nlohmann::json::array();
  for (auto& [name, entry] : packages) {
    entry.first = static_cast<int>(groups.size());
    groups.push_back({{"name", emit::printable(name)}, {"color", emit::hex(emit::test_color(name))}});
  }
  nlohmann::json units = nlohmann::json::array();
  for (const auto& a : plan.assignments) {
    auto found = rows_of.find(&a);
    if (found == rows_of.end()) continue;
    auto& rows = found->second;
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    nlohmann::json segments = nlohmann::json::array();  // [first row, rows] for each run of adjacent rows
    for (size_t i = 0; i < rows.size();) {
      size_t j = i + 1;
      while (j < rows.size() && rows[j] == rows[j - 1] + 1) ++j;
      segments.push_back(rows[i]);
      segments.push_back(static_cast<int>(j - i));
      i = j;
    }
    auto& package = packages[package_of(a.unit.label)];
    ++package.second;
    std::string shard;
    if (a.unit.shard_index)
      shard = fmt::format("shard {} of {} (TEST_SHARD_INDEX={})", *a.unit.shard_index + 1, a.unit.shard_count,
                          *a.unit.shard_index);
    units.push_back({a.start_s, a.end_s, node_index[a.node.str()], package.first, strings(a.unit.size.str()),
                     emit::printable(a.unit.id), emit::short_name(a.unit), emit::join_gpus(a.gpus),
                     strings(emit::printable(describe(a.unit.requirement))),
                     strings(a.unit.duration_source.str()),
                     a.unit.vram_mib ? nlohmann::json(*a.unit.vram_mib) : nlohmann::json(),
                     a.unit.flaky ? 1 : 0, shard, std::move(segments)});
  }
  for (const auto& [name, entry] : packages) groups[static_cast<size_t>(entry.first)]["units"] = entry.second;
  return {{"end", gantt.end_s},
          {"makespan", plan.summary.makespan_s},
          {"bound", plan.summary.lower_bound_s},
          {"rows", row},
          {"nodes", std::move(nodes)},
          {"packages", std::move(groups)},
          {"strings", strings.strings()},
          {"units", std::move(units)}};
}

/// JSON that may sit inside <script>: every '<' (only ever inside a string) written as \u003c.
std::string script_safe(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (char c : json) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

std::string unschedulable(const Plan& plan) {
  if (plan.unschedulable.empty()) return "";
  std::string items;
  for (const auto& u : plan.unschedulable)
    items += fmt::format("<li class=\"unsched\"><code>{}</code>: {}</li>\n", emit::escape(u.unit.id),
                         emit::escape(u.reason));
  return fmt::format(
      "<details id=\"unschedulable\" open><summary class=\"error\">Unschedulable units ({})</summary>\n"
      "<ul>\n{}</ul>\n</details>\n",
      plan.unschedulable.size(), items);
}

std::string diagnostics(const Plan& plan) {
  if (plan.diagnostics.empty()) return "";
  std::string rows;
  for (const auto& d : plan.diagnostics)
    rows += fmt::format("<tr><td class=\"{0}\">{0}</td><td>{1}</td><td>{2}</td><td>{3}</td></tr>\n",
                        to_string(d.severity), emit::escape(d.label), emit::escape(d.source),
                        emit::escape(d.message));
  return fmt::format(
      "<details id=\"diagnostics\"><summary>Diagnostics ({})</summary>\n<table>\n{}</table>\n</details>\n",
      plan.diagnostics.size(), rows);
}

}  // namespace

std::string render_html(const Plan& plan, const Fleet* fleet) {
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>gpuplan: "
      "{0}</title>\n"
      "<style>\n{1}</style>\n</head>\n<body>\n<header>\n<h1>gpuplan plan</h1>\n<p class=\"muted\">{0}</p>\n"
      "{2}</header>\n{3}{4}<div id=\"chart\"><canvas id=\"canvas\"></canvas>"
      "<noscript>The chart needs JavaScript; `gpuplan render --format svg` draws it "
      "without.</noscript></div>\n"
      "<div id=\"tip\" hidden></div>\n<script type=\"application/json\" id=\"plan-data\">{5}</script>\n"
      "<script>\n{6}</script>\n</body>\n</html>\n",
      emit::escape(emit::summary_line(plan)), emit::kPageStyle, emit::kControls, unschedulable(plan),
      diagnostics(plan), script_safe(chart_data(plan, fleet).dump()), emit::kPageScript);
}

}  // namespace gpuplan
