#include "gpuplan/units.hpp"

#include <catch2/catch.hpp>

using namespace gpuplan;

namespace {
ClassifiedTest gpu_test(const std::string& label, int shard_count = 0, const std::string& size = "medium") {
  ClassifiedTest t;
  t.target.label = label;
  t.target.size = size;
  t.target.shard_count = shard_count;
  t.bucket = Bucket::gpu;
  t.requirement.edit().gpus = {1, "tag gpu"};
  return t;
}

Classification of(std::vector<ClassifiedTest> tests) {
  Classification c;
  c.tests = std::move(tests);
  return c;
}
}  // namespace

TEST_CASE("a sharded test becomes one unit per shard, numbered from 0") {
  Rules rules;
  auto units = make_units(of({gpu_test("//ml:train", 4, "large")}), ShardMode::per_shard,
                          size_default_estimator(rules), rules);
  REQUIRE(units.size() == 4);
  CHECK(units[1].id == "//ml:train#shard-1-of-4");
  CHECK(units[1].label == "//ml:train");
  CHECK(units[1].shard_index == 1);
  CHECK(units[1].shard_count == 4);
  CHECK(units[1].duration_s == 900);
  CHECK(units[1].duration_source == "size-default");
}

TEST_CASE("a timeout attribute sets the default duration as Bazel's timeout does, over the size") {
  Rules rules;
  rules.size_default_seconds["enormous"] = 7200;
  auto eternal = gpu_test("//a:eternal", 0, "small");
  eternal.target.timeout = "eternal";
  auto short_large = gpu_test("//a:short", 0, "large");
  short_large.target.timeout = "short";
  auto units = make_units(of({eternal, short_large, gpu_test("//a:sized", 0, "large")}), ShardMode::per_shard,
                          size_default_estimator(rules), rules);
  REQUIRE(units.size() == 3);
  CHECK(units[0].duration_s == 7200);  // the rules' default for the size whose timeout is eternal
  CHECK(units[0].duration_source == "timeout-default");
  CHECK(units[1].duration_s == 60);
  CHECK(units[1].duration_source == "timeout-default");
  CHECK(units[2].duration_s == 900);
  CHECK(units[2].duration_source == "size-default");
}

TEST_CASE("with --shards=whole a sharded test is one unit lasting all its shards") {
  Rules rules;
  auto units = make_units(of({gpu_test("//ml:train", 4, "small")}), ShardMode::whole,
                          size_default_estimator(rules), rules);
  REQUIRE(units.size() == 1);
  CHECK(units[0].id == "//ml:train");
  CHECK(!units[0].shard_index);
  CHECK(units[0].shard_count == 4);
  CHECK(units[0].duration_s == 240);
}

TEST_CASE("an unsharded test is one unit named by its label as Bazel printed it") {
  Rules rules;
  auto units =
      make_units(of({gpu_test("@@//a:b")}), ShardMode::per_shard, size_default_estimator(rules), rules);
  REQUIRE(units.size() == 1);
  CHECK(units[0].id == "@@//a:b");
  CHECK(!units[0].shard_index);
  CHECK(units[0].shard_count == 1);
}

TEST_CASE("CPU and skipped tests make no units, flaky tests keep their flag") {
  Rules rules;
  auto cpu = gpu_test("//a:cpu");
  cpu.bucket = Bucket::cpu;
  auto skipped = gpu_test("//a:manual");
  skipped.bucket = Bucket::skipped;
  auto flaky = gpu_test("//a:flaky");
  flaky.target.flaky = true;
  auto units =
      make_units(of({cpu, skipped, flaky}), ShardMode::per_shard, size_default_estimator(rules), rules);
  REQUIRE(units.size() == 1);
  CHECK(units[0].flaky);
}

TEST_CASE("the rules file's size defaults set the planned durations") {
  Rules rules;
  rules.size_default_seconds["medium"] = 42;
  auto units = make_units(of({gpu_test("//a:b"), gpu_test("//a:c", 0, "enormous")}), ShardMode::per_shard,
                          size_default_estimator(rules), rules);
  CHECK(units[0].duration_s == 42);
  CHECK(units[1].duration_s == 3600);
}

TEST_CASE("a unit reserves the larger of its declared and its measured GPU memory") {
  Rules rules;
  auto declared = gpu_test("//a:declared");
  declared.requirement.edit().gpu_mem_mib = Sourced<std::int64_t>{16384, "tag gpu-mem:16G"};
  auto measured = gpu_test("//a:measured");
  Estimator history = [](const ClassifiedTest& t, std::optional<int>) {
    std::optional<std::int64_t> peak;
    if (t.target.label == "//a:declared") peak = 20000;
    if (t.target.label == "//a:measured") peak = 9000;
    return Estimate{30, "history-p90", peak};
  };
  auto units =
      make_units(of({declared, measured, gpu_test("//a:unknown")}), ShardMode::per_shard, history, rules);
  CHECK(units[0].vram_mib == 20000);
  CHECK(units[1].vram_mib == 9000);
  CHECK(!units[2].vram_mib);
}

