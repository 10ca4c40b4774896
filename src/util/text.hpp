#pragma once
// Small text helpers every stage shares: ASCII lower case, English plurals, prefixes, excerpts.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace gpuplan::util {

/// FNV-1a of the bytes: stable across runs, machines and builds (file names, colours, index keys).
constexpr std::uint64_t fnv1a(std::string_view text, std::uint64_t hash = 14695981039346656037ULL) {
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ULL;
  return hash;
}

/// An ASCII letter lowered, every other byte as it is.
constexpr char lower_char(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

/// ASCII letters lowered, every other byte as it is ("H100-SXM" → "h100-sxm"): names
/// compare without case whatever the locale.
inline std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = lower_char(c);
  return out;
}

/// The same text but for the case of ASCII letters ("H100" and "h100").
constexpr bool equal_ignoring_case(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (lower_char(a[i]) != lower_char(b[i])) return false;
  return true;
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

/// How a message quotes text a user wrote, which may be a whole file: the first line only,
/// at most `max_characters` characters of it (UTF-8 is never cut inside a character), control
/// characters but the tab written as "\x01", and "…" after it when anything was left out.
std::string excerpt(std::string_view text, std::size_t max_characters = 60);

/// The first character of `text` that no one means in a name or pattern and few can see (a
/// no-break, thin or zero-width space, a word joiner, a byte-order mark) or that passes for
/// three (an ellipsis "…" for "..."): "a no-break space (U+00A0)"; empty when there is none.
std::string unseen_character(std::string_view text);

}  // namespace gpuplan::util
