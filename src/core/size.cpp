#include "gpuplan/size.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cmath>

#include "util/text.hpp"

namespace gpuplan {

Result<std::int64_t> parse_size_mib(std::string_view text) {
  auto not_a_size = [text] {
    return Problem{
        fmt::format("\"{}\" is not a memory size (write e.g. 40GiB, 40G or 40960MiB)", util::excerpt(text))};
  };
  size_t digits = 0;
  while (digits < text.size() &&
         (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.'))
    ++digits;
  if (digits == 0 || digits > 12) return not_a_size();
  double number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + digits, number);
  if (ec != std::errc() || end != text.data() + digits) return not_a_size();
  std::string unit;
  for (char c : text.substr(digits)) unit += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  double mib_per_unit = 0;
  if (unit == "m" || unit == "mb" || unit == "mib")
    mib_per_unit = 1;
  else if (unit == "g" || unit == "gb" || unit == "gib")
    mib_per_unit = 1024;
  else if (unit == "t" || unit == "tb" || unit == "tib")
    mib_per_unit = 1024.0 * 1024;
  else
    return not_a_size();
  double mib = std::round(number * mib_per_unit);
  constexpr double largest = 1024.0 * 1024 * 1024;  // a PiB of memory on one GPU is not a real request
  if (mib < 1 || mib > largest) return not_a_size();
  return static_cast<std::int64_t>(mib);
}

std::string format_mib(std::int64_t mib) {
  if (mib >= 1024 && mib % 1024 == 0) return fmt::format("{}GiB", mib / 1024);
  if (mib >= 1024 && (mib * 10) % 1024 == 0) return fmt::format("{:.1f}GiB", static_cast<double>(mib) / 1024);
  return fmt::format("{}MiB", mib);
}

}  // namespace gpuplan
