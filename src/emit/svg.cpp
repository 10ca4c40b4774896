// The Gantt chart as SVG: one lane per GPU, one bar per unit coloured by its package, as the
// HTML chart colours and lists them.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <vector>

#include "emit/chart.hpp"
#include "emit/gantt.hpp"
#include "gpuplan/emit.hpp"
#include "gpuplan/size.hpp"
#include "util/json_writer.hpp"
#include "util/text.hpp"

namespace gpuplan::emit {

namespace {

constexpr double kWidth = 1200;
constexpr double kLeft = 170;  ///< node and GPU names
constexpr double kRight = 40;
constexpr double kTop = 96;  ///< title, summary and the axis labels above the lanes
constexpr double kNodeHeader = 24;
constexpr double kRow = 20;
constexpr double kBar = 16;
constexpr double kCharWidth = 6.6;  ///< average width of an 11px sans-serif character
constexpr double kLegendColumn = 340;
constexpr double kLine = 18;

constexpr std::string_view kStyle =
    "text{font-family:system-ui,'DejaVu Sans',sans-serif;font-size:12px;fill:#222}"
    ".gp-title{font-size:18px;font-weight:bold}.gp-node{font-weight:bold}.gp-muted{fill:#666}"
    ".gp-gpu{fill:#555;text-anchor:end}.bar text{font-size:11px;pointer-events:none}"
    ".bar rect{stroke:#333;stroke-opacity:.35}.bar:hover rect{stroke-opacity:1;stroke-width:1.5}"
    ".gp-grid{stroke:#ddd}.gp-makespan{stroke:#c0392b;stroke-width:2;stroke-dasharray:6 3}"
    ".gp-bound{stroke:#1e8449;stroke-width:2;stroke-dasharray:2 3}.gp-unsched{fill:#c0392b}"
    ".bar rect.held{fill-opacity:.3;stroke:none}";

std::string tooltip(const Assignment& a, bool holds) {
  std::string tip = a.unit.label;
  if (a.unit.shard_index)
    tip += fmt::format("\nshard {} of {} (TEST_SHARD_INDEX={})", *a.unit.shard_index + 1, a.unit.shard_count,
                       *a.unit.shard_index);
  tip += fmt::format("\n{} · GPU{} {}", a.node, util::plural(a.gpus.size()), join_gpus(a.gpus));
  tip += fmt::format("\n{} → {} ({}, {})", format_seconds(a.start_s), format_seconds(a.end_s),
                     format_seconds(a.end_s - a.start_s), a.unit.duration_source);
  tip += "\nneeds " + printable(describe(a.unit.requirement));
  if (a.unit.vram_mib) tip += fmt::format("\nreserves {} per GPU", format_mib(*a.unit.vram_mib));
  if (holds) tip += "\n" + std::string(held_note);
  if (a.unit.flaky) tip += "\nflaky";
  return tip;
}

class Chart {
 public:
  Chart(const Plan& plan, const Fleet* fleet, const util::TextSink& sink)
      : plan_(plan), gantt_(layout(plan, fleet)), sink_(sink) {}

  /// Everything's place is known before the first byte (the height heads the file), so the
  /// chart goes to the sink piece by piece: at 147,000 units it was 78 MB built three times over.
  void render(bool declaration) {
    double bottom = lanes(false);
    std::map<std::string, int> units;  // package → units drawn
    for (const auto& a : plan_.assignments)
      if (places_.contains(&a)) ++units[package_of(a.unit.label)];
    packages_ = legend_order(units);
    const double legend_y = bottom + 2.5 * kLine;
    const double unschedulable_y = legend(legend_y, false);
    const double height = std::ceil(unschedulable(unschedulable_y, false) + kLine);
    sink_(fmt::format(
        "{3}<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\">\n"
        "<style>{2}</style>\n<rect width=\"{0}\" height=\"{1}\" fill=\"#fff\"/>\n",
        kWidth, height, kStyle, declaration ? "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n" : ""));
    header();
    lanes(true);
    axis(bottom);  // before the bars, so that grid lines stay behind them
    for (const auto& a : plan_.assignments)
      if (auto found = places_.find(&a); found != places_.end()) {
        auto held = held_places_.find(&a);
        bar(a, found->second, held == held_places_.end() ? nullptr : &held->second);
      }
    marks(bottom);
    legend(legend_y, true);
    unschedulable(unschedulable_y, true);
    sink_("</svg>\n");
  }

 private:
  double x(double t) const { return kLeft + t / gantt_.end_s * (kWidth - kLeft - kRight); }

  void text(double x, double y, std::string_view content, std::string_view cls = "",
            std::string_view extra = "") {
    sink_(fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\"{}{}>{}</text>\n", x, y,
                      cls.empty() ? "" : fmt::format(" class=\"{}\"", cls),
                      extra.empty() ? "" : " " + std::string(extra), escape(content)));
  }

  void header() {
    text(12, 28, "gpuplan plan", "gp-title");
    text(12, 50, summary_line(plan_), "gp-muted");
  }

