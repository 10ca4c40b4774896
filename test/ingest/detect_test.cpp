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
