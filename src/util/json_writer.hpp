#pragma once
// JSON written as it is produced, byte for byte as nlohmann's dump(2) (or dump()) writes the
// same document, so that a document of a million entries never exists as a tree in memory.
#include <fmt/format.h>

#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace gpuplan::util {

/// Receives the text in pieces, in order; it may throw (a full disk) to stop the writer.
using TextSink = std::function<void(std::string_view)>;

/// A streaming JSON writer: containers are opened and closed, keys and values written in
/// order. Nothing is kept but the open containers and a buffer of about 64 KiB handed to the
/// sink when full and on flush(). Strings must be UTF-8; other bytes are an error (the same
/// rule as nlohmann's dump), thrown as std::invalid_argument naming the string.
class JsonWriter {
 public:
  /// indent: spaces per level as dump(indent); -1 writes compact JSON as dump() does.
  /// depth: the level the document starts at, for a value that another writer's text at
  /// that depth() will take as it is (value_text).
  explicit JsonWriter(TextSink sink, int indent = 2, std::size_t depth = 0);
  JsonWriter(const JsonWriter&) = delete;
  JsonWriter& operator=(const JsonWriter&) = delete;
  ~JsonWriter() = default;

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  /// The next member's key; inside an object every value must follow a key.
  JsonWriter& key(std::string_view name);
  /// The same for a key written in the code ("node"): plain ASCII that needs no escaping, so it
  /// is copied as it is (a plan writes two dozen keys a unit). Not for text from input.
  template <std::size_t N>
  JsonWriter& key(const char (&literal)[N]) {
    return plain_key(std::string_view(literal, N - 1));
  }

  void value(std::string_view text);
  void value(const char* text) { value(std::string_view(text)); }
  void value(const std::string& text) { value(std::string_view(text)); }
  void value(bool flag);
  void value(std::int64_t number);
  void value(int number) { value(static_cast<std::int64_t>(number)); }
  void value(long long number) { value(static_cast<std::int64_t>(number)); }
  void value(std::size_t number);
  /// As nlohmann writes a double: the shortest text that reads back the same, "2.0" for two,
  /// null when not finite.
  void value(double number);
  void null();
  /// A small document made with nlohmann, written at the current depth.
  void value(const nlohmann::ordered_json& document);

  /// Raw text the caller has already formatted (a newline after the document, say).
  void raw(std::string_view text);
  /// A value another JsonWriter wrote, with this one's indent, starting at this one's depth().
  void value_text(std::string_view json);
  /// How deep the next value stands: the depth the writer started at and the containers open.
  std::size_t depth() const { return base_depth_ + empty_.size(); }
  int indent() const { return indent_; }
  /// Hands everything written so far to the sink.
  void flush();
  /// How many bytes have been written so far, handed to the sink or not.
  std::uint64_t written() const { return handed_ + buffer_.size(); }

 private:
  void before_value();
  void newline_and_indent(std::size_t depth);
  void escaped(std::string_view text);
  JsonWriter& plain_key(std::string_view name);
  void spill();
  // fmt's buffer, not std::string: its appends are inlined, std::string's are calls into
  // libstdc++ (extern templates), a few dozen per record of a million-unit plan.
  void put(char c) { buffer_.push_back(c); }
  void put(std::string_view text) { buffer_.append(text.data(), text.data() + text.size()); }

  TextSink sink_;
  int indent_;
  std::size_t base_depth_;
  fmt::memory_buffer buffer_;
  std::uint64_t handed_ = 0;  ///< bytes handed to the sink
  /// One entry per open container: whether it has no member yet.
  std::vector<bool> empty_;
  bool after_key_ = false;
};

/// How many bytes `text` takes inside a JSON string as JsonWriter (and nlohmann's dump) writes
/// it, the quotes not counted; counted by the writer's own escaping, so the two cannot differ.
/// Throws std::invalid_argument for text that is not UTF-8, as the writer does.
std::size_t escaped_size(std::string_view text);

/// JSON text with its whitespace outside strings dropped: the text of an indented writer (or of
/// nlohmann's dump(2)) turned into what a writer with indent -1 (dump()) writes for the same
/// document, byte for byte, without the document being parsed again.
std::string compact(std::string_view json);

}  // namespace gpuplan::util
