#include <catch2/catch.hpp>

#include "gpuplan/history.hpp"
#include "util/rounding.hpp"

using namespace gpuplan;

namespace {
ClassifiedTest gpu_test(const std::string& label, const std::string& size, int shard_count = 0) {
  ClassifiedTest test;
  test.target.label = label;
  test.target.size = size;
  test.target.shard_count = shard_count;
  test.bucket = Bucket::gpu;
  return test;
}
Estimator fixed_default() {
  return [](const ClassifiedTest&, std::optional<int>) {
    return Estimate{300, "size-default", std::nullopt};
  };
}
std::vector<Sample> durations(std::initializer_list<double> seconds) {
  std::vector<Sample> samples;
  for (double s : seconds) samples.push_back(Sample{s, false, std::nullopt, std::nullopt, std::nullopt, {}});
  return samples;
}
}  // namespace

TEST_CASE("a unit's estimate is the p90 of its last 20 samples") {
  std::vector<Sample> samples;
  for (int i = 1; i <= 30; ++i)
    samples.push_back(Sample{double(i), false, std::nullopt, std::nullopt, std::nullopt, {}});
  auto estimate = estimate_from_samples(samples, Rules{});
  REQUIRE(estimate->source == "history-p90");
  REQUIRE(estimate->seconds == Approx(11 + 0.9 * 19));  // samples 11..30
}

TEST_CASE("the percentile and the window come from the rules") {
  Rules rules;
  rules.history_percentile = 50;
  rules.history_window = 3;
  auto estimate = estimate_from_samples(durations({100, 100, 1, 2, 9}), rules);
  REQUIRE(estimate->source == "history-p50");
  REQUIRE(estimate->seconds == 2);
}

TEST_CASE("the 100th percentile is the slowest sample in the window, the 0th the fastest") {
  Rules rules;
  rules.history_percentile = 100;
  auto slowest = estimate_from_samples(durations({4, 9, 1, 7}), rules);
  REQUIRE(slowest->source == "history-p100");
  REQUIRE(slowest->seconds == 9);
  rules.history_percentile = 0;
  REQUIRE(estimate_from_samples(durations({4, 9, 1, 7}), rules)->seconds == 1);
}

TEST_CASE("the percentile rounds the same on every machine: no fused multiply-add") {
  // 1 + (1.315 - 1) * 0.9 rounded after the multiply is 1.2835000000000001, planned as 1.284 s;
  // fused into one multiply-add (GCC's default on aarch64) it was 1.2834999999999999, 1.283 s.
  auto estimate = estimate_from_samples(durations({1.0, 1.315}), Rules{});
  REQUIRE(estimate->seconds == 1.2835000000000001);
  REQUIRE(util::json_seconds(estimate->seconds) == 1.284);
}

TEST_CASE("when every sample has a start time, the newest are the latest started") {
  std::vector<Sample> samples = {{5, false, std::nullopt, 3000, std::nullopt, {}},
                                 {900, false, std::nullopt, 1000, std::nullopt, {}},
                                 {7, false, std::nullopt, 2000, std::nullopt, {}}};
  auto recent = recent_samples(samples, 2);
  REQUIRE(recent.size() == 2);
  REQUIRE(recent[0].seconds == 7);
  REQUIRE(recent[1].seconds == 5);
}

TEST_CASE("newer runs without a peak do not push a measured peak out of the window") {
  // One results record peaked at 30,000 MiB; 20 newer BEP runs measured no memory. The memory
  // was unknown, and the test was planned alone on a 24 GB L4.
  auto samples = durations({100});
  samples[0].peak_vram_mib = 30000;
  for (int i = 0; i < 25; ++i) samples.push_back(durations({50})[0]);
  auto estimate = estimate_from_samples(samples, Rules{});
  CHECK(estimate->peak_vram_mib == 34500);
  CHECK(estimate->seconds == 50);  // the durations are still the last 20 runs'
  // The memory window is the newest 20 runs that measured memory.
  std::vector<Sample> many;
  for (int i = 0; i < 21; ++i) many.push_back(durations({10})[0]);
  many[0].peak_vram_mib = 60000;
  for (int i = 1; i < 21; ++i) many[static_cast<std::size_t>(i)].peak_vram_mib = 1000;
  many.push_back(durations({10})[0]);
  CHECK(estimate_from_samples(many, Rules{})->peak_vram_mib == 1150);
  CHECK(window_samples(many, 20).size() == 21);  // the last 20, and the one older peak still counted
}

