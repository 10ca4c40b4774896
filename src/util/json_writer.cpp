#include "util/json_writer.hpp"

#include <fmt/format.h>

#include <array>
#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace gpuplan::util {

namespace {

constexpr std::size_t spill_at = std::size_t{64} * 1024;

/// The length of the well-formed UTF-8 sequence at `text[at]` (RFC 3629: no overlong forms,
/// no surrogates, nothing above U+10FFFF), or 0 when it is not one.
std::size_t utf8_length(std::string_view text, std::size_t at) {
  auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  auto continuation = [&](std::size_t i, unsigned low = 0x80, unsigned high = 0xBF) {
    return i < text.size() && byte(i) >= low && byte(i) <= high;
  };
  unsigned lead = byte(at);
  if (lead >= 0xC2 && lead <= 0xDF) return continuation(at + 1) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    unsigned low = lead == 0xE0 ? 0xA0 : 0x80, high = lead == 0xED ? 0x9F : 0xBF;
    return continuation(at + 1, low, high) && continuation(at + 2) ? 3 : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    unsigned low = lead == 0xF0 ? 0x90 : 0x80, high = lead == 0xF4 ? 0x8F : 0xBF;
    return continuation(at + 1, low, high) && continuation(at + 2) && continuation(at + 3) ? 4 : 0;
  }
  return 0;
}

}  // namespace

JsonWriter::JsonWriter(TextSink sink, int indent, std::size_t depth)
    : sink_(std::move(sink)), indent_(indent), base_depth_(depth) {
  buffer_.reserve(spill_at + 4096);
}

void JsonWriter::newline_and_indent(std::size_t depth) {
  if (indent_ < 0) return;
  // A newline and up to 64 spaces in one append (deeper documents take the spaces one by one).
  static constexpr std::string_view margin =
      "\n                                                                ";
  std::size_t spaces = depth * static_cast<std::size_t>(indent_);
  if (spaces < margin.size()) return put(margin.substr(0, spaces + 1));
  put('\n');
  for (std::size_t i = 0; i < spaces; ++i) put(' ');
}

void JsonWriter::before_value() {
  if (after_key_) {
    after_key_ = false;
    return;
  }
  if (empty_.empty()) return;
  if (!empty_.back()) put(',');
  empty_.back() = false;
  newline_and_indent(depth());
}

void JsonWriter::begin_object() {
  before_value();
  put('{');
  empty_.push_back(true);
}

void JsonWriter::end_object() {
  bool was_empty = empty_.back();
  empty_.pop_back();
  if (!was_empty) newline_and_indent(depth());
  put('}');
  spill();
}

void JsonWriter::begin_array() {
  before_value();
  put('[');
  empty_.push_back(true);
}

void JsonWriter::end_array() {
  bool was_empty = empty_.back();
  empty_.pop_back();
  if (!was_empty) newline_and_indent(depth());
  put(']');
  spill();
}

JsonWriter& JsonWriter::key(std::string_view name) {
  before_value();
  escaped(name);
  put(indent_ < 0 ? ":" : ": ");
  after_key_ = true;
  return *this;
}

JsonWriter& JsonWriter::plain_key(std::string_view name) {
  before_value();
  put('"');
  put(name);
  put(indent_ < 0 ? "\":" : "\": ");
  after_key_ = true;
  return *this;
}

void JsonWriter::value(std::string_view text) {
  before_value();
  escaped(text);
}

void JsonWriter::value(bool flag) {
  before_value();
  put(flag ? "true" : "false");
}

void JsonWriter::value(std::int64_t number) {
  before_value();
  fmt::format_int text(number);
  put(std::string_view(text.data(), text.size()));
}

void JsonWriter::value(std::size_t number) {
  before_value();
  fmt::format_int text(number);
  put(std::string_view(text.data(), text.size()));
}

void JsonWriter::value(double number) {
  before_value();
  if (!std::isfinite(number)) {
    put("null");
    return;
  }
  // nlohmann's own conversion (Grisu2 and its %g-like layout), so that the bytes are its bytes.
  std::array<char, 64> digits{};
  char* end = nlohmann::detail::to_chars(digits.data(), digits.data() + digits.size(), number);
  put(std::string_view(digits.data(), static_cast<std::size_t>(end - digits.data())));
}

void JsonWriter::null() {
  before_value();
  put("null");
}

