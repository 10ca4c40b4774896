#include <catch2/catch.hpp>

#include "gpuplan/history.hpp"
#include "history/fixtures.hpp"

using namespace gpuplan;
using gpuplan::test::read_table_text;

namespace {

const std::string header = "label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched\n";

AdvisedTest gpu_test(const std::string& label, std::optional<std::int64_t> gpu_mem = std::nullopt,
                     const std::string& node = "a100-0") {
  AdvisedTest test;
  test.label = label;
  test.gpu_mem_mib = gpu_mem;
  if (gpu_mem) test.gpu_mem_source = "tag gpu-mem:40GiB";
  test.cpu_change = "remove tag gpu";
  test.planned_node = node;
  return test;
}

AdviceOptions a100_fleet() {
  AdviceOptions options;
  options.node_vram_mib = {{"a100-0", 40960}, {"l4-0", 23034}, {"h100-0", 81559}};
  options.largest_gpu_mib = 81559;
  return options;
}

}  // namespace

TEST_CASE("a GPU test whose recent runs never touched a GPU is a CPU-bucket candidate with its tag change") {
  auto read = read_table_text(header +
                                  "//t:cpu,,3,0,a100-0,0,2026-01-01T00:00:00Z,0,false\n"
                                  "//t:cpu,,3,0,a100-0,0,2026-01-02T00:00:00Z,0,false\n"
                                  "//t:cpu,,3,0,a100-0,0,2026-01-03T00:00:00Z,0,false\n"
                                  "//t:gpu,,3,900,a100-0,0,2026-01-03T00:00:00Z,0,true\n",
                              true);
  auto advice = advise(read.history, {gpu_test("//t:cpu"), gpu_test("//t:gpu")}, a100_fleet());
  REQUIRE(advice.tests == 2);
  REQUIRE(advice.measured == 2);
  REQUIRE(advice.advice.size() == 1);
  CHECK(advice.advice[0].kind == AdviceKind::never_touched_gpu);
  CHECK(advice.advice[0].label == "//t:cpu");
  CHECK(advice.advice[0].runs == 3);
  CHECK(advice.advice[0].change == "remove tag gpu");
}

TEST_CASE(
    "only the last N runs count: a test that stopped using its GPU is a candidate, one that started is not") {
  std::string rows = header;
  for (int day = 1; day <= 5; ++day)
    rows += fmt::format("//t:stopped,,1,,n,0,2026-01-0{}T00:00:00Z,0,{}\n", day, day <= 2 ? "true" : "false");
  for (int day = 1; day <= 5; ++day)
    rows += fmt::format("//t:started,,1,,n,0,2026-01-0{}T00:00:00Z,0,{}\n", day, day == 5 ? "true" : "false");
  auto read = read_table_text(rows, true);
  AdviceOptions options;
  options.last = 3;
  auto advice = advise(read.history, {gpu_test("//t:stopped"), gpu_test("//t:started")}, options);
  REQUIRE(advice.advice.size() == 1);
  CHECK(advice.advice[0].label == "//t:stopped");
  options.last = 5;
  CHECK(advise(read.history, {gpu_test("//t:stopped")}, options).advice.empty());
}

TEST_CASE("too few measured runs, or none at all, give no CPU advice") {
  auto read = read_table_text(header +
                                  "//t:once,,1,,n,0,2026-01-01T00:00:00Z,0,false\n"
                                  "//t:unmeasured,,1,,n,0,2026-01-01T00:00:00Z,0,\n"
                                  "//t:unmeasured,,1,,n,0,2026-01-02T00:00:00Z,0,\n"
                                  "//t:unmeasured,,1,,n,0,2026-01-03T00:00:00Z,0,\n",
                              true);
  auto advice = advise(read.history, {gpu_test("//t:once"), gpu_test("//t:unmeasured")}, AdviceOptions{});
  CHECK(advice.advice.empty());
  CHECK(advice.measured == 1);
}

