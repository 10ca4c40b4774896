#include <catch2/catch.hpp>

#include "gpuplan/run.hpp"

using namespace gpuplan;

TEST_CASE("a results record is a history CSV line with the run's details") {
  RunRecord r{"//ml:train_test", 1, 12.3456, "ws-0", {0, 1}, 1796036126.12, 0, std::nullopt, std::nullopt};
  REQUIRE(results_header() ==
          "label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched,peak_up_front,shard_"
          "count,filtered,gpus_asked\n");
  r.shard_count = 4;
  REQUIRE(to_csv(r) == "//ml:train_test,1,12.346,,ws-0,\"0,1\",2026-11-30T10:55:26.120Z,0,,,4,,\n");
  REQUIRE(parse_results_csv(std::string(results_header()) + to_csv(r), "r.csv").at(0).shard_count == 4);
}

TEST_CASE("an unsharded test has an empty shard, and one GPU needs no quotes") {
  RunRecord r{"//a:b", std::nullopt, 1, "n", {3}, 0, 143, std::nullopt, std::nullopt};
  REQUIRE(to_csv(r) == "//a:b,,1.000,,n,3,1970-01-01T00:00:00.000Z,143,,,,,\n");
}

TEST_CASE("a measured unit records its peak GPU memory and whether it touched a GPU") {
  RunRecord r{"//a:b", std::nullopt, 1, "n", {3}, 0, 0, 3075, true};
  REQUIRE(to_csv(r) == "//a:b,,1.000,3075,n,3,1970-01-01T00:00:00.000Z,0,true,false,,,\n");
  RunRecord idle{"//a:c", std::nullopt, 1, "n", {3}, 0, 0, std::nullopt, false};
  REQUIRE(to_csv(idle) == "//a:c,,1.000,,n,3,1970-01-01T00:00:00.000Z,0,false,,,,\n");
}

TEST_CASE(
    "a record says whether its peak was memory taken up front; a file begun before that column keeps its "
    "columns") {
  RunRecord r{"//a:jax_test", std::nullopt, 1, "n", {0}, 0, 0, 107918, true, RunEnd::exited, true};
  REQUIRE(to_csv(r) == "//a:jax_test,,1.000,107918,n,0,1970-01-01T00:00:00.000Z,0,true,true,,,\n");
  r.peak_up_front = false;
  REQUIRE(to_csv(r) == "//a:jax_test,,1.000,107918,n,0,1970-01-01T00:00:00.000Z,0,true,false,,,\n");
  REQUIRE(to_csv(r, ResultsColumns::nine) ==
          "//a:jax_test,,1.000,107918,n,0,1970-01-01T00:00:00.000Z,0,true\n");
  // run-under's JUnit reads a file of either header, with rows of either width after the new one
  auto read = parse_results_csv(
      std::string(results_header_before_new_columns()) + to_csv(r, ResultsColumns::nine) + to_csv(r),
      "r.csv");
  REQUIRE(read.size() == 2);
  CHECK(read[1].label == "//a:jax_test");
}

TEST_CASE("a unit cut short says so in exit_status, so that history takes its time as a lower bound") {
  RunRecord timed_out{"//a:b", std::nullopt, 30,           "n",          {3},
                      0,       143,          std::nullopt, std::nullopt, RunEnd::timed_out};
  RunRecord stopped{"//a:c", std::nullopt, 2, "n", {3}, 0, 143, std::nullopt, std::nullopt, RunEnd::stopped};
  REQUIRE(to_csv(timed_out) == "//a:b,,30.000,,n,3,1970-01-01T00:00:00.000Z,timeout,,,,,\n");
  REQUIRE(to_csv(stopped) == "//a:c,,2.000,,n,3,1970-01-01T00:00:00.000Z,stopped,,,,,\n");
  auto read = parse_results_csv(std::string(results_header()) + to_csv(timed_out) + to_csv(stopped), "r.csv");
  REQUIRE(read.size() == 2);
  CHECK(read[0].end == RunEnd::timed_out);
  CHECK(read[1].end == RunEnd::stopped);
}

TEST_CASE("a label with a comma or a quote is quoted the CSV way") {
  RunRecord r{"//a:x,\"y\"", std::nullopt, 1, "n", {}, 0, 0, std::nullopt, std::nullopt};
  REQUIRE(to_csv(r).starts_with("\"//a:x,\"\"y\"\"\",,1.000,,n,,"));
}

TEST_CASE("results records read back as they were written, quoted labels too") {
  std::vector<RunRecord> written{
      {"//ml:train_test", 2, 12.5, "h100-0", {0, 1, 2, 3}, 1.7e9, 0, 4096, true},
      {"//a:\"q\",x", std::nullopt, 0.25, "n,1", {3}, 1.7e9, 137, std::nullopt, {}}};
  std::string text(results_header());
  for (const auto& r : written) text += to_csv(r);
  auto read = parse_results_csv(text, "results.csv");
  REQUIRE(read.size() == 2);
  for (size_t i = 0; i < read.size(); ++i) {
    REQUIRE(read[i].label == written[i].label);
    REQUIRE(read[i].shard_index == written[i].shard_index);
    REQUIRE(read[i].seconds == written[i].seconds);
    REQUIRE(read[i].node == written[i].node);
    REQUIRE(read[i].gpus == written[i].gpus);
    REQUIRE(read[i].exit_status == written[i].exit_status);
    REQUIRE(read[i].gpu_touched == written[i].gpu_touched);
  }
}

