#include <algorithm>
#include <catch2/catch.hpp>
#include <map>

#include "gpuplan/error.hpp"
#include "history/fixtures.hpp"

using namespace gpuplan;
using gpuplan::test::read_bep_fixture;
using gpuplan::test::read_bep_text;

namespace {
std::string result_line(const std::string& id, const std::string& payload) {
  return R"({"id":{"testResult":)" + id + R"(},"testResult":)" + payload + "}\n";
}
const std::string attempt_1 = R"({"label":"//gpu:t","run":1,"shard":1,"attempt":1})";
const std::string attempt_2 = R"({"label":"//gpu:t","run":1,"shard":1,"attempt":2})";
/// The testSummary Bazel writes after an unsharded test's results (no shardCount: proto3 leaves out 0).
const std::string summary_t =
    R"({"id":{"testSummary":{"label":"//gpu:t"}},"testSummary":{"totalRunCount":1}})"
    "\n";
}  // namespace

TEST_CASE("a real Bazel run gives each test and each shard its measured duration") {
  auto read = read_bep_fixture("bep_run.json");
  const auto& samples = read.history.samples;
  REQUIRE(read.diagnostics.empty());
  REQUIRE(samples.at({"//ml:inference_test", std::nullopt}).at(0).seconds == Approx(0.391));
  REQUIRE(samples.at({"//core:unit_test", std::nullopt}).size() == 1);
  // 1-based BEP shards become 0-based like TEST_SHARD_INDEX; the count comes from testSummary.
  REQUIRE(samples.at({"//ml:train_test", 0}).at(0).seconds == Approx(0.390));
  REQUIRE(samples.at({"//ml:train_test", 3}).at(0).seconds == Approx(0.403));
  REQUIRE_FALSE(samples.count({"//ml:train_test", 4}));
  REQUIRE(read.history.shard_counts.at("//ml:train_test") == 4);
  REQUIRE(samples.at({"//ml:pool_test", std::nullopt}).at(0).start_ms == 1796036239962);
}

TEST_CASE("a real Bazel run under --test_filter marks its results filtered; an unfiltered one does not") {
  // bep_filtered.json: `bazel test //ml:inference_test --test_filter=OneCase`, whose
  // optionsParsed cmdLine holds "--test_filter=OneCase".
  auto filtered = read_bep_fixture("bep_filtered.json");
  REQUIRE(filtered.diagnostics.empty());
  const auto& run = filtered.history.samples.at({"//ml:inference_test", std::nullopt});
  REQUIRE(run.size() == 1);
  CHECK(run.at(0).seconds == Approx(0.921));
  CHECK(run.at(0).filtered);
  CHECK_FALSE(read_bep_fixture("bep_run.json")
                  .history.samples.at({"//ml:inference_test", std::nullopt})
                  .at(0)
                  .filtered);
}

TEST_CASE(
    "a --test_arg of googletest's filter marks an invocation's results; the next invocation starts "
    "unfiltered") {
  const std::string options =
      R"({"id":{"optionsParsed":{}},"optionsParsed":{"cmdLine":["--test_arg=--gtest_filter=Gemm.Fp16"]}})"
      "\n";
  const std::string started = R"({"id":{"started":{}},"started":{"uuid":"b"}})"
                              "\n";
  auto read = read_bep_text(
      options + result_line(attempt_1, R"({"status":"PASSED","testAttemptDurationMillis":"300"})") +
          summary_t + started +
          result_line(attempt_1, R"({"status":"PASSED","testAttemptDurationMillis":"40000"})") + summary_t,
      true);
  const auto& runs = read.history.samples.at({"//gpu:t", std::nullopt});
  REQUIRE(runs.size() == 2);
  CHECK(runs.at(0).filtered);
  CHECK_FALSE(runs.at(1).filtered);
}

