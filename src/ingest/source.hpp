#pragma once
// The bytes of one input, read in chunks: what every reader in ingest consumes.
#include <cstddef>
#include <istream>
#include <memory>
#include <string>
#include <string_view>

namespace gpuplan::ingest {

/// An input stream with a look-ahead: detection peeks at the first bytes, and the
/// reader chosen then reads them again from the start.
class Source {
 public:
  Source(std::istream& in, std::string name) : in_(in), name_(std::move(name)) {}

  /// Up to `n` bytes from the start of the input, without consuming them.
  std::string_view peek(std::size_t n);
  /// Copies up to `n` bytes into `out`; 0 only at the end of the input.
  std::size_t read(char* out, std::size_t n);
  const std::string& name() const { return name_; }

 private:
  void fill_ahead(std::size_t n);
  /// A UTF-8 byte order mark (an editor's, or PowerShell's `>`) is no part of the text: left
  /// in, it was the first label_kind test's rule class ("\ufeffpy_test"), which no rule matched.
  void skip_byte_order_mark();

  std::istream& in_;
  std::string name_;
  std::string ahead_;
  std::size_t ahead_used_ = 0;
  bool started_ = false;
};

/// Splits a Source into lines of at most `max_length` bytes. A longer line is an
/// InputError at its line number, found after reading at most `max_length` bytes of
/// it, so a 100 MB line never sits in memory. Each line handed out is followed by
/// `padding` readable bytes (simdjson reads past the end of what it parses).
class LineReader {
 public:
  LineReader(Source& source, std::size_t max_length, std::size_t padding = 0);

  /// The next line, without its "\n" or "\r\n"; false at the end of the input.
  /// The view stays valid until the next call.
  bool next(std::string_view& line);
  /// The number of the line `next` last returned, from 1.
  long line_number() const { return line_number_; }
  /// How many bytes from the start of `line` may be read: its length plus at least `padding`.
  std::size_t readable_from(std::string_view line) const;

 private:
  bool fill();

  Source& source_;
  std::size_t max_length_;
  std::size_t padding_;
  std::unique_ptr<char[]> buffer_;
  std::size_t capacity_ = 0;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  bool at_end_ = false;
  long line_number_ = 0;
};

}  // namespace gpuplan::ingest
