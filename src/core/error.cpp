#include "gpuplan/error.hpp"

#include <fmt/format.h>

namespace gpuplan {

std::string Position::str() const {
  std::string text = file.empty() ? "<input>" : file;
  if (line > 0) text += fmt::format(":{}", line);
  if (line > 0 && column > 0) text += fmt::format(":{}", column);
  return text;
}

InputError::InputError(Position position, const std::string& message)
    : std::runtime_error(position.str() + ": " + message),
      position_(std::move(position)),
      message_(message) {}

}  // namespace gpuplan