TEST_CASE("pytest's -k in a real Bazel run's --test_args filters its py_test and sh_test, not its cc_test") {
  // bep_pytest_k.json: `bazel test //core:config_test //core:parser_test //core:unit_test
  // --test_arg=-k --test_arg=fp16`, whose targetConfigured events say "py_test rule", "cc_test
  // rule" and "sh_test rule". A compiled test's -k is its own option, not a filter: before, the
  // cc_test's whole run was left out of its duration too.
  auto read = read_bep_fixture("bep_pytest_k.json");
  REQUIRE(read.diagnostics.empty());
  const auto& samples = read.history.samples;
  CHECK(samples.at({"//core:config_test", std::nullopt}).at(0).filtered);
  CHECK(samples.at({"//core:unit_test", std::nullopt}).at(0).filtered);  // a script may run pytest
  const auto& compiled = samples.at({"//core:parser_test", std::nullopt}).at(0);
  CHECK(compiled.seconds == Approx(0.884));
  CHECK_FALSE(compiled.filtered);
}

TEST_CASE(
    "a compiled test stays filtered by --test_filter and googletest's filter, and by -k where its kind is "
    "not said") {
  const std::string configured =
      R"({"id":{"targetConfigured":{"label":"//gpu:t"}},"configured":{"targetKind":"cc_test rule"}})"
      "\n";
  auto with_options = [&](const std::string& options, const std::string& kind_event) {
    auto read = read_bep_text(
        R"({"id":{"optionsParsed":{}},"optionsParsed":{"cmdLine":[)" + options + "]}}\n" + kind_event +
            result_line(attempt_1, R"({"status":"PASSED","testAttemptDurationMillis":"300"})") + summary_t,
        true);
    return read.history.samples.at({"//gpu:t", std::nullopt}).at(0).filtered;
  };
  CHECK_FALSE(with_options(R"("--test_arg=-k","--test_arg=3")", configured));
  CHECK(with_options(R"("--test_arg=-k","--test_arg=3","--test_filter=Gemm.*")", configured));
  CHECK(with_options(R"("--test_arg=-k","--test_arg=3","--test_arg=--gtest_filter=Gemm.*")", configured));
  CHECK(with_options(R"("--test_arg=-k","--test_arg=3")", ""));  // no targetConfigured: as before
  const std::string py_test =
      R"({"id":{"targetConfigured":{"label":"//gpu:t"}},"configured":{"targetKind":"py_test rule"}})"
      "\n";
  CHECK(with_options(R"("--test_arg=-k","--test_arg=fp16")", py_test));
  // The .proto's field names (protojson's UseProtoNames) say the same.
  auto snake = read_bep_text(
      R"({"id":{"options_parsed":{}},"options_parsed":{"cmd_line":["--test_arg=-k","--test_arg=3"]}})"
      "\n"
      R"({"id":{"target_configured":{"label":"//gpu:t"}},"configured":{"target_kind":"go_test rule"}})"
      "\n"
      R"({"id":{"test_result":{"label":"//gpu:t","run":1,"shard":1,"attempt":1}},"test_result":{"status":"PASSED","test_attempt_duration_millis":"300"}})"
      "\n"
      R"({"id":{"test_summary":{"label":"//gpu:t"}},"test_summary":{"total_run_count":1}})"
      "\n",
      true);
  CHECK_FALSE(snake.history.samples.at({"//gpu:t", std::nullopt}).at(0).filtered);
}

TEST_CASE("cached results are ignored: they measured an earlier run") {
  auto read = read_bep_fixture("bep_cached.json");
  REQUIRE(read.history.sample_count() == 0);
  REQUIRE(read.history.cached_results == 7);
  auto remote = read_bep_text(
      result_line(
          attempt_1,
          R"({"status":"PASSED","testAttemptDurationMillis":"5000","executionInfo":{"cachedRemotely":true}})"),
      true);
  REQUIRE(remote.history.sample_count() == 0);
  REQUIRE(remote.history.cached_results == 1);
}