  /// The lanes' names and stripes (when `draw`; else where each unit's rows are); returns the y
  /// where the lanes end.
  double lanes(bool draw) {
    double y = kTop;
    if (gantt_.nodes.empty()) {
      if (draw) text(kLeft, y + kRow, "No unit is scheduled.", "gp-muted");
      return y + 2 * kRow;
    }
    bool stripe = false;
    for (const auto& node : gantt_.nodes) {
      if (draw) {
        text(12, y + 17, fit(printable(node.name), 22), "gp-node");
        text(kLeft, y + 17,
             fmt::format("{} unit{}, busy until {}", node.units, util::plural(node.units),
                         format_seconds(node.busy_until_s)),
             "gp-muted");
      }
      y += kNodeHeader;
      for (const auto& lane : node.lanes) {
        auto rows = std::max<size_t>(lane.rows.size(), 1);
        if (!draw)
          for (const auto* a : lane.held) held_places_[a].push_back(y);
        if (draw) {
          if ((stripe = !stripe))
            sink_(fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"#f4f6f8\"/>\n",
                              kLeft, y, kWidth - kLeft - kRight, kRow * static_cast<double>(rows)));
          text(kLeft - 10, y + 14, fmt::format("GPU {}", lane.gpu), "gp-gpu");
        }
        for (const auto& row : lane.rows) {
          if (!draw)
            for (const auto* a : row) places_[a].push_back(y);
          y += kRow;
        }
        if (lane.rows.empty()) y += kRow;
      }
    }
    return y;
  }

  /// `held`: the tops of the lanes the unit holds without running on them, drawn faint in its
  /// colour as the HTML chart draws them (held, not idle).
  void bar(const Assignment& a, const std::vector<double>& rows, const std::vector<double>* held) {
    auto color = test_color(package_of(a.unit.label));
    double x0 = x(a.start_s), width = std::max(1.0, x(a.end_s) - x0 - 1);
    sink_(fmt::format("<g class=\"bar\" data-unit=\"{}\">\n<title>{}</title>\n", escape(a.unit.id),
                      escape(tooltip(a, held != nullptr))));
    if (held)
      for (double y : *held)
        sink_(fmt::format(
            "<rect class=\"held\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"/>\n",
            x0, y + (kRow - kBar) / 2, width, kBar, hex(color)));
    auto capacity = static_cast<int>((width - 6) / kCharWidth);
    auto name = capacity >= 3 ? fit(short_name(a.unit), capacity) : "";
    for (double y : rows) {
      sink_(fmt::format(
          "<rect x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{}\" rx=\"3\" fill=\"{}\"/>\n", x0,
          y + (kRow - kBar) / 2, width, kBar, hex(color)));
      if (!name.empty())
        sink_(fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{}</text>\n", x0 + 4, y + 14, escape(name)));
    }
    sink_("</g>\n");
  }

  void axis(double bottom) {
    double step = tick_step(gantt_.end_s, 12);
    for (int k = 0; k * step <= gantt_.end_s + 1e-9; ++k) {
      double t = k * step, at = x(t);
      sink_(fmt::format("<line class=\"gp-grid\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>\n", at,
                        kTop - 8, bottom));
      text(at, kTop - 14, k == 0 ? "0" : format_seconds(t), "gp-muted", "text-anchor=\"middle\"");
    }
  }

  void marks(double bottom) {
    const auto& s = plan_.summary;
    auto mark = [&](double t, std::string_view cls, const std::string& label, double y) {
      sink_(fmt::format("<line class=\"{0}\" x1=\"{1:.1f}\" y1=\"{2}\" x2=\"{1:.1f}\" y2=\"{3}\"/>\n", cls,
                        x(t), kTop - 8, y - 12));
      text(x(t), y, label, "", "text-anchor=\"end\"");
    };
    if (s.lower_bound_s > 0)
      mark(s.lower_bound_s, "gp-bound", "lower bound " + format_seconds(s.lower_bound_s), bottom + 2 * kLine);
    mark(s.makespan_s, "gp-makespan", "makespan " + format_seconds(s.makespan_s), bottom + kLine);
  }

  /// The legend from `y` (drawn when `draw`): the packages with the most units, at most
  /// kLegendPackages as on the HTML page, then one line for the rest; returns the y after it. One
  /// entry a test made a plan of 100,000 units 784,197 px tall, nearly all legend.
  double legend(double y, bool draw) {
    if (packages_.empty()) return y;
    if (draw) text(12, y, "Packages", "gp-node");
    y += 8;
    const auto per_row = static_cast<std::size_t>((kWidth - 24) / kLegendColumn);
    const auto shown = std::min(packages_.size(), kLegendPackages);
    if (draw)
      for (std::size_t i = 0; i < shown; ++i) {
        const auto& package = packages_[i];
        double lx = 12 + static_cast<double>(i % per_row) * kLegendColumn,
               ly = y + static_cast<double>(i / per_row) * kLine;
        sink_(fmt::format(
            "<rect class=\"legend\" x=\"{}\" y=\"{}\" width=\"12\" height=\"12\" rx=\"2\" fill=\"{}\"/>\n",
            lx, ly + 3, hex(test_color(package.name))));
        text(lx + 18, ly + 13, fmt::format("{} ({})", fit(printable(package.name), 40), package.units));
      }
    y += static_cast<double>((shown + per_row - 1) / per_row) * kLine;
    if (shown < packages_.size()) {
      int rest_units = 0;
      for (auto i = shown; i < packages_.size(); ++i) rest_units += packages_[i].units;
      if (draw)
        text(12, y + 13,
             fmt::format("and {} more packages ({} units): each bar's tooltip names its test",
                         packages_.size() - shown, rest_units),
             "gp-muted");
      y += kLine;
    }
    return y + kLine;
  }

  /// The unschedulable units from `y` (drawn when `draw`); returns the y after them. Grouped by
  /// reason, largest group first, as `show --format markdown` groups them: at most
  /// kReasonsShown reasons and kUnitsPerReason units of each, the rest counted. Before, a line a
  /// unit: 10,000 unschedulable units made the picture 180,000 px taller.
  double unschedulable(double y, bool draw) {
    if (plan_.unschedulable.empty()) return y;
    y += kLine / 2;
    if (draw)
      text(12, y, fmt::format("Unschedulable units ({})", plan_.unschedulable.size()), "gp-node gp-unsched");
    const auto& groups = unschedulable_groups();
    std::size_t shown = 0;
    for (; shown < groups.size() && shown < kReasonsShown; ++shown) {
      const auto& [reason, units] = groups[shown];
      y += kLine;
      if (draw)
        text(12, y,
             fit(printable(fmt::format("{} unit{}: {}", units.size(), util::plural(units.size()), reason)),
                 170),
             "", "xml:space=\"preserve\"");
      for (std::size_t i = 0; i < units.size() && i < kUnitsPerReason; ++i) {
        y += kLine;
        if (draw) text(28, y, fit(printable(units[i]->unit.id), 168), "", "xml:space=\"preserve\"");
      }
      if (units.size() > kUnitsPerReason) {
        y += kLine;
        if (draw) text(28, y, fmt::format("and {} more", units.size() - kUnitsPerReason), "gp-muted");
      }
    }
    if (shown < groups.size()) {
      std::size_t rest = 0;
      for (std::size_t i = shown; i < groups.size(); ++i) rest += groups[i].second.size();
      y += kLine;
      if (draw)
        text(12, y,
             fmt::format("and {} more reasons ({} units): the plan's \"unschedulable\" lists them all, "
                         "`gpuplan show` groups them",
                         groups.size() - shown, rest),
             "gp-muted");
    }
    return y + kLine / 2;
  }

  static constexpr std::size_t kReasonsShown = 12;
  static constexpr std::size_t kUnitsPerReason = 5;

  /// The unschedulable units by reason (unschedulable_by_reason), made once, for both passes.
  const std::vector<UnschedulableGroup>& unschedulable_groups() {
    if (groups_.empty()) groups_ = unschedulable_by_reason(plan_);
    return groups_;
  }

  const Plan& plan_;
  Gantt gantt_;
  const util::TextSink& sink_;
  std::map<const Assignment*, std::vector<double>> places_;  ///< unit → the top of each of its rows
  /// unit → the top of each lane it holds without running there (Lane::held)
  std::map<const Assignment*, std::vector<double>> held_places_;
  std::vector<PackageUnits> packages_;      ///< the legend's, in its order
  std::vector<UnschedulableGroup> groups_;  ///< unschedulable_groups()
};

}  // namespace

