#include "gpuplan/symbol.hpp"

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <string>

using namespace gpuplan;

TEST_CASE("symbols with the same text share one copy and compare equal") {
  std::string built = std::string("py_") + "test";
  Symbol a = "py_test";
  Symbol b = built;
  REQUIRE(a == b);
  REQUIRE(&a.str() == &b.str());
  REQUIRE(a != Symbol("sh_test"));
  REQUIRE(Symbol().empty());
  REQUIRE(Symbol() == Symbol(""));
}

TEST_CASE("a symbol reads like its text: compared, ordered and formatted by content") {
  Symbol size = "large";
  REQUIRE(size == "large");
  REQUIRE(size == std::string("large"));
  REQUIRE(size == std::string_view("large"));
  REQUIRE(Symbol("eternal") < Symbol("short"));  // by text, not by when each was first seen
  REQUIRE(fmt::format("[{:>7}]", size) == "[  large]");
  REQUIRE(std::string(size.str()) + "!" == "large!");
}

TEST_CASE("texts that differ only in the middle stay different symbols, however often each comes") {
  // Same length and same first and last eight bytes: the same slot of a thread's cache.
  std::string left = "requires-gpu-sm80-nvlink-pairs", right = left;
  right[14] = '9';
  for (int round = 0; round < 3; ++round) {
    Symbol a = left, b = right;
    REQUIRE(a != b);
    REQUIRE(a.str() == left);
    REQUIRE(b.str() == right);
    REQUIRE(&a.str() == &Symbol(left).str());
  }
  REQUIRE(Symbol(std::string_view()) == Symbol(""));  // an empty view has no bytes to read
}
