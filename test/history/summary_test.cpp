#include <catch2/catch.hpp>

#include "history/fixtures.hpp"

using namespace gpuplan;
using gpuplan::test::read_table_text;

TEST_CASE("a summary keeps each unit's newest samples and reads back as the same history") {
  History history;
  for (int i = 1; i <= 30; ++i)
    history.samples[{"//a:b", std::nullopt}].push_back(
        Sample{double(i), i == 30, std::nullopt, std::nullopt, std::nullopt, {}});
  history.samples[{"//ml:train", 2}].push_back(Sample{250.5, false, 30720, 1714557600000, std::nullopt, {}});
  history.samples[{"//ml:train", 2}].push_back(
      Sample{240, false, std::nullopt, 1714557500000, std::nullopt, {}, true});
  history.shard_counts["//ml:train"] = 4;

  std::string text = summarize(history, 20);
  REQUIRE(text == summarize(history, 20));
  auto back = read_table_text(text, true).history;
  const auto& kept = back.samples.at({"//a:b", std::nullopt});
  REQUIRE(kept.size() == 20);
  REQUIRE(kept.front().seconds == 11);
  REQUIRE(kept.back().timed_out);
  // Ordered by start time, which the summary keeps (one run read again is then known).
  const auto& shard = back.samples.at({"//ml:train", 2});
  CHECK(shard.at(0).start_ms == 1714557500000);
  CHECK(shard.at(1).start_ms == 1714557600000);
  REQUIRE(shard.at(0).seconds == 240);
  REQUIRE(shard.at(1).peak_vram_mib == 30720);
  REQUIRE_FALSE(shard.at(1).failed);
  REQUIRE(shard.at(0).failed);  // its peak, if it had one, is no measure of a whole run
  REQUIRE(back.shard_counts.at("//ml:train") == 4);
  REQUIRE(summarize(back, 20) == text);
}

TEST_CASE("a summary keeps which runs were given no GPU, and merging keeps it") {
  auto read = read_table_text(
      "label,seconds,gpus,start\n//ml:inference_test,0.4,,2026-12-05T10:00:00Z\n"
      "//ml:inference_test,41.5,0,2026-12-05T11:00:00Z\n",
      true);
  const std::string text = summarize(read.history, 20);
  REQUIRE_THAT(text, Catch::Contains("\"given_no_gpu\":[true,false]"));
  History merged;
  merged.merge(read_table_text(text, true).history);
  merged.merge(read_table_text("label,seconds,gpus\n//ml:inference_test,0.5,\n", true).history);
  const auto& samples = merged.samples.at({"//ml:inference_test", std::nullopt});
  REQUIRE(samples.size() == 3);
  CHECK(samples.at(0).given_no_gpu);
  CHECK_FALSE(samples.at(1).given_no_gpu);
  CHECK(samples.at(2).given_no_gpu);
  CHECK(summarize(read_table_text(text, true).history, 20) == text);
}

TEST_CASE("a summary whose runs a version-1 reader would take for whole runs is version 2") {
  // gpuplan before this round reads version 1 only, and knows no given_no_gpu, gpus or filtered: it
  // took a 0.3 s run filtered to one test case, or one given no GPU, for the test's duration. It
  // refuses version 2 (exit 2, "a newer one wrote it"); a summary without such runs stays 1.
  auto version = [](const std::string& csv) {
    auto text = summarize(read_table_text(csv, true).history, 20);
    REQUIRE(text == summarize(read_table_text(text, true).history, 20));  // read back, 2 too
    return text.substr(0, text.find(",\n"));
  };
  CHECK(version("label,seconds,gpus\n//a:t,40,\"0,1\"\n//a:t,41,\"2,3\"\n") == "{\n  \"gpuplan_history\": 1");
  CHECK(version("label,seconds\n//a:t,40\n") == "{\n  \"gpuplan_history\": 1");
  CHECK(version("label,seconds,gpus,filtered\n//a:t,40,1,\n//a:t,0.3,1,true\n") ==
        "{\n  \"gpuplan_history\": 2");
  CHECK(version("label,seconds,gpus\n//a:t,40,1\n//a:t,0.4,\n") == "{\n  \"gpuplan_history\": 2");
  CHECK(version("label,seconds,gpus\n//a:t,40,\"0,1,2,3\"\n//a:t,5,\"0,1\"\n") ==
        "{\n  \"gpuplan_history\": 2");
  // gpus_asked: runs given all they asked for stay 1 (a version-1 reader took them as whole, as it
  // did any run of one count); runs all given 1 of the 2 they asked for, a machine short of GPUs,
  // are 2, where they were 1 before the column said so.
  CHECK(version("label,seconds,gpus,gpus_asked\n//a:t,40,1,1\n//a:t,41,1,1\n") ==
        "{\n  \"gpuplan_history\": 1");
  CHECK(version("label,seconds,gpus,gpus_asked\n//a:t,5,1,2\n//a:t,6,1,2\n") ==
        "{\n  \"gpuplan_history\": 2");
}