void JsonWriter::value(const nlohmann::ordered_json& document) {
  before_value();
  std::string text = document.dump(indent_);
  if (indent_ < 0 || depth() == 0) {
    put(text);
  } else {
    // dump() indents from the left margin; a JSON text has no raw newline inside a string,
    // so each newline starts a line to indent by the writer's depth.
    std::string margin(depth() * static_cast<std::size_t>(indent_), ' ');
    for (char c : text) {
      put(c);
      if (c == '\n') put(margin);
    }
  }
  spill();
}

void JsonWriter::value_text(std::string_view json) {
  before_value();
  raw(json);
}

void JsonWriter::raw(std::string_view text) {
  put(text);
  spill();
}

namespace {

/// Whether any of the 8 bytes of `word` needs more than copying into a JSON string: a control
/// character, '"', '\\' or a byte of a multi-byte UTF-8 sequence (which is checked). Exact: the
/// zero-byte test ((v - 0x01..) & ~v & 0x80..) is nonzero exactly when v has a zero byte.
bool needs_care(std::uint64_t word) {
  constexpr std::uint64_t ones = 0x0101010101010101, highs = 0x8080808080808080;
  auto has_zero = [](std::uint64_t v) { return ((v - ones) & ~v & highs) != 0; };
  bool high = (word & highs) != 0;
  bool control = ((word - 0x20 * ones) & ~word & highs) != 0;  // a byte below 0x20, just as exact
  return high || control || has_zero(word ^ ('"' * ones)) || has_zero(word ^ ('\\' * ones));
}

/// `text` as JSON writes it inside a string, handed to `put` in pieces: runs copied as they are
/// and the escape sequences between them. The one escaping routine: the writer's strings and
/// escaped_size both come from it, so the two cannot differ.
template <class Put>
void escape(std::string_view text, Put&& put) {
  static constexpr char hex[] = "0123456789abcdef";
  std::size_t plain_from = 0;
  for (std::size_t i = 0; i < text.size();) {
    // Eight plain bytes at a time (labels, keys and names are plain ASCII almost always).
    if (i + 8 <= text.size()) {
      std::uint64_t word = 0;
      std::memcpy(&word, text.data() + i, 8);
      if (!needs_care(word)) {
        i += 8;
        continue;
      }
    }
    auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
      ++i;
      continue;
    }
    if (c >= 0x80) {
      std::size_t length = utf8_length(text, i);
      if (length == 0)
        throw std::invalid_argument(
            fmt::format("invalid UTF-8 byte 0x{:02X} at offset {} of \"{}\"", c, i, text.substr(0, i)));
      i += length;
      continue;
    }
    put(std::string_view(text.data() + plain_from, i - plain_from));
    switch (c) {
      case '"': put("\\\""); break;
      case '\\': put("\\\\"); break;
      case '\b': put("\\b"); break;
      case '\f': put("\\f"); break;
      case '\n': put("\\n"); break;
      case '\r': put("\\r"); break;
      case '\t': put("\\t"); break;
      default: {
        const char sequence[] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 0xF]};
        put(std::string_view(sequence, sizeof sequence));
      }
    }
    plain_from = ++i;
  }
  put(std::string_view(text.data() + plain_from, text.size() - plain_from));
}

}  // namespace

void JsonWriter::escaped(std::string_view text) {
  put('"');
  escape(text, [this](std::string_view piece) { put(piece); });
  put('"');
}

std::size_t escaped_size(std::string_view text) {
  std::size_t size = 0;
  escape(text, [&size](std::string_view piece) { size += piece.size(); });
  return size;
}

std::string compact(std::string_view json) {
  std::string out;
  out.reserve(json.size());
  bool in_string = false, escaped = false;
  for (char c : json) {
    if (in_string) {
      in_string = escaped || c != '"';
      escaped = !escaped && c == '\\';
    } else if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
      continue;
    } else {
      in_string = c == '"';
    }
    out += c;
  }
  return out;
}

void JsonWriter::spill() {
  if (buffer_.size() >= spill_at) flush();
}

void JsonWriter::flush() {
  if (buffer_.size() == 0) return;
  sink_(std::string_view(buffer_.data(), buffer_.size()));
  handed_ += buffer_.size();
  buffer_.clear();
}

}  // namespace gpuplan::util