std::string escape(std::string_view text) {
  std::string out;
  for (char c : text) switch (c) {
      case '\n': out += c; break;
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += static_cast<unsigned char>(c) < 0x20 || c == 0x7f ? '?' : c;
    }
  return out;
}

std::string summary_line(const Plan& plan) {
  const auto& s = plan.summary;
  std::set<std::string> nodes;
  for (const auto& a : plan.assignments) nodes.insert(a.node);
  std::vector<std::string> parts{fmt::format("policy {}", to_string(plan.policy))};
  if (!plan.fleet.empty()) parts.push_back("fleet " + plan.fleet);
  parts.push_back(fmt::format("{} units on {} nodes, {} unschedulable", plan.assignments.size(), nodes.size(),
                              plan.unschedulable.size()));
  parts.push_back("makespan " + format_seconds(s.makespan_s));
  if (s.lower_bound_s > 0)
    parts.push_back(fmt::format("lower bound {} (gap {:.1f}%)", format_seconds(s.lower_bound_s),
                                (s.makespan_s / s.lower_bound_s - 1) * 100));
  parts.push_back(fmt::format("GPU utilisation {:.1f}%", s.gpu_utilization * 100));
  if (plan.policy == Policy::pack) parts.push_back(fmt::format("pack slowdown ×{:g}", s.pack_slowdown));
  return fmt::format("{}", fmt::join(parts, " · "));
}

}  // namespace gpuplan::emit

namespace gpuplan {

void write_svg(const Plan& plan, const Fleet* fleet, const util::TextSink& sink) {
  emit::Chart(plan, fleet, sink).render(true);
}

}  // namespace gpuplan
