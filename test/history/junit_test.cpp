#include <catch2/catch.hpp>

#include "gpuplan/error.hpp"
#include "history/fixtures.hpp"

using namespace gpuplan;
using gpuplan::test::history_fixture;

namespace {
HistoryRead read_testlog(const std::string& relative) {
  std::ifstream in(history_fixture("bazel-testlogs/" + relative));
  return read_junit(in, relative, *parse_testlog_path(relative), true);
}
HistoryRead read_xml(const std::string& xml, bool strict) {
  std::istringstream in(xml);
  return read_junit(in, "test.xml", TestLogPath{"//gpu:t", std::nullopt, 1, 0}, strict);
}
}  // namespace

TEST_CASE("Bazel's own test.xml gives its shard the testcase's time") {
  auto read = read_testlog("ml/train_test/shard_2_of_4/test.xml");
  REQUIRE(read.history.samples.at({"//ml:train_test", 1}).at(0).seconds == 0);
  REQUIRE(read.history.shard_counts.at("//ml:train_test") == 4);
}

TEST_CASE("a test.xml of a test Bazel killed at its timeout is a lower bound") {
  auto read = read_testlog("ml/flaky_kernel_test/test.xml");
  auto sample = read.history.samples.at({"//ml:flaky_kernel_test", std::nullopt}).at(0);
  REQUIRE(sample.timed_out);
  REQUIRE(sample.seconds == 1);
}

TEST_CASE("a test.xml with a failure or an error is a failed run, not a timeout") {
  // Bazel's own for a test that exited 1 (tools/test/generate-xml.sh), gtest's and pytest's.
  auto failed = [](const std::string& xml) {
    return read_xml(xml, true).history.samples.at({"//gpu:t", std::nullopt}).at(0);
  };
  auto bazel = failed(
      R"(<testsuites><testsuite name="gpu/t" tests="1" failures="0" errors="1"><testcase name="gpu/t" status="run" duration="3" time="3"><error message="exited with error code 1"></error></testcase></testsuite></testsuites>)");
  CHECK(bazel.failed);
  CHECK_FALSE(bazel.timed_out);
  CHECK(
      failed(
          R"(<testsuites time="0.5"><testsuite name="T" time="0.5"><testcase name="a" time="0.5"><failure message="x.cc:3 Expected equality"/></testcase></testsuite></testsuites>)")
          .failed);
  CHECK(
      failed(
          R"(<testsuites><testsuite name="pytest" time="2.0"><testcase name="test_a" time="2.0"><failure message="assert 1 == 2">...</failure></testcase></testsuite></testsuites>)")
          .failed);
  CHECK_FALSE(
      failed(
          R"(<testsuites><testsuite name="pytest" time="2.0"><testcase name="test_a" time="1.5"/><testcase name="test_b" time="0.5"><skipped message="no GPU"/></testcase></testsuite></testsuites>)")
          .failed);
  auto timeout = read_testlog("ml/flaky_kernel_test/test.xml")
                     .history.samples.at({"//ml:flaky_kernel_test", std::nullopt})
                     .at(0);
  CHECK_FALSE(timeout.failed);
}

TEST_CASE("a run that skipped every test case is left out: it measured none of the test's work") {
  // googletest 1.12's XML of a GPU test whose fixture found no GPU and called GTEST_SKIP().
  const std::string relative = "gpu/gemm_test/test.xml";
  auto read_skipped = [&](bool strict) {
    std::ifstream in(history_fixture("skipped/bazel-testlogs/" + relative));
    return read_junit(in, relative, *parse_testlog_path(relative), strict);
  };
  auto read = read_skipped(false);
  CHECK(read.history.samples.empty());  // was a passed run of 0 s: the plan gave the test 1 ms
  CHECK(read.history.skipped_runs == 1);
  REQUIRE(read.diagnostics.size() == 1);
  CHECK(read.diagnostics[0].message.find("//gpu:gemm_test: every test case in it was skipped (2 of 2") == 0);
  CHECK_THROWS_AS(read_skipped(true), InputError);

  // pytest's form; a run that skipped some cases, or failed beside the skips, measured the rest.
  auto pytest = read_xml(
      R"(<testsuites><testsuite name="pytest" skipped="2" tests="2" time="3.1"><testcase name="test_a" time="0.001"><skipped type="pytest.skip" message="CUDA not available"/></testcase><testcase name="test_b" time="0.001"><skipped type="pytest.skip" message="CUDA not available"/></testcase></testsuite></testsuites>)",
      false);
  CHECK(pytest.history.samples.empty());
  CHECK(pytest.history.skipped_runs == 1);
  auto some = read_xml(
      R"(<testsuites><testsuite name="pytest" time="3.1"><testcase name="test_a" time="3"/><testcase name="test_b" time="0.001"><skipped/></testcase></testsuite></testsuites>)",
      true);
  CHECK(some.history.samples.at({"//gpu:t", std::nullopt}).at(0).seconds == 3.1);
  auto failed = read_xml(
      R"(<testsuites><testsuite name="T" time="0.2"><testcase name="a" time="0.1"><skipped/></testcase><testcase name="b" time="0.1"><failure message="no device"/></testcase></testsuite></testsuites>)",
      true);
  CHECK(failed.history.samples.at({"//gpu:t", std::nullopt}).at(0).failed);
}

