#include "ingest/bazel_latin1.hpp"

#include <catch2/catch.hpp>
#include <string>

using gpuplan::ingest::undo_latin1_utf8;

namespace {
std::string undone(std::string_view text) {
  std::string scratch;
  return std::string(undo_latin1_utf8(text, scratch));
}
}  // namespace

TEST_CASE("a name Bazel's XML encoded twice reads as the name in the BUILD file") {
  REQUIRE(undone("//t:\u00d1\u0082\u00d0\u00b5\u00d1\u0081\u00d1\u0082_test") == "//t:тест_test");
  REQUIRE(undone("//t:caf\u00c3\u00a9_test") == "//t:café_test");
  // past the first eight bytes, and in the last seven
  REQUIRE(undone("//team/models/m01:caf\u00c3\u00a9_test") == "//team/models/m01:café_test");
  REQUIRE(undone("//team/models:caf\u00c3\u00a9") == "//team/models:café");
}

TEST_CASE("a name encoded once is left as it is") {
  REQUIRE(undone("//t:plain_test") == "//t:plain_test");
  REQUIRE(undone("//t:café_test") == "//t:café_test");  // é alone is no UTF-8 byte sequence
  REQUIRE(undone("//t:тест_test") == "//t:тест_test");  // above U+00FF: not Latin-1
  REQUIRE(undone("//t:\u00c3\u00a9\u00e9") == "//t:\u00c3\u00a9\u00e9");  // its bytes would not be UTF-8
}
