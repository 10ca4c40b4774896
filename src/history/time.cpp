#include "history/time.hpp"

#include <charconv>
#include <chrono>
#include <cmath>

#include "gpuplan/limits.hpp"
#include "util/text.hpp"

namespace gpuplan::history {

std::optional<double> parse_number(std::string_view text) {
  double value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end || !std::isfinite(value)) return std::nullopt;
  return value;
}

std::optional<std::int64_t> epoch_ms(double ms) {
  if (!(ms >= 0 && ms <= static_cast<double>(max_timestamp_ms))) return std::nullopt;  // NaN too
  return static_cast<std::int64_t>(ms);
}

std::optional<std::int64_t> epoch_seconds_to_ms(double seconds) { return epoch_ms(seconds * 1000); }

std::optional<double> parse_proto_duration(std::string_view text) {
  if (!text.ends_with('s')) return std::nullopt;
  return parse_number(text.substr(0, text.size() - 1));
}

namespace {

/// Reads exactly `digits` digits at `pos`.
std::optional<int> read_digits(std::string_view text, std::size_t& pos, std::size_t digits) {
  if (pos + digits > text.size()) return std::nullopt;
  int value = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    char c = text[pos + i];
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  pos += digits;
  return value;
}

bool expect(std::string_view text, std::size_t& pos, std::string_view any_of) {
  if (pos >= text.size() || any_of.find(text[pos]) == std::string_view::npos) return false;
  ++pos;
  return true;
}

}  // namespace

std::optional<std::int64_t> parse_timestamp_ms(std::string_view text) {
  using namespace std::chrono;
  std::size_t pos = 0;
  auto y = read_digits(text, pos, 4);
  if (!y || !expect(text, pos, "-")) return std::nullopt;
  auto mo = read_digits(text, pos, 2);
  if (!mo || !expect(text, pos, "-")) return std::nullopt;
  auto d = read_digits(text, pos, 2);
  if (!d || !expect(text, pos, "T ")) return std::nullopt;
  auto h = read_digits(text, pos, 2);
  if (!h || !expect(text, pos, ":")) return std::nullopt;
  auto mi = read_digits(text, pos, 2);
  if (!mi || !expect(text, pos, ":")) return std::nullopt;
  auto s = read_digits(text, pos, 2);
  if (!s || *h > 23 || *mi > 59 || *s > 60) return std::nullopt;
  year_month_day date{year{*y}, month{static_cast<unsigned>(*mo)}, day{static_cast<unsigned>(*d)}};
  if (!date.ok()) return std::nullopt;
  std::int64_t ms = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    std::size_t start = pos;
    double scale = 100;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') {
      ms += static_cast<std::int64_t>((text[pos] - '0') * scale);
      scale /= 10;
      ++pos;
    }
    if (pos == start) return std::nullopt;
  }
  std::int64_t offset_minutes = 0;
  if (pos < text.size()) {
    if (text[pos] == 'Z' || text[pos] == 'z') {
      ++pos;
    } else if (text[pos] == '+' || text[pos] == '-') {
      int sign = text[pos] == '-' ? -1 : 1;
      ++pos;
      auto oh = read_digits(text, pos, 2);
      if (!oh || !expect(text, pos, ":")) return std::nullopt;
      auto om = read_digits(text, pos, 2);
      if (!om) return std::nullopt;
      offset_minutes = sign * (std::int64_t{*oh} * 60 + *om);
    }
  }
  if (pos != text.size()) return std::nullopt;
  auto days = sys_days(date).time_since_epoch().count();
  std::int64_t seconds = days * 86400LL + *h * 3600LL + *mi * 60LL + *s - offset_minutes * 60;
  return epoch_ms(static_cast<double>(seconds * 1000 + ms));
}

Outcome outcome_of(std::string_view status) {
  auto is = [&](std::string_view word) { return util::equal_ignoring_case(status, word); };
  if (is("PASSED") || is("FAILED") || is("FLAKY")) return Outcome::sample;
  if (is("TIMEOUT")) return Outcome::lower_bound;
  return Outcome::none;
}

}  // namespace gpuplan::history