TEST_CASE("the measured peak VRAM plus the headroom becomes the unit's VRAM") {
  auto samples = durations({10, 10});
  samples[0].peak_vram_mib = 20000;
  samples[1].peak_vram_mib = 30000;
  REQUIRE(estimate_from_samples(samples, Rules{})->peak_vram_mib == 34500);
}

TEST_CASE(
    "peaks only of runs that failed or were cut short reserve no VRAM; one passing run makes them count") {
  // A test that failed at import, or was stopped, after CUDA's context but before its model: its
  // 500 MiB under pack would share the 40 GiB GPU it needs whole.
  auto samples = durations({10, 10});
  samples[0].peak_vram_mib = 500;
  samples[0].failed = true;
  samples[1].peak_vram_mib = 600;
  samples[1].timed_out = true;
  REQUIRE_FALSE(estimate_from_samples(samples, Rules{})->peak_vram_mib);
  REQUIRE(estimate_from_samples(samples, Rules{})->least_vram_mib == 690);  // what it uses at least
  samples.push_back(durations({10})[0]);
  samples.back().peak_vram_mib = 400;
  REQUIRE(estimate_from_samples(samples, Rules{})->peak_vram_mib == 690);  // the largest, failed or not
}

TEST_CASE("tests without history fall back to their size class's median, then the size default") {
  History history;
  history.samples[{"//a:measured_1", std::nullopt}] = durations({100});
  history.samples[{"//a:measured_2", std::nullopt}] = durations({40});
  history.samples[{"//a:measured_3", std::nullopt}] = durations({70});
  history.samples[{"//cpu:elsewhere", std::nullopt}] = durations({5000});
  Classification tests;
  tests.tests = {gpu_test("//a:measured_1", "large"), gpu_test("//a:measured_2", "large"),
                 gpu_test("//a:measured_3", "large"), gpu_test("//a:new", "large"),
                 gpu_test("//a:small_new", "small")};
  ClassifiedTest cpu = gpu_test("//cpu:elsewhere", "large");
  cpu.bucket = Bucket::cpu;
  tests.tests.push_back(cpu);
  auto estimate = history_estimator(history, tests, Rules{}, fixed_default());

  REQUIRE(estimate(tests.tests[0], std::nullopt).source == "history-p90");
  auto median = estimate(tests.tests[3], std::nullopt);
  REQUIRE(median.source == "size-median");
  REQUIRE(median.seconds == 70);
  auto fallback = estimate(tests.tests[4], std::nullopt);
  REQUIRE(fallback.source == "size-default");
  REQUIRE(fallback.seconds == 300);
}

TEST_CASE("no estimate is zero, even when Bazel rounded a fast test down to 0 s") {
  History history;
  history.samples[{"//a:fast", std::nullopt}] = durations({0, 0});
  Classification tests;
  tests.tests = {gpu_test("//a:fast", "small")};
  auto estimate = history_estimator(history, tests, Rules{}, fixed_default())(tests.tests[0], std::nullopt);
  REQUIRE(estimate.source == "history-p90");
  REQUIRE(estimate.seconds > 0);
}

TEST_CASE("a test that only ever timed out is planned for at least its timeout") {
  History history;
  history.samples[{"//a:hangs", std::nullopt}] = {{900, true, 1000, std::nullopt, std::nullopt, {}}};
  history.samples[{"//a:quick_timeout", std::nullopt}] = {
      {1, true, std::nullopt, std::nullopt, std::nullopt, {}}};
  Classification tests;
  tests.tests = {gpu_test("//a:hangs", "medium"), gpu_test("//a:quick_timeout", "medium")};
  auto estimate = history_estimator(history, tests, Rules{}, fixed_default());
  auto hangs = estimate(tests.tests[0], std::nullopt);
  REQUIRE(hangs.seconds == 900);
  REQUIRE(hangs.source == "history-timeout");
  REQUIRE_FALSE(hangs.peak_vram_mib);  // a run cut short may have stopped before its GPU work
  // A lower bound below the fallback leaves the fallback in charge.
  REQUIRE(estimate(tests.tests[1], std::nullopt).source == "size-default");
}

TEST_CASE("a recent timeout longer than the percentile of the passes is what the test takes now") {
  auto samples = durations({10, 300, 300, 300, 300});
  for (size_t i = 1; i < samples.size(); ++i) samples[i].timed_out = true;
  auto estimate = estimate_from_samples(samples, Rules{});
  REQUIRE(estimate->seconds == 300);
  REQUIRE(estimate->source == "history-p90-timeout");
  samples[1].seconds = 5;  // cut short before the passes' time: only a bound below them
  for (size_t i = 2; i < samples.size(); ++i) samples[i].timed_out = false;
  REQUIRE(estimate_from_samples(samples, Rules{})->source == "history-p90");
}

