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
