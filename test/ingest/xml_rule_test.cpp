// xml_rule_alone: one rule of an XML query, read alone, reads as it does in the whole document.
#include <catch2/catch.hpp>

#include "gpuplan/ingest.hpp"
#include "ingest_helpers.hpp"

using gpuplan::testing::read_text;
using gpuplan::testing::said;
using gpuplan::testing::source_file;

namespace {

/// Every test of `xml`, read alone, reads as in the whole document, and as the only test.
void every_test_alone_reads_the_same(const std::string& xml) {
  const auto whole = read_text(xml);
  REQUIRE(!whole.tests.empty());
  for (const auto& test : whole.tests) {
    INFO(test.label);
    auto alone = gpuplan::xml_rule_alone(xml, test.label);
    REQUIRE(alone);
    const auto read = read_text(*alone);
    REQUIRE(read.tests.size() == 1);
    CHECK(said(read.tests.front()) == said(test));
    CHECK(read.tests.front().exec_properties == test.exec_properties);
  }
}

const std::string head =
    "<?xml version=\"1.1\" encoding=\"UTF-8\" standalone=\"no\"?>\n<query version=\"2\">\n";

std::string rule(const std::string& escaped_name, const std::string& tag) {
  return "    <rule class=\"sh_test\" location=\"/w/BUILD:1:8\" name=\"" + escaped_name +
         "\">\n        <list name=\"tags\">\n            <string value=\"" + tag +
         "\"/>\n        </list>\n        <rule-input name=\"" + escaped_name + "\"/>\n    </rule>\n";
}

}  // namespace

TEST_CASE("every test of the example workspace's query reads alone as in the whole query", "[ingest][xml]") {
  every_test_alone_reads_the_same(source_file("examples/query.xml"));
}

TEST_CASE("a rule whose name has &, \" or < reads alone as in the whole query", "[ingest][xml]") {
  const std::string xml = head + rule("//odd:a&amp;b", "gpu:2") + rule("//odd:q&quot;x", "gpu-mem:16G") +
                          rule("//odd:lt&lt;y&gt;", "cuda&gt;=12.4") + rule("//odd:ref&#38;z", "gpu") +
                          rule("//odd:a", "cpu-only") + "</query>\n";
  every_test_alone_reads_the_same(xml);
  CHECK(read_text(*gpuplan::xml_rule_alone(xml, "//odd:a&b")).tests.front().tags.size() == 1);
  CHECK(read_text(*gpuplan::xml_rule_alone(xml, "//odd:a")).tests.front().label == "//odd:a");
}

TEST_CASE("a query that cannot be read a rule alone is left to the full read", "[ingest][xml]") {
  const std::string one = rule("//a:b", "gpu");
  CHECK_FALSE(gpuplan::xml_rule_alone(head + one + "</query>\n", "//a:c"));        // not there
  CHECK_FALSE(gpuplan::xml_rule_alone(head + one + one + "</query>\n", "//a:b"));  // twice
  CHECK_FALSE(gpuplan::xml_rule_alone(head + one, "//a:b"));                       // cut short
  CHECK_FALSE(gpuplan::xml_rule_alone("//a:b\n//a:c\n", "//a:b"));                 // not XML
  CHECK_FALSE(gpuplan::xml_rule_alone(head + rule("//a:b", "gpu-model:\xc3\xa9") + "</query>\n", "//a:b"));
  CHECK_FALSE(gpuplan::xml_rule_alone(head + rule("//a:b&foo;", "gpu") + "</query>\n", "//a:b"));
  CHECK_FALSE(gpuplan::xml_rule_alone(head + "<!--\n" + one + "-->\n</query>\n", "//a:b"));  // a comment
  CHECK_FALSE(gpuplan::xml_rule_alone(head + "<![CDATA[\n" + one + "]]>\n</query>\n", "//a:b"));
  CHECK(gpuplan::xml_rule_alone(head + one + "</query>\n", "//a:b"));
}
