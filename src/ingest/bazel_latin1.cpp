#include "ingest/bazel_latin1.hpp"

#include <algorithm>

#include "core/utf8.hpp"

namespace gpuplan::ingest {

namespace {

bool continuation(unsigned char byte) { return (byte & 0xC0) == 0x80; }

}  // namespace

std::string_view undo_latin1_utf8(std::string_view text, std::string& scratch) {
  auto first =
      std::find_if(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; });
  if (first == text.end()) return text;
  scratch.assign(text.begin(), first);
  for (auto p = first; p != text.end(); ++p) {
    auto byte = static_cast<unsigned char>(*p);
    if (byte < 0x80) {
      scratch.push_back(*p);
      continue;
    }
    // U+0080 to U+00FF are C2 or C3 and one continuation byte in UTF-8
    if ((byte != 0xC2 && byte != 0xC3) || p + 1 == text.end() ||
        !continuation(static_cast<unsigned char>(p[1])))
      return text;
    ++p;
    scratch.push_back(static_cast<char>(((byte & 0x03) << 6) | (static_cast<unsigned char>(*p) & 0x3F)));
  }
  return invalid_utf8_at(scratch) == std::string_view::npos ? std::string_view(scratch) : text;
}

}  // namespace gpuplan::ingest