TEST_CASE("a run whose test cases were all disabled, or disabled and skipped, is left out") {
  // googletest 1.12's XML of DISABLED_ tests: <testcase status="notrun" result="suppressed">.
  auto read_disabled = [](const std::string& relative, bool strict) {
    std::ifstream in(history_fixture("disabled/bazel-testlogs/" + relative));
    return read_junit(in, relative, *parse_testlog_path(relative), strict);
  };
  auto gemm = read_disabled("gpu/gemm_test/test.xml", false);
  CHECK(gemm.history.samples.empty());  // was a passed run of 0 s: the plan gave the test 1 ms
  CHECK(gemm.history.skipped_runs == 1);
  REQUIRE(gemm.diagnostics.size() == 1);
  CHECK(gemm.diagnostics[0].message.find("//gpu:gemm_test: every test case in it was disabled (2 of 2") == 0);
  CHECK_THROWS_AS(read_disabled("gpu/gemm_test/test.xml", true), InputError);

  auto conv = read_disabled("gpu/conv_test/test.xml", false);
  CHECK(conv.history.samples.empty());
  CHECK(conv.history.skipped_runs == 1);
  REQUIRE(conv.diagnostics.size() == 1);
  CHECK(
      conv.diagnostics[0].message.find(
          "//gpu:conv_test: every test case in it was skipped or disabled (1 skipped and 1 disabled of 2") ==
      0);

  // A disabled case beside one that ran: the run measured that one.
  auto some = read_xml(
      R"(<testsuites tests="2" disabled="1" time="4.2" timestamp="2026-12-05T19:52:41.044"><testsuite name="GemmTest" tests="2" disabled="1" time="4.2" timestamp="2026-12-05T19:52:41.044"><testcase name="DISABLED_Fp16" status="notrun" result="suppressed" time="0" timestamp="1970-01-01T00:00:00.000" classname="GemmTest"/><testcase name="Bf16" status="run" result="completed" time="4.2" timestamp="2026-12-05T19:52:41.044" classname="GemmTest"/></testsuite></testsuites>)",
      true);
  CHECK(some.history.samples.at({"//gpu:t", std::nullopt}).at(0).seconds == 4.2);
}

TEST_CASE("gtest's XML gives the whole program's time and when it started") {
  auto sample =
      read_testlog("xla/gemm_test/test.xml").history.samples.at({"//xla:gemm_test", std::nullopt}).at(0);
  REQUIRE(sample.seconds == Approx(0.2));
  REQUIRE(sample.start_ms == 1796036265651);
  REQUIRE_FALSE(sample.timed_out);
}

TEST_CASE("pytest's XML gives its suite's time") {
  auto sample =
      read_testlog("tf/conv_test/test.xml").history.samples.at({"//tf:conv_test", std::nullopt}).at(0);
  REQUIRE(sample.seconds == Approx(12.873));
  REQUIRE(sample.start_ms == 1714555800123);
}

TEST_CASE("without a suite time the testcases' times add up") {
  auto read = read_xml(
      R"(<testsuites><testsuite name="a"><testcase time="1.5"/><testcase time="2"/></testsuite></testsuites>)",
      true);
  REQUIRE(read.history.samples.at({"//gpu:t", std::nullopt}).at(0).seconds == 3.5);
}

TEST_CASE("a malformed JUnit file names its file and line, and under --strict stops the run") {
  struct Case {
    std::string xml;
    std::string message;
  };
  std::vector<Case> cases = {
      {"<testsuites>\n<testsuite time=\"1\">\n</testsuites>",
       "test.xml:3: not well-formed JUnit XML: mismatched tag"},
      {"", "test.xml:1: not well-formed JUnit XML: no element found"},
      {"<testsuites>\n  <testsuite time=\"-2\"/>\n</testsuites>",
       "test.xml:2: <testsuite time=\"-2\">: a negative time"},
      {"<testsuites time=\"fast\"/>", "test.xml:1: <testsuites time=\"fast\">: not a number of seconds"},
      {"<html><body/></html>", "test.xml:1: not a JUnit file: the root element is <html>"},
      {"<testsuites>\n<testsuite name=\"x\"/>\n</testsuites>", "test.xml:1: no time="},
  };
  for (const auto& c : cases) {
    INFO(c.xml);
    try {
      read_xml(c.xml, true);
      FAIL("no error under --strict");
    } catch (const InputError& e) {
      REQUIRE_THAT(e.what(), Catch::StartsWith(c.message));
    }
    auto lenient = read_xml(c.xml, false);
    REQUIRE(lenient.history.sample_count() == 0);
    REQUIRE(lenient.diagnostics.size() == 1);
    REQUIRE_THAT(lenient.diagnostics[0].message, Catch::Contains(c.message));
  }
}

