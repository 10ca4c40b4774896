#include <catch2/catch.hpp>

#include "gpuplan/error.hpp"
#include "ingest/ingest_helpers.hpp"

using namespace gpuplan;
using namespace gpuplan::testing;

TEST_CASE("every format name --input-format accepts round-trips") {
  for (auto name : {"label", "label_kind", "xml", "streamed_jsonproto", "jsonproto", "cquery_label",
                    "cquery_label_kind", "cquery_jsonproto"}) {
    REQUIRE(parse_input_format(name));
    REQUIRE(to_string(*parse_input_format(name)) == name);
  }
  REQUIRE_FALSE(parse_input_format("yaml"));
}

TEST_CASE("empty or blank input is a valid, empty list") {
  REQUIRE(read_text("").tests.empty());
  REQUIRE(read_text(" \n\n\t\n").format.empty());
  REQUIRE(read_text("", InputFormat::xml).tests.empty());
}

TEST_CASE("binary input is refused with the position of the first byte that is not text") {
  REQUIRE_THROWS_WITH(read_text(std::string("//a:b\n\x7f"
                                            "ELF\0\0",
                                            11)),
                      Catch::Contains("input:2:5") && Catch::Contains("binary input"));
  REQUIRE_THROWS_WITH(read_text("//a:b\xff\xfe\n"), Catch::Contains("input:1:6"));
}

TEST_CASE("Bazel's binary proto output is refused as what it is, with the format to ask for") {
  // It was "binary input (byte 0xc0)" at line 2, the first byte being a newline's.
  const std::string ask = "query again with --output=streamed_jsonproto or --output=xml";
  REQUIRE_THROWS_WITH(
      read_fixture("bazel/select_props.query.proto"),  // real Bazel 4 output
      Catch::Contains("binary protocol buffer output (--output=proto") && Catch::Contains(ask));
  // cquery's: a ConfiguredTarget (field 1) around the Target; streamed_proto: each after its length.
  REQUIRE_THROWS_WITH(read_text(std::string("\x0a\x84\x01\x0a\x81\x01\x08\x01\x12\x7c", 10)),
                      Catch::Contains(ask));
  REQUIRE_THROWS_WITH(read_text(std::string("\xc0\x10\x08\x01\x12\xbb\x10", 7)), Catch::Contains(ask));
  // Other binary input is said as before.
  REQUIRE_THROWS_WITH(read_text(std::string("\x0a\x05\x10\x01", 4)), Catch::Contains("binary input"));
}

TEST_CASE("input in no format of Bazel's is an error that suggests --input-format") {
  REQUIRE_THROWS_WITH(read_text("\nname,seconds\n//a:b,3\n"), Catch::Contains("input:2") &&
                                                                  Catch::Contains("unknown input format") &&
                                                                  Catch::Contains("--input-format"));
}

TEST_CASE("a forced format reads input that detection would not guess") {
  TargetList list = read_text("sh_test rule //a:b_test\n", InputFormat::label_kind);
  REQUIRE(list.format == "label_kind");
  REQUIRE(list.tests.size() == 1);
}

TEST_CASE("the --attrs file fills a labels-only list from a query with attributes, matching @// and //") {
  TargetList labels = read_text("@//ml:train_test (f5527a6)\n//core:unit_test (f5527a6)\n");
  join_attributes(labels, read_fixture("bazel/all.query.xml"));
  REQUIRE(labels.tests[0].label == "@//ml:train_test");
  REQUIRE(labels.tests[0].shard_count == 4);
  REQUIRE(labels.tests[0].configuration == "f5527a6");
  REQUIRE(labels.tests[1].has_attributes);
}

TEST_CASE("a label the --attrs file lists twice becomes both listings, for the classifier to choose") {
  // Before, the first listing alone: an untagged one before a `gpu` one sent the test to CPU
  // runners with exit 0, where the same query read directly kept the GPU listing.
  TargetList labels = read_text("//a:t_test\n//b:u_test\n");
  TargetList attributes = read_text(
      "<?xml version=\"1.1\" encoding=\"UTF-8\" standalone=\"no\"?>\n<query version=\"2\">\n"
      "<rule class=\"cc_test\" location=\"/x/BUILD:1:1\" name=\"//a:t_test\"/>\n"
      "<rule class=\"cc_test\" location=\"/x/BUILD:2:1\" name=\"@//a:t_test\"><list name=\"tags\">"
      "<string value=\"gpu\"/></list></rule>\n</query>\n");
  join_attributes(labels, attributes);
  REQUIRE(labels.tests.size() == 3);
  REQUIRE(labels.tests[0].label == "//a:t_test");
  REQUIRE(labels.tests[1].label == "//a:t_test");
  REQUIRE(labels.tests[1].tags.size() == 1);
  REQUIRE_FALSE(labels.tests[2].has_attributes);
}

TEST_CASE("a byte order mark at the start is skipped in every format") {
  TargetList kinds = read_text("\xef\xbb\xbfpy_test rule //a:b_test\n");
  REQUIRE(kinds.tests.at(0).rule_class == "py_test");  // was "\ufeffpy_test", which no rule matched
  REQUIRE(read_text("\xef\xbb\xbf//a:b_test\n").tests.at(0).label == "//a:b_test");
  REQUIRE(
      read_text(
          "\xef\xbb\xbf{\"type\":\"RULE\",\"rule\":{\"name\":\"//a:b_test\",\"ruleClass\":\"py_test\"}}\n")
          .tests.size() == 1);
}

TEST_CASE("Bazel's log mixed into its output (2>&1) is named as such") {
  for (auto text : {"Loading: 0 packages loaded\n//a:b\n", "\x1b[32mINFO: \x1b[0mInvocation ID\n//a:b\n"})
    REQUIRE_THROWS_WITH(read_text(text), Catch::Contains("input:1") && Catch::Contains("Bazel's log") &&
                                             Catch::Contains("no 2>&1"));
  REQUIRE_THROWS_WITH(read_text("py_test rule //a:b\nINFO: Elapsed time: 0.5s\n"),
                      Catch::Contains("input:2: \"INFO: Elapsed time: 0.5s\" is not a label_kind line") &&
                          Catch::Contains("Bazel's log"));
}

TEST_CASE("cquery's lines read as query's are refused: the configuration would become part of the label") {
  REQUIRE_THROWS_WITH(read_text("//a:b (f5527a6)\n", InputFormat::label),
                      Catch::Contains("ends in a cquery configuration") && Catch::Contains("cquery_label"));
  REQUIRE_THROWS_WITH(read_text("py_test rule //a:b (null)\n", InputFormat::label_kind),
                      Catch::Contains("cquery_label_kind"));
  REQUIRE_THROWS_WITH(read_text("//a:b\n//a:c (f5527a6)\n"),
                      Catch::Contains("input:2"));                                   // two outputs mixed
  REQUIRE(read_text("//a:bench (a100)\n").tests.at(0).label == "//a:bench (a100)");  // a name with a space
}