TEST_CASE("a size class's median is of whole tests: a sharded test counts as the sum of its shards") {
  History history;
  for (int shard = 0; shard < 4; ++shard) history.samples[{"//a:sharded", shard}] = durations({400});
  history.samples[{"//a:whole", std::nullopt}] = durations({1600});
  history.samples[{"//a:other", std::nullopt}] = durations({1500});
  Classification tests;
  tests.tests = {gpu_test("//a:sharded", "large", 4), gpu_test("//a:whole", "large"),
                 gpu_test("//a:other", "large"), gpu_test("//a:new", "large"),
                 gpu_test("//a:new_sharded", "large", 2)};
  auto estimate = history_estimator(history, tests, Rules{}, fixed_default());
  auto whole = estimate(tests.tests[3], std::nullopt);
  REQUIRE(whole.source == "size-median");
  REQUIRE(whole.seconds == 1600);  // the median of 1,600, 1,600 and 1,500 (was 400: shards as tests)
  REQUIRE(estimate(tests.tests[4], 1).seconds == 800);  // one of two shards
}

TEST_CASE("a test sharded since its history was taken shares its whole-test time, and the other way round") {
  History history;
  history.samples[{"//a:now_sharded", std::nullopt}] = durations({400});
  history.samples[{"//a:now_whole", 0}] = durations({10});
  history.samples[{"//a:now_whole", 1}] = durations({30});
  Classification tests;
  tests.tests = {gpu_test("//a:now_sharded", "large", 4), gpu_test("//a:now_whole", "large")};
  auto estimate = history_estimator(history, tests, Rules{}, fixed_default());
  REQUIRE(estimate(tests.tests[0], 2).seconds == 100);
  REQUIRE(estimate(tests.tests[1], std::nullopt).seconds == 40);
  // Both are guesses, which the plan warns of (before, the split of the whole test's time was
  // planned without a word, --strict too).
  CHECK(estimate(tests.tests[0], 2).source == "history-p90-whole-resharded");
  CHECK(estimate(tests.tests[1], std::nullopt).source == "history-p90-resharded");
  // A shard count recorded in the history, other than the test's now, splits the whole test's
  // runs the same way.
  history.shard_counts["//a:now_sharded"] = 2;
  history.samples[{"//a:now_sharded", 0}] = durations({1000});
  history.samples[{"//a:now_sharded", std::nullopt}][0].start_ms = 2000;
  history.samples[{"//a:now_sharded", 0}][0].start_ms = 1000;
  auto newer = history_estimator(history, tests, Rules{}, fixed_default())(tests.tests[0], 3);
  CHECK(newer.seconds == 100);
  CHECK(newer.source == "history-p90-whole-resharded");
  // Runs of the whole test that only timed out give a lower bound, not an estimate to split: its
  // share (100 s) is below the size default, which stands.
  History timed_out;
  timed_out.samples[{"//a:now_sharded", std::nullopt}] = {
      Sample{400, true, std::nullopt, std::nullopt, std::nullopt, {}}};
  auto bound = history_estimator(timed_out, tests, Rules{}, fixed_default())(tests.tests[0], 0);
  CHECK(bound.seconds == 300);
  CHECK(bound.source == "size-default");
}

TEST_CASE("a test unsharded now, with runs of some of its shards only, is planned as resharded") {
  // No count in the history; shard 1's result was cached: 100 + 100 scaled up to 3 shards.
  History history;
  history.samples[{"//a:t", 0}] = durations({100});
  history.samples[{"//a:t", 2}] = durations({100});
  Classification tests;
  tests.tests = {gpu_test("//a:t", "large")};
  auto estimate = history_estimator(history, tests, Rules{}, fixed_default())(tests.tests[0], std::nullopt);
  CHECK(estimate.seconds == 300);
  CHECK(estimate.source == "history-p90-resharded");  // was history-p90: planned so without a word
  // Its own whole-test runs are no guess.
  history.samples[{"//a:t", std::nullopt}] = durations({250});
  estimate = history_estimator(history, tests, Rules{}, fixed_default())(tests.tests[0], std::nullopt);
  CHECK(estimate.seconds == 250);
  CHECK(estimate.source == "history-p90");
}

