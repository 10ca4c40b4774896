#include "gpuplan/error.hpp"

#include <fmt/format.h>

#include "gpuplan/json_value_error.hpp"

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

JsonValueError::JsonValueError(Position position, std::string json_path, std::string what)
    : InputError(std::move(position), fmt::format("{}: {}", json_path, what)),
      json_path_(std::move(json_path)),
      what_(std::move(what)) {}

JsonValueError JsonValueError::at(long line, long column) const {
  return {Position{position().file, line, column}, json_path_, what_};
}

}  // namespace gpuplan
