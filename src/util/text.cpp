#include "util/text.hpp"

namespace gpuplan::util {

std::string excerpt(std::string_view text, std::size_t max_characters) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  std::size_t characters = 0;
  std::size_t i = 0;
  for (; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c == '\n' || c == '\r') break;
    bool continues = (c & 0xc0) == 0x80;  // the rest of a UTF-8 character already begun
    if (!continues && characters++ == max_characters) break;
    if ((c < 0x20 && c != '\t') || c == 0x7f) {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 0xf];
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.find_first_not_of("\r\n", i) != std::string_view::npos) out += "…";
  return out;
}

}  // namespace gpuplan::util