TEST_CASE("a gpu-mem tag below what failed runs used does not lower the reservation") {
  // Three OOMs at 60,000 MiB, tagged gpu-mem:8GiB: pack had shared its GPU on the tag's word.
  Rules rules;
  auto tagged = gpu_test("//a:oom");
  tagged.requirement.edit().gpu_mem_mib = Sourced<std::int64_t>{8192, "tag gpu-mem:8GiB"};
  auto untagged = gpu_test("//a:failed_only");
  Estimator history = [](const ClassifiedTest&, std::optional<int>) {
    Estimate e{30, "history-p90", std::nullopt};
    e.least_vram_mib = 69000;  // 60,000 MiB and the headroom, of runs that failed
    return e;
  };
  auto units = make_units(of({tagged, untagged}), ShardMode::per_shard, history, rules);
  CHECK(!units[0].vram_mib);  // //a:failed_only: no tag, no passing run: unknown, so a GPU to itself
  REQUIRE(units[0].requirement->gpu_mem_mib);
  CHECK(units[0].requirement->gpu_mem_mib->value == 60000);  // but one with the memory it used
  CHECK(units[1].vram_mib == 69000);
}

TEST_CASE("with --shards=whole a test's memory is known only when every shard's peak is") {
  // Shard 0 measured at 1,150 MiB, shard 1 never: the whole test was reserved 1,150 MiB as known,
  // so pack could share its GPU, though shard 1 may be the one that needs the memory.
  Rules rules;
  auto peaks = [](std::optional<std::int64_t> second) {
    return Estimator([second](const ClassifiedTest&, std::optional<int> shard) {
      Estimate e{30, "history-p90", std::nullopt};
      e.peak_vram_mib = shard == 1 ? second : std::optional<std::int64_t>(1150);
      return e;
    });
  };
  auto partly = make_units(of({gpu_test("//a:t", 2)}), ShardMode::whole, peaks(std::nullopt), rules);
  CHECK(!partly[0].vram_mib);
  // It uses at least what shard 0 used: no GPU with less runs it (before, a 24 GB L4 ran a test
  // whose shard 0 peaked at 30,000 MiB).
  REQUIRE(partly[0].requirement->gpu_mem_mib);
  CHECK(partly[0].requirement->gpu_mem_mib->value == 1000);
  auto wholly = make_units(of({gpu_test("//a:t", 2)}), ShardMode::whole, peaks(80500), rules);
  CHECK(wholly[0].vram_mib == 80500);
}

TEST_CASE("units come sorted by id whatever the order of the tests") {
  Rules rules;
  auto units = make_units(of({gpu_test("//b:t"), gpu_test("//a:t", 2)}), ShardMode::per_shard,
                          size_default_estimator(rules), rules);
  REQUIRE(units.size() == 3);
  CHECK(units[0].id == "//a:t#shard-0-of-2");
  CHECK(units[2].id == "//b:t");
}

TEST_CASE("take_units makes the units make_units makes, and takes the GPU tests' labels") {
  Rules rules;
  auto estimate = size_default_estimator(rules);
  for (ShardMode mode : {ShardMode::per_shard, ShardMode::whole}) {
    ClassifiedTest cpu;
    cpu.target.label = "//a:cpu_test";
    Classification tests =
        of({gpu_test("//ml:eval_test"), gpu_test("//ml:train_test_with_a_long_label", 3, "large"), cpu});
    auto made = make_units(tests, mode, estimate, rules);
    auto taken = take_units(tests, mode, estimate, rules);
    REQUIRE(taken.size() == made.size());
    for (std::size_t i = 0; i < made.size(); ++i) {
      CHECK(taken[i].id == made[i].id);
      CHECK(taken[i].label == made[i].label);
      CHECK(taken[i].duration_s == made[i].duration_s);
      CHECK(taken[i].duration_source == made[i].duration_source);
    }
    CHECK(taken.back().label == "//ml:train_test_with_a_long_label");
    CHECK(tests.tests[0].target.label.empty());
    CHECK(tests.tests[1].target.label.empty());
    CHECK(tests.tests[2].target.label == "//a:cpu_test");  // a CPU test keeps its label
  }
}

TEST_CASE("a test named like another test's shard is refused: one of them would not be planned") {
  // Bazel allows '#' in a name. Before, //a:t#shard-0-of-2 was dropped as a repeat of shard 0 of
  // //a:t: never planned, never run, and the plan and verify said nothing.
  Rules rules;
  for (auto order : {std::vector{gpu_test("//a:t", 2), gpu_test("//a:t#shard-0-of-2")},
                     std::vector{gpu_test("//a:t#shard-0-of-2"), gpu_test("//a:t", 2)}})
    REQUIRE_THROWS_WITH(make_units(of(order), ShardMode::per_shard, size_default_estimator(rules), rules),
                        "//a:t#shard-0-of-2: the test's name is the unit id of shard 0 of 2 of //a:t "
                        "(LABEL#shard-I-of-N), so "
                        "one of them would not be planned; rename the test");
  // The same test twice (cquery's one per configuration) is still one unit.
  auto units = make_units(of({gpu_test("//a:t", 2), gpu_test("//a:t", 2)}), ShardMode::per_shard,
                          size_default_estimator(rules), rules);
  CHECK(units.size() == 2);
}