TEST_CASE("an external test's runs are its own whichever way Bazel spells its repository") {
  // BEP of Bazel 7 and 8 names the canonical repository; their default query the apparent one.
  // Before, the runs of @@rules_foo~//x:t never reached @rules_foo//x:t: planned at its size default.
  auto read = read_bep_text(
      result_line(R"({"label":"@@rules_foo~//x:t","run":1,"shard":1,"attempt":1})",
                  R"({"status":"PASSED","testAttemptDurationMillis":"42000"})") +
          result_line(R"({"label":"@@rules_bar+//y:t","run":1,"shard":1,"attempt":1})",
                      R"({"status":"PASSED","testAttemptDurationMillis":"7000"})") +
          R"({"id":{"testSummary":{"label":"@@rules_foo~//x:t"}},"testSummary":{"totalRunCount":1}})"
          "\n"
          R"({"id":{"testSummary":{"label":"@@rules_bar+//y:t"}},"testSummary":{"totalRunCount":1}})"
          "\n",
      true);
  Classification tests;
  for (auto label : {"@rules_foo//x:t", "@rules_bar//y:t"}) {
    ClassifiedTest test;
    test.target.label = label;
    test.bucket = Bucket::gpu;
    tests.tests.push_back(test);
  }
  auto estimator =
      history_estimator(read.history, tests, Rules{}, [](const ClassifiedTest&, std::optional<int>) {
        return Estimate{300, "size-default", std::nullopt};
      });
  CHECK(estimator(tests.tests[0], std::nullopt).seconds == Approx(42));
  CHECK(estimator(tests.tests[1], std::nullopt).seconds == Approx(7));
}

TEST_CASE("a timed-out attempt is kept as a lower bound, not as a sample") {
  auto read = read_bep_fixture("bep_timeout.json");
  const auto& attempts = read.history.samples.at({"//ml:flaky_kernel_test", std::nullopt});
  REQUIRE(attempts.size() == 2);
  REQUIRE(attempts[0].timed_out);
  REQUIRE(attempts[1].timed_out);
  REQUIRE(attempts[1].seconds == Approx(1.047));
}

TEST_CASE("every attempt of a flaky test counts, failed or passed") {
  auto read = read_bep_text(
      result_line(attempt_1, R"({"status":"FAILED","testAttemptDurationMillis":"10000"})") +
          result_line(attempt_2, R"({"status":"PASSED","testAttemptDurationMillis":"12000"})") + summary_t,
      true);
  const auto& attempts = read.history.samples.at({"//gpu:t", std::nullopt});
  REQUIRE(attempts.size() == 2);
  REQUIRE(attempts[0].seconds == 10);
  REQUIRE(attempts[1].seconds == 12);
}

TEST_CASE("a result an event stream repeats is counted once, with a note") {
  // A Build Event Service journal that resent events holds a result twice; it was two samples.
  auto once = result_line(attempt_1, R"({"status":"PASSED","testAttemptDurationMillis":"10000"})");
  auto read = read_bep_text(
      once + once + result_line(attempt_2, R"({"status":"PASSED","testAttemptDurationMillis":"12000"})") +
          summary_t,
      true);
  REQUIRE(read.history.samples.at({"//gpu:t", std::nullopt}).size() == 2);
  REQUIRE(read.diagnostics.size() == 1);
  REQUIRE(read.diagnostics[0].severity == Severity::note);
  REQUIRE_THAT(read.diagnostics[0].message,
               Catch::StartsWith("1 testResult event repeats an earlier one (the first: line 2, //gpu:t)"));
  // Two builds' files put into one: the same ids, other starts. Both count, without a note.
  auto started = [](const std::string& start) {
    return result_line(attempt_1, R"({"status":"PASSED","testAttemptDurationMillis":"10000",)"
                                  R"("testAttemptStartMillisEpoch":")" +
                                      start + R"("})");
  };
  auto both =
      read_bep_text(started("1714557600000") + summary_t + started("1714644000000") + summary_t, true);
  REQUIRE(both.history.samples.at({"//gpu:t", std::nullopt}).size() == 2);
  REQUIRE(both.diagnostics.empty());
}

TEST_CASE("newer Bazel's Duration and Timestamp fields are read") {
  auto read = read_bep_text(
      result_line(
          attempt_1,
          R"({"status":"PASSED","testAttemptDuration":"12.5s","testAttemptStart":"2024-05-01T10:00:00.250Z","testAttemptDurationMillis":"1"})") +
          summary_t,
      true);
  const auto& sample = read.history.samples.at({"//gpu:t", std::nullopt}).at(0);
  REQUIRE(sample.seconds == 12.5);
  REQUIRE(sample.start_ms == 1714557600250);
}