TEST_CASE("a test whose shard count changed since its runs is planned from the whole test's time") {
  // Measured in 4 shards of 100 s (BEP's shardCount); now 2 shards: each is 200 s, not 100 s. The
  // shards of an older count (5 and 6 of a 7-shard era) are not the test's any more.
  History history;
  for (int shard = 0; shard < 4; ++shard) history.samples[{"//a:t", shard}] = durations({100});
  history.samples[{"//a:t", 6}] = durations({1000});
  history.shard_counts["//a:t"] = 4;
  Classification tests;
  tests.tests = {gpu_test("//a:t", "large", 2)};
  auto estimate = history_estimator(history, tests, Rules{}, fixed_default());
  CHECK(estimate(tests.tests[0], 1).seconds == 200);
  CHECK(estimate(tests.tests[0], 1).source == "history-p90-resharded");
  tests.tests[0].target.shard_count = 0;  // unsharded now: the sum of the 4 shards
  CHECK(estimate(tests.tests[0], std::nullopt).seconds == 400);
  // Newer runs of the whole test (which record no shard count) are used as they are.
  history.samples[{"//a:t", std::nullopt}] = durations({50});
  CHECK(history_estimator(history, tests, Rules{}, fixed_default())(tests.tests[0], std::nullopt).seconds ==
        50);
  history.samples.erase({"//a:t", std::nullopt});
  history.samples.erase({"//a:t", 3});  // a shard never measured: the others' mean stands for it
  tests.tests[0].target.shard_count = 2;
  CHECK(history_estimator(history, tests, Rules{}, fixed_default())(tests.tests[0], 0).seconds == 200);
}

TEST_CASE("an old run of the whole test does not stop a test resharded since from being resharded") {
  // Unsharded once (400 s), then 4 shards of 100 s, now 2 shards: each half is 200 s, not an old
  // quarter's 100 s.
  History history;
  history.samples[{"//a:t", std::nullopt}] = {Sample{400, false, std::nullopt, 1000, std::nullopt, {}}};
  for (int shard = 0; shard < 4; ++shard)
    history.samples[{"//a:t", shard}] = {Sample{100, false, std::nullopt, 2000, std::nullopt, {}}};
  history.shard_counts["//a:t"] = 4;
  Classification tests;
  tests.tests = {gpu_test("//a:t", "large", 2)};
  auto estimate = history_estimator(history, tests, Rules{}, fixed_default());
  CHECK(estimate(tests.tests[0], 0).seconds == 200);
  CHECK(estimate(tests.tests[0], 1).source == "history-p90-resharded");
  // Unsharded now: its own whole-test runs stand.
  tests.tests[0].target.shard_count = 0;
  CHECK(history_estimator(history, tests, Rules{}, fixed_default())(tests.tests[0], std::nullopt).seconds ==
        400);
  // Runs of the whole test newer than the sharded era's are the ones split over the shards now.
  history.samples[{"//a:t", std::nullopt}][0].start_ms = 3000;
  tests.tests[0].target.shard_count = 2;
  auto newer = history_estimator(history, tests, Rules{}, fixed_default())(tests.tests[0], 1);
  CHECK(newer.seconds == 200);
  CHECK(newer.source == "history-p90-whole-resharded");  // an even share, warned of; not the shards'
}

TEST_CASE(
    "shards whose results were cached take what the re-run ones took, and count so in the class median") {
  // One shard of four re-ran (100 s), the other three were cached: the test takes about 400 s.
  History history;
  history.samples[{"//a:sharded", 1}] = durations({100});
  history.shard_counts["//a:sharded"] = 4;
  Classification tests;
  tests.tests = {gpu_test("//a:sharded", "medium", 4), gpu_test("//a:new", "medium")};
  auto estimate = history_estimator(history, tests, Rules{}, fixed_default());
  CHECK(estimate(tests.tests[0], 1).seconds == 100);
  CHECK(estimate(tests.tests[0], 1).source == "history-p90");
  auto cached = estimate(tests.tests[0], 0);
  CHECK(cached.seconds == 100);  // was 25: the median of one shard's time, split in four
  CHECK(cached.source == "history-p90-other-shards");
  CHECK_FALSE(cached.least_vram_mib);                            // its siblings measured no memory
  CHECK(estimate(tests.tests[1], std::nullopt).seconds == 400);  // was 100
  CHECK(estimate(tests.tests[0], std::nullopt).seconds == 400);  // --shards=whole
}

