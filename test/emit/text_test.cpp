#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <sstream>

#include "emit/gantt.hpp"
#include "gpuplan/emit.hpp"
#include "gpuplan/node_summary.hpp"
#include "plan_fixture.hpp"

using namespace gpuplan;

namespace {

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

Assignment shared(const std::string& label, double start, double end) {
  Assignment a;
  a.unit.id = a.unit.label = label;
  a.unit.duration_s = end - start;
  a.unit.vram_mib = 4096;
  a.unit.requirement.edit().gpus = {1, "tag gpu"};
  a.node = "l4-0";
  a.gpus = {0};
  a.start_s = start;
  a.end_s = end;
  return a;
}

}  // namespace

TEST_CASE("the preview fits the terminal at 80 and at 200 columns") {
  auto plan = example_plan();
  for (int width : {80, 200}) {
    auto text = render_text(plan, {width, false});
    for (const auto& line : lines(text)) {
      INFO(width << ": " << line);
      REQUIRE(emit::columns(line) <= width);
    }
    for (const char* expected :
         {"policy exact", "makespan 28m", "lower bound 26m (gap 7.7%)", "a100-0", "h100-0", "h100-1", "l4-0",
          " GPU 7 ", "Unschedulable units (1)", "//ml:cuda11_compat_test", "Diagnostics (2)",
          "warning //ml:resources_test (tag gpu:0)"})
      REQUIRE_THAT(text, Catch::Contains(expected));
  }
}

TEST_CASE("the preview draws a lane per GPU with each unit's short name on it") {
  auto text = lines(render_text(example_plan(), {200, false}));
  auto lane = [&](const std::string& node, int gpu) {
    bool in_node = false;
    for (const auto& line : text) {
      if (line.rfind(node + " ", 0) == 0)
        in_node = true;
      else if (in_node && line.rfind(fmt::format(" GPU {} ", gpu), 0) == 0)
        return line;
    }
    return std::string();
  };
  REQUIRE_THAT(lane("h100-0", 5), Catch::Contains("[train#1─") && Catch::Contains("[train#3─"));
  REQUIRE_THAT(lane("h100-1", 0), Catch::Contains("[pmap─") && Catch::Contains("[fp8_gemm─"));
  REQUIRE_THAT(lane("h100-1", 7), Catch::Contains("[pmap─") && !Catch::Contains("fp8_gemm"));
}

TEST_CASE("a unit too short for its name gets a key explained under its node") {
  auto text = render_text(example_plan(), {80, false});
  REQUIRE_THAT(text, Catch::Contains("   b //tf:conv_test  GPU 2  10m → 10m45s"));
}

TEST_CASE("a test whose name is one letter is named in the legend, never drawn as another unit's key") {
  Plan plan;
  plan.assignments.push_back(shared("//t:a", 0, 600));
  plan.assignments.push_back(shared("//t:a_rather_long_name_test", 600, 630));
  plan.summary.makespan_s = 630;
  auto text = render_text(plan, {80, false});
  REQUIRE_THAT(text, Catch::Contains(" //t:a  GPU 0  0s → 10m"));
  REQUIRE_THAT(text, Catch::Contains(" //t:a_rather_long_name_test  GPU 0  10m → 10m30s"));
}

TEST_CASE("long labels are cut in their package's middle, keeping the test and shard, and never crash") {
  // An unschedulable unit whose package was wider than the terminal was an internal error (its ':'
  // cut off), and the key under a node cut every long label at its end, so that its lines read
  // alike and lost their times.
  Plan plan;
  const std::string package = "//very_long_package_component_0/very_long_package_component_1/more";
  for (int i = 0; i < 3; ++i) {
    auto a = shared(fmt::format("{}:case_{}_test", package, i), 60.0 * i, 60.0 * i + 1);
    a.unit.id += "#shard-1-of-4";
    plan.assignments.push_back(a);
  }
  auto lost = shared("//" + std::string(130, 'p') + ":t", 0, 60);
  plan.unschedulable.push_back({lost.unit, "needs 16 GPUs; the largest node has 8"});
  plan.summary.makespan_s = 121;
  for (int width : {40, 80, 120}) {
    INFO(width);
    REQUIRE_NOTHROW(render_text(plan, {width, true}));  // the red unit id
    auto text = render_text(plan, {width, false});
    REQUIRE_THAT(text, Catch::Contains("…:t") && Catch::Contains("needs 16"));
    if (width >= 80)
      for (int i = 0; i < 3; ++i)
        REQUIRE_THAT(text, Catch::Contains(fmt::format(":case_{}_test#shard-1-of-4  GPU 0  {}", i,
                                                       emit::format_seconds(60.0 * i))));
    for (const auto& line : lines(text)) REQUIRE(emit::columns(line) <= width);
  }
  CHECK(emit::fit_label("//a/b/c:t", 9) == "//a/b/c:t");
  CHECK(emit::fit_label("//aaaa/bbbb:t", 8) == "//aaa…:t");
  CHECK(emit::fit_label("//a:" + std::string(20, 'x'), 8) == "…xxxxxxx");
}

TEST_CASE("show --summary's busy share is of the makespan, as the markdown view's") {
  // l4-0's 2 GPUs are busy 15m25s of GPU time, its last unit ends at 9m35s, the plan at 28m: 27.5%,
  // which the markdown view rounds to 28%. It said 80.5%, the share until its own last unit.
  REQUIRE_THAT(render_node_summary(example_plan(), {100, false}),
               Catch::Matches("[\\s\\S]*\nl4-0 +2 +4 +9m35s +27\\.5%\n[\\s\\S]*"));
}