TEST_CASE("attempts that never ran to the end measure nothing") {
  auto read = read_bep_text(
      result_line(attempt_1, R"({"status":"INCOMPLETE","testAttemptDurationMillis":"3"})") +
          result_line(attempt_2, R"({"status":"FAILED_TO_BUILD"})") +
          R"({"id":{"testResult":{"label":"//gpu:t","run":1,"shard":1,"attempt":3}},"aborted":{"reason":"USER_INTERRUPTED"}})"
          "\n",
      true);
  REQUIRE(read.history.sample_count() == 0);
  REQUIRE(read.diagnostics.empty());
}

TEST_CASE("a bad build event names its file and line, and under --strict stops the run") {
  struct Case {
    std::string line;
    std::string message;
  };
  auto passed = [](const std::string& duration) {
    return result_line(attempt_1, R"({"status":"PASSED",)" + duration + "}");
  };
  std::vector<Case> cases = {
      {"{\"id\":{\"testResult\":\n", "bep.json:2: not a JSON build event"},
      {passed(R"("testAttemptDuration":"soon")"),
       "bep.json:2: testAttemptDuration of //gpu:t is not a duration: \"soon\""},
      {passed(R"("testAttemptDurationMillis":"-5")"),
       "bep.json:2: testAttemptDurationMillis of //gpu:t is negative: \"-5\""},
      {passed(R"("testAttemptDuration":"-1.5s")"), "bep.json:2: testAttemptDuration of //gpu:t is negative"},
      {passed(R"("testAttemptDurationMillis":"1000","testAttemptStartMillisEpoch":"1e30")"),
       "bep.json:2: testAttemptStartMillisEpoch of //gpu:t is not a time from 1970 to 9999: \"1e30\""},
      {passed(R"("testAttemptDuration":"1e308s")"),
       "bep.json:2: testAttemptDuration of //gpu:t is longer than a year (gpuplan's limit)"},
      // A run read as 0 s planned the test at nothing.
      {passed(R"("testAttemptStart":"2024-05-01T10:00:00Z")"),
       "bep.json:2: the result of //gpu:t has no testAttemptDuration (nor testAttemptDurationMillis)"},
      {result_line(R"({"label":"//gpu:t","shard":10001})", R"({"status":"PASSED"})"),
       "bep.json:2: testResult shard of //gpu:t is not a positive number"},
      {result_line(R"({"label":"//gpu:t","shard":0})", R"({"status":"PASSED"})"),
       "bep.json:2: testResult shard of //gpu:t is not a positive number"},
  };
  std::string good = result_line(attempt_1, R"({"status":"PASSED","testAttemptDurationMillis":"1000"})");
  std::string again = result_line(attempt_2, R"({"status":"PASSED","testAttemptDurationMillis":"1000"})");
  for (const auto& c : cases) {
    INFO(c.line);
    try {
      read_bep_text(good + c.line, true);
      FAIL("no error under --strict");
    } catch (const InputError& e) {
      REQUIRE_THAT(e.what(), Catch::StartsWith(c.message));
    }
    auto lenient = read_bep_text(good + c.line + again + summary_t, false);
    REQUIRE(lenient.history.sample_count() == 2);
    REQUIRE(lenient.diagnostics.size() == 1);
    REQUIRE(lenient.diagnostics[0].severity == Severity::warning);
    REQUIRE_THAT(lenient.diagnostics[0].message,
                 Catch::StartsWith("skipped 1 bad history row (the first: " + c.message));
  }
}

TEST_CASE("several bad lines in one file make one warning that counts them") {
  auto read = read_bep_text("not json\n{\"id\":{}}\n[1,2\n", false);
  REQUIRE(read.diagnostics.size() == 1);
  REQUIRE_THAT(read.diagnostics[0].message,
               Catch::StartsWith("skipped 2 bad history rows (the first: bep.json:1:"));
}

TEST_CASE("a Build Event Service journal's envelopes are opened; its lifecycle events are skipped") {
  std::string bazel_event =
      R"({"@type":"type.googleapis.com/build_event_stream.BuildEvent","id":{"testResult":{"label":"//gpu:t","run":1,"shard":1,"attempt":1}},"testResult":{"status":"PASSED","testAttemptDurationMillis":"4000"}})";
  std::string summary_event =
      R"({"@type":"type.googleapis.com/build_event_stream.BuildEvent","id":{"testSummary":{"label":"//gpu:t"}},"testSummary":{"totalRunCount":1}})";
  auto tool_event = [](int sequence, const std::string& event) {
    return R"({"orderedBuildEvent":{"streamId":{"buildId":"b","invocationId":"i","component":"TOOL"},"sequenceNumber":")" +
           std::to_string(sequence) + R"(","event":{"eventTime":"2024-01-01T00:00:00Z","bazelEvent":)" +
           event + "}},\"projectId\":\"p\"}\n";
  };
  std::string journal =
      tool_event(1, bazel_event) + tool_event(2, summary_event) +
      R"({"orderedBuildEvent":{"streamId":{"buildId":"b","component":"CONTROLLER"},"sequenceNumber":"3","event":{"eventTime":"2024-01-01T00:00:01Z","buildFinished":{"status":{"result":"COMMAND_SUCCEEDED"}}}}})"
      "\n";
  REQUIRE(detect_history_format(journal) == HistoryFormat::bep);
  auto read = read_bep_text(journal, true);
  REQUIRE(read.diagnostics.empty());
  REQUIRE(read.history.samples.at({"//gpu:t", std::nullopt}).at(0).seconds == 4);
}

TEST_CASE("a summary's shard count beyond gpuplan's limit is a bad row, not a count that wraps") {
  std::string good = result_line(attempt_1, R"({"status":"PASSED","testAttemptDurationMillis":"1000"})");
  auto summary = [](const std::string& count) {
    return R"({"id":{"testSummary":{"label":"//gpu:t"}},"testSummary":{"shardCount":)" + count + "}}\n";
  };
  REQUIRE_THROWS_WITH(
      read_bep_text(good + summary("4294967298"), true),
      Catch::StartsWith("bep.json:2: testSummary shardCount 4294967298 of //gpu:t is not a shard"));
  auto read = read_bep_text(good + summary("4294967298"), false);
  REQUIRE(read.history.shard_counts.empty());
  REQUIRE(read_bep_text(good + summary("2"), true).history.shard_counts.at("//gpu:t") == 2);
}

TEST_CASE("an interrupted build's one finished shard stays a shard, not the whole test's time") {
  // Bazel announces every shard's result in targetCompleted; interrupted after shard 1 (400 s),
  // it closes the stream with the other shards' results and the summary aborted.
  auto id = [](int shard) {
    return R"({"label":"//ml:train_test","run":1,"shard":)" + std::to_string(shard) + R"(,"attempt":1})";
  };
  std::string children;
  for (int shard = 1; shard <= 4; ++shard) children += R"({"testResult":)" + id(shard) + "},";
  std::string announced = R"({"id":{"targetCompleted":{"label":"//ml:train_test"}},"children":[)" + children +
                          R"({"testSummary":{"label":"//ml:train_test"}}],"completed":{"success":true}})"
                          "\n";
  std::string shard_1 = result_line(id(1), R"({"status":"PASSED","testAttemptDuration":"400s"})");
  std::string aborted;
  for (int shard = 2; shard <= 4; ++shard)
    aborted += R"({"id":{"testResult":)" + id(shard) +
               R"(},"aborted":{"reason":"USER_INTERRUPTED"}})"
               "\n";
  std::string summary_aborted =
      R"({"id":{"testSummary":{"label":"//ml:train_test"}},"aborted":{"reason":"USER_INTERRUPTED"}})"
      "\n";
  for (const std::string& stream : {announced + shard_1 + aborted + summary_aborted,  // as Bazel writes it
                                    shard_1 + aborted,                                // the announcement lost
                                    announced + shard_1}) {                           // cut off after shard 1
    INFO(stream);
    auto read = read_bep_text(stream, true);
    REQUIRE(read.diagnostics.empty());
    REQUIRE(read.history.samples.at({"//ml:train_test", 0}).at(0).seconds == 400);
    REQUIRE_FALSE(read.history.samples.count({"//ml:train_test", std::nullopt}));
    REQUIRE(read.history.shard_counts.at("//ml:train_test") == 4);
  }
}

TEST_CASE("a result that nothing says is of the whole test is taken as such, with a warning") {
  // Cut off before any summary, or filtered down to testResult events: shard 1 of four would
  // look the same. Warned (an error under --strict) rather than guessed silently.
  std::string stream = result_line(attempt_1, R"({"status":"PASSED","testAttemptDurationMillis":"9000"})");
  auto read = read_bep_text(stream, false);
  REQUIRE(read.history.samples.at({"//gpu:t", std::nullopt}).at(0).seconds == 9);
  REQUIRE(read.diagnostics.size() == 1);
  REQUIRE_THAT(read.diagnostics[0].message,
               Catch::StartsWith("took 1 result as the whole test's (the first: line 1, //gpu:t): without a "
                                 "testSummary or targetCompleted event"));
  REQUIRE_THROWS_WITH(read_bep_text(stream, true),
                      Catch::StartsWith("bep.json:1: //gpu:t: without a testSummary"));
  REQUIRE(read_bep_text(stream + summary_t, true).diagnostics.empty());
}

TEST_CASE("proto field names (test_result) are read as Bazel's lowerCamelCase ones are") {
  // Proto3 JSON parsers accept both; Go's protojson with UseProtoNames and Python's
  // MessageToJson(preserving_proto_field_name=True) write these. Before, such a file gave no sample.
  auto camel = read_bep_fixture("bep_run.json");
  auto snake = read_bep_fixture("bep_run_proto_names.json");
  REQUIRE(snake.diagnostics.empty());
  REQUIRE(snake.history.samples == camel.history.samples);
  REQUIRE(snake.history.shard_counts == camel.history.shard_counts);

  auto cached = read_bep_text(
      R"({"id":{"test_result":{"label":"//gpu:t","run":1,"shard":1,"attempt":1}},"test_result":{"status":"PASSED","test_attempt_duration_millis":"5000","execution_info":{"cached_remotely":true}}})"
      "\n",
      true);
  REQUIRE(cached.history.cached_results == 1);

  auto newer = read_bep_text(
      R"({"ordered_build_event":{"event":{"bazel_event":{"id":{"test_result":{"label":"//gpu:t","run":1,"shard":2,"attempt":1}},"test_result":{"status":"PASSED","test_attempt_duration":"12.5s","test_attempt_start":"2024-05-01T10:00:00.250Z"}}}}})"
      "\n"
      R"({"id":{"test_summary":{"label":"//gpu:t"}},"test_summary":{"shard_count":2}})"
      "\n",
      true);
  const auto& sample = newer.history.samples.at({"//gpu:t", 1}).at(0);
  REQUIRE(sample.seconds == 12.5);
  REQUIRE(sample.start_ms == 1714557600250);
  REQUIRE(newer.history.shard_counts.at("//gpu:t") == 2);
}

TEST_CASE("a test that ran in two configurations of one build is a warning, and an error under --strict") {
  // A test built for two platforms (or by a transition) has a result per configuration, with
  // times of their own; gpuplan plans one test from both, which it must not do silently.
  auto in = [](const std::string& configuration, const std::string& duration) {
    return result_line(R"({"label":"//gpu:t","run":1,"shard":1,"attempt":1,"configuration":{"id":")" +
                           configuration + R"("}})",
                       R"({"status":"PASSED","testAttemptDuration":")" + duration + R"("})");
  };
  auto one = read_bep_text(in("k8", "10s") + in("k8", "11s") + summary_t, true);
  REQUIRE(one.diagnostics.empty());
  auto two = in("k8", "10s") + in("aarch64", "200s") + summary_t;
  auto read = read_bep_text(two, false);
  REQUIRE(read.history.samples.at({"//gpu:t", std::nullopt}).size() == 2);
  REQUIRE(read.diagnostics.size() == 1);
  REQUIRE_THAT(read.diagnostics[0].message,
               Catch::StartsWith("//gpu:t ran in more than one configuration (k8 and aarch64, line 2)"));
  REQUIRE_THROWS_WITH(read_bep_text(two, true),
                      Catch::StartsWith("bep.json:2: //gpu:t: ran in more than one configuration"));
}