TEST_CASE("a summary keeps how many GPUs each run's test asked for") {
  const auto read = read_table_text(
      "label,seconds,gpus,gpus_asked,start\n//ml:dist_test,50,4,1,2026-11-01T10:00:00Z\n"
      "//ml:dist_test,20,4,2,2026-11-02T10:00:00Z\n//ml:dist_test,30,\"4,5\",,2026-11-03T10:00:00Z\n",
      true);
  const std::string text = summarize(read.history, 20);
  REQUIRE_THAT(text, Catch::Contains("\"gpus\":[1,1,2],\"gpus_asked\":[1,2,null]"));
  const auto back = read_table_text(text, true).history.samples.at({"//ml:dist_test", std::nullopt});
  REQUIRE(back.size() == 3);
  CHECK(back.at(0).gpus_asked == 1);
  CHECK(back.at(1).gpus_asked == 2);
  CHECK_FALSE(back.at(2).gpus_asked);
  CHECK(summarize(read_table_text(text, true).history, 20) == text);
  // Without the column (a summary of a gpuplan before it) the runs say nothing of it, as before.
  CHECK_FALSE(read_table_text("label,seconds,gpus\n//a:t,40,1\n", true)
                  .history.samples.at({"//a:t", std::nullopt})
                  .at(0)
                  .gpus_asked);
  REQUIRE_THROWS_WITH(read_table_text("label,seconds,gpus_asked\n//a:t,40,two\n", true),
                      Catch::Contains("gpus_asked \"two\" is not a count of GPUs"));
}

TEST_CASE("a summary of another gpuplan version, or cut short, is refused whole, not misread") {
  // Without --strict too: as a bad row, a rolling history summarized into itself lost every run.
  REQUIRE_THROWS_WITH(read_table_text("{\"gpuplan_history\": 3, \"units\": []}", false),
                      Catch::Contains("gpuplan_history 3 is a version this gpuplan does not read"));
  const std::string whole =
      "{\"gpuplan_history\": 1, \"units\": [\n{\"label\":\"//a:t\",\"shard\":null,\"seconds\":[7.0]},\n"
      "{\"label\":\"//a:u\",\"shard\":null,\"seconds\":[8.0]}\n]}\n";
  REQUIRE(read_table_text(whole, false).history.samples.size() == 2);
  REQUIRE_THROWS_WITH(read_table_text(whole.substr(0, whole.size() / 2 + 10), false),
                      Catch::Contains("not valid JSON") && Catch::Contains("nothing was read or written"));
}

TEST_CASE("one run read again from another input counts once; runs within one input stay") {
  // Before, a results file given twice, or a rolling history fed the results file it was made from,
  // counted each run twice: one run passed --min-runs 3, and a large peak left pack's window.
  const std::string csv =
      "label,shard,seconds,peak_vram_mib,start\n"
      "//a:t,,10,60000,2026-11-30T10:00:00Z\n"
      "//a:t,,10,1000,2026-11-30T10:10:00Z\n"
      "//a:t,,10,1000,2026-11-30T10:10:00Z\n"  // --runs_per_test, started in the same second: kept
      "//a:t,,5,,\n";
  History history = read_table_text(csv, true).history;
  CHECK(history.merge_new(read_table_text(csv, true).history) == 3);
  CHECK(history.merge_new(read_table_text(summarize(history, 20), true).history) == 3);
  const auto& kept = history.samples.at({"//a:t", std::nullopt});
  CHECK(std::count_if(kept.begin(), kept.end(), [](const Sample& s) { return s.start_ms.has_value(); }) == 3);
  // Without a start time runs cannot be told apart: each input's are kept.
  CHECK(std::count_if(kept.begin(), kept.end(), [](const Sample& s) { return !s.start_ms; }) == 4);
  // The same test started at the same time, one run ending otherwise, is another run.
  History other = read_table_text(csv, true).history;
  CHECK(other.merge_new(
            read_table_text("label,shard,seconds,peak_vram_mib,start\n//a:t,,11,60000,2026-11-30T10:00:00Z\n",
                            true)
                .history) == 0);
}

