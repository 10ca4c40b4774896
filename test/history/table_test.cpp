#include <catch2/catch.hpp>

#include "gpuplan/error.hpp"
#include "history/fixtures.hpp"

using namespace gpuplan;
using gpuplan::test::history_fixture;
using gpuplan::test::read_table_text;

TEST_CASE("the results gpuplan's runners write read back as history") {
  std::ifstream in(history_fixture("runs.csv"));
  auto read = read_table(in, "runs.csv", true);
  const auto& samples = read.history.samples;
  const auto& inference = samples.at({"//ml:inference_test", std::nullopt});
  REQUIRE(inference.size() == 2);
  REQUIRE(inference[0].seconds == 41.5);
  REQUIRE(inference[0].peak_vram_mib == 9216);
  REQUIRE(inference[1].start_ms == 1714644000000);
  const auto& shard_0 = samples.at({"//ml:train_test", 0});
  REQUIRE(shard_0.size() == 2);
  REQUIRE_FALSE(shard_0[0].timed_out);
  REQUIRE(shard_0[1].timed_out);
  REQUIRE_FALSE(shard_0[1].peak_vram_mib);
  REQUIRE(samples.at({"//ml:train_test", 1}).at(0).seconds == 262.5);
}

TEST_CASE("CSV columns are found by name, in any order, and shard and VRAM are optional") {
  auto read = read_table_text("seconds,owner,label\n12,team-a,@//a:b\n\n3.5,team-b,//a:b\n", true);
  const auto& samples = read.history.samples.at({"//a:b", std::nullopt});
  REQUIRE(samples.size() == 2);
  REQUIRE(samples[1].seconds == 3.5);
}

TEST_CASE("a column or key named twice: the last one counts, in CSV and JSON alike") {
  auto csv = read_table_text("label,seconds,seconds\n//a:b,12,30\n", true);
  REQUIRE(csv.history.samples.at({"//a:b", std::nullopt}).at(0).seconds == 30);
  auto json = read_table_text(R"({"label":"//a:b","seconds":12,"seconds":30})", true);
  REQUIRE(json.history.samples.at({"//a:b", std::nullopt}).at(0).seconds == 30);
}

TEST_CASE("JSON rows read like CSV rows, as an array or one object a line") {
  auto array =
      read_table_text(R"([{"label":"//a:b","shard":1,"seconds":"7.5","peak_vram_mib":1000.2,"extra":{"x":1}},
                                   {"label":"//a:b","shard":null,"seconds":2}])",
                      true);
  REQUIRE(array.history.samples.at({"//a:b", 1}).at(0).seconds == 7.5);
  REQUIRE(array.history.samples.at({"//a:b", 1}).at(0).peak_vram_mib == 1001);
  REQUIRE(array.history.samples.at({"//a:b", std::nullopt}).at(0).seconds == 2);
  auto lines = read_table_text(
      "{\"label\":\"//a:b\",\"seconds\":1,\"exit_status\":\"timeout\"}\n{\"label\":\"//"
      "a:b\",\"seconds\":2}\n",
      true);
  const auto& samples = lines.history.samples.at({"//a:b", std::nullopt});
  REQUIRE(samples.size() == 2);
  REQUIRE(samples[0].timed_out);
}

TEST_CASE("a bad history row names its file and line, and under --strict stops the run") {
  struct Case {
    std::string text;
    std::string message;
  };
  std::vector<Case> cases = {
      {"label,seconds\n//a:b,1\n//a:b,1,extra\n", "history.csv:3: 3 columns where the header has 2"},
      {"label,seconds\n//a:b,1\n//a:b,-4\n", "history.csv:3: //a:b: seconds -4 is a negative time"},
      {"label,seconds\n//a:b,1\n//a:b,4m\n", "history.csv:3: //a:b: seconds \"4m\" is not a number"},
      {"label,shard,seconds\n//a:b,,1\n//a:b,first,4\n",
       "history.csv:3: //a:b: shard \"first\" is not a 0-based shard index"},
      {"label,seconds,start\n//a:b,1,\n//a:b,4,yesterday\n",
       "history.csv:3: //a:b: start \"yesterday\" is neither"},
      {"label,seconds\n//a:b,1\n\"//a:b,4\n", "history.csv:3: a quoted field is never closed"},
      {"[{\"label\":\"//a:b\",\"seconds\":1},\n {\"label\":\"//a:b\",\"seconds\":-1}]",
       "history.csv:2: //a:b: seconds -1 is a negative time"},
      {"{\"label\":\"//a:b\",\"seconds\":1}\n{\"label\":\"//a:b\",\"seconds\":1}}\n",
       "history.csv:2: not valid JSON"},
  };
  for (const auto& c : cases) {
    INFO(c.text);
    try {
      read_table_text(c.text, true);
      FAIL("no error under --strict");
    } catch (const InputError& e) {
      REQUIRE_THAT(e.what(), Catch::StartsWith(c.message));
    }
    auto lenient = read_table_text(c.text, false);
    REQUIRE(lenient.history.sample_count() == 1);
    REQUIRE(lenient.diagnostics.size() == 1);
    REQUIRE_THAT(lenient.diagnostics[0].message, Catch::Contains(c.message));
  }
}

