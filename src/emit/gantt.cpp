#include "emit/gantt.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <map>
#include <set>

#include "util/text.hpp"

namespace gpuplan::emit {

namespace {

/// Beyond this many lanes a node's GPU indices are taken as they come, without gap filling.
constexpr int kMaxFilledLanes = 256;

void place(Lane& lane, const Assignment& assignment) {
  for (auto& row : lane.rows)
    if (row.back()->end_s <= assignment.start_s) {
      row.push_back(&assignment);
      return;
    }
  lane.rows.push_back({&assignment});
}

}  // namespace

Gantt layout(const Plan& plan, const Fleet* fleet) {
  Gantt gantt;
  std::map<std::string, std::vector<const Assignment*>> by_node;
  std::map<std::string, int> fleet_gpus;  // node → the GPUs the fleet gives it
  std::vector<std::string> order;
  if (fleet)
    for (const auto& node : fleet->nodes) {
      by_node.try_emplace(node.name);
      fleet_gpus[node.name] = static_cast<int>(node.gpus.size());
      order.push_back(node.name);
    }
  for (const auto& a : plan.assignments) {
    auto [it, added] = by_node.try_emplace(a.node);
    if (added) order.push_back(a.node);
    it->second.push_back(&a);
    gantt.end_s = std::max(gantt.end_s, a.end_s);
  }
  gantt.end_s = std::max({gantt.end_s, plan.summary.makespan_s, plan.summary.lower_bound_s});
  for (const auto& name : order) {
    auto units = by_node[name];
    std::stable_sort(units.begin(), units.end(),
                     [](const Assignment* x, const Assignment* y) { return x->start_s < y->start_s; });
    std::set<int> used;
    for (int g = 0; g < std::min(fleet_gpus[name], kMaxFilledLanes); ++g) used.insert(g);
    for (const auto* a : units) used.insert(a->gpus.begin(), a->gpus.end());
    std::vector<int> gpus(used.begin(), used.end());
    if (!used.empty() && *used.begin() >= 0 && *used.rbegin() < kMaxFilledLanes) {
      gpus.clear();
      for (int g = 0; g <= *used.rbegin(); ++g) gpus.push_back(g);
    }
    NodeLanes node{name, {}, static_cast<int>(units.size()), 0};
    std::map<int, size_t> lane_of;
    for (int g : gpus) {
      lane_of[g] = node.lanes.size();
      node.lanes.push_back({g, {}, {}});
    }
    for (const auto* a : units) {
      node.busy_until_s = std::max(node.busy_until_s, a->end_s);
      std::set<int> on(a->gpus.begin(), a->gpus.end());
      for (int g : on) place(node.lanes[lane_of[g]], *a);
      if (holds_whole_node(*a, plan.policy))
        for (auto& lane : node.lanes)
          if (!on.contains(lane.gpu)) lane.held.push_back(a);
    }
    gantt.nodes.push_back(std::move(node));
  }
  return gantt;
}

std::string short_name(const Unit& unit) {
  std::string_view label = unit.label;
  auto cut = label.rfind(':');
  if (cut == std::string_view::npos) cut = label.rfind('/');
  std::string_view name = cut == std::string_view::npos ? label : label.substr(cut + 1);
  constexpr std::string_view suffix = "_test";
  if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix)
    name.remove_suffix(suffix.size());
  if (name.empty()) name = label;
  std::string result = printable(name);
  if (unit.shard_index) result += fmt::format("#{}", *unit.shard_index);
  return result;
}

std::string format_seconds(double seconds) {
  if (!std::isfinite(seconds)) return "?";
  if (seconds < 0) return "-" + format_seconds(-seconds);
  if (seconds < 10 && std::round(seconds) != seconds) return fmt::format("{:.1f}s", seconds);
  auto total = static_cast<std::int64_t>(std::llround(seconds));
  if (total < 60) return fmt::format("{}s", total);
  if (total < 3600) {
    auto m = total / 60, s = total % 60;
    return s == 0 ? fmt::format("{}m", m) : fmt::format("{}m{:02}s", m, s);
  }
  auto minutes = (total + 30) / 60;
  auto h = minutes / 60, m = minutes % 60;
  return m == 0 ? fmt::format("{}h", h) : fmt::format("{}h{:02}m", h, m);
}

double tick_step(double span_s, int max_ticks) {
  static constexpr std::array<double, 19> steps{1,   2,    5,    10,   15,    30,    60,    120,   300,   600,
                                                900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800};
  max_ticks = std::max(max_ticks, 1);
  for (double step : steps)
    if (span_s / step <= max_ticks) return step;
  return std::ceil(span_s / max_ticks / 86400) * 86400;
}

Rgb test_color(std::string_view label) {
  // A basis one digit short of FNV-1a's own, kept: the charts' colours stay as they were.
  const std::uint64_t hash = util::fnv1a(label, 1469598103934665603ULL);
  double hue = static_cast<double>(hash % 360);
  double saturation = 0.50 + static_cast<double>((hash >> 16) % 20) / 100;
  double lightness = 0.62 + static_cast<double>((hash >> 24) % 12) / 100;
  double chroma = (1 - std::abs(2 * lightness - 1)) * saturation;
  double x = chroma * (1 - std::abs(std::fmod(hue / 60, 2) - 1));
  double m = lightness - chroma / 2;
  double r = 0, g = 0, b = 0;
  switch (static_cast<int>(hue / 60)) {
    case 0: r = chroma, g = x; break;
    case 1: r = x, g = chroma; break;
    case 2: g = chroma, b = x; break;
    case 3: g = x, b = chroma; break;
    case 4: r = x, b = chroma; break;
    default: r = chroma, b = x; break;
  }
  auto byte = [m](double v) { return static_cast<int>(std::lround((v + m) * 255)); };
  return {byte(r), byte(g), byte(b)};
}