TEST_CASE("runs shorter than a second say nothing of GPU use: NVML's 0.2 s samples may miss it") {
  auto read = read_table_text(header +
                                  "//t:quick,,0.05,,a100-0,0,2026-01-01T00:00:00Z,0,false\n"
                                  "//t:quick,,0.05,,a100-0,0,2026-01-02T00:00:00Z,0,false\n"
                                  "//t:quick,,0.05,,a100-0,0,2026-01-03T00:00:00Z,0,false\n",
                              true);
  auto advice = advise(read.history, {gpu_test("//t:quick")}, a100_fleet());
  CHECK(advice.advice.empty());  // was "never touched a GPU in 3 runs": move it to the CPU bucket
  CHECK_FALSE(measured_gpu_use(read.history, "//t:quick", 20));
}

TEST_CASE("runs that failed or were cut short before touching a GPU give no CPU advice") {
  // //t:broken fails at import, before its GPU work; //t:killed is stopped or times out early.
  // Neither says the test needs no GPU: moved to CPU runners, it would skip its GPU paths.
  std::string rows = header;
  for (int day = 1; day <= 3; ++day) {
    rows += fmt::format("//t:broken,,1,0,a100-0,0,2026-01-0{}T00:00:00Z,{},false\n", day,
                        day == 3 ? "FAILED" : "1");
    rows += fmt::format("//t:killed,,1,0,a100-0,0,2026-01-0{}T00:00:00Z,{},false\n", day,
                        day == 1   ? "stopped"
                        : day == 2 ? "timeout"
                                   : "TIMEOUT");
    rows += fmt::format("//t:passes,,1,0,a100-0,0,2026-01-0{}T00:00:00Z,{},false\n", day,
                        day == 3 ? "PASSED" : "0");
  }
  auto read = read_table_text(rows, true);
  auto tests =
      std::vector<AdvisedTest>{gpu_test("//t:broken"), gpu_test("//t:killed"), gpu_test("//t:passes")};
  auto advice = advise(read.history, tests, a100_fleet());
  REQUIRE(advice.advice.size() == 1);
  CHECK(advice.advice[0].label == "//t:passes");
  // A summarize file an older gpuplan wrote, with untouched timed-out runs: the same rule.
  auto summary = read_table_text(
      R"({"gpuplan_history": 1, "units": [{"label": "//t:killed", "shard": null, "seconds": [1, 1, 1],
          "timed_out": [true, true, true], "gpu_touched": [false, false, false]}]})",
      true);
  CHECK(advise(summary.history, {gpu_test("//t:killed")}, a100_fleet()).advice.empty());
}

TEST_CASE("a shard that touched its GPU keeps the whole test off the CPU list") {
  std::string rows = header;
  for (int day = 1; day <= 3; ++day) {
    rows += fmt::format("//t:sharded,0,1,,n,0,2026-01-0{}T00:00:00Z,0,false\n", day);
    rows +=
        fmt::format("//t:sharded,1,1,,n,0,2026-01-0{}T00:00:00Z,0,{}\n", day, day == 3 ? "true" : "false");
  }
  auto read = read_table_text(rows, true);
  CHECK(advise(read.history, {gpu_test("//t:sharded")}, AdviceOptions{}).advice.empty());
}