TEST_CASE("a shard never measured uses at least what its siblings used, but reserves none of it") {
  // Shard 0 of 3 peaked at 30,000 MiB; shards 1 and 2 had no memory and went to a 24 GB L4.
  History history;
  history.samples[{"//m:sh", 0}] = durations({100});
  history.samples[{"//m:sh", 0}][0].peak_vram_mib = 30000;
  history.shard_counts["//m:sh"] = 3;
  Classification tests;
  tests.tests = {gpu_test("//m:sh", "small", 3)};
  auto estimate = history_estimator(history, tests, Rules{}, fixed_default());
  auto unmeasured = estimate(tests.tests[0], 1);
  CHECK(unmeasured.source == "history-p90-other-shards");
  CHECK_FALSE(unmeasured.peak_vram_mib);
  CHECK(unmeasured.least_vram_mib == 34500);
  CHECK(estimate(tests.tests[0], 0).peak_vram_mib == 34500);
}

TEST_CASE("history matches a label however Bazel prefixed the main repository") {
  History history;
  history.samples[{"//a:b", std::nullopt}] = durations({42});
  Classification tests;
  tests.tests = {gpu_test("@@//a:b", "medium")};
  REQUIRE(history_estimator(history, tests, Rules{}, fixed_default())(tests.tests[0], std::nullopt).seconds ==
          42);
}

TEST_CASE("a peak of 0 MiB of a run that was on a GPU is no measure of its memory") {
  // pack had reserved 0 MiB for such a test and shared its GPU with anything.
  auto samples = durations({10, 10});
  samples[0].peak_vram_mib = 0;
  samples[0].gpu_touched = true;
  CHECK(!estimate_from_samples(samples, Rules{})->peak_vram_mib);
  samples[1].peak_vram_mib = 2000;
  CHECK(estimate_from_samples(samples, Rules{})->peak_vram_mib == 2300);
  samples[0].gpu_touched = false;  // a run that used no GPU used no GPU memory
  samples[1].peak_vram_mib.reset();
  CHECK(estimate_from_samples(samples, Rules{})->peak_vram_mib == 0);
}

TEST_CASE("memory a framework took up front is no need: it reserves nothing, and up_front_peak says so") {
  // A JAX test run under exact took 75% of an H200: reserved, it could only go to H200s.
  auto samples = durations({10, 10});
  samples[0].peak_vram_mib = 107918;
  samples[0].peak_up_front = true;
  auto estimate = estimate_from_samples(samples, Rules{});
  CHECK_FALSE(estimate->peak_vram_mib);
  CHECK_FALSE(estimate->least_vram_mib);
  History history;
  history.samples[{"//a:jax", std::nullopt}] = samples;
  CHECK(up_front_peak(history, "//a:jax", 20) == 107918);
  // A run measured without preallocation gives the test a peak of its own: nothing to warn of.
  samples[1].peak_vram_mib = 1576;
  CHECK(estimate_from_samples(samples, Rules{})->peak_vram_mib == 1813);
  history.samples[{"//a:jax", std::nullopt}] = samples;
  CHECK_FALSE(up_front_peak(history, "//a:jax", 20));
  CHECK_FALSE(up_front_peak(history, "//a:other", 20));
}

TEST_CASE("a shard that only timed out counts at least its lower bound, and scales no other shard") {
  // Shard 0 of 3 passed in 100 s, shard 1 timed out at 300 s, shard 2 was cached.
  auto shards = [](std::optional<int> count) {
    History history;
    history.samples[{"//a:t", 0}] = durations({100});
    history.samples[{"//a:t", 1}] = {Sample{300, true, std::nullopt, std::nullopt, std::nullopt, {}}};
    if (count) history.shard_counts["//a:t"] = *count;
    return history;
  };
  Classification tests;
  tests.tests = {gpu_test("//a:t", "medium", 3), gpu_test("//a:new", "medium")};
  auto estimate = history_estimator(shards(3), tests, Rules{}, fixed_default());
  CHECK(estimate(tests.tests[0], 1).seconds == 300);
  CHECK(estimate(tests.tests[0], 1).source == "history-timeout");
  // The cached shard takes what the measured one did, not a share of the timed-out one's bound.
  CHECK(estimate(tests.tests[0], 2).seconds == 100);
  CHECK(estimate(tests.tests[0], 2).source == "history-p90-other-shards");
  // The whole test: 100 + at least 300 + 100 (was 1,200: the bound scaled up as if measured).
  CHECK(estimate(tests.tests[1], std::nullopt).seconds == 500);  // its size class's median
  // Unsharded now, the history recording no count: 100 + 300 (was 800).
  tests.tests[0].target.shard_count = 0;
  CHECK(history_estimator(shards(std::nullopt), tests, Rules{}, fixed_default())(tests.tests[0], std::nullopt)
            .seconds == 400);
  // Unsharded now, the history's 2 shards resharded: 100 + 300 (was 200, below the bound alone).
  auto resharded =
      history_estimator(shards(2), tests, Rules{}, fixed_default())(tests.tests[0], std::nullopt);
  CHECK(resharded.seconds == 400);
  CHECK(resharded.source == "history-p90-resharded");
}

