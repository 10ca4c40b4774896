// The terminal preview: a summary, a text Gantt per node, unschedulable units, diagnostics.
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "emit/gantt.hpp"
#include "gpuplan/emit.hpp"
#include "gpuplan/node_summary.hpp"
#include "util/spans.hpp"

namespace gpuplan {

namespace {

using emit::columns;

constexpr int kMinWidth = 40;
constexpr int kTickSpacing = 10;  ///< columns between time-axis labels, at least
constexpr std::string_view kKeys = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

enum class Style { none, bold, dim, red, yellow, cyan };

struct Painter {
  bool color = false;

  std::string paint(std::string_view text, Style style) const {
    if (!color || style == Style::none) return std::string(text);
    static const std::map<Style, std::string_view> codes{{Style::bold, "1"},
                                                         {Style::dim, "2"},
                                                         {Style::red, "31"},
                                                         {Style::yellow, "33"},
                                                         {Style::cyan, "36"}};
    return fmt::format("\x1b[{}m{}\x1b[0m", codes.at(style), text);
  }
  /// The test's chart colour on a 256-colour terminal: the nearest of the 6×6×6 cube.
  std::string tint(std::string_view text, emit::Rgb rgb) const {
    if (!color) return std::string(text);
    auto level = [](int v) { return v < 48 ? 0 : v < 115 ? 1 : (v - 35) / 40; };
    return fmt::format("\x1b[38;5;{}m{}\x1b[0m", 16 + 36 * level(rgb.r) + 6 * level(rgb.g) + level(rgb.b),
                       text);
  }
};

/// Words of `text` in lines of at most `width` columns; lines after the first start with `indent` spaces.
std::vector<std::string> wrap(std::string_view text, int width, int indent) {
  std::vector<std::string> lines{""};
  size_t at = 0;
  while (at < text.size()) {
    auto end = text.find(' ', at);
    if (end == std::string_view::npos) end = text.size();
    std::string word(text.substr(at, end - at));
    at = end + 1;
    if (word.empty()) continue;
    auto& line = lines.back();
    bool fresh = line.empty() || line.find_first_not_of(' ') == std::string::npos;
    if (!fresh && columns(line) + 1 + columns(word) > width) {
      lines.emplace_back(indent, ' ');
      fresh = true;
    }
    auto& current = lines.back();
    if (!fresh) current += ' ';
    current += emit::fit(word, width - columns(current));
  }
  return lines;
}

/// Parts joined with " · ", starting a new line rather than passing `width`.
std::vector<std::string> join_fitting(const std::vector<std::string>& parts, int width) {
  std::vector<std::string> lines{""};
  for (const auto& part : parts) {
    if (!lines.back().empty() && columns(lines.back()) + 3 + columns(part) > width) lines.emplace_back();
    if (!lines.back().empty()) lines.back() += " · ";
    lines.back() += emit::fit(part, width);
  }
  return lines;
}

std::string percent(double ratio) { return fmt::format("{:.1f}%", ratio * 100); }

void summary(std::string& out, const Plan& plan, int width, const Painter& p) {
  const auto& s = plan.summary;
  std::vector<std::string> head{"gpuplan plan", fmt::format("policy {}", to_string(plan.policy))};
  if (!plan.fleet.empty()) head.push_back("fleet " + emit::printable(plan.fleet));
  std::vector<std::string> counts{
      fmt::format("{} test{}: {} GPU, {} CPU, {} skipped", s.tests, util::plural(s.tests), s.gpu_tests,
                  s.cpu_tests, s.skipped_tests),
      fmt::format("{} GPU unit{}: {} scheduled, {} unschedulable", s.gpu_units, util::plural(s.gpu_units),
                  s.scheduled_units, s.unschedulable_units)};
  std::vector<std::string> times{fmt::format("makespan {}", emit::format_seconds(s.makespan_s))};
  if (s.lower_bound_s > 0)
    times.push_back(fmt::format("lower bound {} (gap {})", emit::format_seconds(s.lower_bound_s),
                                percent(s.makespan_s / s.lower_bound_s - 1)));
  times.push_back("GPU utilisation " + percent(s.gpu_utilization));
  if (plan.policy == Policy::pack) times.push_back(fmt::format("pack slowdown ×{:g}", s.pack_slowdown));
  bool first = true;
  for (const auto& parts : {head, counts, times})
    for (const auto& line : join_fitting(parts, width)) {
      out += first ? p.paint(line, Style::bold) : line;
      out += '\n';
      first = false;
    }
}

/// One row of a lane: per column, a glyph and the test it belongs to (for its colour).
struct Cells {
  std::vector<std::string> glyphs;
  std::vector<const std::string*> labels;  ///< the test a column belongs to; null when idle
};

class NodeChart {
 public:
  NodeChart(const emit::NodeLanes& node, double end_s, double makespan_s, int width, int label_width,
            const Painter& painter)
      : node_(node),
        plot_(width - label_width),
        label_width_(label_width),
        painter_(painter),
        makespan_s_(makespan_s) {
    scale_ = plot_ / end_s;
    step_ = emit::tick_step(end_s, std::max(1, plot_ / kTickSpacing));
  }

