#pragma once
// The only place that opens files, writes output and looks at the terminal.
#include <istream>
#include <memory>
#include <string>
#include <string_view>

namespace gpuplan::cli {

/// A named input: a file, or standard input for "" and "-" (named "<stdin>").
struct Input {
  std::unique_ptr<std::istream> owned;
  std::istream* stream = nullptr;
  std::string name;
  std::istream& in() { return *stream; }
};

/// Opens `path` for reading; throws InputError naming it when it cannot be read.
Input open_input(const std::string& path);

/// Reads a whole (small) input: fleet, rules, plan files.
std::string read_all(Input& input);

/// Writes `content` to standard output ("" or "-") or to `path` atomically: a temporary
/// file beside it, renamed over it only once complete, so an error never leaves half a file.
void write_output(const std::string& path, std::string_view content);

struct Terminal {
  int width = 80;      ///< COLUMNS, else the terminal's width, else 80
  bool color = false;  ///< a terminal, NO_COLOR unset, TERM not "dumb"
};
Terminal terminal_for(int fd);

}  // namespace gpuplan::cli
