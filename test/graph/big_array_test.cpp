#include "gpuplan/big_array.hpp"

#include <catch2/catch.hpp>
#include <cstdint>
#include <string>
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
  std::string big(std::size_t{3} << 20, 'x');  // more than the 2 MiB given ahead at once
  chars.append(big.data(), big.size());
  chars.append(text, 5);
  REQUIRE(chars.size() == 10'005 + big.size());
  REQUIRE((chars[10'000] == 'x' && chars[chars.size() - 6] == 'x'));
  REQUIRE(std::string_view(chars.end() - 5, 5) == "//a:b");
}

TEST_CASE("a BigArray made with a size grows past it") {
  BigArray<std::uint32_t> values(1 << 20, 5);  // 4 MiB: full, none of its pages given ahead
  values.push_back(9);
  REQUIRE(values.size() == (1 << 20) + 1);
  REQUIRE((values[(1 << 20) - 1] == 5 && values[1 << 20] == 9));
  BigArray<std::uint32_t> zeros(10);
  zeros.append(values.data(), values.size());
  REQUIRE((zeros.size() == values.size() + 10 && zeros[9] == 0 && zeros[10] == 5 && zeros.back() == 9));
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