TEST_CASE("a sharded test is a CPU candidate only when every shard was measured often enough") {
  // Shards 0 and 1 of 4 never touched a GPU in three runs; shards 2 and 3 were never measured and
  // may be the ones that use it. Before, this was "no GPU touched in 6 runs".
  std::string rows = header;
  for (int day = 1; day <= 3; ++day)
    for (int shard : {0, 1})
      rows += fmt::format("//t:half,{},1,,n,0,2026-01-0{}T00:00:00Z,0,false\n", shard, day);
  auto read = read_table_text(rows, true);
  auto half = gpu_test("//t:half");
  half.shard_count = 4;
  CHECK(advise(read.history, {half}, AdviceOptions{}).advice.empty());
  // One run of all four shards is one run, not four: below the 3 runs asked for.
  std::string once = header;
  for (int shard = 0; shard < 4; ++shard)
    once += fmt::format("//t:half,{},1,,n,0,2026-01-01T00:00:00Z,0,false\n", shard);
  CHECK(advise(read_table_text(once, true).history, {half}, AdviceOptions{}).advice.empty());
  // Three runs of every shard: a candidate, after 3 runs.
  std::string all = header;
  for (int day = 1; day <= 3; ++day)
    for (int shard = 0; shard < 4; ++shard)
      all += fmt::format("//t:half,{},1,,n,0,2026-01-0{}T00:00:00Z,0,false\n", shard, day);
  auto advice = advise(read_table_text(all, true).history, {half}, AdviceOptions{});
  REQUIRE(advice.advice.size() == 1);
  CHECK(advice.advice[0].runs == 3);
}

TEST_CASE("runs of another shard count cover the test only when every shard of that count was measured") {
  // Results records of an 8-shard era in which shards 4 to 7 were cached (no record): half the test
  // was never measured. Before, with 4 shards now, shards 0 to 3 read as the whole test's, and
  // it was "no GPU touched in 3 runs"; so were 2 of 4 shards for a test unsharded now.
  const std::string with_count =
      "label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched,"
      "peak_up_front,shard_count\n";
  auto rows_of = [&](int count, int ran) {
    std::string rows = with_count;
    for (int day = 1; day <= 3; ++day)
      for (int shard = 0; shard < ran; ++shard)
        rows += fmt::format("//t:resharded,{},2,,n,0,2026-01-0{}T00:00:00Z,0,false,,{}\n", shard, day, count);
    return read_table_text(rows, true).history;
  };
  auto four = gpu_test("//t:resharded");
  four.shard_count = 4;
  auto whole = gpu_test("//t:resharded");
  CHECK(advise(rows_of(8, 4), {four}, AdviceOptions{}).advice.empty());
  CHECK(advise(rows_of(4, 2), {whole}, AdviceOptions{}).advice.empty());
  CHECK(untouched_runs(rows_of(8, 4), "//t:resharded", 4, 10) == 0L);  // audit --history: too few
  // Every shard of the old count measured three times: the whole test was, whatever its count now.
  auto advice = advise(rows_of(8, 8), {four}, AdviceOptions{});
  REQUIRE(advice.advice.size() == 1);
  CHECK(advice.advice[0].runs == 3);
  advice = advise(rows_of(2, 2), {four}, AdviceOptions{});
  REQUIRE(advice.advice.size() == 1);
  CHECK(advice.advice[0].runs == 3);
}

TEST_CASE("a peak within the headroom of the smallest GPU it ran on asks for a GPU with room") {
  auto read = read_table_text(header +
                                  "//t:big,,3,20000,a100-0,0,2026-01-01T00:00:00Z,0,true\n"
                                  "//t:big,,3,21000,l4-0,0,2026-01-02T00:00:00Z,0,true\n"
                                  "//t:fits,,3,30000,a100-0,0,2026-01-02T00:00:00Z,0,true\n",
                              true);
  auto advice = advise(read.history, {gpu_test("//t:big"), gpu_test("//t:fits")}, a100_fleet());
  REQUIRE(advice.advice.size() == 1);
  const auto& a = advice.advice[0];
  CHECK(a.kind == AdviceKind::near_capacity);
  CHECK(a.label == "//t:big");
  CHECK(a.node == "l4-0");
  CHECK(a.gpu_vram_mib == 23034);
  CHECK(a.peak_vram_mib == 21000);
  CHECK(a.suggested_mib == 24 * 1024);  // 21000 MiB plus 15%, in whole GiB
  CHECK(a.change == "add tag gpu-mem:24GiB");
  CHECK(a.peak_node == "l4-0");
}

