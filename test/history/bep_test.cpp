#include <catch2/catch.hpp>

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

TEST_CASE("a timed-out attempt is kept as a lower bound, not as a sample") {
  auto read = read_bep_fixture("bep_timeout.json");
  const auto& attempts = read.history.samples.at({"//ml:flaky_kernel_test", std::nullopt});
  REQUIRE(attempts.size() == 2);
  REQUIRE(attempts[0].timed_out);
  REQUIRE(attempts[1].timed_out);
  REQUIRE(attempts[1].seconds == Approx(1.047));
}

TEST_CASE("every attempt of a flaky test counts, failed or passed") {
  auto read =
      read_bep_text(result_line(attempt_1, R"({"status":"FAILED","testAttemptDurationMillis":"10000"})") +
                        result_line(attempt_2, R"({"status":"PASSED","testAttemptDurationMillis":"12000"})"),
                    true);
  const auto& attempts = read.history.samples.at({"//gpu:t", std::nullopt});
  REQUIRE(attempts.size() == 2);
  REQUIRE(attempts[0].seconds == 10);
  REQUIRE(attempts[1].seconds == 12);
}

TEST_CASE("newer Bazel's Duration and Timestamp fields are read") {
  auto read = read_bep_text(
      result_line(
          attempt_1,
          R"({"status":"PASSED","testAttemptDuration":"12.5s","testAttemptStart":"2024-05-01T10:00:00.250Z","testAttemptDurationMillis":"1"})"),
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
       "bep.json:2: testAttemptStartMillisEpoch of //gpu:t is not a number: \"1e30\""},
      {result_line(R"({"label":"//gpu:t","shard":0})", R"({"status":"PASSED"})"),
       "bep.json:2: testResult shard of //gpu:t is not a positive number"},
  };
  std::string good = result_line(attempt_1, R"({"status":"PASSED","testAttemptDurationMillis":"1000"})");
  for (const auto& c : cases) {
    INFO(c.line);
    try {
      read_bep_text(good + c.line, true);
      FAIL("no error under --strict");
    } catch (const InputError& e) {
      REQUIRE_THAT(e.what(), Catch::StartsWith(c.message));
    }
    auto lenient = read_bep_text(good + c.line + good, false);
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
  std::string journal =
      R"({"orderedBuildEvent":{"streamId":{"buildId":"b","invocationId":"i","component":"TOOL"},"sequenceNumber":"1","event":{"eventTime":"2024-01-01T00:00:00Z","bazelEvent":)" +
      bazel_event +
      "}},\"projectId\":\"p\"}\n"
      R"({"orderedBuildEvent":{"streamId":{"buildId":"b","component":"CONTROLLER"},"sequenceNumber":"2","event":{"eventTime":"2024-01-01T00:00:01Z","buildFinished":{"status":{"result":"COMMAND_SUCCEEDED"}}}}})"
      "\n";
  REQUIRE(detect_history_format(journal) == HistoryFormat::bep);
  auto read = read_bep_text(journal, true);
  REQUIRE(read.diagnostics.empty());
  REQUIRE(read.history.samples.at({"//gpu:t", std::nullopt}).at(0).seconds == 4);
}
