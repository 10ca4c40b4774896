// Which history format a file is, from its first bytes.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "gpuplan/history.hpp"
#include "util/text.hpp"

namespace gpuplan {

std::string_view to_string(HistoryFormat format) {
  switch (format) {
    case HistoryFormat::bep: return "bep";
    case HistoryFormat::junit: return "junit";
    case HistoryFormat::csv: return "csv";
    case HistoryFormat::json: return "json";
  }
  return "csv";
}

namespace {

std::string_view skip_space(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  return text;
}

}  // namespace

HistoryFormat detect_history_format(std::string_view head) {
  util::strip_prefix(head, "\xEF\xBB\xBF");  // a UTF-8 byte order mark
  head = skip_space(head);
  if (head.starts_with('<')) return HistoryFormat::junit;
  if (head.starts_with('[')) return HistoryFormat::json;
  if (head.starts_with('{')) {
    // Every BEP event starts with its id, as Bazel writes proto fields in field order.
    // A Build Event Service journal wraps each one in an envelope: {"orderedBuildEvent": ...}.
    auto key = skip_space(head.substr(1));
    for (std::string_view bes : {"\"id\"", "\"orderedBuildEvent\"", "\"streamId\"", "\"sequenceNumber\""})
      if (key.starts_with(bes)) return HistoryFormat::bep;
    return HistoryFormat::json;
  }
  return HistoryFormat::csv;
}

std::string history_head_problem(std::string_view head) {
  std::string_view text = head;
  util::strip_prefix(text, "\xEF\xBB\xBF");
  text = skip_space(text);
  auto first_key = [](std::string_view object) { return skip_space(object.substr(1)); };
  auto is_event = [](std::string_view key) {
    return key.starts_with("\"id\"") || key.starts_with("\"orderedBuildEvent\"");
  };
  // Build events and JSON rows are one object a line; `jq .` spreads each over lines (a summary
  // of `history summarize` is one document, and starts so too).
  if (text.starts_with('{') &&
      text.substr(1, text.find('\n') - 1).find_first_not_of(" \t\r") == std::string_view::npos &&
      !first_key(text).starts_with("\"gpuplan_history\""))
    return "a JSON object spread over lines (pretty-printed, as `jq .` writes it): build events and JSON "
           "rows are read one object a line; write them with `jq -c .`";
  if (text.starts_with('[') && skip_space(text.substr(1)).starts_with('{') &&
      is_event(first_key(skip_space(text.substr(1)))))
    return "a JSON array of build events (as `jq -s` writes them): Bazel's --build_event_json_file has one "
           "event a line; write them so with `jq -c '.[]'`";
  // UTF-16 (PowerShell 5's `>` and Out-File write it, with its byte order mark): every other byte
  // NUL, which read as binary data and a suggestion to use the file gpuplan had been given.
  auto ascii = [&](std::size_t at) {
    return at < head.size() && head[at] != '\0' && static_cast<unsigned char>(head[at]) < 0x80;
  };
  if (head.starts_with("\xFF\xFE") || head.starts_with("\xFE\xFF") ||
      (head.size() >= 4 && ((ascii(0) && head[1] == '\0' && ascii(2) && head[3] == '\0') ||
                            (head[0] == '\0' && ascii(1) && head[2] == '\0' && ascii(3)))))
    return "UTF-16 text (as PowerShell's > and Out-File write it); gpuplan reads UTF-8: convert it first "
           "(iconv -f UTF-16 -t UTF-8 FILE > FILE.utf8, or Out-File -Encoding utf8)";
  auto binary = std::find_if(head.begin(), head.end(), [](char c) {
    auto byte = static_cast<unsigned char>(c);
    return (byte < 0x20 && !std::isspace(byte)) || byte == 0x7f;
  });
  if (binary == head.end()) return {};
  if (head.starts_with("\x1f\x8b"))
    return "gzip-compressed data: decompress it first (in bash: --history <(zcat FILE))";
  if (head.starts_with("PK\x03\x04")) return "a zip archive: unpack it first";
  if (*binary == '\0' && head.starts_with("label,")) {  // a results file whose end was never written
    auto before = std::string_view(head.begin(), binary);
    return fmt::format(
        "a results file with NUL bytes from line {} on: its end was never written (a machine that lost "
        "power or a full disk leaves zeros); cut it after its last whole record (in bash: "
        "truncate -s {} FILE)",
        1 + std::count(before.begin(), before.end(), '\n'), before.rfind('\n') + 1);
  }
  return fmt::format(
      "binary data (byte 0x{:02x} at offset {}), not a history format gpuplan reads; for Bazel's "
      "--build_event_binary_file, give the file of --build_event_json_file instead (or the bazel-testlogs "
      "directory)",
      static_cast<unsigned char>(*binary), binary - head.begin());
}

}  // namespace gpuplan
