#include "util/text.hpp"

#include <catch2/catch.hpp>
#include <string>

using gpuplan::util::excerpt;

TEST_CASE("an excerpt of short one-line text is the text itself") {
  REQUIRE(excerpt("H100-SXM-80GB") == "H100-SXM-80GB");
  REQUIRE(excerpt("") == "");
  REQUIRE(excerpt("ends with a line break\n") == "ends with a line break");
}

TEST_CASE("an excerpt of a long line or of several lines is its beginning and an ellipsis") {
  REQUIRE(excerpt(std::string(1'000'000, 'x')) == std::string(60, 'x') + "…");
  REQUIRE(excerpt(std::string(60, 'x')) == std::string(60, 'x'));
  REQUIRE(excerpt("first line\nsecond line\n") == "first line…");
  REQUIRE(excerpt("windows line\r\nsecond") == "windows line…");
  REQUIRE(excerpt("abcdef", 3) == "abc…");
}

TEST_CASE("an excerpt counts characters, never cuts one, and shows control characters") {
  REQUIRE(excerpt("ééééé", 3) == "ééé…");
  REQUIRE(excerpt(std::string("a\x01\0b", 4)) == "a\\x01\\x00b");
  REQUIRE(excerpt("a tab\tstays, delete\x7f does not") == "a tab\tstays, delete\\x7f does not");
}

// "unknown topology 'nvswitch '" looked like a bug in gpuplan: the blank was a no-break space.
TEST_CASE("an excerpt shows the characters few can see by their code") {
  REQUIRE(excerpt("nvswitch\u00a0") == "nvswitch\\u00a0");
  REQUIRE(excerpt("\u200btopology") == "\\u200btopology");
  REQUIRE(excerpt("8\ufeff") == "8\\ufeff");
  REQUIRE(excerpt("A100 – 80GB é") == "A100 – 80GB é");  // other characters are themselves
}