// The peak was held against the smallest GPU the test ran on, and named only that node: "peak 22000
// of 23034 MiB on l4-0" when l4-0 had held 21000 and the 22000 came from an A100.
TEST_CASE("near-capacity advice names the node where the peak was measured, not only the smallest GPU") {
  auto read = read_table_text(header +
                                  "//t:big,,3,22000,a100-0,0,2026-01-01T00:00:00Z,0,true\n"
                                  "//t:big,,3,21000,l4-0,0,2026-01-02T00:00:00Z,0,true\n",
                              true);
  auto advice = advise(read.history, {gpu_test("//t:big")}, a100_fleet());
  REQUIRE(advice.advice.size() == 1);
  const auto& a = advice.advice[0];
  CHECK(a.kind == AdviceKind::near_capacity);
  CHECK(a.peak_vram_mib == 22000);
  CHECK(a.node == "l4-0");
  CHECK(a.gpu_vram_mib == 23034);
  CHECK(a.peak_node == "a100-0");
  CHECK(a.peak_gpu_vram_mib == 40960);
}

TEST_CASE("a declared gpu-mem that already asks for the room a near-capacity peak needs is left alone") {
  // Runs on an L4 from before the tag was raised, which keeps the test off L4s now. Before, the
  // advice was "replace tag gpu-mem:24GiB with gpu-mem:24GiB", and a 32GiB tag was lowered to 24GiB
  // under "peak memory comes within the headroom".
  std::string rows = header;
  for (int day = 1; day <= 3; ++day)
    rows += fmt::format("//t:raised,,3,21000,l4-0,0,2026-01-0{}T00:00:00Z,0,true\n", day);
  auto history = read_table_text(rows, true).history;
  CHECK(advise(history, {gpu_test("//t:raised", 24 * 1024, "l4-0")}, a100_fleet()).advice.empty());
  CHECK(advise(history, {gpu_test("//t:raised", 32 * 1024, "l4-0")}, a100_fleet()).advice.empty());
  // A tag below the room still asks for more; one far above it is too high, as for any test.
  auto low = advise(history, {gpu_test("//t:raised", 16 * 1024, "l4-0")}, a100_fleet());
  REQUIRE(low.advice.size() == 1);
  CHECK(low.advice[0].kind == AdviceKind::near_capacity);
  CHECK(low.advice[0].change == "replace tag gpu-mem:40GiB with gpu-mem:24GiB");
  auto high = advise(history, {gpu_test("//t:raised", 64 * 1024, "l4-0")}, a100_fleet());
  REQUIRE(high.advice.size() == 1);
  CHECK(high.advice[0].kind == AdviceKind::gpu_mem_too_high);
  CHECK(high.advice[0].suggested_mib == 24 * 1024);
}

TEST_CASE("a test whose plan holds a measured memory floor is not told to add a gpu-mem tag it may have") {
  // History's floor replaced the tag in the plan: "add tag gpu-mem:24GiB" beside its gpu-mem:16GiB
  // would be a second tag.
  auto read = read_table_text(header + "//t:big,,3,21000,l4-0,0,2026-01-02T00:00:00Z,0,true\n", true);
  auto floored = gpu_test("//t:big");
  floored.gpu_mem_floor_mib = 20000;
  auto advice = advise(read.history, {floored}, a100_fleet());
  REQUIRE(advice.advice.size() == 1);
  CHECK(advice.advice[0].kind == AdviceKind::near_capacity);
  CHECK(advice.advice[0].change ==
        "set gpu-mem:24GiB in place of its gpu-mem tag, if it has one (the plan holds the 20000 MiB its runs "
        "were seen to use, not the tag; --query names it)");
  CHECK(!advice.advice[0].declared_mib);
}

TEST_CASE("without a node in the records, the planned node's GPUs are the measure") {
  auto read = read_table_text("label,seconds,peak_vram_mib,gpu_touched\n//t:big,1,39000,true\n", true);
  auto advice = advise(read.history, {gpu_test("//t:big", 40960)}, a100_fleet());
  REQUIRE(advice.advice.size() == 1);
  CHECK(advice.advice[0].kind == AdviceKind::near_capacity);
  CHECK(advice.advice[0].node == "a100-0");
  CHECK(advice.advice[0].change == "replace tag gpu-mem:40GiB with gpu-mem:44GiB");
}

