// One rule of a `bazel query --output=xml` document, cut out as a document of its own: what a
// launch that needs one test's tags reads instead of every rule of a large query.
#include <algorithm>
#include <cstdint>

#include "gpuplan/ingest.hpp"

namespace gpuplan {

namespace {

bool ascii(std::string_view text) {
  return std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
}

/// An attribute value with XML's five named entities and character references decoded; nullopt
/// for any other entity, or a reference outside ASCII (the readers' own decoding then decides).
std::optional<std::string> decoded(std::string_view raw) {
  std::string out;
  for (size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] != '&') {
      out += raw[i];
      continue;
    }
    const size_t semi = raw.find(';', i);
    if (semi == std::string_view::npos) return std::nullopt;
    const std::string_view entity = raw.substr(i + 1, semi - i - 1);
    if (entity == "amp")
      out += '&';
    else if (entity == "lt")
      out += '<';
    else if (entity == "gt")
      out += '>';
    else if (entity == "quot")
      out += '"';
    else if (entity == "apos")
      out += '\'';
    else if (entity.size() > 1 && entity[0] == '#') {
      const bool hex = entity[1] == 'x';
      std::uint32_t code = 0;
      const std::string_view digits = entity.substr(hex ? 2 : 1);
      if (digits.empty() || digits.size() > 6) return std::nullopt;
      for (char c : digits) {
        int d = c >= '0' && c <= '9'          ? c - '0'
                : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
                : hex && c >= 'A' && c <= 'F' ? c - 'A' + 10
                                              : -1;
        if (d < 0) return std::nullopt;
        code = code * (hex ? 16 : 10) + static_cast<std::uint32_t>(d);
      }
      if (code == 0 || code >= 0x80) return std::nullopt;
      out += static_cast<char>(code);
    } else {
      return std::nullopt;
    }
    i = semi;
  }
  return out;
}

/// The raw value of attribute `name` in the start tag `tag`; nullopt when it has none or it is
/// not in double quotes (Bazel's way).
std::optional<std::string_view> attribute(std::string_view tag, std::string_view name) {
  for (size_t at = tag.find(name); at != std::string_view::npos; at = tag.find(name, at + 1)) {
    const bool starts = at > 0 && (tag[at - 1] == ' ' || tag[at - 1] == '\t' || tag[at - 1] == '\n');
    const size_t after = at + name.size();
    if (!starts || tag.substr(after, 2) != "=\"") continue;
    const size_t close = tag.find('"', after + 2);
    if (close == std::string_view::npos) return std::nullopt;
    return tag.substr(after + 2, close - after - 2);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> xml_rule_alone(std::string_view xml, std::string_view label) {
  // A whole document: its prolog (ASCII: no encoding question) up to <query ...>, and </query> last.
  const size_t query = xml.find("<query");
  if (query == std::string_view::npos) return std::nullopt;
  const size_t body = xml.find('>', query);
  if (body == std::string_view::npos || xml[body - 1] == '/' || !ascii(xml.substr(0, body + 1)))
    return std::nullopt;
  std::string_view rest = xml.substr(body + 1);
  // Bazel writes neither; a rule in either is no rule, which a search of the bytes cannot tell.
  if (rest.find("<!--") != std::string_view::npos || rest.find("<![CDATA[") != std::string_view::npos)
    return std::nullopt;
  const size_t last = rest.find_last_not_of(" \t\r\n");
  if (last == std::string_view::npos || !rest.substr(0, last + 1).ends_with("</query>")) return std::nullopt;
  std::optional<std::string_view> found;
  constexpr std::string_view open = "<rule ";
  for (size_t at = rest.find(open); at != std::string_view::npos; at = rest.find(open, at + open.size())) {
    const size_t end = rest.find('>', at);
    if (end == std::string_view::npos) return std::nullopt;
    const std::string_view tag = rest.substr(at, end + 1 - at);
    const auto raw = attribute(tag, "name");
    if (!raw) return std::nullopt;
    // Most names differ at a glance: decode only those that may be the label.
    if (raw->size() < label.size() || (raw->find('&') == std::string_view::npos && *raw != label)) continue;
    const auto name = decoded(*raw);
    if (!name) return std::nullopt;
    if (*name != label) continue;
    if (found || tag.ends_with("/>")) return std::nullopt;  // twice, or an empty rule: the full read says
    const size_t close = rest.find("</rule>", end);
    if (close == std::string_view::npos) return std::nullopt;
    found = rest.substr(at, close + 7 - at);
  }
  if (!found || !ascii(*found)) return std::nullopt;
  std::string out(xml.substr(0, body + 1));
  out += "\n    ";
  out += *found;
  out += "\n</query>\n";
  return out;
}

}  // namespace gpuplan
