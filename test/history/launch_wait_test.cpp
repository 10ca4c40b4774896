#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "gpuplan/history.hpp"

using namespace gpuplan;

namespace {
/// test/data/history/launch_wait: two tests planned one after the other on GPU 0 of hgx-0, run at
/// once by Bazel 4 under run-under; //models/llm:attention_test_gpu waited for the GPU.
const std::string waited = "//models/llm:attention_test_gpu";
const std::string first = "//infra:gpu_driver_smoke_test";

std::filesystem::path fixture(const std::string& name) {
  return std::filesystem::path(GPUPLAN_SOURCE_DIR) / "test/data/history/launch_wait" / name;
}

std::string fixture_text(const std::string& name) {
  std::ifstream in(fixture(name), std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// The test.log a build event names, from the fixture's copy of bazel-testlogs; `log` in its place
/// where given.
TestLogReader fixture_logs(std::optional<std::string> log = std::nullopt) {
  return [log](const std::string& path, std::int64_t) -> std::optional<std::string> {
    if (log) return log;
    const auto below = path.find("/testlogs/");
    if (below == std::string::npos) return std::nullopt;
    return fixture_text("bazel-testlogs/" + path.substr(below + 10));
  };
}

HistoryRead read_fixture_bep(const TestLogReader& logs) {
  std::ifstream in(fixture("bep.json"));
  return read_bep(in, "bep.json", true, {}, logs);
}

double seconds_of(const HistoryRead& read, const std::string& label) {
  return read.history.samples.at({label, std::nullopt}).at(0).seconds;
}
}  // namespace

TEST_CASE("run-under's line of a wait for GPUs reads back as written") {
  const LaunchWait wait{3.085, 1796577294915};
  const auto line = launch_wait_line(wait, "//sp:gpu @h100_test", "0,1");
  CHECK(line.starts_with(
      "gpuplan run-under: waited 3.085 s for GPUs 0,1 (launched 2026-12-06T17:14:54.915Z) before //sp:gpu "
      "@h100_test started"));
  auto read = find_launch_wait("Executing tests from //sp:gpu @h100_test\n" + line + "\ntest output\n");
  REQUIRE(read);
  CHECK(read->seconds == Approx(3.085));
  CHECK(read->launched_ms == wait.launched_ms);
}

TEST_CASE("a test's output that quotes run-under's line mid-line is no wait") {
  const auto line = launch_wait_line(LaunchWait{3, 1796577294915}, "//a:b", "0");
  CHECK_FALSE(find_launch_wait("echo " + line + "\n"));
  CHECK_FALSE(
      find_launch_wait("gpuplan run-under: waited lots s for GPU 0 (launched 2026-12-06T05:14:54Z)\n"));
}

TEST_CASE("Bazel's own test.xml is timed by Bazel, a test's own XML by the test") {
  auto bazel_xml = [](const std::string& xml) {
    std::istringstream in(xml);
    auto read = read_junit(in, "test.xml", TestLogPath{"//gpu:t", std::nullopt, 1, 0}, true);
    return read.history.samples.at({"//gpu:t", std::nullopt}).at(0).timed_by_bazel;
  };
  std::ifstream in(fixture("bazel-testlogs/models/llm/attention_test_gpu/test.xml"));
  auto read = read_junit(in, "test.xml", *parse_testlog_path("models/llm/attention_test_gpu/test.xml"), true);
  CHECK(read.history.samples.at({waited, std::nullopt}).at(0).timed_by_bazel);
  // pytest's and gtest's time themselves, from when the test started.
  CHECK_FALSE(bazel_xml(
      R"(<testsuites><testsuite name="pytest" time="3.2"><testcase name="a" time="3.1"/></testsuite></testsuites>)"));
  CHECK_FALSE(bazel_xml(
      R"(<testsuites time="3.2"><testsuite name="G"><testcase name="a" time="3"/></testsuite></testsuites>)"));
}

TEST_CASE("a build event's time loses the wait for GPUs its test.log names") {
  auto without = read_fixture_bep({});
  auto with = read_fixture_bep(fixture_logs());
  const auto wait = find_launch_wait(fixture_text("bazel-testlogs/models/llm/attention_test_gpu/test.log"));
  REQUIRE(wait);
  CHECK(wait->seconds > 1.5);
  CHECK(seconds_of(with, waited) == Approx(seconds_of(without, waited) - wait->seconds));
  // The test that ran first waited for nothing: its log has no such line.
  CHECK(seconds_of(with, first) == seconds_of(without, first));
}

TEST_CASE("the test.log of a later run leaves an earlier run's time as it is") {
  // Bazel writes each run's log over the last: a launch outside this attempt is another run's.
  auto without = read_fixture_bep({});
  auto later = read_fixture_bep(fixture_logs(launch_wait_line(LaunchWait{2, 1896577294915}, waited, "0")));
  CHECK(seconds_of(later, waited) == seconds_of(without, waited));
}
