#include <catch2/catch.hpp>

#include "gpuplan/history.hpp"

using namespace gpuplan;

TEST_CASE("history formats are told apart by their first bytes") {
  REQUIRE(detect_history_format(R"({"id":{"started":{}},"started":{}})") == HistoryFormat::bep);
  REQUIRE(detect_history_format("\n { \"id\" : {}}") == HistoryFormat::bep);
  REQUIRE(detect_history_format("<?xml version=\"1.0\"?><testsuites/>") == HistoryFormat::junit);
  REQUIRE(detect_history_format("\xEF\xBB\xBF<testsuites/>") == HistoryFormat::junit);
  REQUIRE(detect_history_format(R"([{"label":"//a:b","seconds":1}])") == HistoryFormat::json);
  REQUIRE(detect_history_format("{\n  \"gpuplan_history\": 1,") == HistoryFormat::json);
  REQUIRE(detect_history_format(R"({"label":"//a:b","seconds":1})") == HistoryFormat::json);
  REQUIRE(detect_history_format("label,seconds\n//a:b,1\n") == HistoryFormat::csv);
}

TEST_CASE("a results file whose end is zeros is said to be one, with where to cut it") {
  // Before: "binary data ... give the file of --build_event_json_file", of a file run-under wrote.
  const std::string text = "label,shard,seconds\n//a:b,,5\n" + std::string(20, '\0');
  CHECK(history_head_problem(text) ==
        "a results file with NUL bytes from line 3 on: its end was never written (a machine that lost power "
        "or a "
        "full disk leaves zeros); cut it after its last whole record (in bash: truncate -s 29 FILE)");
}

TEST_CASE("build events reformatted by jq are named with the command that makes them readable") {
  // Before: "skipped 181 bad history rows" (jq .) or 13 rows without a label (jq -s), and exit 0.
  CHECK_THAT(history_head_problem("{\n  \"id\": {\n    \"started\": {}\n  },\n"), Catch::Contains("jq -c ."));
  CHECK_THAT(history_head_problem("[\n  {\n    \"id\": {\"started\": {}}"), Catch::Contains("jq -c '.[]'"));
  // What gpuplan reads stays readable: a summary, one event a line, an array of rows.
  CHECK(history_head_problem("{\n  \"gpuplan_history\": 1,\n").empty());
  CHECK(history_head_problem("{\"id\":{\"started\":{}}}\n{\"id\":{}}\n").empty());
  CHECK(history_head_problem("[\n  {\"label\": \"//a:b\", \"seconds\": 1}\n]").empty());
}

TEST_CASE("UTF-16 history is named as such, with how to convert it") {
  // Before: "binary data ... give the file of --build_event_json_file", of the JSON file itself.
  const std::string bom_le("\xFF\xFE{\0\"\0i\0d\0", 10);
  const std::string no_bom_le("{\0\"\0i\0d\0", 8);
  CHECK_THAT(history_head_problem(bom_le), Catch::StartsWith("UTF-16 text"));
  CHECK_THAT(history_head_problem(no_bom_le), Catch::Contains("iconv -f UTF-16 -t UTF-8"));
}
