#include "cli/io.hpp"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>

#include "core/utf8.hpp"
#include "gpuplan/error.hpp"

namespace gpuplan::cli {

Input open_input(const std::string& path) {
  Input input;
  if (path.empty() || path == "-") {
    input.stream = &std::cin;
    input.name = "<stdin>";
    return input;
  }
  input.name = escape_invalid_utf8(path);  // the name goes into messages and JSON, which need UTF-8
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(Position{input.name}, "is a directory, not a file");
  auto file = std::make_unique<std::ifstream>(path, std::ios::binary);
  if (!*file) throw InputError(Position{input.name}, fmt::format("cannot read: {}", std::strerror(errno)));
  input.stream = file.get();
  input.owned = std::move(file);
  return input;
}

std::string read_all(Input& input) {
  return std::string(std::istreambuf_iterator<char>(input.in()), std::istreambuf_iterator<char>());
}

void write_output(const std::string& path, std::string_view content) {
  if (path.empty() || path == "-") {
    std::cout << content;
    std::cout.flush();
    return;
  }
  namespace fs = std::filesystem;
  fs::path target(path);
  fs::path temporary = target;
  temporary += fmt::format(".tmp.{}", ::getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) throw InputError(Position{path}, fmt::format("cannot write: {}", std::strerror(errno)));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) {
      std::error_code ignored;
      fs::remove(temporary, ignored);
      throw InputError(Position{path}, "cannot write: the disk may be full");
    }
  }
  std::error_code ec;
  fs::rename(temporary, target, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temporary, ignored);
    throw InputError(Position{path}, fmt::format("cannot write: {}", ec.message()));
  }
}

Terminal terminal_for(int fd) {
  Terminal terminal;
  bool tty = ::isatty(fd) != 0;
  const char* no_color = std::getenv("NO_COLOR");
  const char* term = std::getenv("TERM");
  terminal.color = tty && !(no_color && *no_color) && !(term && std::string_view(term) == "dumb");
  if (const char* columns = std::getenv("COLUMNS"); columns && std::atoi(columns) > 0) {
    terminal.width = std::atoi(columns);
  } else if (winsize size{}; tty && ::ioctl(fd, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) {
    terminal.width = size.ws_col;
  }
  return terminal;
}

}  // namespace gpuplan::cli
