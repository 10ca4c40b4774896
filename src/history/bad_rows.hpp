#pragma once
// What a history reader does with a bad row: under --strict it stops the run (exit 2);
// otherwise the row is skipped and the file gets one warning that counts what was skipped.
#include <string>
#include <string_view>

#include "gpuplan/diagnostic.hpp"

namespace gpuplan::history {

class BadRows {
 public:
  BadRows(std::string file, bool strict) : file_(std::move(file)), strict_(strict) {}

  /// Throws InputError("file:line: what") under strict; otherwise remembers the row as skipped.
  void add(long line, std::string_view what);

  /// A finding about the whole file that is no bad row (a newer gpuplan's columns): under strict
  /// throws InputError("file:line: what"); otherwise a warning of its own.
  void warn(long line, std::string_view what);

  /// One warning naming the count and the first bad row, and those of warn().
  Diagnostics diagnostics() const;

 private:
  std::string file_;
  bool strict_;
  long count_ = 0;
  std::string first_;
  Diagnostics warnings_;
};

}  // namespace gpuplan::history