TEST_CASE("a CSV without label and seconds columns is not history") {
  REQUIRE_THROWS_WITH(read_table_text("name,time\n//a:b,1\n", true),
                      Catch::Contains("history.csv:1: the CSV header has no \"label\" column"));
}

TEST_CASE("SPEC's CSV without a header: label,seconds or label,shard,seconds,peak_vram_mib") {
  auto two = read_table_text("//a:b,12\n@//a:b,30\n", true);
  REQUIRE(two.history.samples.at({"//a:b", std::nullopt}).size() == 2);
  REQUIRE(two.history.samples.at({"//a:b", std::nullopt}).at(1).seconds == 30);
  auto four = read_table_text("//a:b,1,12.5,2048\n//a:b,,40,\n", true);
  REQUIRE(four.history.samples.at({"//a:b", 1}).at(0).seconds == 12.5);
  REQUIRE(four.history.samples.at({"//a:b", 1}).at(0).peak_vram_mib == 2048);
  REQUIRE(four.history.samples.at({"//a:b", std::nullopt}).at(0).seconds == 40);
  // Three columns could be either form: refused, not guessed.
  REQUIRE_THROWS_WITH(read_table_text("//a:b,1,12\n", true),
                      Catch::Contains("history.csv:1: 3 columns and no header"));
  REQUIRE_THROWS_WITH(read_table_text("//a:b,12\n//a:c,1,2,3\n", true),
                      Catch::Contains("history.csv:2: 4 columns where the first row has 2"));
  // A log export's header starts with "@timestamp": a header, read by column name as before.
  auto logs = read_table_text("@timestamp,label,seconds\n2026-12-01T10:00:00Z,//a:b,7\n", true);
  REQUIRE(logs.history.samples.at({"//a:b", std::nullopt}).at(0).seconds == 7);
  auto wide = read_table_text("@timestamp,label,shard,seconds\n2026-12-01T10:00:00Z,//a:b,,9\n", true);
  REQUIRE(wide.history.samples.at({"//a:b", std::nullopt}).at(0).seconds == 9);
}

