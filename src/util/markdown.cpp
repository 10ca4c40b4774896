#include "util/markdown.hpp"

#include <algorithm>

namespace gpuplan::util::markdown {

std::string text(std::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '\n':
      case '\r': out += ' '; break;
      case '\\':
      case '`':
      case '*':
      case '_':
      case '[':
      case ']':
      case '|':
      case '#':
      case '~':
      case '!':
        out += '\\';
        out += c;
        break;
      default: out += c;
    }
  }
  return out;
}

std::string code(std::string_view text) {
  std::size_t run = 0, longest = 0;
  for (char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  std::string fence(longest + 1, '`');
  std::string flat(text);
  std::replace(flat.begin(), flat.end(), '\n', ' ');
  std::replace(flat.begin(), flat.end(), '\r', ' ');
  bool pad = !flat.empty() && (flat.front() == '`' || flat.back() == '`');
  return fence + (pad ? " " : "") + flat + (pad ? " " : "") + fence;
}

std::string code_cell(std::string_view text) {
  std::string span = code(text), out;
  for (char c : span) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

}  // namespace gpuplan::util::markdown
