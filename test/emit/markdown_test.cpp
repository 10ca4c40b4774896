#include <algorithm>
#include <catch2/catch.hpp>

#include "gpuplan/emit.hpp"
#include "gpuplan/node_summary.hpp"

using namespace gpuplan;

namespace {

std::string render_trace(const Plan& plan) {
  std::string out;
  write_trace(plan, [&](std::string_view text) { out += text; });
  return out;
}

}  // namespace

TEST_CASE("the markdown summary groups unschedulable units by reason, biggest group first") {
  Plan plan;
  plan.summary.makespan_s = 3700;
  for (int i = 0; i < 25; ++i) {
    UnschedulableUnit u;
    u.unit.id = u.unit.label = "//big:t" + std::to_string(i);
    u.reason = "needs 16 GPUs; the largest node has 8";
    plan.unschedulable.push_back(u);
  }
  UnschedulableUnit odd;
  odd.unit.id = odd.unit.label = "//x:<b>|y";
  odd.reason = "needs cuda>=13";
  UnschedulableUnit ticks = odd;
  ticks.unit.id = "//x:a`b";
  plan.unschedulable.push_back(ticks);
  plan.unschedulable.push_back(odd);
  auto md = render_markdown(plan);
  CHECK_THAT(md, Catch::Contains("27 unschedulable units, 2 reasons"));
  CHECK(md.find("needs 16 GPUs") < md.find("needs cuda&gt;=13"));
  CHECK_THAT(md, Catch::Contains("(25)"));
  CHECK_THAT(md, Catch::Contains("… and 5 more"));
  CHECK_THAT(md, Catch::Contains("- `//x:<b>|y`\n"));
  CHECK_THAT(md, Catch::Contains("- ``//x:a`b``\n"));
  CHECK_THAT(md, Catch::Contains("| makespan | 1h 01m 40s"));
}

TEST_CASE("the markdown summary has a load line per node") {
  Plan plan;
  plan.summary.makespan_s = 100;
  Assignment a;
  a.unit.id = a.unit.label = "//a:t";
  a.node = "h100-0";
  a.gpus = {0, 1};
  a.end_s = 50;
  plan.assignments.push_back(a);
  CHECK_THAT(render_markdown(plan), Catch::Contains("| h100-0 | 2 | 1 | 1m 40s | 50s | 50% |"));
}

TEST_CASE("markdown gives a node's times under 10 s to a tenth, as the text view does, never 0s") {
  Plan plan;
  plan.summary.makespan_s = 100;
  Assignment a;
  a.unit.id = a.unit.label = "//a:t";
  a.node = "l4-0";
  a.gpus = {0};
  a.end_s = 0.3;
  plan.assignments.push_back(a);
  CHECK_THAT(render_markdown(plan), Catch::Contains("| l4-0 | 1 | 1 | 0.3s | 0.3s | 0% |"));
}

TEST_CASE("the trace has a complete event per unit and GPU, in microseconds") {
  Plan plan;
  Assignment a;
  a.unit.id = a.unit.label = "//a:\"t\"";
  a.node = "n";
  a.gpus = {0, 3};
  a.start_s = 1.5;
  a.end_s = 2;
  plan.assignments.push_back(a);
  auto trace = render_trace(plan);
  CHECK_THAT(trace,
             Catch::Contains(
                 R"("ph":"X","name":"//a:\"t\"","cat":"medium","pid":1,"tid":3,"ts":1500000,"dur":500000)"));
  CHECK_THAT(trace, Catch::Contains(R"("name":"thread_name","pid":1,"tid":2,"args":{"name":"GPU 2"})"));
}

// `render --format trace` held the whole text before writing it: 59 MB at 147,000 units, which took the
// command from the plan's 100 MiB to 155 MiB. The events go out one at a time now, the same bytes.
TEST_CASE("the trace of a large plan is written an event at a time, never held whole") {
  Plan plan;
  for (int i = 0; i < 2000; ++i) {
    Assignment a;
    a.unit.id = a.unit.label = "//pkg" + std::to_string(i % 7) + ":t" + std::to_string(i);
    a.node = "node-" + std::to_string(i % 10);
    a.gpus = {i % 8};
    a.start_s = i;
    a.end_s = i + 60;
    plan.assignments.push_back(a);
  }
  std::string written;
  std::size_t largest = 0;
  write_trace(plan, [&](std::string_view piece) {
    written += piece;
    largest = std::max(largest, piece.size());
  });
  CHECK(written.size() > 200'000);
  CHECK(largest < 1024);
  CHECK(written.starts_with("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n"));
  CHECK(written.ends_with("\n]}\n"));
}

// Summed, three pack units sharing one GPU for 300 s made it busy "300%"; the plan's own
// utilisation and compare count a shared GPU's time once.
TEST_CASE("units that share a GPU keep it busy once in show's load per node") {
  Plan plan;
  plan.policy = Policy::pack;
  plan.summary.makespan_s = 300;
  for (int i = 0; i < 3; ++i) {
    Assignment a;
    a.unit.id = a.unit.label = "//t:shared" + std::to_string(i);
    a.node = "h-0";
    a.gpus = {0};
    a.end_s = 300;
    plan.assignments.push_back(a);
  }
  CHECK_THAT(render_markdown(plan), Catch::Contains("| h-0 | 1 | 3 | 5m 00s | 5m 00s | 100% |"));
  CHECK_THAT(render_node_summary(plan, {80, false}),
             Catch::Contains("h-0      1       3          5m  100.0%"));
}

TEST_CASE("the markdown summary names no lower bound when the plan has none, as the text view") {
  // With lower_bound_s 0 it said "lower bound 0s, 0.0% above it", a gap the plan never claimed.
  Plan plan;
  plan.summary.makespan_s = 600;
  auto md = render_markdown(plan);
  CHECK_THAT(md, Catch::Contains("| makespan | 10m 00s |\n"));
  CHECK_THAT(md, !Catch::Contains("lower bound"));
  plan.summary.lower_bound_s = 500;
  CHECK_THAT(render_markdown(plan), Catch::Contains("(lower bound") && Catch::Contains("20.0% above it"));
}
