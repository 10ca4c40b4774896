#include <catch2/catch.hpp>
#include <iterator>

#include "gpuplan/history.hpp"
#include "gpuplan/target.hpp"
#include "history/fixtures.hpp"

using namespace gpuplan;

TEST_CASE("a test.xml's place in bazel-testlogs names its test, shard and attempt") {
  auto plain = parse_testlog_path("ml/inference_test/test.xml");
  REQUIRE(plain->label == "//ml:inference_test");
  REQUIRE_FALSE(plain->shard);
  REQUIRE(plain->attempt == 0);

  auto shard = parse_testlog_path("deep/pkg/train_test/shard_2_of_4/test.xml");
  REQUIRE(shard->label == "//deep/pkg:train_test");
  REQUIRE(shard->shard == 1);
  REQUIRE(shard->shard_count == 4);

  auto run = parse_testlog_path("ml/t/shard_1_of_2_run_3_of_3/test_attempts/attempt_2.xml");
  REQUIRE(run->label == "//ml:t");
  REQUIRE(run->shard == 0);
  REQUIRE(run->attempt == 2);

  REQUIRE(parse_testlog_path("./ml/t/run_1_of_5/test.xml")->label == "//ml:t");
  REQUIRE(parse_testlog_path("external/rules_x/pkg/t/test.xml")->label == "@rules_x//pkg:t");
  // bzlmod's canonical names (+ since Bazel 7.1, ~ before) are spelled with @@, as BEP and the
  // query spell them, so the runs match the test.
  REQUIRE(parse_testlog_path("external/rules_foo+/pkg/t/test.xml")->label == "@@rules_foo+//pkg:t");
  REQUIRE(parse_testlog_path("external/rules_foo~/pkg/t/test.xml")->label == "@@rules_foo~//pkg:t");
  REQUIRE(canonical_label("@rules_foo+//pkg:t") == "@@rules_foo+//pkg:t");
  REQUIRE(canonical_label("@@rules_foo+//pkg:t") == "@@rules_foo+//pkg:t");
  REQUIRE(canonical_label("@rules_x//pkg:t") == "@rules_x//pkg:t");
  // One test however Bazel spells its repository: a module's own (Bazel 7, 8, 6), an
  // extension's (last part), the main one.
  for (auto spelling : {"@rules_foo//pkg:t", "@@rules_foo~//pkg:t", "@@rules_foo+//pkg:t",
                        "@rules_foo~1.2.3//pkg:t", "@@rules_foo~1.2.3//pkg:t", "@@rules_foo//pkg:t"})
    CHECK(label_identity(spelling) == "@rules_foo//pkg:t");
  CHECK(label_identity("@@rules_python~~pip~pypi_torch//:pkg") == "@pypi_torch//:pkg");
  CHECK(label_identity("@@rules_python++pip+pypi_torch//:pkg") == "@pypi_torch//:pkg");
  CHECK(label_identity("@@+cuda_ext+cuda_cudart//:x") == "@cuda_cudart//:x");
  CHECK(label_identity("@@_main~cuda_ext~cuda_cudart//:x") == "@cuda_cudart//:x");
  CHECK(label_identity("@@//pkg:t") == "//pkg:t");
  CHECK(label_identity("@//pkg:t") == "//pkg:t");
  CHECK(label_identity("//pkg:t") == "//pkg:t");
  CHECK(label_identity("@@+//pkg:t") == "@@+//pkg:t");  // no name to match by: as it is
  REQUIRE(parse_testlog_path("top_test/test.xml")->label == "//:top_test");
}

TEST_CASE("other files under bazel-testlogs are not test results") {
  // test.outputs/ holds a test's undeclared outputs, unzipped under --nozip_undeclared_test_outputs:
  // a test.xml of its own there is not a test named test.outputs.
  for (auto path :
       {"ml/t/test.log", "ml/t/test.outputs/report.xml", "test.xml", "ml/t/attempt_1.xml",
        "ml/t/shard_5_of_4/test.xml", "r/outs/test.outputs/test.xml", "r/outs/test.outputs/sub/test.xml"}) {
    INFO(path);
    REQUIRE_FALSE(parse_testlog_path(path));
  }
}

namespace {

std::string cache_status_bytes(const std::string& test) {
  std::ifstream in(test::history_fixture("exit_status/bazel-testlogs/gpu/" + test + "/test.cache_status"),
                   std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("Bazel's test.cache_status says how the run ended, which test.xml may not") {
  // Real Bazel 4 files (test/data/history/README.md): each test wrote a passing test.xml, then
  // exited 0, crashed, or hung until Bazel's timeout.
  auto passed = read_bazel_cache_status(cache_status_bytes("pass_test"));
  REQUIRE(passed);
  REQUIRE(passed->status == 1);
  REQUIRE(passed->run_duration_ms == 436);
  auto crashed = read_bazel_cache_status(cache_status_bytes("crash_at_exit_test"));
  REQUIRE(crashed);
  REQUIRE(crashed->status == BazelCacheStatus::failed);
  auto hung = read_bazel_cache_status(cache_status_bytes("hang_at_exit_test"));
  REQUIRE(hung);
  REQUIRE(hung->status == BazelCacheStatus::timeout);
  REQUIRE(hung->run_duration_ms == 5126);

  // Cut short, or not a protocol buffer message at all: no status, rather than a guess.
  const auto whole = cache_status_bytes("hang_at_exit_test");
  REQUIRE_FALSE(read_bazel_cache_status(whole.substr(0, 10)));
  REQUIRE_FALSE(read_bazel_cache_status("<?xml version=\"1.0\"?>"));
  REQUIRE(read_bazel_cache_status("")->status == 0);
}