TEST_CASE("history values beyond gpuplan's limits are bad rows, never infinite or wrapped numbers") {
  auto first_problem = [](const std::string& text) {
    try {
      read_table_text(text, true);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  REQUIRE_THAT(first_problem("label,seconds\n//a:b,1e308\n"), Catch::Contains("longer than a year"));
  REQUIRE_THAT(first_problem("label,seconds,start\n//a:b,1,1e300\n"), Catch::Contains("from 1970 to 9999"));
  REQUIRE_THAT(first_problem("label,seconds,shard\n//a:b,1,9223372036854775807\n"),
               Catch::Contains("is not a 0-based shard index"));
  REQUIRE_THAT(first_problem("label,seconds\n//a:\xff,1\n"), Catch::Contains("not UTF-8"));
  REQUIRE_THAT(
      first_problem(R"({"gpuplan_history":1,"units":[{"label":"//a:b","shard": nul,"seconds":[1]}]})"),
      Catch::Contains("not valid JSON"));
  REQUIRE_THAT(first_problem(R"({"gpuplan_history":1,"units":[{"label":"//a:b","seconds":[1e308]}]})"),
               Catch::Contains("longer than a year"));
  REQUIRE_THAT(
      first_problem(
          R"({"gpuplan_history":1,"units":[{"label":"//a:b","seconds":[1],"peak_vram_mib":[nul]}]})"),
      Catch::Contains("not valid JSON"));
  REQUIRE(first_problem("label,seconds,start\n//a:b,31622400,2024-05-01T12:00:00Z\n") == "(no error)");
  // A peak's reservation, with the headroom (under 100%), must stay within a plan's 2^30 MiB.
  REQUIRE(first_problem("label,seconds,peak_vram_mib\n//a:b,1,536870912\n") == "(no error)");
  REQUIRE_THAT(first_problem("label,seconds,peak_vram_mib\n//a:b,1,1000000000\n"),
               Catch::Contains("is not a number of MiB from 0 to 536870912"));
  REQUIRE_THAT(
      first_problem(
          R"({"gpuplan_history":1,"units":[{"label":"//a:b","seconds":[1],"peak_vram_mib":[1000000000]}]})"),
      Catch::Contains("other than MiB from 0 to 536870912"));
}

TEST_CASE("a bad unit of a summary file names the field that is wrong, on the unit's line") {
  auto problem = [](const std::string& unit) {
    auto read = read_table_text("{\"gpuplan_history\": 1, \"units\": [\n" + unit + "\n]}", false);
    REQUIRE(read.diagnostics.size() == 1);
    return read.diagnostics[0].message;
  };
  REQUIRE_THAT(problem("[1]"), Catch::Contains("history.csv:2: a unit is not a JSON object"));
  REQUIRE_THAT(problem(R"({"seconds": [1]})"), Catch::Contains(":2: a unit without a \"label\""));
  REQUIRE_THAT(problem(R"({"label": "//a:b", "seconds": "1"})"),
               Catch::Contains(":2: \"seconds\" is not an array"));
  REQUIRE_THAT(problem(R"({"label": "//a:b", "shard_count": 0, "seconds": [1]})"),
               Catch::Contains(":2: \"shard_count\" is not a shard count"));
  REQUIRE_THAT(problem(R"({"label": "//a:b", "seconds": [1], "node": [3]})"),
               Catch::Contains(":2: \"node\" holds something other than names or null"));
  REQUIRE_THAT(problem(R"({"label": "//a:b", "seconds": [1], "failed": [1]})"),
               Catch::Contains(":2: \"failed\" holds something other than true or false"));
  REQUIRE_THAT(problem(R"({"label": "//a:b", "seconds": [1, 2], "timed_out": [true]})"),
               Catch::Contains(":2: \"peak_vram_mib\", \"timed_out\", \"failed\", \"peak_up_front\", "
                               "\"gpu_touched\", \"given_no_gpu\", \"gpus\", \"gpus_asked\", \"filtered\", "
                               "\"node\" and \"start_ms\" must have one entry per \"seconds\""));
  REQUIRE_THAT(problem(R"({"label": "//a:b", "seconds": [1], "gpus_asked": [-1]})"),
               Catch::Contains(":2: \"gpus_asked\" holds something other than counts of GPUs or null"));
}

TEST_CASE("a results record with no GPUs is a run given no GPU, unless it used one all the same") {
  // run-under's records: --unplanned=warn ran //ml:inference_test with CUDA_VISIBLE_DEVICES empty.
  const std::string header =
      "label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched,peak_up_front,shard_count\n";
  auto read =
      read_table_text(header +
                          "//ml:inference_test,,0.400,,ws-0,,2026-12-05T10:00:00.000Z,0,false,,\n"
                          "//ml:inference_test,,41.5,9216,ws-0,0,2026-12-05T11:00:00.000Z,0,true,false,\n"
                          "//ml:own_gpu,,30.0,800,ws-0,,2026-12-05T10:00:00.000Z,0,true,false,\n",
                      true);
  const auto& inference = read.history.samples.at({"//ml:inference_test", std::nullopt});
  CHECK(inference.at(0).given_no_gpu);
  CHECK_FALSE(inference.at(0).gpu_touched);  // unmeasured: it could not touch one
  CHECK_FALSE(inference.at(1).given_no_gpu);
  // It took a GPU itself (a test that ignores CUDA_VISIBLE_DEVICES): its run did the GPU work.
  CHECK_FALSE(read.history.samples.at({"//ml:own_gpu", std::nullopt}).at(0).given_no_gpu);
  // A history without the gpus column (SPEC's CSV, BEP, test.xml) says nothing of it.
  CHECK_FALSE(
      read_table_text("label,seconds\n//a:b,3\n", true).history.samples.at({"//a:b", {}}).at(0).given_no_gpu);
}

TEST_CASE("a peak a record says was taken up front (peak_up_front) is marked so") {
  // As measured on an H200: JAX holding a 1 GiB array peaked at 107918 of 143771 MiB (75%).
  const std::string header = "label,seconds,peak_vram_mib,peak_up_front\n";
  auto read =
      read_table_text(header + "//a:jax,8,107918,true\n//a:torch,4,120000,false\n//a:none,4,,true\n", true);
  const auto& samples = read.history.samples;
  CHECK(samples.at({"//a:jax", std::nullopt}).at(0).peak_up_front);
  CHECK_FALSE(samples.at({"//a:torch", std::nullopt}).at(0).peak_up_front);
  CHECK_FALSE(samples.at({"//a:none", std::nullopt}).at(0).peak_up_front);  // no peak to mark
  REQUIRE_THROWS_WITH(read_table_text(header + "//a:jax,8,107918,lots\n", true),
                      Catch::Contains("peak_up_front \"lots\" is neither true nor false"));
}

TEST_CASE(
    "results records say each shard's count: a test resharded within one file keeps only the newer count's "
    "runs") {
  // exec's records of a test of 8 shards, then of 2 (rows are appended as runs end).
  const std::string header = "label,shard,seconds,shard_count\n";
  auto read = read_table_text(
      header + "//a:s,0,12.5,8\n//a:s,1,12.5,8\n//a:s,7,12.5,8\n//a:s,0,50,2\n//a:s,1,50,2\n", true);
  const auto& history = read.history;
  CHECK(history.samples.at({"//a:s", 0}).size() == 1);
  CHECK(history.samples.at({"//a:s", 0}).at(0).seconds == 50);
  CHECK_FALSE(history.samples.contains({"//a:s", 7}));
  CHECK(history.shard_counts.at("//a:s") == 2);
  CHECK(history.other_shard_counts.at("//a:s") == std::pair<int, long>{8, 3});
  REQUIRE_THROWS_WITH(read_table_text(header + "//a:s,2,12.5,2\n", true),
                      Catch::Contains("shard_count \"2\" is not a shard count above shard 2"));
}

TEST_CASE("a results file sorted by label and shard keeps the newest shard count by start time") {
  // Rows of shard 0 with 8 shards then 2, then shard 1's with 8 again: by row order each change
  // dropped all read so far, and the file ended on the old count.
  const std::string header = "label,shard,seconds,shard_count,start\n";
  auto read = read_table_text(header +
                                  "//a:s,0,12.5,8,2026-01-01T00:00:00Z\n//a:s,0,50,2,2026-02-01T00:00:00Z\n"
                                  "//a:s,1,12.5,8,2026-01-01T00:00:00Z\n//a:s,1,50,2,2026-02-01T00:00:00Z\n"
                                  "//a:s,7,12.5,8,2026-01-01T00:00:00Z\n",
                              true);
  const auto& history = read.history;
  CHECK(history.shard_counts.at("//a:s") == 2);
  CHECK(history.samples.at({"//a:s", 0}).size() == 1);
  CHECK(history.samples.at({"//a:s", 0}).at(0).seconds == 50);
  CHECK(history.samples.at({"//a:s", 1}).at(0).seconds == 50);
  CHECK_FALSE(history.samples.contains({"//a:s", 7}));
  CHECK(history.other_shard_counts.at("//a:s") == std::pair<int, long>{8, 3});
}

TEST_CASE("a results file with columns of a newer gpuplan is read with a warning naming them") {
  // A gpuplan of before `filtered` read this round's results file without it, and a run of one test
  // case set the test's duration without a word; a column this one does not know is said.
  const std::string header =
      "label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched,peak_up_front,shard_count,"
      "filtered";
  const std::string row = "//a:t,,0.300,,n0,0,2026-12-06T10:00:00.000Z,0,true,,,";
  auto read = read_table_text(header + ",partial\n" + row + ",true\n", false);
  REQUIRE(read.history.samples.at({"//a:t", std::nullopt}).size() == 1);
  REQUIRE(read.diagnostics.size() == 1);
  CHECK_THAT(read.diagnostics[0].message,
             Catch::Contains("history.csv:1: a results file of a newer gpuplan: its header has the column "
                             "partial, which this gpuplan does not read"));
  REQUIRE_THROWS_WITH(read_table_text(header + ",partial\n" + row + ",true\n", true),
                      Catch::Contains("history.csv:1: a results file of a newer gpuplan"));
  // This gpuplan's own columns, and a team's table with columns of its own, say nothing.
  CHECK(read_table_text(header + "\n" + row + "\n", true).diagnostics.empty());
  CHECK(read_table_text("label,seconds,owner\n//a:t,3,team-a\n", true).diagnostics.empty());
}
