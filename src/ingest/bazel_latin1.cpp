#include "ingest/bazel_latin1.hpp"

#include <cstdint>
#include <cstring>

#include "core/utf8.hpp"

namespace gpuplan::ingest {

namespace {

bool continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

/// The first byte of `text` at or above 0x80, eight at a time: every label of a large graph
/// passes here, and nearly all are ASCII.
const char* first_non_ascii(std::string_view text) {
  const char* p = text.data();
  const char* end = p + text.size();
  for (std::uint64_t word; end - p >= 8; p += 8) {
    std::memcpy(&word, p, 8);
    if (word & 0x8080808080808080) break;
  }
  while (p < end && static_cast<unsigned char>(*p) < 0x80) ++p;
  return p;
}

}  // namespace

std::string_view undo_latin1_utf8(std::string_view text, std::string& scratch) {
  const char* first = first_non_ascii(text);
  const char* end = text.data() + text.size();
  if (first == end) return text;
  scratch.assign(text.data(), first);
  for (const char* p = first; p != end; ++p) {
    auto byte = static_cast<unsigned char>(*p);
    if (byte < 0x80) {
      scratch.push_back(*p);
      continue;
    }
    // U+0080 to U+00FF are C2 or C3 and one continuation byte in UTF-8
    if ((byte != 0xC2 && byte != 0xC3) || p + 1 == end || !continuation(static_cast<unsigned char>(p[1])))
      return text;
    ++p;
    scratch.push_back(static_cast<char>(((byte & 0x03) << 6) | (static_cast<unsigned char>(*p) & 0x3F)));
  }
  return invalid_utf8_at(scratch) == std::string_view::npos ? std::string_view(scratch) : text;
}

}  // namespace gpuplan::ingest