TEST_CASE("a time with thousands grouped is read, and a locale's decimal comma is refused, not guessed") {
  auto seconds = [](const std::string& time) {
    return read_xml("<testsuites time=\"" + time + "\"/>", true)
        .history.samples.at({"//gpu:t", std::nullopt})
        .at(0)
        .seconds;
  };
  CHECK(seconds("14,029.255") == Approx(14029.255));  // JUnit 5 (junit-team/junit-framework#1381)
  CHECK(seconds("1,234,567.5") == Approx(1234567.5));
  // Surefire and TestNG in German, French or Russian locales (SUREFIRE-28, testng#198): 12,5 was
  // read as 125 s, 0,250 as 250 s and 1.234,5 as 1.234 s.
  for (const char* time : {"12,5", "0,250", "1.234,5", "1,234", "0,123.5", "1,23.5", "1,2345.5"}) {
    INFO(time);
    REQUIRE_THROWS_WITH(read_xml(std::string("<testsuites time=\"") + time + "\"/>", true),
                        Catch::Contains("a decimal comma (12,5) or a thousands point (1.234,5)"));
  }
}

TEST_CASE("rules_go's report of a binary with no tests, time=\"\", is read as zero tests") {
  auto read = read_xml(R"(<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite errors="0" failures="0" skipped="0" tests="0" time="" name="pkg/empty"></testsuite>
</testsuites>
)",
                       true);
  REQUIRE(read.diagnostics.empty());
}

namespace {

/// A test.xml of test/data/history/unreadable_xml, read as the CLI reads it: with the
/// test.cache_status beside it where `with_status`, else none.
HistoryRead read_unreadable(const std::string& relative, bool strict, bool with_status = true) {
  const std::string dir = "unreadable_xml/bazel-testlogs/";
  std::ifstream in(history_fixture(dir + relative), std::ios::binary);
  const auto status_name = relative.substr(0, relative.rfind('/') + 1) + "test.cache_status";
  BazelCacheStatusReader status;
  if (with_status)
    status = [status_name, dir]() -> std::optional<BazelCacheStatusFile> {
      std::ifstream bytes(history_fixture(dir + status_name), std::ios::binary);
      return BazelCacheStatusFile{status_name,
                                  {std::istreambuf_iterator<char>(bytes), std::istreambuf_iterator<char>()}};
    };
  return read_junit(in, relative, *parse_testlog_path(relative), strict, {}, status);
}

}  // namespace

TEST_CASE("a test.xml that is not XML is read from Bazel's test.cache_status beside it, with a note") {
  // Real Bazel 4 files (test/data/history/README.md): its own XML of a test named amp&test, with
  // the & unescaped; a test's own XML cut short by a crash and by Bazel's timeout; an empty one.
  struct Case {
    std::string test;
    double seconds;
    bool failed, timed_out;
    std::string why;
  };
  const std::vector<Case> cases = {
      {"amp&test", 0.448, false, false, "invalid token) (Bazel 4 writes the test's name"},
      {"trunc_crash_test", 0.337, true, false,
       "unclosed token (the file ends before its root element closes"},
      {"trunc_hang_test", 5.02, false, true, "unclosed token (the file ends before its root element closes"},
      {"empty_hang_test", 5.018, false, true, "no element found (the file is empty)"},
  };
  for (const auto& c : cases) {
    INFO(c.test);
    // Not a guess: Bazel's own status and time, so no error under --strict either.
    auto read = read_unreadable("gpu/" + c.test + "/test.xml", true);
    const auto& samples = read.history.samples.at({"//gpu:" + c.test, std::nullopt});
    REQUIRE(samples.size() == 1);
    CHECK(samples[0].seconds == Approx(c.seconds));
    CHECK(samples[0].failed == c.failed);
    CHECK(samples[0].timed_out == c.timed_out);
    REQUIRE(read.diagnostics.size() == 1);
    CHECK(read.diagnostics[0].severity == Severity::note);
    CHECK(read.diagnostics[0].source == "gpu/" + c.test + "/test.xml");
    CHECK_THAT(read.diagnostics[0].message,
               Catch::Contains(c.why) &&
                   Catch::Contains("its run is read from gpu/" + c.test + "/test.cache_status instead"));
  }
  CHECK_THAT(
      read_unreadable("gpu/trunc_hang_test/test.xml", false).diagnostics[0].message,
      Catch::Contains("where Bazel recorded it: TIMEOUT after 5.020s (a timeout: at least that long)"));
}

