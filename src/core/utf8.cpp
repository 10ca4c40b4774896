#include "core/utf8.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "gpuplan/error.hpp"

namespace gpuplan {

std::size_t invalid_utf8_at(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    std::size_t length = c >= 0xc2 && c <= 0xdf   ? 2
                         : c >= 0xe0 && c <= 0xef ? 3
                         : c >= 0xf0 && c <= 0xf4 ? 4
                                                  : 0;
    if (length == 0 || i + length > text.size()) return i;
    auto second = static_cast<unsigned char>(text[i + 1]);
    // The second byte's range excludes overlong forms, surrogates and code points past U+10FFFF.
    unsigned char low = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
    unsigned char high = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
    if (second < low || second > high) return i;
    for (std::size_t k = 2; k < length; ++k)
      if ((static_cast<unsigned char>(text[i + k]) & 0xc0) != 0x80) return i;
    i += length;
  }
  return std::string_view::npos;
}

std::string escape_invalid_utf8(std::string_view text) {
  std::string out;
  while (!text.empty()) {
    std::size_t at = invalid_utf8_at(text);
    out += text.substr(0, at);
    if (at == std::string_view::npos) break;
    out += fmt::format("\\x{:02x}", static_cast<unsigned char>(text[at]));
    text.remove_prefix(at + 1);
  }
  return out;
}

void require_utf8(std::string_view text, const std::string& name) {
  auto at_byte = [&](std::size_t at) {
    std::string_view before = text.substr(0, at);
    long line = 1 + static_cast<long>(std::count(before.begin(), before.end(), '\n'));
    std::size_t line_start = before.rfind('\n');
    long column = static_cast<long>(line_start == std::string_view::npos ? at + 1 : at - line_start);
    return Position{name, line, column};
  };
  if (text.starts_with("\xff\xfe") || text.starts_with("\xfe\xff"))
    throw InputError(at_byte(0), "the file is UTF-16 (a Windows editor's \"Unicode\"): save it as UTF-8");
  std::size_t at = std::min(invalid_utf8_at(text), text.find('\0'));
  if (at == std::string_view::npos) return;
  if (text[at] == '\0')
    throw InputError(at_byte(at),
                     "a NUL byte: the file must be UTF-8 text (binary data, or UTF-16 without its byte-order "
                     "mark: save it as UTF-8)");
  throw InputError(at_byte(at), fmt::format("byte 0x{:02x} is not UTF-8: the file must be UTF-8 text",
                                            static_cast<unsigned char>(text[at])));
}

std::string read_small_text(std::istream& in, const std::string& name, std::size_t limit) {
  std::string text;
  std::string chunk(std::size_t{1} << 16, '\0');
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
    text.append(chunk.data(), static_cast<std::size_t>(in.gcount()));
    if (text.size() > limit)
      throw InputError(Position{name}, fmt::format("is larger than {} MiB, which no such file is (a fleet of "
                                                   "10,000 nodes is about 3 MB): is it the right file?",
                                                   limit >> 20));
  }
  return text;
}

std::string utf8_problem(std::string_view text) {
  std::size_t at = invalid_utf8_at(text);
  if (at == std::string_view::npos) return {};
  return fmt::format("byte 0x{:02x} at offset {} is not UTF-8", static_cast<unsigned char>(text[at]), at);
}

}  // namespace gpuplan