  void render(std::string& out) {
    header(out);
    if (node_.units == 0) return;  // an idle node: its header says so and how many GPUs it has
    axis(out);
    for (const auto& lane : node_.lanes)
      for (size_t r = 0; r < std::max<size_t>(lane.rows.size(), 1); ++r) {
        std::string label = r == 0 ? fmt::format(" GPU {}", lane.gpu) : "";
        label.resize(static_cast<size_t>(label_width_), ' ');
        out += painter_.paint(label, Style::dim);
        out += row(r < lane.rows.size() ? lane.rows[r] : emit::Row{}, r == 0 ? lane.held : emit::Row{});
        out += '\n';
      }
    if (held_)
      for (const auto& line : wrap("░ held, not used: the GPU belongs to a unit that has the whole node "
                                   "(gpu-exclusive, or several GPUs under whole-node)",
                                   label_width_ + plot_ - 3, 2))
        out += painter_.paint("   " + line, Style::dim) + '\n';
    for (const auto& [key, a] : legend_) out += key_line(std::string(1, key), *a) + '\n';
    // Units with no column left in their row are never hidden: counted and listed here.
    std::vector<const Assignment*> folded;
    std::set<const Assignment*> seen;
    for (const auto* a : folded_)
      if (seen.insert(a).second) folded.push_back(a);
    if (folded.empty()) return;
    for (const auto& line :
         wrap(fmt::format("   + {} unit{} folded into the last column (+) of {}: too short to draw at this "
                          "width; --width, --node or --label draws them",
                          folded.size(), util::plural(folded.size()), emit::printable(node_.name)),
              label_width_ + plot_, 5))
      out += painter_.paint(line, Style::yellow) + '\n';
    for (const auto* a : folded) out += key_line("+", *a) + '\n';
  }

 private:
  /// "   KEY UNIT  GPU 0,1  1h02m → 1h30m" in the chart's width: the unit's id is cut in its
  /// package's middle, so that each line still names its test, shard and times.
  std::string key_line(const std::string& key, const Assignment& a) const {
    auto rest = fmt::format("  GPU {}  {} → {}", emit::join_gpus(a.gpus), emit::format_seconds(a.start_s),
                            emit::format_seconds(a.end_s));
    const int width = label_width_ + plot_;
    const int room = width - emit::columns(rest) - 4 - emit::columns(key);
    auto id = emit::printable(a.unit.id);
    if (room < 12) return emit::fit(fmt::format("   {} {}{}", key, id, rest), width);
    return fmt::format("   {} {}{}", key, emit::fit_label(id, room), rest);
  }

  int column(double t) const { return static_cast<int>(std::lround(t * scale_)); }

