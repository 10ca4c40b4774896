#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <sstream>

#include "emit/gantt.hpp"
#include "gpuplan/emit.hpp"

using namespace gpuplan;

namespace {

Fleet one_node(int gpus) {
  Fleet fleet;
  fleet.source = "one.yaml";
  Node node;
  node.name = "n0";
  for (int i = 0; i < gpus; ++i) node.gpus.push_back({i, "L4", "l4", 23034, {}, ""});
  fleet.nodes.push_back(node);
  return fleet;
}

Assignment unit(const std::string& label, int asks, std::vector<int> gpus, double start, double end) {
  Assignment a;
  a.unit.id = a.unit.label = label;
  a.unit.requirement.edit().gpus = {asks, "tag"};
  a.unit.duration_s = end - start;
  a.node = "n0";
  a.gpus = std::move(gpus);
  a.start_s = start;
  a.end_s = end;
  return a;
}

}  // namespace

TEST_CASE("whole-node reserves more GPU-hours than its tests use") {
  Plan plan;
  plan.policy = Policy::whole_node;
  // The planner lists the GPUs a unit asked for; under whole-node it holds the whole node.
  plan.assignments = {unit("//a:two_test", 2, {0, 1}, 0, 3600)};
  plan.summary.makespan_s = 3600;
  auto c = compare(plan, one_node(4));
  REQUIRE(c.gpu_hours_reserved == Approx(4));
  REQUIRE(c.gpu_hours_used == Approx(2));
  REQUIRE(c.held == Approx(1));
  // util is the plan's gpu_utilization, GPUs running units: it was the held share, 1, beside
  // show's 0.5 for the same plan.
  REQUIRE(c.utilization == Approx(0.5));
}

TEST_CASE("a gpu-exclusive unit holds its node's GPUs, but only those it runs on count as utilised") {
  Plan plan;
  plan.assignments = {unit("//a:excl_test", 1, {0}, 0, 3600)};
  plan.assignments[0].unit.requirement.edit().exclusive = Sourced<bool>{true, "tag gpu-exclusive"};
  plan.summary.makespan_s = 3600;
  auto c = compare(plan, one_node(4));
  REQUIRE(c.gpu_hours_reserved == Approx(4));
  REQUIRE(c.held == Approx(1));
  REQUIRE(c.utilization == Approx(0.25));
  auto json = comparison_to_json({c});
  REQUIRE(json["comparisons"][0]["gpu_utilization"] == 0.25);
  REQUIRE(json["comparisons"][0]["gpu_held"] == 1.0);
}

TEST_CASE("pack counts a shared GPU once in the GPU-hours reserved") {
  Plan plan;
  plan.policy = Policy::pack;
  plan.assignments = {unit("//a:x_test", 1, {0}, 0, 3600), unit("//a:y_test", 1, {0}, 1800, 3600)};
  plan.summary.makespan_s = 3600;
  auto c = compare(plan, one_node(2));
  REQUIRE(c.gpu_hours_reserved == Approx(1));
  REQUIRE(c.gpu_hours_used == Approx(1.5));
  REQUIRE(c.held == Approx(0.5));
  REQUIRE(c.utilization == Approx(0.5));
}

TEST_CASE("the comparison table is aligned and fits the terminal") {
  Plan plan;
  plan.assignments = {unit("//a:x_test", 1, {0}, 0, 600)};
  plan.summary.makespan_s = 600;
  plan.summary.lower_bound_s = 500;
  std::vector<Comparison> rows{compare(plan, one_node(2)), compare(plan, one_node(2))};
  rows[1].fleet = "a/very/long/path/to/a/fleet/file/that/goes/on/and/on/and/on/fleet.yaml";
  auto text = render_comparison(rows, {80, false});
  std::istringstream in(text);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  for (const auto& line : lines) REQUIRE(emit::columns(line) <= 80);
  REQUIRE(lines[0] == "one.yaml: 2 GPUs on 1 node");
  REQUIRE(lines[1] == "   policy  makespan  bound    gap  reserved  used   held   util  unsched");
  REQUIRE(lines[2] == "   exact        10m  8m20s  20.0%      0.17  0.17  50.0%  50.0%        0");
  REQUIRE_THAT(lines[4], Catch::StartsWith("a/very/long/path") && Catch::EndsWith("…: 2 GPUs on 1 node"));
  auto json = comparison_to_json(rows);
  REQUIRE(json["comparisons"][0]["gap"] == 0.2);
  REQUIRE(json["comparisons"][0]["gpu_hours_reserved"] == Approx(0.167));
}

TEST_CASE("compare --json writes its ratios rounded as the plan JSON does, without float noise") {
  Comparison c;
  c.utilization = 0.54071;  // 5407 × 0.0001 had written 0.5407000000000001
  c.gpu_hours_used = 0.7;   // 700 × 0.001 had written 0.7000000000000001
  c.summary.makespan_s = 4209.0004;
  c.summary.lower_bound_s = 3600;
  auto text = comparison_to_json({c}).dump();
  REQUIRE_THAT(text, Catch::Contains("\"gpu_utilization\":0.5407,"));
  REQUIRE_THAT(text, Catch::Contains("\"gpu_hours_used\":0.7,"));
  REQUIRE_THAT(text, Catch::Contains("\"makespan_s\":4209.0,"));
  REQUIRE_THAT(text, Catch::Contains("\"gap\":0.1692,"));  // not 0.16920000000000002
}
