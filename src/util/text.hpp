#pragma once
// Small text helpers every stage shares: ASCII lower case, English plurals, prefixes.
#include <string>
#include <string_view>

namespace gpuplan::util {

/// ASCII letters lowered, every other byte as it is ("H100-SXM" → "h100-sxm"): names
/// compare without case whatever the locale.
inline std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out)
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  return out;
}

/// "s" unless `count` is 1, for messages: fmt::format("{} unit{}", n, plural(n)).
template <class Count>
constexpr std::string_view plural(Count count) {
  return count == 1 ? "" : "s";
}

/// Removes `prefix` from the front of `text` when it is there, and says whether it was.
inline bool strip_prefix(std::string_view& text, std::string_view prefix) {
  if (!text.starts_with(prefix)) return false;
  text.remove_prefix(prefix.size());
  return true;
}

}  // namespace gpuplan::util