TEST_CASE("a GPU test's runs given no GPU are left out of its duration; a CPU test's are its time") {
  auto given_no_gpu = [](std::vector<Sample> samples) {
    for (auto& sample : samples) sample.given_no_gpu = true;
    return samples;
  };
  History history;
  // run-under's --unplanned=warn ran it three times with CUDA_VISIBLE_DEVICES empty: 0.4 s each,
  // its GPU paths skipped; its runs on a GPU took 40 s and more.
  history.samples[{"//ml:inference_test", std::nullopt}] = durations({40, 42});
  for (const auto& sample : given_no_gpu(durations({0.4, 0.4, 0.4})))
    history.samples[{"//ml:inference_test", std::nullopt}].push_back(sample);
  history.samples[{"//ml:never_given_one", std::nullopt}] = given_no_gpu(durations({0.4, 0.4, 0.4}));
  history.samples[{"//core:unit_test", std::nullopt}] = given_no_gpu(durations({3, 3}));
  Classification tests;
  tests.tests = {gpu_test("//ml:inference_test", "medium"), gpu_test("//ml:never_given_one", "small"),
                 gpu_test("//core:unit_test", "small")};
  tests.tests[2].bucket = Bucket::cpu;
  auto estimate = history_estimator(history, tests, Rules{}, fixed_default());

  auto inference = estimate(tests.tests[0], std::nullopt);
  CHECK(inference.source == "history-p90");
  CHECK(inference.seconds == Approx(41.8));
  auto never = estimate(tests.tests[1], std::nullopt);  // no run of its own: planned as without history
  CHECK(never.source == "size-default");
  CHECK(never.seconds == 300);
  CHECK(estimate(tests.tests[2], std::nullopt).seconds == 3);

  auto left_out = partial_runs(history, tests, 20);
  REQUIRE(left_out.size() == 2);  // not the CPU test
  CHECK(left_out.at("//ml:inference_test").given_no_gpu == 3);
  CHECK(left_out.at("//ml:inference_test").recent == 5);
  CHECK_FALSE(left_out.at("//ml:inference_test").every_run);
  CHECK(left_out.at("//ml:never_given_one").every_run);
}

TEST_CASE("a multi-GPU test's runs given fewer GPUs than it needs are left out of its duration") {
  // --missing-gpus=warn ran the 4-GPU test twice on a machine with 2 of its GPUs: its 4-way
  // collectives skipped, 5 s each. On its 4 GPUs it took 60 s.
  History history;
  auto& runs = history.samples[{"//ml:allreduce_test", std::nullopt}];
  for (auto [seconds, gpus] : {std::pair{60.0, 4}, {5.0, 2}, {62.0, 4}, {5.0, 2}}) {
    Sample sample{seconds, false, std::nullopt, std::nullopt, std::nullopt, {}};
    sample.gpus_given = gpus;
    runs.push_back(sample);
  }
  Classification tests;
  tests.tests = {gpu_test("//ml:allreduce_test", "medium")};
  tests.tests[0].requirement.edit().gpus.value = 4;

  auto estimate = history_estimator(history, tests, Rules{}, fixed_default())(tests.tests[0], std::nullopt);
  CHECK(estimate.source == "history-p90");
  CHECK(estimate.seconds == Approx(61.8));  // was 61.4: the p90 of 5, 5, 60 and 62

  auto left_out = partial_runs(history, tests, 20);
  REQUIRE(left_out.size() == 1);
  CHECK(left_out.at("//ml:allreduce_test").fewer_gpus == 2);
  CHECK(left_out.at("//ml:allreduce_test").fewest_gpus == 2);
  CHECK(left_out.at("//ml:allreduce_test").needs == 4);
  CHECK(left_out.at("//ml:allreduce_test").recent == 4);

  // A 2-GPU test's runs on its 2 GPUs are whole runs; those on 4 are of a time it asked for 4.
  tests.tests[0].requirement.edit().gpus.value = 2;
  left_out = partial_runs(history, tests, 20);
  REQUIRE(left_out.size() == 1);
  CHECK(left_out.at("//ml:allreduce_test").fewer_gpus == 0);
  CHECK(left_out.at("//ml:allreduce_test").more_gpus == 2);
}