TEST_CASE("exec's JUnit reads how each attempt ended, cached or run, from Bazel's own events") {
  std::ifstream run(test::history_fixture("bep_run.json"));
  auto events = read_bep_outcomes(run);
  CHECK(events.overall_status.at("//ml:train_test") == "PASSED");
  const auto& outcomes = events.results;
  REQUIRE(outcomes.size() == 7);  // and 4 targetCompleted events naming results in their children
  const auto& first = outcomes.front();
  CHECK(first.status == "PASSED");
  CHECK_FALSE(first.cached);
  CHECK(first.seconds > 0);
  CHECK(first.test_log.ends_with("/test.log"));
  CHECK(std::count_if(outcomes.begin(), outcomes.end(), [](const BepOutcome& o) { return o.shard == 4; }) ==
        1);
  std::ifstream cached(test::history_fixture("bep_cached.json"));
  auto again = read_bep_outcomes(cached).results;
  CHECK(std::count_if(again.begin(), again.end(), [](const BepOutcome& o) { return o.cached; }) == 7);
  // A flaky test's two attempts, a status proto3 left out, and the cut-off last line of a build
  // that was killed.
  std::istringstream flaky(result_line(attempt_1, R"({"status":"FAILED","testAttemptDuration":"2.5s"})") +
                           result_line(attempt_2, R"({"testAttemptDurationMillis":"1500"})") +
                           R"({"id":{"testRe)");
  auto both = read_bep_outcomes(flaky).results;
  REQUIRE(both.size() == 2);
  CHECK((both[0].status == "FAILED" && both[0].attempt == 1 && both[0].seconds == Approx(2.5)));
  CHECK((both[1].status == "NO_STATUS" && both[1].attempt == 2 && both[1].seconds == Approx(1.5)));
}

