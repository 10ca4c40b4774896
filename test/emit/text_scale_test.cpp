// The terminal preview at 2,000 units: every unit is drawn with its name, named in the
// legend, or listed as folded; --summary has a line per node that counts them.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <map>
#include <regex>
#include <string>
#include <tuple>

#include "gpuplan/emit.hpp"
#include "gpuplan/node_summary.hpp"

using namespace gpuplan;

namespace {

/// 2,000 units on 4 nodes of 8 GPUs, one after another on each GPU: mostly 5–30 s, every
/// tenth 10 minutes, so that at 80 columns most are far too short for a column of their own.
Plan big_plan() {
  Plan plan;
  std::map<std::pair<int, int>, double> free_at;
  for (int i = 0; i < 2000; ++i) {
    Assignment a;
    a.unit.id = a.unit.label = fmt::format("//p:u{}_test", i);
    a.unit.duration_s = i % 10 == 0 ? 600 : 5 + i % 26;
    a.unit.requirement.edit().gpus = {1, "tag gpu"};
    int node = i % 4, gpu = (i / 4) % 8;
    a.node = fmt::format("node-{}", node);
    a.gpus = {gpu};
    a.start_s = free_at[{node, gpu}];
    a.end_s = a.start_s + a.unit.duration_s;
    free_at[{node, gpu}] = a.end_s;
    plan.summary.makespan_s = std::max(plan.summary.makespan_s, a.end_s);
    plan.assignments.push_back(a);
  }
  std::sort(plan.assignments.begin(), plan.assignments.end(), [](const auto& a, const auto& b) {
    return std::tie(a.node, a.start_s, a.gpus) < std::tie(b.node, b.start_s, b.gpus);
  });
  plan.summary.gpu_units = plan.summary.scheduled_units = 2000;
  return plan;
}

}  // namespace

TEST_CASE("at 2,000 units the preview hides no unit: drawn by name, in the legend, or listed as folded") {
  auto plan = big_plan();
  for (int width : {80, 200}) {
    auto text = render_text(plan, {width, false});
    int drawn = 0, listed = 0, missing = 0;
    for (int i = 0; i < 2000; ++i) {
      // A bar "[u12─…]" (not "[u123"), or a legend / folded line naming the unit's id.
      auto name = fmt::format("[u{}", i);
      bool in_bar = false;
      for (auto at = text.find(name); at != std::string::npos && !in_bar; at = text.find(name, at + 1)) {
        auto next = at + name.size();
        in_bar = next < text.size() && !std::isdigit(static_cast<unsigned char>(text[next]));
      }
      bool in_list = text.find(fmt::format(" //p:u{}_test  GPU ", i)) != std::string::npos;
      drawn += in_bar;
      listed += in_list;
      if (!in_bar && !in_list) ++missing;
    }
    INFO("width " << width << ": " << drawn << " drawn by name, " << listed << " listed");
    REQUIRE(missing == 0);
    // The folded units are counted per node and each listed once with a "+".
    std::regex count(R"(\+ (\d+) units? folded)");
    int folded = 0;
    for (std::sregex_iterator it(text.begin(), text.end(), count), end; it != end; ++it)
      folded += std::stoi((*it)[1]);
    int plus_lines = 0;
    for (size_t at = 0; (at = text.find("\n   + //p:", at)) != std::string::npos; ++at) ++plus_lines;
    REQUIRE(folded == plus_lines);
    if (width == 80) REQUIRE(folded > 0);
  }
}

TEST_CASE("show --summary has one line per node whose units add up to the plan's") {
  auto text = render_node_summary(big_plan(), {80, false});
  std::regex row(R"(\nnode-(\d) +(\d+) +(\d+) )");
  int nodes = 0, units = 0;
  for (std::sregex_iterator it(text.begin(), text.end(), row), end; it != end; ++it) {
    ++nodes;
    REQUIRE((*it)[2] == "8");
    units += std::stoi((*it)[3]);
  }
  REQUIRE(nodes == 4);
  REQUIRE(units == 2000);
  REQUIRE_THAT(text, Catch::Contains("0 unschedulable units"));
}