TEST_CASE("a test.xml that is not XML, with no test.cache_status to read instead, is a bad row naming why") {
  auto lenient = read_unreadable("gpu/trunc_crash_test/test.xml", false, false);
  REQUIRE(lenient.history.sample_count() == 0);
  REQUIRE(lenient.diagnostics.size() == 1);
  CHECK(lenient.diagnostics[0].severity == Severity::warning);
  CHECK_THAT(
      lenient.diagnostics[0].message,
      Catch::Contains("gpu/trunc_crash_test/test.xml:3: not well-formed JUnit XML: unclosed token (the "
                      "file ends before its root element closes") &&
          Catch::Contains("; no test.cache_status beside it to read the run from"));
  CHECK_THROWS_WITH(read_unreadable("gpu/trunc_crash_test/test.xml", true, false),
                    Catch::StartsWith("gpu/trunc_crash_test/test.xml:3: not well-formed JUnit XML"));

  // An attempt's XML has none beside it: the run is lost, and the warning says so.
  auto attempt = read_unreadable("gpu/trunc_hang_test/test_attempts/attempt_1.xml", false);
  REQUIRE(attempt.history.sample_count() == 0);
  CHECK_THAT(
      attempt.diagnostics.at(0).message,
      Catch::Contains("gpu/trunc_hang_test/test_attempts/attempt_1.xml:3: not well-formed JUnit XML") &&
          Catch::Contains("Bazel keeps no test.cache_status beside an attempt's XML"));

  // A file that is no such message, or one whose status measured nothing or that has no time.
  auto with_status = [](std::string bytes) {
    std::istringstream in("<testsuites time=\"5\">");
    return read_junit(in, "t/test.xml", TestLogPath{"//t:t", std::nullopt, 1, 0}, false, {}, [bytes]() {
      return std::optional<BazelCacheStatusFile>({"t/test.cache_status", bytes});
    });
  };
  CHECK_THAT(with_status("<?xml?>").diagnostics.at(0).message,
             Catch::Contains("t/test.cache_status beside it is not the message Bazel writes there"));
  // Field 3 (status) 5, INCOMPLETE; field 12 (run_duration_millis) 100.
  CHECK_THAT(with_status("\x18\x05\x60\x64").diagnostics.at(0).message,
             Catch::Contains("says INCOMPLETE, a run that measured nothing"));
  CHECK_THAT(with_status("\x18\x01").diagnostics.at(0).message,
             Catch::Contains("says PASSED with no run_duration_millis"));
  CHECK(with_status("\x18\x02\x60\x64").history.samples.at({"//t:t", std::nullopt}).at(0).seconds == 0.1);
}

TEST_CASE("a test.cache_status whose run_duration_millis is longer than a year stands in for no test.xml") {
  // fuzz_history_junit's finding (2026-12-06): an empty test.xml and a test.cache_status of FLAKY
  // (field 3, 2) after 1,796,552,555,601 ms (field 12), 57 years, was a run that `history
  // summarize` wrote and could not read back, as every reader refuses a run past a year.
  std::istringstream in("\n");
  const std::string bytes("\x18\x02\x60\xd1\xf8\x81\xd7\xa4\x34", 9);
  auto status = [&bytes]() { return std::optional<BazelCacheStatusFile>({"t/test.cache_status", bytes}); };
  auto read = read_junit(in, "t/test.xml", TestLogPath{"//t:t", std::nullopt, 1, 0}, false, {}, status);
  CHECK(read.history.sample_count() == 0);
  REQUIRE(read.diagnostics.size() == 1);
  CHECK(read.diagnostics[0].severity == Severity::warning);
  CHECK_THAT(read.diagnostics[0].message,
             Catch::Contains("t/test.cache_status beside it says FLAKY after 1796552555601 ms "
                             "(run_duration_millis), longer than a year (gpuplan's limit)"));
  std::istringstream again(summarize(read.history, 20));
  CHECK_NOTHROW(read_table(again, "summary.json", true));
  std::istringstream strict_in("\n");
  CHECK_THROWS_AS(
      read_junit(strict_in, "t/test.xml", TestLogPath{"//t:t", std::nullopt, 1, 0}, true, {}, status),
      InputError);
}