TEST_CASE("a near-capacity peak never asks for more memory than the fleet's largest GPU has") {
  auto read = read_table_text(header +
                                  "//t:over_a100,,3,40000,a100-0,0,2026-01-01T00:00:00Z,0,true\n"
                                  "//t:over_h100,,3,80000,h100-0,0,2026-01-01T00:00:00Z,0,true\n",
                              true);
  auto fleet = a100_fleet();
  fleet.largest_gpu_mib = 45000;  // below the 46000 MiB the a100 test needs with its headroom
  fleet.node_vram_mib["h100-0"] = 45000;
  auto advice = advise(read.history, {gpu_test("//t:over_a100"), gpu_test("//t:over_h100")}, fleet);
  REQUIRE(advice.advice.size() == 2);
  CHECK(advice.advice[0].suggested_mib == 45000);  // the largest GPU there is, not 45 GiB
  CHECK(advice.advice[0].change ==
        "add tag gpu-mem:45000MiB (the fleet's largest GPU; the peak plus headroom, 46000 MiB, fits none)");
  // It ran on the largest GPU already: no tag helps.
  CHECK(advice.advice[1].label == "//t:over_h100");
  CHECK_FALSE(advice.advice[1].suggested_mib);
  CHECK_THAT(advice.advice[1].change, Catch::StartsWith("none: no GPU of the fleet has more than 45000 MiB"));
}

TEST_CASE("a peak on a node the fleet does not list is named, not silently left unjudged") {
  auto read = read_table_text(header + "//t:big,,3,40000,a100-9,0,2026-01-01T00:00:00Z,0,true\n", true);
  auto advice = advise(read.history, {gpu_test("//t:big", std::nullopt, "a100-8")}, a100_fleet());
  CHECK(advice.advice.empty());
  REQUIRE(advice.unjudged.size() == 1);
  CHECK(advice.unjudged[0].label == "//t:big");
  CHECK_THAT(advice.unjudged[0].message, Catch::Contains("it ran on a100-9, which the fleet does not list"));
  // Without a fleet nothing is held against GPUs, and the totals line says so instead.
  CHECK(advise(read.history, {gpu_test("//t:big")}, AdviceOptions{}).unjudged.empty());
}

TEST_CASE("a declared gpu-mem far above the measured peak asks for less; a close one is left alone") {
  auto read = read_table_text(header +
                                  "//t:greedy,,3,5000,a100-0,0,2026-01-01T00:00:00Z,0,true\n"
                                  "//t:honest,,3,30000,a100-0,0,2026-01-01T00:00:00Z,0,true\n",
                              true);
  auto advice =
      advise(read.history, {gpu_test("//t:greedy", 40960), gpu_test("//t:honest", 40960)}, a100_fleet());
  REQUIRE(advice.advice.size() == 1);
  const auto& a = advice.advice[0];
  CHECK(a.kind == AdviceKind::gpu_mem_too_high);
  CHECK(a.label == "//t:greedy");
  CHECK(a.declared_mib == 40960);
  CHECK(a.suggested_mib == 6 * 1024);
  CHECK(a.change == "replace tag gpu-mem:40GiB with gpu-mem:6GiB");
}