TEST_CASE("exec's JUnit reads which results ran only some test cases from the command line Bazel ran") {
  // bep_filtered.json's cmdLine holds --test_filter=OneCase (a .bazelrc's options are there too);
  // bep_pytest_k.json's --test_arg=-k filters the py_test and the sh_test, not the cc_test.
  std::ifstream filtered(test::history_fixture("bep_filtered.json"));
  auto one = read_bep_outcomes(filtered).results;
  REQUIRE(one.size() == 1);
  CHECK(one[0].filtered);
  std::ifstream run(test::history_fixture("bep_run.json"));
  auto whole = read_bep_outcomes(run).results;
  CHECK(std::none_of(whole.begin(), whole.end(), [](const BepOutcome& o) { return o.filtered; }));
  std::ifstream pytest_k(test::history_fixture("bep_pytest_k.json"));
  std::map<std::string, bool> by_label;
  for (const auto& o : read_bep_outcomes(pytest_k).results) by_label[o.label] = o.filtered;
  CHECK(by_label == std::map<std::string, bool>{{"//core:config_test", true},
                                                {"//core:parser_test", false},
                                                {"//core:unit_test", true}});
}

TEST_CASE("a status written as its enum number, and a byte order mark before the first event, are read") {
  // protojson's UseEnumNumbers: 1 is PASSED, 3 TIMEOUT, 4 FAILED (build_event_stream.proto's
  // TestStatus). Before, each read as NO_STATUS and the run was dropped without a word.
  auto read =
      read_bep_text("\xEF\xBB\xBF" + result_line(attempt_1, R"({"status":3,"testAttemptDuration":"300s"})") +
                        result_line(attempt_2, R"({"status":1,"testAttemptDuration":"12.5s"})") + summary_t,
                    true);
  const auto& samples = read.history.samples.at({"//gpu:t", std::nullopt});
  REQUIRE(samples.size() == 2);
  CHECK(samples[0].timed_out);
  CHECK(samples[1].seconds == 12.5);
  CHECK_FALSE(samples[1].timed_out);
}
