#include "emit/chart.hpp"

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <set>

#include "emit/gantt.hpp"
#include "emit/html_page.hpp"
#include "gpuplan/emit.hpp"
#include "plan_fixture.hpp"

using namespace gpuplan;

namespace {

/// The SVG chart and the HTML page as one string each, as `render` writes them.
std::string render_svg(const Plan& plan, const Fleet* fleet = nullptr) {
  std::string svg;
  write_svg(plan, fleet, [&](std::string_view text) { svg += text; });
  return svg;
}

std::string render_html(const Plan& plan, const Fleet* fleet = nullptr) {
  std::string page;
  write_html(plan, fleet, [&](std::string_view text) { page += text; });
  return page;
}

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
  a.unit.requirement.edit().gpus = {1, "tag gpu"};
  a.node = "n<1>";
  a.gpus = {0};
  a.end_s = 60;
  plan.assignments.push_back(a);
  plan.fleet = "fleet&<>.yaml";
  plan.summary.makespan_s = 60;
  return plan;
}

/// The layout the HTML page carries for its script.
nlohmann::json page_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"plan-data\">";
  auto from = html.find(open) + open.size();
  return nlohmann::json::parse(html.substr(from, html.find("</script>", from) - from));
}

}  // namespace

TEST_CASE("the chart has one bar per unit, in SVG and in HTML") {
  auto plan = example_plan();
  REQUIRE(count(render_svg(plan), "<g class=\"bar\"") == plan.assignments.size());
  REQUIRE(page_data(render_html(plan))["units"].size() == plan.assignments.size());
}

TEST_CASE("the HTML chart draws a unit on adjacent GPUs as one bar across their lanes") {
  auto plan = example_plan();
  auto data = page_data(render_html(plan));
  for (size_t i = 0; i < plan.assignments.size(); ++i) {
    const auto& segments = data["units"][i][13];
    INFO(plan.assignments[i].unit.id);
    REQUIRE(segments.size() == 2);  // one [first row, rows]: the example's units hold adjacent GPUs
    REQUIRE(segments[1] == plan.assignments[i].gpus.size());
  }
}

TEST_CASE("the HTML chart lists unschedulable units on top, one item each, and a legend by package") {
  auto plan = example_plan();
  auto html = render_html(plan);
  REQUIRE(count(html, "<li class=\"unsched\">") == plan.unschedulable.size());
  REQUIRE(html.find("id=\"unschedulable\"") < html.find("id=\"chart\""));
  std::set<std::string> packages;
  auto data = page_data(html);
  for (const auto& p : data["packages"]) packages.insert(p["name"]);
  REQUIRE(packages == std::set<std::string>{"//jax", "//ml", "//tf", "//xla"});
}

TEST_CASE("with a fleet, the HTML chart draws idle nodes and every GPU") {
  auto plan = example_plan();
  Fleet fleet;
  for (const auto& name : {"spare-0", "l4-0"}) {
    Node node;
    node.name = name;
    node.gpus.resize(4);
    fleet.nodes.push_back(node);
  }
  auto data = page_data(render_html(plan, &fleet));
  REQUIRE(data["nodes"][0]["name"] == "spare-0");  // the fleet's order first
  REQUIRE(data["nodes"][0]["units"] == 0);
  REQUIRE(data["nodes"][0]["lanes"].size() == 4);
  REQUIRE(data["nodes"][1]["name"] == "l4-0");
  REQUIRE(data["nodes"][1]["lanes"].size() == 4);  // the plan uses GPUs 0 and 1 of it
  REQUIRE(data["nodes"].size() == 5);
}

TEST_CASE("the chart marks the makespan and the lower bound and has a legend by package") {
  auto svg = render_svg(example_plan());
  REQUIRE_THAT(svg, Catch::Contains("makespan 28m") && Catch::Contains("lower bound 26m"));
  // One swatch a package, as on the HTML page (it was one a test: 12 here, 100,000 in a monorepo).
  REQUIRE(count(svg, "class=\"legend\"") == 4);
  REQUIRE_THAT(svg, Catch::Contains("//ml (") && Catch::Contains("//xla ("));
  // A bar takes its package's colour, so two tests of //ml share one.
  auto ml = emit::hex(emit::test_color("//ml"));
  REQUIRE(count(svg, "fill=\"" + ml + "\"") > 2);
  REQUIRE(svg.find(emit::hex(emit::test_color("//ml:train_test"))) == std::string::npos);
}

