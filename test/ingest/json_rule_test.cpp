// streamed_jsonproto_rule_alone and rule_alone: one test's line of a streamed_jsonproto query, read
// alone, reads as it does in the whole query.
#include <catch2/catch.hpp>

#include "gpuplan/ingest.hpp"
#include "ingest_helpers.hpp"

using gpuplan::rule_alone;
using gpuplan::testing::read_text;
using gpuplan::testing::said;
using gpuplan::testing::source_file;

namespace {

/// How many tests of `query` read alone as in the whole query (and as its only test); the others
/// are left to the full read.
int tests_alone_as_in_the_whole(const std::string& query) {
  const auto whole = read_text(query);
  REQUIRE(!whole.tests.empty());
  int alone_too = 0;
  for (const auto& test : whole.tests) {
    INFO(test.label);
    auto alone = rule_alone(query, test.label);
    if (!alone) continue;
    const auto read = read_text(*alone);
    REQUIRE(read.tests.size() == 1);
    CHECK(read.format == "streamed_jsonproto");
    CHECK(said(read.tests.front()) == said(test));
    CHECK(read.tests.front().exec_properties == test.exec_properties);
    ++alone_too;
  }
  return alone_too;
}

std::string line(const std::string& json_name, const std::string& tag,
                 const std::string& rule_class = "sh_test") {
  return R"({"type":"RULE","rule":{"name":")" + json_name + R"(","ruleClass":")" + rule_class +
         R"(","location":"/w/BUILD:1:8","attribute":[{"name":"tags","type":"STRING_LIST","stringListValue":[")" +
         tag + R"("],"explicitlySpecified":true,"nodep":false}],"ruleInput":["//tools:probe.sh"]}})" + "\n";
}

}  // namespace

TEST_CASE("every test of the streamed_jsonproto fixtures reads alone as in the whole query",
          "[ingest][jsonproto]") {
  for (const char* fixture :
       {"bazel/tests", "bazel/select_props", "bazel/select_props_unflattened", "bazel/no_cuda_unflattened",
        "bazel/world_size_values", "faiss/tests_unflattened", "pytorch/c10_cuda_test",
        "pytorch/c10_cuda_test_unflattened", "rtp_llm/world_size"}) {
    INFO(fixture);
    const auto query = source_file(std::string("test/data/") + fixture + ".streamed_jsonproto");
    CHECK(tests_alone_as_in_the_whole(query) == static_cast<int>(read_text(query).tests.size()));
  }
}

TEST_CASE(
    "odd labels of a streamed_jsonproto query read alone as in the whole query or are left to the full read",
    "[ingest][jsonproto]") {
  // Bazel's JsonFormat spells & ' < = > as \u escapes: those labels go to the full read.
  const auto odd = source_file("test/data/bazel/odd.streamed_jsonproto");
  CHECK(tests_alone_as_in_the_whole(odd) >= 2);
  CHECK_FALSE(rule_alone(odd, "//odd:a!%-@^_#&'()*+,;<=>?[]{|}~"));
  CHECK_FALSE(rule_alone(odd, "//odd:say\""));
  CHECK(rule_alone(odd, "//odd:sub/dir.v2_test"));  // its line, not test_suite all_odd's, which lists it
  const std::string made =
      line("//a:b", "gpu:2") + line("//a:c", "arg\\u003d1") + line("//a:d", "say \\\"hi\\\"");
  CHECK(tests_alone_as_in_the_whole(made) == 3);
  CHECK_FALSE(rule_alone(made + line("//q:back\\\\slash", "gpu"), "//q:back\\slash"));
  CHECK_FALSE(rule_alone(made + line("//q:quo\\\"te", "gpu"), "//q:quo\"te"));
}

TEST_CASE("a streamed_jsonproto query whose test cannot be told by its line is left to the full read",
          "[ingest][jsonproto]") {
  const std::string one = line("//a:b", "gpu");
  CHECK(rule_alone(one + line("//a:c", "cpu-only"), "//a:b") == one);
  CHECK_FALSE(rule_alone(one, "//a:c"));                               // not there
  CHECK_FALSE(rule_alone(one + one, "//a:b"));                         // twice
  CHECK_FALSE(rule_alone(one + line("@//a:b", "cpu"), "//a:b"));       // twice, as the same test
  CHECK_FALSE(rule_alone(line("//a:b", "gpu", "genrule"), "//a:b"));   // no test
  CHECK_FALSE(rule_alone(one + line("//a\\u003ab", "cpu"), "//a:b"));  // spelled with an escape
  CHECK_FALSE(rule_alone(one + line("\\/\\/a:b", "cpu"), "//a:b"));
  CHECK_FALSE(rule_alone(R"({"type":"RULE","rule":{"name":"//a:b")"
                         "\n" +
                             one,
                         "//a:b"));                                               // broken
  CHECK_FALSE(rule_alone(line("//a:c", "gpu") + "{ " + one.substr(1), "//a:b"));  // alone: jsonproto
  // Not streamed_jsonproto: the slice would read as another format, or the format has none.
  CHECK_FALSE(rule_alone(
      "{\n  \"type\": \"RULE\",\n  \"rule\": {\"name\": \"//a:b\", \"ruleClass\": \"sh_test\"}\n}\n",
      "//a:b"));
  CHECK_FALSE(rule_alone(source_file("test/data/bazel/tests.cquery.jsonproto"), "//ml:inference_test"));
  CHECK_FALSE(rule_alone("//a:b\n//a:c\n", "//a:b"));
  CHECK(rule_alone(source_file("examples/query.xml"), "//ml:inference_test"));
}