TEST_CASE("peaks only of failed runs ask no one to lower gpu-mem, but still show a GPU too small") {
  // //t:broken fails after CUDA's context, before its model: 500 MiB says nothing of its need.
  // //t:oom fails out of memory on the 40 GiB A100: its peak is the warning.
  auto read = read_table_text(header +
                                  "//t:broken,,3,500,a100-0,0,2026-01-01T00:00:00Z,1,true\n"
                                  "//t:broken,,3,500,a100-0,0,2026-01-02T00:00:00Z,FAILED,true\n"
                                  "//t:oom,,3,40500,a100-0,0,2026-01-01T00:00:00Z,1,true\n",
                              true);
  auto advice =
      advise(read.history, {gpu_test("//t:broken", 40960), gpu_test("//t:oom", 20480)}, a100_fleet());
  REQUIRE(advice.advice.size() == 1);
  CHECK(advice.advice[0].kind == AdviceKind::near_capacity);
  CHECK(advice.advice[0].label == "//t:oom");
  // Once a run passes, the largest peak is the measure.
  read = read_table_text(header +
                             "//t:broken,,3,500,a100-0,0,2026-01-01T00:00:00Z,1,true\n"
                             "//t:broken,,3,700,a100-0,0,2026-01-02T00:00:00Z,0,true\n",
                         true);
  advice = advise(read.history, {gpu_test("//t:broken", 40960)}, a100_fleet());
  REQUIRE(advice.advice.size() == 1);
  CHECK(advice.advice[0].kind == AdviceKind::gpu_mem_too_high);
  CHECK(advice.advice[0].suggested_mib == 1024);
}