TEST_CASE("the SVG legend lists the packages with most units, then one line for the rest") {
  // 30 packages of 1 to 30 one-GPU units: a legend a test (465) or a package (30) would run
  // far down the page; it lists the 12 largest, as the HTML page's script does.
  Plan plan;
  double start = 0;
  for (int p = 1; p <= 30; ++p)
    for (int k = 0; k < p; ++k) {
      Assignment a;
      a.unit.id = a.unit.label = fmt::format("//pkg{:02}:t{:02}_test", p, k);
      a.unit.duration_s = 10;
      a.unit.requirement.edit().gpus = {1, "tag gpu"};
      a.node = "n0";
      a.gpus = {0};
      a.start_s = start;
      a.end_s = start += 10;
      plan.assignments.push_back(a);
    }
  plan.summary.makespan_s = start;
  auto svg = render_svg(plan);
  REQUIRE(count(svg, "class=\"legend\"") == emit::kLegendPackages);
  REQUIRE(svg.find("//pkg30 (30)") < svg.find("//pkg29 (29)"));
  REQUIRE_THAT(svg, Catch::Contains("//pkg19 (19)") && !Catch::Contains("//pkg18 ("));
  REQUIRE_THAT(svg, Catch::Contains("and 18 more packages (171 units)"));
  // Every unit still has its bar, and its tooltip names its test.
  REQUIRE(count(svg, "<g class=\"bar\"") == plan.assignments.size());
  REQUIRE_THAT(svg, Catch::Contains("<title>//pkg01:t00_test\n"));
  REQUIRE(render_svg(plan) == svg);
}

TEST_CASE("the SVG legend and the HTML page's script list as many packages") {
  // The page sorts and cuts its legend in its own script; the number is written there as a literal.
  REQUIRE_THAT(std::string(emit::kPageScript),
               Catch::Contains(fmt::format("order.slice(0, {}), rest = order.slice({})",
                                           emit::kLegendPackages, emit::kLegendPackages)));
  REQUIRE(emit::package_of("//ml/vision:resnet_test") == "//ml/vision");
  REQUIRE(emit::package_of("//ml/vision/resnet_test") == "//ml/vision");
}

TEST_CASE("with a fleet, the SVG chart draws idle nodes and every GPU, as the HTML chart does") {
  auto plan = example_plan();
  Fleet fleet;
  for (const auto& name : {"spare-0", "l4-0"}) {
    Node node;
    node.name = name;
    node.gpus.resize(4);
    fleet.nodes.push_back(node);
  }
  auto plain = render_svg(plan);
  auto svg = render_svg(plan, &fleet);
  REQUIRE_THAT(svg, Catch::Contains(">spare-0</text>") && Catch::Contains(">0 units, busy until "));
  REQUIRE(plain.find(">spare-0</text>") == std::string::npos);
  REQUIRE(svg.find(">spare-0</text>") < svg.find(">l4-0</text>"));  // the fleet's order first
  // A lane label per GPU: the HTML page's lanes, node by node.
  auto data = page_data(render_html(plan, &fleet));
  size_t lanes = 0;
  for (const auto& node : data["nodes"]) lanes += node["lanes"].size();
  REQUIRE(count(svg, "class=\"gp-gpu\"") == lanes);
  REQUIRE(count(plain, "class=\"gp-gpu\"") < lanes);
  REQUIRE(count(svg, "<g class=\"bar\"") == plan.assignments.size());
  REQUIRE(render_svg(plan, &fleet) == svg);
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
  }
  REQUIRE_THAT(render_svg(tricky_plan()), Catch::Contains("//x:&lt;b&gt;&amp;&quot;&#39;$(rm -rf /)"));
  // In the page's data a label is JSON text with every '<' as \u003c, so no "</script>" can end it.
  auto html = render_html(tricky_plan());
  REQUIRE_THAT(html, Catch::Contains("//x:\\u003cb>&\\\"'$(rm -rf /)"));
  REQUIRE(page_data(html)["units"][0][5] == "//x:<b>&\"'$(rm -rf /)");
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

namespace {
/// A 900-second gpu-exclusive unit on GPU 0 of h100-1: it holds the node's other GPUs.
Assignment exclusive_unit() {
  Assignment a;
  a.unit.id = a.unit.label = "//ex:excl_test";
  a.unit.duration_s = 900;
  a.unit.requirement.edit().gpus = {1, "tag gpu"};
  a.unit.requirement.edit().exclusive = Sourced<bool>{true, "tag gpu-exclusive"};
  a.node = "h100-1";
  a.gpus = {0};
  a.end_s = 900;
  return a;
}
}  // namespace

