// One test's line of a `bazel query --output=streamed_jsonproto` output: what a launch that needs
// one test's tags reads instead of every line of a large query.
#include <algorithm>
#include <functional>
#include <sstream>

#include "gpuplan/error.hpp"
#include "gpuplan/ingest.hpp"

namespace gpuplan {

namespace {

/// Whether an escape in `text` may spell a byte of `key` (printable ASCII): `\/`, a `\u` of such
/// a byte, or one that is no JSON escape. Bazel's (JsonFormat's) are of `"`, `\`, control
/// characters and `<>&='`.
bool may_spell(std::string_view text, std::string_view key) {
  for (size_t at = text.find('\\'); at != std::string_view::npos; at = text.find('\\', at)) {
    const char kind = at + 1 < text.size() ? text[at + 1] : '\0';
    if (kind != 'u') {
      if (kind == '/' || std::string_view("\"\\bfnrt").find(kind) == std::string_view::npos) return true;
      at += 2;
      continue;
    }
    if (at + 6 > text.size()) return true;
    unsigned code = 0;
    for (char c : text.substr(at + 2, 4)) {
      const int digit = c >= '0' && c <= '9'   ? c - '0'
                        : c >= 'a' && c <= 'f' ? c - 'a' + 10
                        : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                               : -1;
      if (digit < 0) return true;
      code = code * 16 + static_cast<unsigned>(digit);
    }
    if (code < 0x80 && key.find(static_cast<char>(code)) != std::string_view::npos) return true;
    at += 6;
  }
  return false;
}

}  // namespace

std::optional<std::string> streamed_jsonproto_rule_alone(std::string_view text, std::string_view label) {
  // Every label of the same test (label_identity) ends with `key`, the label from its last "//";
  // where no escape may spell a byte of it, a JSON string holding such a label holds `key` and
  // its closing quote as they are: the lines that do are all the candidates.
  const size_t slashes = label.rfind("//");
  if (slashes == std::string_view::npos) return std::nullopt;
  const std::string quoted = std::string(label.substr(slashes)) + '"';
  const std::string_view key(quoted.data(), quoted.size() - 1);
  if (!std::all_of(key.begin(), key.end(),
                   [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; }) ||
      may_spell(text, key))
    return std::nullopt;
  const std::boyer_moore_horspool_searcher searcher(quoted.begin(), quoted.end());
  const std::string identity = label_identity(label);
  std::optional<std::string> found;
  for (auto at = std::search(text.begin(), text.end(), searcher); at != text.end();) {
    const size_t hit = static_cast<size_t>(at - text.begin());
    const size_t newline = text.rfind('\n', hit);
    const size_t begin = newline == std::string_view::npos ? 0 : newline + 1;
    const size_t end = std::min(text.find('\n', hit), text.size());
    std::string line(text.substr(begin, end - begin));
    line += '\n';
    // The line read as the full read reads it (each line is read alone there too).
    TargetList read;
    try {
      std::istringstream in(line);
      read = read_targets(in, "query", InputFormat::streamed_jsonproto);
    } catch (const InputError&) {
      return std::nullopt;
    }
    for (const Target& test : read.tests) {
      if (label_identity(test.label) != identity) continue;
      if (found) return std::nullopt;  // twice: the full read says which
      found = line;
    }
    at = end == text.size() ? text.end()
                            : std::search(text.begin() + static_cast<long>(end), text.end(), searcher);
  }
  return found;
}

}  // namespace gpuplan