TEST_CASE("gpu_touched and node read back from CSV, JSON rows and the summarize file") {
  auto csv = read_table_text(header + "//t:a,,1,0,n1,0,2026-01-01T00:00:00Z,0,false\n", true);
  const auto& sample = csv.history.samples.at({"//t:a", std::nullopt}).at(0);
  CHECK(sample.gpu_touched == false);
  CHECK(sample.node == "n1");
  auto json = read_table_text(R"({"label":"//t:a","seconds":1,"gpu_touched":true,"node":"n2"})", true);
  CHECK(json.history.samples.at({"//t:a", std::nullopt}).at(0).gpu_touched == true);
  auto again = read_table_text(summarize(csv.history, 20), true);
  const auto& kept = again.history.samples.at({"//t:a", std::nullopt}).at(0);
  CHECK(kept.gpu_touched == false);
  CHECK(kept.node == "n1");
  auto bad = read_table_text(header + "//t:a,,1,0,n1,0,2026-01-01T00:00:00Z,0,maybe\n", false);
  REQUIRE(bad.diagnostics.size() == 1);
  CHECK_THAT(bad.diagnostics[0].message, Catch::Contains("gpu_touched \"maybe\" is neither true nor false"));
}

TEST_CASE("exit_status: a run cut short is a lower bound, and a word history does not know is a bad row") {
  auto read = read_table_text(header +
                                  "//t:a,,9,,n1,0,2026-01-01T00:00:00Z,timeout,\n"
                                  "//t:a,,8,,n1,0,2026-01-02T00:00:00Z,stopped,\n"
                                  "//t:a,,7,,n1,0,2026-01-03T00:00:00Z,143,\n"
                                  "//t:a,,6,,n1,0,2026-01-04T00:00:00Z,TIMEOUT,\n"
                                  "//t:a,,5,,n1,0,2026-01-05T00:00:00Z,PASSED,\n",
                              true);
  const auto& samples = read.history.samples.at({"//t:a", std::nullopt});
  REQUIRE(samples.size() == 5);
  CHECK(samples[0].timed_out);
  CHECK(samples[1].timed_out);
  CHECK_FALSE(samples[2].timed_out);  // an exit code, whatever it is, is a run that ended
  CHECK(samples[3].timed_out);        // Bazel's statuses, as a CSV made from BEP spells them
  CHECK_FALSE(samples[4].timed_out);
  auto bad = read_table_text(header + "//t:a,,1,0,n1,0,2026-01-01T00:00:00Z,weird,\n", false);
  REQUIRE(bad.diagnostics.size() == 1);
  CHECK_THAT(bad.diagnostics[0].message, Catch::Contains("exit_status \"weird\" is neither an exit code"));
  // A status that measured nothing is no sample either.
  CHECK(read_table_text(header + "//t:a,,1,0,n1,0,2026-01-01T00:00:00Z,FAILED_TO_BUILD,\n", false)
            .diagnostics.size() == 1);
}

TEST_CASE("a run with a peak above 0 used a GPU, whatever its gpu_touched says") {
  // A merged or converted history: suggest called such a test GPU-free, audit did not.
  auto read = read_table_text(header +
                                  "//t:odd,,3,3000,a100-0,0,2026-01-01T00:00:00Z,0,false\n"
                                  "//t:odd,,3,3000,a100-0,0,2026-01-02T00:00:00Z,0,false\n"
                                  "//t:odd,,3,3000,a100-0,0,2026-01-03T00:00:00Z,0,false\n",
                              true);
  auto advice = advise(read.history, {gpu_test("//t:odd")}, a100_fleet());
  for (const auto& a : advice.advice) CHECK(a.kind != AdviceKind::never_touched_gpu);
  CHECK_FALSE(untouched_runs(read.history, "//t:odd", 0, 10));
}

TEST_CASE("a peak that is memory taken up front is not near capacity: its need is unknown, and said so") {
  // TensorFlow maps nearly all of an 80 GiB H100: before, "near capacity, ask for more".
  const std::string with_total =
      "label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched,peak_up_front\n";
  auto read = read_table_text(with_total +
                                  "//t:tf,,30,80100,h100-0,0,2026-01-01T00:00:00Z,0,true,true\n"
                                  "//t:tf,,30,80200,h100-0,0,2026-01-02T00:00:00Z,0,true,true\n"
                                  "//t:declared,,30,80200,h100-0,0,2026-01-02T00:00:00Z,0,true,true\n",
                              true);
  auto advice = advise(read.history, {gpu_test("//t:tf"), gpu_test("//t:declared", 40960)}, a100_fleet());
  REQUIRE(advice.advice.size() == 1);  // a declared gpu-mem is what the test needs
  const auto& a = advice.advice[0];
  CHECK(a.kind == AdviceKind::memory_up_front);
  CHECK(a.label == "//t:tf");
  CHECK(a.runs == 2);
  CHECK(a.peak_vram_mib == 80200);
  CHECK_THAT(a.change, Catch::Contains("XLA_PYTHON_CLIENT_PREALLOCATE=false") &&
                           Catch::Contains("TF_FORCE_GPU_ALLOW_GROWTH=true"));
}

TEST_CASE("runs given no GPU say nothing of GPU need, in records old and new") {
  // run-under's --unplanned=warn runs a test with CUDA_VISIBLE_DEVICES empty; records written before
  // such runs were left unmeasured say gpu_touched false with no gpus.
  auto read = read_table_text(header +
                                  "//t:gpu,,3,,a100-0,,2026-01-01T00:00:00Z,0,false\n"
                                  "//t:gpu,,3,,a100-0,,2026-01-02T00:00:00Z,0,false\n"
                                  "//t:gpu,,3,,a100-0,,2026-01-03T00:00:00Z,0,false\n",
                              true);
  auto advice = advise(read.history, {gpu_test("//t:gpu")}, a100_fleet());
  CHECK(advice.advice.empty());  // was: never-touched-gpu, remove tag gpu
  CHECK(advice.measured == 0);
}

TEST_CASE("a node the fleet does not list is named whatever the advice, not only beside a peak") {
  auto read = read_table_text(header +
                                  "//t:cpu,,3,0,a100-9,0,2026-01-01T00:00:00Z,0,false\n"
                                  "//t:cpu,,3,0,a100-9,0,2026-01-02T00:00:00Z,0,false\n"
                                  "//t:cpu,,3,0,a100-9,0,2026-01-03T00:00:00Z,0,false\n",
                              true);
  auto advice = advise(read.history, {gpu_test("//t:cpu")}, a100_fleet());
  REQUIRE(advice.unjudged.size() == 1);
  CHECK_THAT(advice.unjudged[0].message, Catch::Contains("it ran on a100-9, which the fleet does not list"));
}
