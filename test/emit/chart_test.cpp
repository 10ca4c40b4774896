#include <catch2/catch.hpp>

#include "emit/gantt.hpp"
#include "gpuplan/emit.hpp"
#include "plan_fixture.hpp"

using namespace gpuplan;

namespace {

size_t count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

Plan tricky_plan() {
  Plan plan;
  Assignment a;
  a.unit.id = a.unit.label = "//x:<b>&\"'$(rm -rf /)";
  a.unit.duration_s = 60;
  a.unit.requirement.gpus = {1, "tag gpu"};
  a.node = "n<1>";
  a.gpus = {0};
  a.end_s = 60;
  plan.assignments.push_back(a);
  plan.fleet = "fleet&<>.yaml";
  plan.summary.makespan_s = 60;
  return plan;
}

}  // namespace

TEST_CASE("the chart has one bar per unit, in SVG and in HTML") {
  auto plan = example_plan();
  REQUIRE(count(render_svg(plan), "<g class=\"bar\"") == plan.assignments.size());
  REQUIRE(count(render_html(plan), "<g class=\"bar\"") == plan.assignments.size());
}

TEST_CASE("the chart marks the makespan and the lower bound and has a legend per test") {
  auto svg = render_svg(example_plan());
  REQUIRE_THAT(svg, Catch::Contains("makespan 28m") && Catch::Contains("lower bound 26m"));
  REQUIRE(count(svg, "class=\"legend\"") == 12);  // distinct tests with a placed unit
  REQUIRE_THAT(svg, Catch::Contains(emit::hex(emit::test_color("//ml:train_test"))));
}

TEST_CASE("a bar's tooltip gives label, shard, GPUs, times and requirements") {
  auto svg = render_svg(example_plan());
  REQUIRE_THAT(
      svg, Catch::Contains("<title>//ml:train_test\nshard 2 of 4 (TEST_SHARD_INDEX=1)\nh100-0 · GPUs "
                           "4,5,6,7\n0s → 14m (14m, history-p90)\nneeds 4 GPUs, ≥ 40GiB each, CUDA ≥ 12.4, "
                           "NVLink\nreserves 40GiB per GPU</title>"));
}

TEST_CASE("labels with markup characters are escaped everywhere") {
  for (const auto& out : {render_svg(tricky_plan()), render_html(tricky_plan())}) {
    REQUIRE(out.find("<b>") == std::string::npos);
    REQUIRE(out.find("n<1>") == std::string::npos);
    REQUIRE(out.find("fleet&<") == std::string::npos);
    REQUIRE_THAT(out, Catch::Contains("//x:&lt;b&gt;&amp;&quot;&#39;$(rm -rf /)"));
  }
}

TEST_CASE("the HTML page loads nothing from elsewhere") {
  auto html = render_html(example_plan());
  REQUIRE(html.find("src=") == std::string::npos);
  REQUIRE(html.find("href") == std::string::npos);
  REQUIRE(count(html, "http") == count(html, "http://www.w3.org/2000/svg"));
}

TEST_CASE("the same plan draws the same bytes") {
  REQUIRE(render_svg(example_plan()) == render_svg(example_plan()));
  REQUIRE(render_html(example_plan()) == render_html(example_plan()));
}

TEST_CASE("a test keeps its colour whatever else is in the plan") {
  REQUIRE(emit::test_color("//ml:train_test").r == emit::test_color("//ml:train_test").r);
  auto a = emit::hex(emit::test_color("//ml:train_test")),
       b = emit::hex(emit::test_color("//ml:train_test2"));
  REQUIRE(a != b);
}