TEST_CASE(
    "runs given all the GPUs their test asked for then are its older count's, whatever came after them") {
  // //ml:dist_test went from gpu to gpu:2. run-under recorded its three runs on 1 GPU with
  // gpus_asked 1; no run on 2 GPUs has come yet. Without gpus_asked they may be a machine short
  // of GPUs as well (fewer_last, a warning); with it they are the older count's only.
  auto runs_of = [](std::optional<int> asked) {
    History history;
    auto& runs = history.samples[{"//ml:dist_test", std::nullopt}];
    for (double seconds : {50.0, 51.0, 52.0}) {
      Sample sample{seconds, false, std::nullopt, std::nullopt, std::nullopt, {}};
      sample.gpus_given = 1;
      sample.gpus_asked = asked;
      runs.push_back(sample);
    }
    return history;
  };
  Classification tests;
  tests.tests = {gpu_test("//ml:dist_test", "medium")};
  tests.tests[0].requirement.edit().gpus.value = 2;

  auto unsaid = partial_runs(runs_of(std::nullopt), tests, 20).at("//ml:dist_test");
  CHECK(unsaid.fewer_gpus == 3);
  CHECK(unsaid.fewer_last == 3);
  CHECK(unsaid.fewer_as_asked == 0);

  auto history = runs_of(1);
  auto asked = partial_runs(history, tests, 20).at("//ml:dist_test");
  CHECK(asked.fewer_gpus == 3);
  CHECK(asked.fewer_as_asked == 3);
  CHECK(asked.fewer_than_asked == 0);
  CHECK(asked.fewer_last == 0);
  CHECK(asked.fewer_after_whole == 0);
  CHECK(asked.every_run);

  // A run on a machine short of GPUs (1 of the 2 it asked for), then one on 2 GPUs: the short run
  // stays a machine's, though a whole run came after it.
  auto& runs = history.samples[{"//ml:dist_test", std::nullopt}];
  Sample short_run{20, false, std::nullopt, std::nullopt, std::nullopt, {}};
  short_run.gpus_given = 1;
  short_run.gpus_asked = 2;
  runs.push_back(short_run);
  Sample whole{30, false, std::nullopt, std::nullopt, std::nullopt, {}};
  whole.gpus_given = 2;
  whole.gpus_asked = 2;
  runs.push_back(whole);
  auto after = partial_runs(history, tests, 20).at("//ml:dist_test");
  CHECK(after.fewer_gpus == 4);
  CHECK(after.fewer_as_asked == 3);
  CHECK(after.fewer_than_asked == 1);
  CHECK(after.fewer_last == 0);
  CHECK_FALSE(after.every_run);
  auto estimate = history_estimator(history, tests, Rules{}, fixed_default())(tests.tests[0], std::nullopt);
  CHECK(estimate.seconds == 30);  // from the run on 2 GPUs alone
}

TEST_CASE("a test whose GPU count was lowered is not planned from its runs on more GPUs") {
  // //ml:train_test took 100 s on 2 GPUs; its tag is now gpu (1 GPU), where it takes 170 s.
  // Before, its p90 stayed near 100 s until two more runs on 1 GPU came: planned 0.6 times short.
  History history;
  auto& runs = history.samples[{"//ml:train_test", std::nullopt}];
  for (auto [seconds, gpus] : {std::pair{100.0, 2}, {101.0, 2}, {99.0, 2}, {102.0, 2}, {170.0, 1}}) {
    Sample sample{seconds, false, std::nullopt, std::nullopt, std::nullopt, {}};
    sample.gpus_given = gpus;
    sample.peak_vram_mib = gpus == 2 ? 18000 : 36000;
    runs.push_back(sample);
  }
  Classification tests;
  tests.tests = {gpu_test("//ml:train_test", "medium")};

  auto estimate = history_estimator(history, tests, Rules{}, fixed_default())(tests.tests[0], std::nullopt);
  CHECK(estimate.source == "history-p90");
  CHECK(estimate.seconds == 170);
  CHECK(estimate.peak_vram_mib == 41400);  // 36,000 MiB plus 15%: its peak on one GPU
  auto left_out = partial_runs(history, tests, 20);
  REQUIRE(left_out.size() == 1);
  CHECK(left_out.at("//ml:train_test").more_gpus == 4);
  CHECK(left_out.at("//ml:train_test").most_gpus == 2);
  CHECK_FALSE(left_out.at("//ml:train_test").every_run);

  // A test given its node's every GPU (exclusive, no count) runs on more than its one: whole runs.
  tests.tests[0].requirement.edit().every_node_gpu = Sourced<bool>{true, "tag exclusive"};
  CHECK(partial_runs(history, tests, 20).empty());
  CHECK(history_estimator(history, tests, Rules{}, fixed_default())(tests.tests[0], std::nullopt).seconds ==
        Approx(142.8));  // the p90 of all five
}

