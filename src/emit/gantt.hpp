#pragma once
// What the text preview and the charts share: which unit goes in which lane and row,
// how a unit is named and coloured, and how times are written.
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/fleet.hpp"
#include "gpuplan/plan.hpp"

namespace gpuplan::emit {

/// Units on one GPU that never overlap in time, in start order.
using Row = std::vector<const Assignment*>;

/// One GPU of a node. Several rows only where units share the GPU (the `pack` policy).
struct Lane {
  int gpu = 0;
  std::vector<Row> rows;
  /// Units that hold this GPU without running on it: they have the whole node (gpu-exclusive,
  /// or several GPUs under whole-node; holds_whole_node), so nothing else may use it. In start
  /// order; drawn as held, not as idle.
  Row held;
};

struct NodeLanes {
  std::string name;
  std::vector<Lane> lanes;  ///< GPU 0 up to the highest GPU a unit uses, so idle GPUs show
  int units = 0;
  double busy_until_s = 0;
};

struct Gantt {
  /// In the order the plan lists them; with a fleet, every node of the fleet in its order
  /// (idle ones too, with a lane for each of their GPUs), then the plan's nodes it lacks.
  std::vector<NodeLanes> nodes;
  double end_s = 1;  ///< the time axis ends here: the latest of makespan, bound and last end
};

Gantt layout(const Plan& plan, const Fleet* fleet = nullptr);

/// The target name without its package, "_test" suffix dropped, "#N" for shard N:
/// "//ml/vision:resnet_test" shard 1 → "resnet#1".
std::string short_name(const Unit& unit);

/// 42 → "42s", 90 → "1m30s", 300 → "5m", 3900 → "1h05m", 2.5 → "2.5s".
std::string format_seconds(double seconds);

/// A round step for time-axis ticks (1s, 2s, 5s, 10s, 15s, 30s, 1m, ...) giving at most `max_ticks` ticks.
double tick_step(double span_s, int max_ticks);

struct Rgb {
  int r = 0, g = 0, b = 0;
};
/// A light colour picked from the label alone, so a test keeps its colour across plans.
Rgb test_color(std::string_view label);
std::string hex(Rgb color);  ///< "#a1b2c3"

/// "//ml/vision:resnet_test" → "//ml/vision"; a label without ':' keeps everything up to its
/// last '/'. Both charts colour a unit by its package (test_color of this) and list packages,
/// not tests, in their legends: a monorepo has some 100 times fewer.
std::string package_of(std::string_view label);

/// The legend lists at most this many packages, then one line for the rest ("and 988 more
/// packages (96,800 units)"). The HTML page's script keeps the same number (kPageScript).
inline constexpr std::size_t kLegendPackages = 12;

struct PackageUnits {
  std::string name;
  int units = 0;
};
/// The packages of `units` (package → units drawn) in legend order, as the HTML page's script
/// sorts them: most units first, then by name.
std::vector<PackageUnits> legend_order(const std::map<std::string, int>& units);

/// Control characters (terminal escapes, NUL, ...) replaced by '?', so a hand-edited plan
/// cannot drive the terminal or break XML.
std::string printable(std::string_view text);

/// Columns a terminal takes to show UTF-8 `text`: East Asian wide characters (CJK, most emoji)
/// take two, combining marks none (one a code point before, so a CJK name pushed its row past
/// the width).
int columns(std::string_view text);

/// `text` as terminal cells: one a character, and an empty cell after each wide one (the
/// column it also covers); a combining mark goes with the character before it.
std::vector<std::string> cells_of(std::string_view text);

/// The first `width` columns of `text`, ending in "…" when cut.
std::string fit(std::string_view text, int width);

/// A label (or unit id) in at most `width` columns, cut in its package's middle so that the
/// target's name and shard stay: "//very/long/pa…:case_0012_test#shard-1-of-4"; when even the
/// name does not fit, its last columns after "…".
std::string fit_label(std::string_view label, int width);

/// "0,1,2,3"
std::string join_gpus(const std::vector<int>& gpus);

}  // namespace gpuplan::emit
