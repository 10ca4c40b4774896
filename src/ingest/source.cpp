#include "ingest/source.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "gpuplan/error.hpp"

namespace gpuplan::ingest {

namespace {
constexpr std::size_t chunk_size = 1 << 20;
}

void Source::fill_ahead(std::size_t n) {
  while (ahead_.size() < n && in_) {
    std::size_t old = ahead_.size();
    ahead_.resize(n);
    in_.read(ahead_.data() + old, static_cast<std::streamsize>(n - old));
    ahead_.resize(old + static_cast<std::size_t>(in_.gcount()));
  }
}

void Source::skip_byte_order_mark() {
  if (started_) return;
  started_ = true;
  fill_ahead(3);
  if (ahead_.starts_with("\xef\xbb\xbf")) ahead_.erase(0, 3);
}

std::string_view Source::peek(std::size_t n) {
  skip_byte_order_mark();
  fill_ahead(n);
  return std::string_view(ahead_).substr(0, n);
}

std::size_t Source::read(char* out, std::size_t n) {
  skip_byte_order_mark();
  if (ahead_used_ < ahead_.size()) {
    std::size_t count = std::min(n, ahead_.size() - ahead_used_);
    std::memcpy(out, ahead_.data() + ahead_used_, count);
    ahead_used_ += count;
    if (ahead_used_ == ahead_.size()) {
      ahead_.clear();
      ahead_.shrink_to_fit();
      ahead_used_ = 0;
    }
    return count;
  }
  if (!in_) return 0;
  in_.read(out, static_cast<std::streamsize>(n));
  return static_cast<std::size_t>(in_.gcount());
}

LineReader::LineReader(Source& source, std::size_t max_length, std::size_t padding)
    : source_(source), max_length_(max_length), padding_(padding) {}

bool LineReader::fill() {
  if (begin_ > 0) {
    std::memmove(buffer_.get(), buffer_.get() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  std::size_t wanted = std::min(end_ + chunk_size, max_length_ + 2) + padding_;
  if (wanted > capacity_) {
    std::size_t grown = std::max(wanted, std::min(capacity_ * 2, max_length_ + 2 + padding_));
    auto bigger = std::make_unique_for_overwrite<char[]>(grown);
    if (end_ > 0) std::memcpy(bigger.get(), buffer_.get(), end_);
    buffer_ = std::move(bigger);
    capacity_ = grown;
  }
  std::size_t count = source_.read(buffer_.get() + end_, capacity_ - padding_ - end_);
  end_ += count;
  return count > 0;
}

bool LineReader::next(std::string_view& line) {
  std::size_t scanned = 0;  // bytes after begin_ already known to hold no newline
  for (;;) {
    const char* start = buffer_.get() + begin_;
    std::size_t available = end_ - begin_;
    const void* newline =
        available > scanned ? std::memchr(start + scanned, '\n', available - scanned) : nullptr;
    std::size_t length =
        newline ? static_cast<std::size_t>(static_cast<const char*>(newline) - start) : available;
    if (length > max_length_) {
      ++line_number_;
      throw InputError(Position{source_.name(), line_number_},
                       fmt::format("a line longer than {} MiB: this is not what Bazel prints in this format",
                                   max_length_ >> 20));
    }
    if (!newline && !at_end_) {
      // fill() may move or replace the buffer: look again from the top, `start` is stale.
      scanned = available;
      if (!fill()) at_end_ = true;
      continue;
    }
    if (!newline && available == 0) return false;
    ++line_number_;
    begin_ += newline ? length + 1 : length;
    if (length > 0 && start[length - 1] == '\r') --length;
    line = std::string_view(start, length);
    return true;
  }
}

std::size_t LineReader::readable_from(std::string_view line) const {
  return static_cast<std::size_t>(buffer_.get() + capacity_ - line.data());
}

}  // namespace gpuplan::ingest
