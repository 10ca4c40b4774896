#include <algorithm>
#include <catch2/catch.hpp>

#include "gpuplan/error.hpp"
#include "ingest/ingest_helpers.hpp"

using namespace gpuplan;
using namespace gpuplan::testing;

namespace {
std::vector<std::string> labels(const TargetList& list) {
  std::vector<std::string> out;
  for (const Target& target : list.tests) out.push_back(target.label);
  std::sort(out.begin(), out.end());
  return out;
}
}  // namespace

TEST_CASE("label_kind of //... gives the same tests as the xml and drops the same targets") {
  TargetList kinds = read_fixture("bazel/all.label_kind");
  TargetList xml = read_fixture("bazel/all.query.xml");
  REQUIRE(kinds.format == "label_kind");
  REQUIRE(labels(kinds) == labels(xml));
  REQUIRE(kinds.dropped.test_suites == xml.dropped.test_suites);
  REQUIRE(kinds.dropped.non_test_rules == xml.dropped.non_test_rules);
  REQUIRE(find(kinds, "//ml:train_test").rule_class == "sh_test");
  REQUIRE_FALSE(find(kinds, "//ml:train_test").has_attributes);
}

TEST_CASE("label_kind counts source and generated files as dropped") {
  TargetList list = read_fixture("bazel/odd.label_kind");
  REQUIRE(list.tests.size() == 4);
  REQUIRE(list.dropped.source_files == 2);
  REQUIRE(list.dropped.generated_files == 1);
}

TEST_CASE("target names with shell metacharacters and quotes come through every format intact") {
  std::vector<std::string> expected{"//odd:a!%-@^_#&'()*+,;<=>?[]{|}~", "//odd:say\"cheese\"_test",
                                    "//odd:sub/dir.v2_test", "//odd:x$(touch${IFS}/tmp/pwned)"};
  for (auto file : {"odd.query.xml", "odd.label_kind", "odd.cquery.label_kind", "odd.cquery.jsonproto",
                    "odd.jsonproto", "odd.streamed_jsonproto"}) {
    INFO(file);
    REQUIRE(labels(read_fixture(std::string("bazel/") + file)) == expected);
  }
}

TEST_CASE(
    "non-ASCII target names read as Bazel takes them in every format, though its XML encodes them twice") {
  std::vector<std::string> expected{"//na:café_test", "//na:тест_test", "//na:テスト_test"};
  for (auto file : {"nonascii.query.xml", "nonascii.label_kind", "nonascii.cquery.jsonproto"}) {
    INFO(file);
    std::vector<std::string> read = labels(read_fixture(std::string("bazel/") + file));
    std::sort(read.begin(), read.end());
    REQUIRE(read == expected);
  }
  REQUIRE(find(read_fixture("bazel/nonascii.query.xml"), "//na:тест_test").tags ==
          std::vector<Symbol>{"gpu:2"});
}

TEST_CASE("a plain label list keeps every label, since it cannot tell tests from other targets") {
  TargetList list = read_fixture("bazel/tests.label");
  REQUIRE(list.format == "label");
  REQUIRE(list.tests.size() == 23);
  REQUIRE(list.tests[0].label == "//xla:triton_test");
  REQUIRE(list.tests[0].rule_class.empty());
}

TEST_CASE("cquery labels carry their configuration, and (null) ones are not tests") {
  TargetList list = read_fixture("bazel/odd.cquery.label");
  REQUIRE(list.format == "cquery_label");
  REQUIRE(list.tests.size() == 7);
  REQUIRE(list.tests[0].configuration == "f5527a6");
  REQUIRE(list.dropped.other == 2);  // //odd:BUILD and //odd:t.sh
  TargetList kinds = read_fixture("bazel/tests.cquery.label_kind");
  REQUIRE(kinds.format == "cquery_label_kind");
  REQUIRE(find(kinds, "//ml:train_test").configuration == "f5527a6");
}