TEST_CASE("colours only when asked for") {
  auto plan = example_plan();
  REQUIRE(render_text(plan, {80, false}).find('\x1b') == std::string::npos);
  REQUIRE(render_text(plan, {80, true}).find("\x1b[38;5;") != std::string::npos);
}

TEST_CASE("a label with terminal escapes cannot reach the terminal") {
  Plan plan;
  auto a = shared("//evil:\x1b]0;pwned\x07test", 0, 60);
  plan.assignments.push_back(a);
  plan.unschedulable.push_back({a.unit, "reason with \x1b[2J"});
  plan.summary.makespan_s = 60;
  REQUIRE(render_text(plan, {80, false}).find('\x1b') == std::string::npos);
}

TEST_CASE("units sharing a GPU under pack get a row each") {
  Plan plan;
  plan.policy = Policy::pack;
  plan.assignments = {shared("//p:first_test", 0, 600), shared("//p:second_test", 0, 300),
                      shared("//p:third_test", 300, 600)};
  plan.summary.makespan_s = 600;
  auto text = lines(render_text(plan, {80, false}));
  auto first =
      std::find_if(text.begin(), text.end(), [](const std::string& l) { return l.rfind(" GPU 0 ", 0) == 0; });
  REQUIRE(first != text.end());
  REQUIRE_THAT(*first, Catch::Contains("[first─"));
  REQUIRE_THAT(*(first + 1), Catch::StartsWith("       [second─") && Catch::Contains("][third─"));
}

TEST_CASE("an empty plan says that nothing is scheduled") {
  REQUIRE_THAT(render_text(Plan{}, {80, false}), Catch::Contains("No unit is scheduled."));
}

TEST_CASE("times read as people say them") {
  REQUIRE(emit::format_seconds(42) == "42s");
  REQUIRE(emit::format_seconds(2.5) == "2.5s");
  REQUIRE(emit::format_seconds(90) == "1m30s");
  REQUIRE(emit::format_seconds(300) == "5m");
  REQUIRE(emit::format_seconds(3900) == "1h05m");
}

namespace {

/// A gpu-exclusive unit on GPU 0 of an 8-GPU node for 15 minutes, and the fleet that has the node.
std::pair<Plan, Fleet> exclusive_on_h100() {
  Plan plan;
  auto a = shared("//ex:excl_test", 0, 900);
  a.unit.requirement.edit().exclusive = Sourced<bool>{true, "tag gpu-exclusive"};
  a.node = "h100-1";
  plan.assignments.push_back(a);
  plan.summary.makespan_s = 900;
  Fleet fleet;
  Node node;
  node.name = "h100-1";
  for (int i = 0; i < 8; ++i) node.gpus.push_back({i, "H100", "h100", 81559, {}, ""});
  fleet.nodes.push_back(node);
  return {plan, fleet};
}

}  // namespace

TEST_CASE("GPUs held by a unit that has the whole node are drawn held, not idle") {
  // With --fleet, GPUs 1-7 of the exclusive unit's node read "idle" while nothing else could run there.
  auto [plan, fleet] = exclusive_on_h100();
  TextOptions options{80, false};
  options.fleet = &fleet;
  auto text = lines(render_text(plan, options));
  int held = 0;
  for (const auto& line : text) {
    INFO(line);
    REQUIRE_THAT(line, !Catch::StartsWith(" GPU ") || !Catch::Contains("idle"));
    if (line.starts_with(" GPU ") && line.find("░░░░") != std::string::npos) ++held;
  }
  REQUIRE(held == 7);
  REQUIRE_THAT(render_text(plan, options), Catch::Contains("░ held, not used"));
  auto gantt = emit::layout(plan, &fleet);
  REQUIRE(gantt.nodes[0].lanes[0].held.empty());
  REQUIRE(gantt.nodes[0].lanes[7].held.size() == 1);
}

TEST_CASE("show --summary gives a whole-node unit's node the same busy share with and without --fleet") {
  // It said 100% without the fleet (one GPU drawn) and 12.5% with it (GPUs 1-7 counted idle).
  auto [plan, fleet] = exclusive_on_h100();
  TextOptions with{100, false};
  with.fleet = &fleet;
  REQUIRE_THAT(render_node_summary(plan, {100, false}),
               Catch::Matches("[\\s\\S]*\nh100-1 +1 +1 +15m +100\\.0%\n[\\s\\S]*"));
  REQUIRE_THAT(render_node_summary(plan, with),
               Catch::Matches("[\\s\\S]*\nh100-1 +8 +1 +15m +100\\.0%\n[\\s\\S]*"));
}

TEST_CASE("wide characters count two columns: a CJK test name keeps its row in the width") {
  CHECK(emit::columns("テスト") == 6);
  CHECK(emit::columns("ünï") == 3);
  CHECK(emit::columns("🚀") == 2);
  CHECK(emit::columns(emit::fit("テストテスト", 5)) <= 5);
  CHECK(emit::columns(emit::fit_label("//a:テストテストテスト", 9)) <= 9);
  Plan plan;
  plan.assignments.push_back(shared("//ünïcödé/パッケージ:テスト_test", 0, 600));
  plan.assignments.push_back(shared("//b:short_test", 600, 610));
  plan.summary.makespan_s = 610;
  for (int width : {40, 80, 120}) {
    auto text = render_text(plan, {width, false});
    REQUIRE_THAT(text, Catch::Contains("テスト"));
    for (const auto& line : lines(text)) {
      INFO(width << ": " << line);
      REQUIRE(emit::columns(line) <= width);
    }
  }
}