TEST_CASE("a run filtered to some test cases is left out of any test's duration") {
  // `bazel test //ml:gemm_test --test_filter=OneCase` three times: 0.3 s, beside the whole test's 40 s.
  History history;
  history.samples[{"//ml:gemm_test", std::nullopt}] = durations({40, 0.3, 0.3, 0.3});
  for (int i = 1; i < 4; ++i) history.samples[{"//ml:gemm_test", std::nullopt}][i].filtered = true;
  history.samples[{"//core:unit_test", std::nullopt}] = durations({3, 0.1});
  history.samples[{"//core:unit_test", std::nullopt}][1].filtered = true;
  Classification tests;
  tests.tests = {gpu_test("//ml:gemm_test", "medium")};
  auto estimate = history_estimator(history, tests, Rules{}, fixed_default());
  CHECK(estimate(tests.tests[0], std::nullopt).seconds == 40);  // was 28.09
  auto left_out = partial_runs(history, tests, 20);
  REQUIRE(left_out.size() == 1);
  CHECK(left_out.at("//ml:gemm_test").filtered == 3);
  CHECK(left_out.at("//ml:gemm_test").recent == 4);
  // Whatever the test needs, even where the query does not name it.
  CHECK(whole_runs(history.samples.at({"//core:unit_test", std::nullopt}), std::nullopt).size() == 1);
}

TEST_CASE("googletest's, pytest's and Bazel's test filters are told from other arguments") {
  CHECK(test_case_filter({"--gtest_filter=Gemm.*"}, true) == "Gemm.*");
  CHECK(test_case_filter({"--gtest_filter=*"}, true).empty());  // googletest's default: every case
  CHECK(test_case_filter({"--gtest_filter="}, true).empty());
  CHECK(test_case_filter({"-v", "-k", "fp16 and not slow"}, true) == "fp16 and not slow");
  CHECK(test_case_filter({"-kfp16"}, true) == "fp16");
  CHECK(test_case_filter({"--keep", "-x", "--", "-k"}, true).empty());
  // A program that is not pytest: its -k is its own option, and googletest's filter still counts.
  CHECK(test_case_filter({"-k", "3"}, false).empty());
  CHECK(test_case_filter({"-k", "3", "--gtest_filter=Gemm.*"}, false) == "Gemm.*");
  CHECK(bazel_test_filter({"--test_env=A=1", "--test_filter=OneCase"}) == "OneCase");
  CHECK(bazel_test_filter({"--test_filter=OneCase", "--test_filter="}).empty());  // the last one wins
  CHECK(bazel_test_filter({"--test_arg=--gtest_filter=Gemm.Fp16"}) == "Gemm.Fp16");
  CHECK(bazel_test_filter({"--test_arg=-k", "--test_arg=fp16"}) == "fp16");
  CHECK(bazel_test_filter({"--test_arg=-k fp16"}) == "fp16");  // one argument: pytest's " fp16"
  CHECK(bazel_test_filter({"--test_arg=-k "}).empty());
  CHECK(bazel_test_filter({"--test_tag_filters=gpu", "--test_arg=--verbose"}).empty());
  // A compiled test's -k is its own option (test_kind_may_run_pytest); googletest's filter is not.
  CHECK(bazel_test_filter({"--test_arg=-k", "--test_arg=fp16"}, false).empty());
  CHECK(bazel_test_filter({"--test_arg=-k", "--test_arg=3", "--test_arg=--gtest_filter=A.*"}, false) ==
        "A.*");
  CHECK_FALSE(test_kind_may_run_pytest("cc_test rule"));
  CHECK_FALSE(test_kind_may_run_pytest("go_test rule"));
  CHECK_FALSE(test_kind_may_run_pytest("kt_jvm_test rule"));  // JVM, .NET and Swift tests too
  CHECK_FALSE(test_kind_may_run_pytest("scala_test rule"));
  CHECK_FALSE(test_kind_may_run_pytest("csharp_test rule"));
  CHECK_FALSE(test_kind_may_run_pytest("swift_test rule"));
  CHECK_FALSE(test_kind_may_run_pytest("zig_test rule"));
  CHECK_FALSE(test_kind_may_run_pytest("android_instrumentation_test rule"));
  CHECK(test_kind_may_run_pytest("py_test rule"));
  CHECK(test_kind_may_run_pytest("sh_test rule"));
  CHECK(test_kind_may_run_pytest("_pytest_test rule"));  // a custom rule's: it may be pytest
}
