#include <catch2/catch.hpp>

#include "gpuplan/export.hpp"

using namespace gpuplan;

TEST_CASE("JUnit has a testcase per unit under its node, with GPUs and failures") {
  RunRecord ok{"//ml:train", 1, 12.5, "h100-0", {0, 1}, 0, 0, {}, {}};
  RunRecord failed{"//ml:<eval>", std::nullopt, 3, "h100-0", {2}, 0, 1, {}, {}};
  RunRecord killed{"//x:y", std::nullopt, 9, "a100-0", {0}, 0, 128 + 15, {}, {}};
  auto xml = results_junit({ok, failed, killed});
  CHECK_THAT(xml, Catch::Contains(R"(<testsuites name="gpuplan" tests="3" failures="2" time="24.500">)"));
  CHECK_THAT(xml,
             Catch::Contains(R"(<testsuite name="gpuplan h100-0" hostname="h100-0" tests="2" failures="1")"));
  CHECK_THAT(xml, Catch::Contains(R"(<testcase classname="//ml" name="train shard 1" time="12.500">)"));
  CHECK_THAT(xml, Catch::Contains(R"(<property name="gpus" value="0,1"/>)"));
  CHECK_THAT(xml, Catch::Contains(R"(name="&lt;eval&gt;")"));
  CHECK_THAT(xml, Catch::Contains(R"(<failure message="exit status 1" type="exit"/>)"));
  CHECK_THAT(xml, Catch::Contains(R"(<failure message="killed by signal 15" type="signal"/>)"));
  CHECK(xml.find("a100-0") < xml.find("h100-0"));
}

// A run under a test filter passed some of its cases: a CI report that showed it as the test's pass
// (and its time as the test's) said more than the run did. run-under's JUnit, made from the records,
// marks it too.
TEST_CASE("a run under a test filter is marked filtered in JUnit, and only that run") {
  RunRecord filtered{"//ml:gemm_test", std::nullopt, 0.2, "ws-0", {0}, 0, 0, {}, {}};
  filtered.filtered = true;
  RunRecord whole{"//ml:conv_test", std::nullopt, 30, "ws-0", {1}, 0, 0, {}, {}};
  auto xml = results_junit({filtered, whole});
  CHECK_THAT(xml,
             Catch::Contains(R"(<property name="gpus" value="0"/><property name="filtered" value="true"/>)"));
  CHECK(xml.find("filtered") < xml.find("conv_test"));
  CHECK(xml.find("filtered", xml.find("conv_test")) == std::string::npos);
}

TEST_CASE("exec's JUnit of one bazel test says what Bazel says of each unit, not what earlier runs said") {
  auto unit = [](const std::string& label, std::vector<int> gpus, std::optional<int> shard = std::nullopt) {
    Assignment a;
    a.unit.label = label;
    a.unit.shard_index = shard;
    a.gpus = std::move(gpus);
    return a;
  };
  auto outcome = [](const std::string& label, int shard, int attempt, const std::string& status,
                    bool cached = false) {
    return BepOutcome{label, 1, shard, attempt, status, cached, 2.0, "/out/testlogs/x/test.log", false};
  };
  std::vector<BepOutcome> outcomes{
      outcome("//ml:flaky_test", 1, 1, "FAILED"), outcome("//ml:flaky_test", 1, 2, "PASSED"),
      outcome("//ml:cached_test", 1, 1, "PASSED", true), outcome("//ml:refused_test", 1, 1, "FAILED"),
      outcome("//ml:train_test", 1, 1, "PASSED"), outcome("//ml:train_test", 2, 1, "TIMEOUT"),
      outcome("@@//ml:whole_test", 1, 1, "PASSED"), outcome("@@//ml:whole_test", 2, 1, "PASSED"),
      // --runs_per_test=2 --runs_per_test_detects_flakes: runs that disagree are FLAKY, a pass.
      outcome("//ml:detected_test", 1, 1, "PASSED"), outcome("//ml:detected_test", 1, 1, "FAILED")};
  outcomes.back().run = 2;
  outcomes[4].filtered = true;  // shard 1 of //ml:train_test ran under a .bazelrc's --test_filter
  BepOutcomes events{outcomes, {{"//ml:detected_test", "FLAKY"}, {"//ml:train_test", "FAILED"}}};
  auto cases = bazel_junit_cases(
      {unit("//ml:flaky_test", {0}), unit("//ml:cached_test", {1}), unit("//ml:refused_test", {2}),
       unit("//ml:train_test", {0}, 0), unit("//ml:train_test", {1}, 1), unit("//ml:whole_test", {3}),
       unit("//ml:unbuilt_test", {3}), unit("//ml:detected_test", {1})},
      events, "ws-0", "no result");
  REQUIRE(cases.size() == 8);
  // The retry that passed is how the flaky test ended (Bazel: FLAKY, a pass).
  CHECK((cases[0].failure_type.empty() && cases[0].seconds == Approx(2) && !cases[0].cached));
  CHECK((cases[1].failure_type.empty() && cases[1].cached));
  // A test run-under refused has no record of its own, but Bazel failed it: its log says why.
  CHECK(cases[2].failure_type == "failed");
  CHECK(cases[2].failure_message == "Bazel: FAILED; its log: /out/testlogs/x/test.log");
  CHECK(cases[3].failure_type.empty());  // shard 0 is BEP's shard 1
  CHECK((cases[3].filtered && !cases[4].filtered));
  CHECK(cases[4].failure_type == "timeout");
  // A unit of the whole test is every shard Bazel ran of it, the label matched by identity.
  CHECK((cases[5].failure_type.empty() && cases[5].seconds == Approx(4)));
  CHECK(
      (cases[6].failure_type == "no-result" && cases[6].failure_message == "no result" && !cases[6].cached));
  CHECK(cases[6].gpus == std::vector<int>{3});
  CHECK((cases[7].failure_type.empty() && cases[7].bazel_status == "FLAKY"));
  auto xml = junit_xml(cases);
  CHECK_THAT(xml, Catch::Contains(R"(tests="8" failures="3")"));
  CHECK_THAT(xml, Catch::Contains(R"(<property name="cached" value="true"/>)"));
  CHECK_THAT(xml, Catch::Contains(R"(<property name="bazel_status" value="FLAKY"/>)"));
  CHECK_THAT(xml, Catch::Contains(R"(<property name="filtered" value="true"/>)"));
}
