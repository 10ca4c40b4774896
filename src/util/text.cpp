#include "util/text.hpp"

namespace gpuplan::util {

namespace {

/// The characters few can see, with the code a message shows in their place, and their name.
struct Unseen {
  std::string_view character, code, name;
};
constexpr Unseen unseen_characters[] = {{"\u00a0", "\\u00a0", "a no-break space (U+00A0)"},
                                        {"\u2009", "\\u2009", "a thin space (U+2009)"},
                                        {"\u200b", "\\u200b", "a zero-width space (U+200B)"},
                                        {"\u200c", "\\u200c", "a zero-width non-joiner (U+200C)"},
                                        {"\u200d", "\\u200d", "a zero-width joiner (U+200D)"},
                                        {"\u202f", "\\u202f", "a narrow no-break space (U+202F)"},
                                        {"\u2060", "\\u2060", "a word joiner (U+2060)"},
                                        {"\ufeff", "\\ufeff", "a byte-order mark (U+FEFF)"}};

const Unseen* unseen_at(std::string_view text) {
  for (const auto& u : unseen_characters)
    if (text.starts_with(u.character)) return &u;
  return nullptr;
}

}  // namespace

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
    } else if (const Unseen* u = c >= 0x80 ? unseen_at(text.substr(i)) : nullptr) {
      out += u->code;  // "nvswitch\u00a0", not a "nvswitch " that looks right
      i += u->character.size() - 1;
    } else {
      out += static_cast<char>(c);
    }
  }
  if (text.find_first_not_of("\r\n", i) != std::string_view::npos) out += "…";
  return out;
}

std::string unseen_character(std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i)
    if (static_cast<unsigned char>(text[i]) >= 0x80) {
      if (const Unseen* u = unseen_at(text.substr(i))) return std::string(u->name);
      if (text.substr(i).starts_with("\u2026"))
        return "an ellipsis \"\u2026\" (U+2026), one character where three dots were meant";
    }
  return {};
}

}  // namespace gpuplan::util