TEST_CASE("the HTML chart marks the GPUs a whole-node unit holds without running on them") {
  // They were drawn as idle lanes while nothing else could run there.
  Plan plan;
  plan.summary.makespan_s = 900;
  plan.assignments.push_back(exclusive_unit());
  Fleet fleet;
  Node node;
  node.name = "h100-1";
  node.gpus.resize(8);
  fleet.nodes.push_back(node);
  auto data = page_data(render_html(plan, &fleet));
  const auto& unit = data["units"][0];
  REQUIRE(unit.size() == 15);
  REQUIRE(unit[13] == nlohmann::json::array({1, 1}));  // runs on GPU 0's row
  REQUIRE(unit[14] == nlohmann::json::array({2, 7}));  // holds GPUs 1-7's rows
  // A plan without such a unit carries no held rows: its page is as it was.
  // Held in a variable: a range-for over a temporary's ["units"] reads freed memory (ASan).
  auto plain = page_data(render_html(example_plan()));
  for (const auto& u : plain["units"]) REQUIRE(u.size() == 14);
}

TEST_CASE("the SVG chart draws the GPUs a whole-node unit holds as held, as the HTML chart does") {
  // They were drawn as free lanes while nothing else could run there.
  Plan plan;
  plan.summary.makespan_s = 1000;
  plan.assignments.push_back(exclusive_unit());
  Assignment b;  // after it, on GPU 3: the chart has lanes for GPUs 0-3
  b.unit.id = b.unit.label = "//ex:after_test";
  b.unit.duration_s = 100;
  b.unit.requirement.edit().gpus = {1, "tag gpu"};
  b.node = "h100-1";
  b.gpus = {3};
  b.start_s = 900;
  b.end_s = 1000;
  plan.assignments.push_back(b);
  auto svg = render_svg(plan);
  auto held = count(svg, "<rect class=\"held\"");
  REQUIRE(held == 3);  // GPUs 1, 2 and 3 while the exclusive unit runs
  REQUIRE(held ==
          page_data(render_html(plan))["units"][0][14][1].get<std::size_t>());  // the HTML's held rows
  REQUIRE_THAT(svg, Catch::Contains(std::string("\n") + std::string(emit::held_note) + "</title>"));
  REQUIRE(count(svg, std::string(emit::held_note)) == 1);  // the unit after it holds nothing
  REQUIRE(count(render_svg(tricky_plan()), "class=\"held\"") == 0);
}

TEST_CASE("long package names in the HTML legend wrap instead of running off the page") {
  auto html = render_html(example_plan());
  REQUIRE(html.find("#legend li{cursor:pointer;white-space:nowrap}") == std::string::npos);
  REQUIRE(html.find("overflow-wrap:anywhere") != std::string::npos);
}

TEST_CASE("the SVG chart groups unschedulable units by reason, a few of each, the rest counted") {
  auto plan = example_plan();
  plan.unschedulable.clear();
  // 10,000 units for 20 reasons: reason r has r + 1 units beyond the first 9,790 of reason 0.
  auto add = [&](int reason, int n) {
    for (int i = 0; i < n; ++i) {
      UnschedulableUnit u;
      u.unit.id = u.unit.label = fmt::format("//r{}:t{}", reason, i);
      u.reason = fmt::format("reason {}", reason);
      plan.unschedulable.push_back(u);
    }
  };
  add(0, 9790);
  for (int r = 1; r < 20; ++r) add(r, r < 19 ? 11 : 12);
  REQUIRE(plan.unschedulable.size() == 10000);
  auto svg = render_svg(plan);
  CHECK_THAT(svg, Catch::Contains("Unschedulable units (10000)"));
  CHECK_THAT(svg, Catch::Contains(">9790 units: reason 0<"));
  CHECK(svg.find("reason 0<") < svg.find("reason 19<"));  // largest group first
  CHECK_THAT(svg, Catch::Contains(">and 9785 more<"));
  CHECK_THAT(svg, Catch::Contains(">and 8 more reasons (88 units)"));
  CHECK(count(svg, ">//r0:t") == 5);
  CHECK(svg.find(">//r0:t5<") == std::string::npos);
  // A line a reason, its first units and the rest's count, not a line a unit.
  auto height_at = svg.find("height=\"") + 8;
  CHECK(std::stod(svg.substr(height_at)) < 3000);
}
