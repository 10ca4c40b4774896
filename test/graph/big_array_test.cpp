#include "gpuplan/big_array.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string_view>
#include <utility>

using namespace gpuplan;

TEST_CASE("a BigArray keeps every value while it grows far past its first pages") {
  BigArray<std::uint64_t> values;
  for (std::uint64_t i = 0; i < 3'000'000; ++i) values.push_back(i * 7);  // 24 MB, grown by mremap
  REQUIRE(values.size() == 3'000'000);
  bool all = true;
  for (std::uint64_t i = 0; i < values.size(); ++i) all = all && values[i] == i * 7;
  REQUIRE(all);
  const char text[] = "//a:b";
  BigArray<char> chars;
  for (int i = 0; i < 2000; ++i) chars.append(text, 5);
  REQUIRE(chars.size() == 10'000);
  REQUIRE(std::string_view(chars.data() + 9995, 5) == "//a:b");
}

TEST_CASE("a BigArray of a value starts filled with it, zero or not, and moves without copying") {
  BigArray<std::uint32_t> zeros(100'000);
  BigArray<std::uint32_t> ones(100'000, 0xffffffffu);
  REQUIRE((zeros[0] == 0 && zeros[99'999] == 0));
  REQUIRE((ones[0] == 0xffffffffu && ones[99'999] == 0xffffffffu));
  ones.populate();  // its pages given at once: what it holds stays
  zeros.populate();
  REQUIRE((zeros[99'999] == 0 && ones[99'999] == 0xffffffffu));
  const std::uint32_t* data = ones.data();
  BigArray<std::uint32_t> moved = std::move(ones);
  REQUIRE(moved.data() == data);
  REQUIRE(ones.empty());  // NOLINT(bugprone-use-after-move): a moved-from array is empty
  moved.clear();
  REQUIRE(moved.empty());
}