std::string hex(Rgb color) { return fmt::format("#{:02x}{:02x}{:02x}", color.r, color.g, color.b); }

std::string package_of(std::string_view label) {
  auto cut = label.find(':');
  if (cut == std::string_view::npos) cut = label.rfind('/');
  return std::string(cut == std::string_view::npos ? label : label.substr(0, cut));
}

std::vector<PackageUnits> legend_order(const std::map<std::string, int>& units) {
  std::vector<PackageUnits> order;
  order.reserve(units.size());
  for (const auto& [name, count] : units) order.push_back({name, count});
  // Stable on the map's name order, so ties stay by name.
  std::stable_sort(order.begin(), order.end(),
                   [](const PackageUnits& a, const PackageUnits& b) { return a.units > b.units; });
  return order;
}

std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) out += c < 0x20 || c == 0x7f ? '?' : static_cast<char>(c);
  return out;
}

namespace {

/// The code point at `text[at]` and its length in bytes; a stray byte counts as one of its own.
std::pair<char32_t, size_t> decode(std::string_view text, size_t at) {
  auto c = static_cast<unsigned char>(text[at]);
  size_t length = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xE ? 3 : (c >> 3) == 0x1E ? 4 : 1;
  if (at + length > text.size()) length = 1;
  char32_t code = length == 1 ? c : c & (0x7F >> length);
  for (size_t i = 1; i < length; ++i) {
    auto next = static_cast<unsigned char>(text[at + i]);
    if ((next & 0xC0) != 0x80) return {c, 1};
    code = (code << 6) | (next & 0x3F);
  }
  return {code, length};
}

/// Columns a terminal gives a code point: 2 for East Asian wide and fullwidth characters (CJK,
/// kana, hangul, fullwidth forms, most emoji), 0 for combining marks and joiners, else 1.
int width_of(char32_t c) {
  if ((c >= 0x300 && c <= 0x36F) || (c >= 0x200B && c <= 0x200F) || (c >= 0xFE00 && c <= 0xFE0F)) return 0;
  const bool wide =
      (c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0x303E) || (c >= 0x3041 && c <= 0x33FF) ||
      (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xA000 && c <= 0xA4CF) ||
      (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0xFE30 && c <= 0xFE4F) ||
      (c >= 0xFF00 && c <= 0xFF60) || (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) ||
      (c >= 0x1F680 && c <= 0x1F6FF) || (c >= 0x1F900 && c <= 0x1F9FF) || (c >= 0x1FA70 && c <= 0x1FAFF) ||
      (c >= 0x20000 && c <= 0x3FFFD);
  return wide ? 2 : 1;
}

}  // namespace

int columns(std::string_view text) {
  int total = 0;
  for (size_t at = 0; at < text.size();) {
    auto [code, length] = decode(text, at);
    total += width_of(code);
    at += length;
  }
  return total;
}

std::vector<std::string> cells_of(std::string_view text) {
  std::vector<std::string> cells;
  for (size_t at = 0; at < text.size();) {
    auto [code, length] = decode(text, at);
    const int width = width_of(code);
    if (width == 0 && !cells.empty())
      cells.back() += text.substr(at, length);
    else
      cells.emplace_back(text.substr(at, length));
    if (width == 2) cells.emplace_back();
    at += length;
  }
  return cells;
}

std::string fit(std::string_view text, int width) {
  if (columns(text) <= width) return std::string(text);
  if (width <= 0) return "";
  std::string out;
  int taken = 0;
  for (size_t at = 0; at < text.size();) {
    auto [code, length] = decode(text, at);
    taken += width_of(code);
    if (taken > width - 1) break;  // a column for "…"
    out += text.substr(at, length);
    at += length;
  }
  return out + "…";
}

std::string fit_label(std::string_view label, int width) {
  if (columns(label) <= width) return std::string(label);
  if (width <= 1) return fit(label, width);
  auto last_columns = [](std::string_view text, int n) {  // whole code points, at most n columns
    size_t at = text.size();
    while (at > 0) {
      size_t start = at - 1;
      while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
      n -= columns(text.substr(start, at - start));
      if (n < 0) break;
      at = start;
    }
    return text.substr(at);
  };
  auto colon = label.rfind(':');
  std::string_view name = colon == std::string_view::npos ? std::string_view{} : label.substr(colon);
  const int room = width - columns(name) - 1;  // for the package's start, before "…"
  if (name.empty() || room < 3) return "…" + std::string(last_columns(label, width - 1));
  std::string head = fit(label, room + 1);  // room columns and its own "…"
  return head + std::string(name);
}

std::string join_gpus(const std::vector<int>& gpus) { return fmt::format("{}", fmt::join(gpus, ",")); }

}  // namespace gpuplan::emit