TEST_CASE("a summary keeps which peaks were memory taken up front") {
  auto read = read_table_text(
      "label,seconds,peak_vram_mib,peak_up_front\n//a:jax,8,107918,true\n//a:jax,9,2000,false\n", true);
  std::string text = summarize(read.history, 20);
  REQUIRE(text.find("\"peak_up_front\":[true,false]") != std::string::npos);
  auto back = read_table_text(text, true).history;
  REQUIRE(back.samples == read.history.samples);
  REQUIRE(summarize(back, 20) == text);
}

TEST_CASE(
    "runs of a test's shards from before a newer input changed its shard count are left out, and noted") {
  // Three builds of 8 shards of 12.5 s, then one of 2 shards of 50 s: each new shard was planned
  // at the p90 of [12.5, 12.5, 12.5, 50], 39 s, without a word.
  auto build = [](int shards, double seconds) {
    History h;
    for (int shard = 0; shard < shards; ++shard)
      h.samples[{"//a:s", shard}].push_back(
          Sample{seconds, false, std::nullopt, std::nullopt, std::nullopt, {}});
    h.shard_counts["//a:s"] = shards;
    return h;
  };
  for (bool repeated_check : {false, true}) {
    History history;
    history.samples[{"//a:s", std::nullopt}].push_back(
        Sample{100, false, std::nullopt, std::nullopt, std::nullopt, {}});  // from when it was unsharded
    for (int i = 0; i < 3; ++i) {
      auto older = build(8, 12.5);
      repeated_check ? void(history.merge_new(std::move(older))) : history.merge(older);
    }
    auto newer = build(2, 50);
    repeated_check ? void(history.merge_new(std::move(newer))) : history.merge(newer);
    CHECK(history.samples.at({"//a:s", 0}).size() == 1);
    CHECK(history.samples.at({"//a:s", 0}).at(0).seconds == 50);
    CHECK_FALSE(history.samples.contains({"//a:s", 2}));
    CHECK(history.samples.at({"//a:s", std::nullopt}).size() == 1);  // the whole test's runs stay
    CHECK(history.shard_counts.at("//a:s") == 2);
    CHECK(history.other_shard_counts.at("//a:s") == std::pair<int, long>{8, 24});
  }
}

TEST_CASE("runs of shards a newly known shard count has not are left out, as of another count") {
  // A CSV without shard_count (8 shards then), then a BEP build with 2: shards 2 to 7 were
  // mixed in without a word (the warning of runs of shards beyond the count is for no count).
  History history;
  for (int shard = 0; shard < 8; ++shard)
    history.samples[{"//a:s", shard}].push_back(
        Sample{12.5, false, std::nullopt, std::nullopt, std::nullopt, {}});
  History newer;
  newer.samples[{"//a:s", 0}].push_back(Sample{50, false, std::nullopt, std::nullopt, std::nullopt, {}});
  newer.shard_counts["//a:s"] = 2;
  history.merge(newer);
  CHECK_FALSE(history.samples.contains({"//a:s", 2}));
  CHECK(history.samples.at({"//a:s", 0}).size() == 2);  // shard 0 of 8 cannot be told from shard 0 of 2
  CHECK(history.other_shard_counts.at("//a:s") == std::pair<int, long>{8, 6});
}

TEST_CASE(
    "a summary keeps how many GPUs each run was given and which runs were filtered, for a plan to judge") {
  // The results records of a 4-GPU test: run-under's --missing-gpus=warn gave one run 2 of them,
  // and a developer's run was under --test_filter (results records' filtered).
  auto read = read_table_text(
      "label,seconds,gpus,start,filtered\n"
      "//ml:allreduce_test,60,\"0,1,2,3\",2026-12-05T10:00:00Z,\n"
      "//ml:allreduce_test,5,\"2,3\",2026-12-05T11:00:00Z,\n"
      "//ml:allreduce_test,0.3,\"0,1,2,3\",2026-12-05T12:00:00Z,true\n",
      true);
  const auto& samples = read.history.samples.at({"//ml:allreduce_test", std::nullopt});
  REQUIRE(samples.size() == 3);
  CHECK(samples.at(0).gpus_given == 4);
  CHECK(samples.at(1).gpus_given == 2);
  CHECK(samples.at(2).filtered);
  const std::string text = summarize(read.history, 20);
  REQUIRE_THAT(text, Catch::Contains("\"gpus\":[4,2,4]"));
  REQUIRE_THAT(text, Catch::Contains("\"filtered\":[false,false,true]"));
  const auto back = read_table_text(text, true).history.samples.at({"//ml:allreduce_test", std::nullopt});
  CHECK(back == samples);
}