  void header(std::string& out) const {
    auto name = emit::fit(emit::printable(node_.name), label_width_ + plot_ - 4);
    auto info = node_.units == 0
                    ? fmt::format(" idle, {} GPU{} ", node_.lanes.size(), util::plural(node_.lanes.size()))
                    : fmt::format(" {} unit{}, busy until {} ", node_.units, util::plural(node_.units),
                                  emit::format_seconds(node_.busy_until_s));
    int used = columns(name) + 1;
    if (used + columns(info) + 2 > label_width_ + plot_) info = " ";
    int rule = std::max(0, label_width_ + plot_ - used - columns(info));
    out += painter_.paint(name, Style::bold) + ' ' + painter_.paint("──" + info, Style::dim);
    std::string line;
    for (int i = 2; i < rule; ++i) line += "─";
    out += painter_.paint(line, Style::dim) + '\n';
  }

  /// Tick labels, and the makespan marked where it falls ("▼ makespan 28m"); the mark wins
  /// over a tick label in its way.
  void axis(std::string& out) const {
    std::vector<std::string> cells(static_cast<size_t>(plot_), " ");
    std::vector<bool> taken(static_cast<size_t>(plot_), false);
    auto put = [&](int c, const std::vector<std::string>& glyphs) {
      for (size_t i = 0; i < glyphs.size(); ++i) {
        cells[static_cast<size_t>(c) + i] = glyphs[i];
        taken[static_cast<size_t>(c) + i] = true;
      }
    };
    auto glyphs_of = [](std::string_view text) {
      std::vector<std::string> glyphs;
      for (char c : text)
        if ((static_cast<unsigned char>(c) & 0xC0) == 0x80)
          glyphs.back() += c;
        else
          glyphs.emplace_back(1, c);
      return glyphs;
    };
    int mark = makespan_column();
    if (mark >= 0) {
      auto text = "makespan " + emit::format_seconds(makespan_s_);
      auto right = glyphs_of("▼ " + text), left = glyphs_of(text + " ▼");
      if (mark + static_cast<int>(right.size()) <= plot_)
        put(mark, right);
      else if (mark + 1 >= static_cast<int>(left.size()))
        put(mark + 1 - static_cast<int>(left.size()), left);
      else
        put(mark, {"▼"});
    }
    for (int k = 0;; ++k) {
      double t = k * step_;
      int c = column(t);
      if (c > plot_) break;
      auto glyphs = glyphs_of(k == 0 ? std::string("0") : emit::format_seconds(t));
      int end = c + static_cast<int>(glyphs.size());
      if (end > plot_) continue;
      bool free = true;  // one column of space on each side
      for (int i = std::max(0, c - 1); i < std::min(plot_, end + 1); ++i)
        free = free && !taken[static_cast<size_t>(i)];
      if (free) put(c, glyphs);
    }
    std::string line(static_cast<size_t>(label_width_), ' ');
    for (size_t i = 0; i < cells.size(); ++i) {
      if (static_cast<int>(i) == mark) {
        line += painter_.paint(cells[i], Style::red);
        continue;
      }
      line += painter_.paint(cells[i], Style::dim);
    }
    out += line + '\n';
  }

  /// The column the makespan falls in; -1 when the plan has none.
  int makespan_column() const {
    if (makespan_s_ <= 0) return -1;
    return std::clamp(column(makespan_s_), 0, plot_ - 1);
  }

  char key_for(const Assignment* a) {
    for (const auto& [key, b] : legend_)
      if (b == a) return key;
    char key = legend_.size() < kKeys.size() ? kKeys[legend_.size()] : '*';
    legend_.emplace_back(key, a);
    return key;
  }