TEST_CASE("labels from other repositories keep their spelling") {
  TargetList list = read_text(
      "py_test rule @@rules_x+//a:b_test\ncc_test rule @repo//c:d_test\nsh_test rule @//e:f_test\n");
  REQUIRE(labels(list) == std::vector<std::string>{"@//e:f_test", "@@rules_x+//a:b_test", "@repo//c:d_test"});
}

TEST_CASE("a line that is not a label is an error at its line") {
  try {
    read_text("//a:b_test\nhello world\n", InputFormat::label);
    FAIL("no error");
  } catch (const InputError& error) {
    REQUIRE(error.position().str() == "input:2");
    REQUIRE_THAT(error.what(), Catch::Contains("not a label"));
  }
}

TEST_CASE("a cquery line without its configuration is an error") {
  REQUIRE_THROWS_WITH(read_text("sh_test rule //a:b (f5527a6)\nsh_test rule //a:c\n"),
                      Catch::Contains("input:2") && Catch::Contains("without its configuration"));
}

TEST_CASE("a label line longer than 1 MiB is refused without reading the rest") {
  std::string line = "//a:" + std::string(3 << 20, 'x') + "\n";
  REQUIRE_THROWS_WITH(read_text("//a:b\n" + line),
                      Catch::Contains("input:2") && Catch::Contains("longer than 1 MiB"));
}

TEST_CASE("the last line counts without a final newline, in every line-oriented format") {
  // Reading past the end once moved the buffer under the line being returned (use-after-free).
  REQUIRE(read_text("//a:b_test", InputFormat::label).tests.at(0).label == "//a:b_test");
  REQUIRE(read_text("//a:a_test\n//a:b_test", InputFormat::label).tests.at(1).label == "//a:b_test");
  REQUIRE(read_text("py_test rule //a:b_test", InputFormat::label_kind).tests.at(0).label == "//a:b_test");
  REQUIRE(read_text("//a:b_test (9f87702)", InputFormat::cquery_label).tests.at(0).configuration ==
          "9f87702");
  REQUIRE(
      read_text("py_test rule //a:b_test (9f87702)\r", InputFormat::cquery_label_kind).tests.at(0).label ==
      "//a:b_test");
  REQUIRE(read_text(R"({"type":"RULE","rule":{"name":"//a:t","ruleClass":"sh_test"}})",
                    InputFormat::streamed_jsonproto)
              .tests.at(0)
              .label == "//a:t");
  REQUIRE(read_text(std::string(3 << 20, '\n') + "//a:b_test", InputFormat::label).tests.at(0).label ==
          "//a:b_test");
}

TEST_CASE("a target name with a space is one label in label_kind lines") {
  // Bazel allows spaces in target names; `bazel query --output=label_kind` (Bazel 4, captured)
  // wrote "sh_test rule //sp:gpu @h100_test", which split at its last space lost the test.
  TargetList list =
      read_text("sh_test rule //sp:plain_test\nsh_test rule //sp:gpu @h100_test\n", InputFormat::label_kind);
  REQUIRE(list.tests.size() == 2);
  CHECK(list.tests[1].label == "//sp:gpu @h100_test");
  CHECK(list.tests[1].rule_class == "sh_test");
  TargetList configured =
      read_text("sh_test rule //sp:gpu @h100_test (9f87702)\n", InputFormat::cquery_label_kind);
  REQUIRE(configured.tests.size() == 1);
  CHECK(configured.tests[0].label == "//sp:gpu @h100_test");
  CHECK(read_text("source file //sp:a b.sh\n", InputFormat::label_kind).tests.empty());
}

TEST_CASE("a query label ending in a short hex word in parentheses is not a cquery line") {
  // sh_test(name = "bench (a100)"): Bazel 4's query --output=label wrote "//par:bench (a100)", read
  // as //par:bench in configuration a100. cquery's configuration ids have 7 hex digits or more.
  TargetList list = read_text("//par:bench (a100)\n");
  CHECK(list.format == "label");
  REQUIRE(list.tests.size() == 1);
  CHECK(list.tests[0].label == "//par:bench (a100)");
  CHECK(read_text("//par:bench (9f87702)\n").format == "cquery_label");
}
