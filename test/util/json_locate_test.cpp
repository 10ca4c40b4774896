#include "util/json_locate.hpp"

#include <catch2/catch.hpp>
#include <sstream>
#include <string>

using gpuplan::util::locate_json_path;

namespace {

/// "line:column" of the value at `path` in `text`, or "none".
std::string where(const std::string& text, std::string_view path) {
  std::istringstream in(text);
  auto spot = locate_json_path(*in.rdbuf(), path);
  return spot ? std::to_string(spot->line) + ":" + std::to_string(spot->column) : "none";
}

}  // namespace

TEST_CASE("a JSON path is found at the line and column its value begins") {
  const std::string text =
      "{\n"
      "  \"schema_version\": 1,\n"
      "  \"summary\": {\"tests\": 3, \"makespan_s\": -1},\n"
      "  \"assignments\": [\n"
      "    {\"unit\": \"a\", \"gpus\": [0, 1]},\n"
      "    {\"unit\": \"b\",\n"
      "     \"requirements\": {\"gpus\": \"two\"}}\n"
      "  ]\n"
      "}\n";
  CHECK(where(text, "$") == "1:1");
  CHECK(where(text, "schema_version") == "2:21");
  CHECK(where(text, "summary.makespan_s") == "3:41");
  CHECK(where(text, "assignments[0]") == "5:5");
  CHECK(where(text, "assignments[0].gpus") == "5:27");
  CHECK(where(text, "assignments[1].requirements.gpus") == "7:31");
  CHECK(where(text, "assignments[1].requirements") == "7:22");
  CHECK(where(text, "assignments[2]") == "none");
  CHECK(where(text, "summary.nothing") == "none");
  CHECK(where(text, "summary[0]") == "none");
}

TEST_CASE("a JSON path takes a key given twice at its last, and keys with dots, brackets and escapes whole") {
  CHECK(where("{\"a\": 1,\n \"a\": 2}", "a") == "2:7");
  CHECK(where("{\"env\": {\"X.Y[1]\": 5,\n \"Z\\u00e9\\\"\": {\"k\": [true]}}}", "env.X.Y[1]") == "1:20");
  CHECK(where("{\"env\": {\"X.Y[1]\": 5,\n \"Z\\u00e9\\\"\": {\"k\": [true]}}}", "env.Z\xc3\xa9\".k[0]") ==
        "2:22");
  // Strings holding brackets and braces are skipped as strings, however deep the rest nests.
  CHECK(where("[\"]}\", [[[[{\"x\": \"{\"}]]]],\n 7]", "[2]") == "2:2");
}

TEST_CASE("a JSON path in a text cut short or broken is found up to where the text breaks") {
  CHECK(where("{\"a\": [1, 2", "a[1]") == "1:11");
  CHECK(where("{\"a\": [1, 2", "a[2]") == "none");
  CHECK(where("{\"a\" 1, \"b\": 2}", "b") == "none");
  CHECK(where("", "$") == "1:1");
}

TEST_CASE("a JSON text after a UTF-8 byte order mark is found at its line, the mark not counted") {
  // The plan reader skips the mark; before, the scanner took it for broken JSON and found nothing.
  REQUIRE(where("\xEF\xBB\xBF{\"summary\": {\"makespan_s\": \"x\"}}", "summary.makespan_s") == "1:28");
  REQUIRE(where("\xEF\xBB\xBF{\n  \"policy\": 7\n}", "policy") == "2:13");
}