  /// `held`: units that hold this GPU without running on it, drawn "░" in their colour.
  std::string row(const emit::Row& units, const emit::Row& held) {
    Cells cells{std::vector<std::string>(static_cast<size_t>(plot_)),
                std::vector<const std::string*>(static_cast<size_t>(plot_), nullptr)};
    for (int c = 0; c < plot_; ++c) cells.glyphs[static_cast<size_t>(c)] = "·";
    for (int k = 1; column(k * step_) < plot_; ++k)
      cells.glyphs[static_cast<size_t>(column(k * step_))] = "┊";
    if (int mark = makespan_column(); mark >= 0) cells.glyphs[static_cast<size_t>(mark)] = "│";
    if (units.empty() && held.empty() && plot_ > 6) {  // an idle GPU says so
      cells.glyphs[1] = "i", cells.glyphs[2] = "d", cells.glyphs[3] = "l", cells.glyphs[4] = "e";
    }
    for (const auto* a : held) {
      int c0 = std::min(column(a->start_s), plot_ - 1);
      int c1 = std::clamp(column(a->end_s), c0 + 1, plot_);
      for (int c = c0; c < c1; ++c) {
        cells.glyphs[static_cast<size_t>(c)] = "░";
        cells.labels[static_cast<size_t>(c)] = &a->unit.label;
      }
      held_ = true;
    }
    int cursor = 0;
    for (const auto* a : units) {
      int c0 = std::max(column(a->start_s), cursor);
      if (c0 >= plot_) {
        cells.glyphs.back() = "+";
        folded_.push_back(a);
        continue;
      }
      int c1 = std::clamp(column(a->end_s), c0 + 1, plot_);
      draw(cells, a, c0, c1 - c0);
      cursor = c1;
    }
    std::string out;
    for (size_t c = 0; c < cells.glyphs.size();) {
      size_t end = c + 1;
      while (end < cells.glyphs.size() && cells.labels[end] == cells.labels[c]) ++end;
      std::string run;
      for (size_t i = c; i < end; ++i) run += cells.glyphs[i];
      out += cells.labels[c] ? painter_.tint(run, emit::test_color(*cells.labels[c]))
                             : painter_.paint(run, Style::dim);
      c = end;
    }
    return out;
  }

  /// A bar of `n` columns from `c0`: "[name───]" when the name fits, else a key letter
  /// (with as much of the name as fits) that the legend under the node explains. A name of one
  /// column (`//t:a`, `//t:x_test`) gets a key too: drawn as it is, it would read as another
  /// unit's key.
  void draw(Cells& cells, const Assignment* a, int c0, int n) {
    auto name = emit::short_name(a->unit);
    std::string content;
    if (n >= 3 && columns(name) >= 2 && columns(name) <= n - 2) {
      content = "[" + name;
    } else {
      std::string key(1, key_for(a));
      content = n < 3 ? key : "[" + key + (n >= 7 ? " " + emit::fit(name, n - 4) : "");
    }
    std::vector<std::string> glyphs = emit::cells_of(content);
    while (static_cast<int>(glyphs.size()) < n - 1) glyphs.emplace_back("─");
    if (n >= 2) glyphs.emplace_back("]");
    for (int i = 0; i < n; ++i) {
      auto column = static_cast<size_t>(c0) + static_cast<size_t>(i);
      cells.glyphs[column] = glyphs[static_cast<size_t>(i)];
      cells.labels[column] = &a->unit.label;
    }
  }

