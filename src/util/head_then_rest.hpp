#pragma once
// A stream's first bytes, already read, then the rest of it: what a stream holds is told from its
// head without rewinding it, which standard input, a named pipe and bash's `<(zcat FILE)` cannot
// do (a rewind there failed, and the file read as empty).
#include <cstddef>
#include <streambuf>
#include <string>
#include <utility>

namespace gpuplan::util {

class HeadThenRest : public std::streambuf {
 public:
  HeadThenRest(std::string head, std::streambuf& rest) : head_(std::move(head)), rest_(rest) {
    setg(head_.data(), head_.data(), head_.data() + head_.size());
  }

 protected:
  int_type underflow() override {
    auto got = rest_.sgetn(buffer_, sizeof buffer_);
    if (got <= 0) return traits_type::eof();
    setg(buffer_, buffer_, buffer_ + got);
    return traits_type::to_int_type(buffer_[0]);
  }

 private:
  std::string head_;
  std::streambuf& rest_;
  char buffer_[std::size_t{1} << 16];
};

}  // namespace gpuplan::util
