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
