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
#include "util/json_writer.hpp"

namespace gpuplan {

namespace {

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

/// [first row, rows] for each run of adjacent rows of `rows` (ascending).
void write_runs(util::JsonWriter& out, const std::vector<int>& rows) {
  out.begin_array();
  for (size_t i = 0; i < rows.size();) {
    size_t j = i + 1;
    while (j < rows.size() && rows[j] == rows[j - 1] + 1) ++j;
    out.value(rows[i]);
    out.value(static_cast<int>(j - i));
    i = j;
  }
  out.end_array();
}

/// The layout the page's script draws, written to `out` as it is made (rows are lane rows and
/// node headers, numbered from the top). A plan of 147,000 units made a document of some 200 MB
/// before; only the nodes, the packages and the string table are held now. The keys are in
/// the order nlohmann's sorted objects wrote them.
void write_chart_data(const Plan& plan, const Fleet* fleet, util::JsonWriter& out) {
  auto gantt = emit::layout(plan, fleet);
  std::map<const Assignment*, std::vector<int>> rows_of;  // unit → its rows, ascending
  std::map<const Assignment*, std::vector<int>> held_of;  // unit → rows it holds without running there
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
      for (const auto* a : lane.held) held_of[a].push_back(row);
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

  // The packages with their unit counts, and the strings units share, before any unit is written.
  StringTable strings;
  std::map<std::string, std::pair<int, int>> packages;  // package → index, units
  struct Shared {
    const std::pair<int, int>* package;  // its entry of `packages`, numbered below
    int size, requirement, source;
  };
  std::vector<Shared> shared(plan.assignments.size());
  for (std::size_t k = 0; k < plan.assignments.size(); ++k) {
    const auto& a = plan.assignments[k];
    auto& package = packages[emit::package_of(a.unit.label)];
    if (!rows_of.contains(&a)) continue;
    ++package.second;
    shared[k] = {&package, strings(a.unit.size.str()), strings(emit::printable(describe(a.unit.requirement))),
                 strings(a.unit.duration_source.str())};
  }
  nlohmann::json groups = nlohmann::json::array();
  for (auto& [name, entry] : packages) {
    entry.first = static_cast<int>(groups.size());
    groups.push_back({{"color", emit::hex(emit::test_color(name))},
                      {"name", emit::printable(name)},
                      {"units", entry.second}});
  }

  out.begin_object();
  out.key("bound").value(plan.summary.lower_bound_s);
  out.key("end").value(gantt.end_s);
  out.key("makespan").value(plan.summary.makespan_s);
  out.key("nodes").value(nlohmann::ordered_json(nodes));
  out.key("packages").value(nlohmann::ordered_json(groups));
  out.key("rows").value(row);
  out.key("strings").begin_array();
  for (const auto& text : strings.strings()) out.value(text);
  out.end_array();
  out.key("units").begin_array();
  for (std::size_t k = 0; k < plan.assignments.size(); ++k) {
    const auto& a = plan.assignments[k];
    auto found = rows_of.find(&a);
    if (found == rows_of.end()) continue;
    auto& rows = found->second;
    std::sort(rows.begin(), rows.end());
    rows.erase(std::unique(rows.begin(), rows.end()), rows.end());
    std::string shard;
    if (a.unit.shard_index)
      shard = fmt::format("shard {} of {} (TEST_SHARD_INDEX={})", *a.unit.shard_index + 1, a.unit.shard_count,
                          *a.unit.shard_index);
    out.begin_array();
    out.value(a.start_s);
    out.value(a.end_s);
    out.value(node_index[a.node.str()]);
    out.value(shared[k].package->first);
    out.value(shared[k].size);
    out.value(emit::printable(a.unit.id));
    out.value(emit::short_name(a.unit));
    out.value(emit::join_gpus(a.gpus));
    out.value(shared[k].requirement);
    out.value(shared[k].source);
    if (a.unit.vram_mib)
      out.value(*a.unit.vram_mib);
    else
      out.null();
    out.value(a.unit.flaky ? 1 : 0);
    out.value(shard);
    write_runs(out, rows);
    // Only a unit that holds GPUs it does not run on has the held rows: other plans' pages stay as they were.
    if (auto held = held_of.find(&a); held != held_of.end()) write_runs(out, held->second);
    out.end_array();
    rows.clear();
    rows.shrink_to_fit();
  }
  out.end_array();
  out.end_object();
}

/// A sink for JSON that sits inside <script>: every '<' (only ever inside a string) is written
/// as \u003c.
util::TextSink script_safe(const util::TextSink& sink) {
  return [sink](std::string_view json) {
    for (std::size_t start = 0; start < json.size();) {
      auto lt = json.find('<', start);
      sink(json.substr(start, lt == std::string_view::npos ? std::string_view::npos : lt - start));
      if (lt == std::string_view::npos) break;
      sink("\\u003c");
      start = lt + 1;
    }
  };
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

void write_html(const Plan& plan, const Fleet* fleet, const util::TextSink& sink) {
  sink(fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>gpuplan: "
      "{0}</title>\n"
      "<style>\n{1}</style>\n</head>\n<body>\n<header>\n<h1>gpuplan plan</h1>\n<p class=\"muted\">{0}</p>\n"
      "{2}</header>\n{3}{4}<div id=\"chart\"><canvas id=\"canvas\"></canvas>"
      "<noscript>The chart needs JavaScript; `gpuplan render --format svg` draws it "
      "without.</noscript></div>\n"
      "<div id=\"tip\" hidden></div>\n<script type=\"application/json\" id=\"plan-data\">",
      emit::escape(emit::summary_line(plan)), emit::kPageStyle, emit::kControls, unschedulable(plan),
      diagnostics(plan)));
  {
    util::JsonWriter data(script_safe(sink), -1);
    write_chart_data(plan, fleet, data);
    data.flush();
  }
  sink(fmt::format("</script>\n<script>\n{}</script>\n</body>\n</html>\n", emit::kPageScript));
}

}  // namespace gpuplan