  const emit::NodeLanes& node_;
  int plot_;
  int label_width_;
  const Painter& painter_;
  double makespan_s_ = 0;
  double scale_ = 1;
  double step_ = 60;
  std::vector<std::pair<char, const Assignment*>> legend_;
  bool held_ = false;  ///< some GPU is drawn held: the node's key says what "░" means
  std::vector<const Assignment*>
      folded_;  ///< units with no column left in their row, listed after the legend
};

void section(std::string& out, std::string_view title, size_t count, const Painter& p) {
  out += '\n' + p.paint(fmt::format("{} ({})", title, count), Style::bold) + '\n';
}

}  // namespace

std::string render_text(const Plan& plan, const TextOptions& options) {
  const int width = std::max(options.width, kMinWidth);
  const Painter p{options.color};
  std::string out;
  summary(out, plan, width, p);

  auto gantt = emit::layout(plan, options.fleet);
  int widest = 1;
  for (const auto& node : gantt.nodes)
    for (const auto& lane : node.lanes)
      widest = std::max(widest, static_cast<int>(fmt::format("{}", lane.gpu).size()));
  const int label_width = static_cast<int>(std::string_view(" GPU ").size()) + widest + 1;
  if (gantt.nodes.empty()) out += "\nNo unit is scheduled.\n";
  for (const auto& node : gantt.nodes) {
    out += '\n';
    NodeChart(node, gantt.end_s, plan.summary.makespan_s, width, label_width, p).render(out);
  }

  if (!plan.unschedulable.empty()) {
    section(out, "Unschedulable units", plan.unschedulable.size(), p);
    for (const auto& u : plan.unschedulable) {
      // The id cut in its package's middle (wrap would cut its end, and with it the ':' the
      // colour stops at: an internal error before).
      auto id = emit::fit_label(emit::printable(u.unit.id), width - 3);
      auto lines = wrap(fmt::format("{}: {}", id, emit::printable(u.reason)), width - 2, 4);
      size_t head = lines[0].starts_with(id + ":") ? id.size() : 0;
      out += "  " + p.paint(lines[0].substr(0, head), Style::red) + lines[0].substr(head) + '\n';
      for (size_t i = 1; i < lines.size(); ++i) out += "  " + lines[i] + '\n';
    }
  }
  if (!plan.diagnostics.empty()) {
    section(out, "Diagnostics", plan.diagnostics.size(), p);
    for (const auto& d : plan.diagnostics) {
      auto severity = std::string(to_string(d.severity));
      std::string about = d.label.empty() ? "" : " " + d.label;
      if (!d.source.empty()) about += fmt::format(" ({})", d.source);
      auto lines = wrap(emit::printable(fmt::format("{}{}: {}", severity, about, d.message)), width - 2, 4);
      auto style = d.severity == Severity::error     ? Style::red
                   : d.severity == Severity::warning ? Style::yellow
                                                     : Style::cyan;
      out += "  " + p.paint(severity, style) + lines[0].substr(severity.size()) + '\n';
      for (size_t i = 1; i < lines.size(); ++i) out += "  " + lines[i] + '\n';
    }
  }
  return out;
}

std::string render_node_summary(const Plan& plan, const TextOptions& options) {
  const int width = std::max(options.width, kMinWidth);
  const Painter p{options.color};
  std::string out;
  summary(out, plan, width, p);
  auto gantt = emit::layout(plan, options.fleet);
  size_t name_width = 4;
  for (const auto& node : gantt.nodes) name_width = std::max(name_width, emit::printable(node.name).size());
  name_width = std::min<size_t>(name_width, static_cast<size_t>(width) - 36);
  out += '\n' +
         p.paint(fmt::format("{:<{}}  {:>4}  {:>6}  {:>10}  {:>6}", "node", name_width, "GPUs", "units",
                             "busy until", "busy"),
                 Style::bold) +
         '\n';
  for (const auto& node : gantt.nodes) {
    // Units that share a GPU (pack) keep it busy once: summed, a shared GPU was busy 300%. A GPU
    // held by a unit that has the whole node is busy too, as the chart draws it: it was idle with
    // --fleet, and the node's share of busy time another without.
    double gpu_seconds = 0;
    for (const auto& lane : node.lanes) {
      std::vector<std::pair<double, double>> spans;
      for (const auto& row : lane.rows)
        for (const auto* a : row) spans.emplace_back(a->start_s, a->end_s);
      for (const auto* a : lane.held) spans.emplace_back(a->start_s, a->end_s);
      gpu_seconds += util::covered(spans);
    }
    // Of the makespan, as the markdown's "busy until makespan": a node that ends early shows its idle end.
    double capacity = static_cast<double>(node.lanes.size()) * plan.summary.makespan_s;
    out += fmt::format("{:<{}}  {:>4}  {:>6}  {:>10}  {:>6}\n",
                       emit::fit(emit::printable(node.name), static_cast<int>(name_width)), name_width,
                       node.lanes.size(), node.units, emit::format_seconds(node.busy_until_s),
                       capacity > 0 ? percent(gpu_seconds / capacity) : "-");
  }
  if (gantt.nodes.empty()) out += "No unit is scheduled.\n";
  out += fmt::format(
      "\n{} unschedulable unit{}, {} diagnostic{} (`gpuplan show` without --summary lists them)\n",
      plan.unschedulable.size(), util::plural(plan.unschedulable.size()), plan.diagnostics.size(),
      util::plural(plan.diagnostics.size()));
  return out;
}

}  // namespace gpuplan
