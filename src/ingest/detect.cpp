// Which format an input is in, from its first bytes (SPEC section 1).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <utility>

#include "gpuplan/error.hpp"
#include "ingest/readers.hpp"

namespace gpuplan {

namespace {
constexpr std::array<std::pair<InputFormat, std::string_view>, 8> format_names{{
    {InputFormat::label, "label"},
    {InputFormat::label_kind, "label_kind"},
    {InputFormat::xml, "xml"},
    {InputFormat::streamed_jsonproto, "streamed_jsonproto"},
    {InputFormat::jsonproto, "jsonproto"},
    {InputFormat::cquery_label, "cquery_label"},
    {InputFormat::cquery_label_kind, "cquery_label_kind"},
    {InputFormat::cquery_jsonproto, "cquery_jsonproto"},
}};
}  // namespace

std::optional<InputFormat> parse_input_format(std::string_view name) {
  for (const auto& [format, format_name] : format_names)
    if (format_name == name) return format;
  return std::nullopt;
}

std::string_view to_string(InputFormat format) {
  for (const auto& [known, name] : format_names)
    if (known == format) return name;
  return "unknown";
}

namespace ingest {

namespace {

/// How much of the input detection looks at.
constexpr std::size_t head_size = std::size_t{64} * 1024;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/// The length of the valid UTF-8 sequence at the start of `text`, 0 if it is not one.
/// A sequence cut off by the end of `text` counts as valid (the head may end inside it).
std::size_t utf8_length(std::string_view text) {
  auto byte = static_cast<unsigned char>(text[0]);
  std::size_t length = byte < 0x80                   ? 1
                       : byte >= 0xc2 && byte < 0xe0 ? 2
                       : byte >= 0xe0 && byte < 0xf0 ? 3
                       : byte >= 0xf0 && byte < 0xf5 ? 4
                                                     : 0;
  for (std::size_t i = 1; i < length && i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xc0) != 0x80) return 0;
  return length;
}

/// Throws if the head of the input is not text: a NUL or another control byte, or bytes
/// that are not UTF-8 (Bazel writes UTF-8).
void require_text(std::string_view head, const std::string& name) {
  long line = 1;
  long column = 1;
  for (std::size_t i = 0; i < head.size(); ++column) {
    auto byte = static_cast<unsigned char>(head[i]);
    std::size_t length = byte < 0x20 && !is_space(head[i]) ? 0 : utf8_length(head.substr(i));
    if (length == 0)
      throw InputError(
          Position{name, line, column},
          byte == 0x1b ? fmt::format("a terminal colour escape (byte 0x1b){}", bazel_log_hint(head.substr(i)))
                       : fmt::format("binary input (byte 0x{:02x}); Bazel's query output is text", byte));
    if (head[i] == '\n') {
      ++line;
      column = 0;
    }
    i += length;
  }
}

/// For a head starting with '{': a cquery result, one object a line, or pretty-printed objects.
InputFormat detect_json(std::string_view head) {
  std::size_t key = head.find_first_not_of(" \t\r\n", 1);
  if (key != std::string_view::npos &&
      (head.substr(key).starts_with("\"results\"") || head.substr(key).starts_with("\"configurations\"")))
    return InputFormat::cquery_jsonproto;
  return is_space(head[1]) ? InputFormat::jsonproto : InputFormat::streamed_jsonproto;
}

}  // namespace

/// Bazel's id is at least 7 hex digits: a test named "bench (a100)" is a query label, not
/// "//p:bench" in a100.
bool has_configuration(std::string_view line) {
  while (!line.empty() && is_space(line.back())) line.remove_suffix(1);
  if (!line.ends_with(')')) return false;
  std::size_t open = line.rfind(" (");
  if (open == std::string_view::npos) return false;
  std::string_view id = line.substr(open + 2, line.size() - open - 3);
  if (id == "null") return true;
  return id.size() >= 7 && id.find_first_not_of("0123456789abcdef") == std::string_view::npos;
}

std::string bazel_log_hint(std::string_view line) {
  for (std::string_view start : {"INFO: ", "WARNING: ", "DEBUG: ", "ERROR: ", "Loading: ", "Analyzing: ",
                                 "Starting local Bazel server", "Extracting Bazel installation", "\x1b["})
    if (line.starts_with(start))
      return "; this is Bazel's log, which it writes to standard error: redirect only its standard output "
             "(no 2>&1, and --color=no where a terminal is faked)";
  return "";
}

bool is_blank(Source& source) {
  for (std::size_t size = 4096;; size *= 2) {
    std::string_view head = source.peek(size);
    if (head.find_first_not_of(" \t\r\n") != std::string_view::npos) return false;
    if (head.size() < size) return true;
  }
}

namespace {

/// Whether `head` starts as Bazel's binary protocol buffer output: `--output=proto`'s QueryResult
/// (field 1, a Target: `0a LEN 08 KIND`), cquery's CqueryResult (field 1, a ConfiguredTarget whose
/// field 1 is the Target: `0a LEN 0a LEN 08 KIND`) or `--output=streamed_proto`'s Targets, each after
/// its length (`LEN 08 KIND`); KIND a Target's type (1 RULE to 5 ENVIRONMENT_GROUP, build.proto).
/// None of it is text (08 is a control byte), so no text input is taken for it.
bool is_bazel_proto(std::string_view head) {
  std::size_t i = 0;
  auto skip_varint = [&] {
    for (std::size_t n = 0; i < head.size() && n < 10; ++n)
      if ((static_cast<unsigned char>(head[i++]) & 0x80) == 0) return true;
    return false;
  };
  auto target_here = [&] {
    return i + 1 < head.size() && head[i] == 0x08 && head[i + 1] >= 1 && head[i + 1] <= 5;
  };
  if (skip_varint() && target_here()) return true;  // streamed_proto
  i = 0;
  if (head.empty() || head[i++] != 0x0a || !skip_varint()) return false;
  if (target_here()) return true;                                                 // query's proto
  return i < head.size() && head[i++] == 0x0a && skip_varint() && target_here();  // cquery's
}

}  // namespace

InputFormat detect_format(Source& source) {
  std::string_view head = source.peek(head_size);
  if (is_bazel_proto(head))
    throw InputError(Position{source.name()},
                     "this is Bazel's binary protocol buffer output (--output=proto, or streamed_proto), "
                     "which gpuplan does not read: query again with --output=streamed_jsonproto or "
                     "--output=xml (cquery: --output=jsonproto)");
  require_text(head, source.name());
  std::size_t start = head.find_first_not_of(" \t\r\n");
  head.remove_prefix(start);
  if (head.starts_with('<')) return InputFormat::xml;
  if (head.starts_with('{') && head.size() > 1) return detect_json(head);
  std::string_view line = head.substr(0, head.find('\n'));
  if (line.starts_with("//") || line.starts_with('@'))
    return has_configuration(line) ? InputFormat::cquery_label : InputFormat::label;
  std::size_t label = line.find(" //") != std::string_view::npos ? line.find(" //") : line.find(" @");
  if (label != std::string_view::npos && label > 0)
    return has_configuration(line) ? InputFormat::cquery_label_kind : InputFormat::label_kind;
  std::string_view blank = source.peek(start);
  long line_number = 1 + static_cast<long>(std::count(blank.begin(), blank.end(), '\n'));
  throw InputError(
      Position{source.name(), line_number},
      fmt::format("unknown input format: \"{}\" is not how any of Bazel's query outputs "
                  "starts (label, label_kind, xml, streamed_jsonproto, jsonproto, cquery){}",
                  line.substr(0, 40),
                  bazel_log_hint(line).empty() ? "; choose one with --input-format" : bazel_log_hint(line)));
}

}  // namespace ingest
}  // namespace gpuplan