TEST_CASE("a node whose measured GPU units all ran without touching a GPU gets a warning") {
  auto ran = [](double seconds, std::optional<bool> touched) {
    return RunRecord{"//t:x", std::nullopt, seconds, "n", {0}, 1.7e9, 0, std::nullopt, touched};
  };
  CHECK_THAT(untouched_gpus_warning({ran(30, false), ran(5, false), ran(60, std::nullopt)}),
             Catch::StartsWith("none of the 2 GPU units NVML measured for a second or more touched a GPU") &&
                 Catch::Contains("--config=cuda"));
  CHECK(untouched_gpus_warning({ran(30, false), ran(5, true)}).empty());  // one used its GPU: advice per test
  CHECK(untouched_gpus_warning({ran(30, std::nullopt)}).empty());         // no NVML: nothing known
  CHECK(untouched_gpus_warning({ran(0.4, false)}).empty());  // shorter than a sample may fall between two
  CHECK(untouched_gpus_warning({}).empty());
  auto stopped = ran(30, false);
  stopped.end = RunEnd::stopped;  // Ctrl-C 30 s in: it may not have reached its GPU code yet
  CHECK(untouched_gpus_warning({stopped}).empty());
  CHECK_THAT(untouched_gpus_warning({stopped, ran(30, false)}), Catch::StartsWith("none of the 1 GPU units"));
}

TEST_CASE("a broken results record is an error naming its line") {
  std::string text(results_header());
  text += "//a:x,,1.0,,n,0,2026-01-01T00:00:00.000Z,zero,\n";
  REQUIRE_THROWS_WITH(parse_results_csv(text, "r.csv"),
                      Catch::Contains("r.csv:2:1") && Catch::Contains("exit_status 'zero' is neither"));
  REQUIRE_THROWS_WITH(parse_results_csv(std::string(results_header()) + "\"//a:x,1\n", "r.csv"),
                      Catch::Contains("quoted field"));
  REQUIRE_THROWS_WITH(
      parse_results_csv(std::string(results_header()) + "//a:x,,1.0,,n,0,2026-01-01T00:00:00.000Z,0,yes\n",
                        "r.csv"),
      Catch::Contains("gpu_touched 'yes' is neither"));
}

TEST_CASE(
    "a record says how many GPUs its test asked for; a file begun before that column keeps its twelve") {
  // Given 1 of the 2 it asked for: a machine short of GPUs, which history tells from a run of an
  // older count by this column.
  RunRecord r{"//ml:dist_test", std::nullopt, 5, "n", {0}, 0, 0, std::nullopt, std::nullopt};
  r.gpus_asked = 2;
  REQUIRE(to_csv(r) == "//ml:dist_test,,5.000,,n,0,1970-01-01T00:00:00.000Z,0,,,,,2\n");
  REQUIRE(to_csv(r, ResultsColumns::twelve) == "//ml:dist_test,,5.000,,n,0,1970-01-01T00:00:00.000Z,0,,,,\n");
  REQUIRE(to_csv(r, ResultsColumns::eleven) == "//ml:dist_test,,5.000,,n,0,1970-01-01T00:00:00.000Z,0,,,\n");
  auto read = parse_results_csv(std::string(results_header()) + to_csv(r), "r.csv");
  REQUIRE(read.size() == 1);
  CHECK(read[0].gpus_asked == 2);
  auto older = parse_results_csv(
      std::string(results_header_before_gpus_asked()) + to_csv(r, ResultsColumns::twelve) + to_csv(r),
      "r.csv");
  REQUIRE(older.size() == 2);
  CHECK_FALSE(older[0].gpus_asked);
  CHECK(older[1].gpus_asked == 2);
  r.gpus_asked.reset();  // not known (a test run-under refused and ran with no GPU)
  REQUIRE(to_csv(r).ends_with(",0,,,,,\n"));
  REQUIRE_THROWS_WITH(
      parse_results_csv(
          std::string(results_header()) + "//a:x,,1.0,,n,0,2026-01-01T00:00:00.000Z,0,,,,,two\n", "r.csv"),
      Catch::Contains("gpus_asked 'two' is not a count of GPUs"));
}

TEST_CASE("a run filtered to some test cases is marked; a file begun before the column keeps its eleven") {
  RunRecord r{"//ml:gemm_test", std::nullopt, 0.3, "n", {0}, 0, 0, std::nullopt, std::nullopt};
  r.filtered = true;
  REQUIRE(to_csv(r) == "//ml:gemm_test,,0.300,,n,0,1970-01-01T00:00:00.000Z,0,,,,true,\n");
  REQUIRE(to_csv(r, ResultsColumns::eleven) == "//ml:gemm_test,,0.300,,n,0,1970-01-01T00:00:00.000Z,0,,,\n");
  auto read = parse_results_csv(std::string(results_header()) + to_csv(r), "r.csv");
  REQUIRE(read.size() == 1);
  CHECK(read[0].filtered);
  auto older = parse_results_csv(
      std::string(results_header_before_filtered()) + to_csv(r, ResultsColumns::eleven) + to_csv(r), "r.csv");
  REQUIRE(older.size() == 2);
  CHECK_FALSE(older[0].filtered);
}
