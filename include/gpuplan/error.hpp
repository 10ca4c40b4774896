#pragma once
// Errors in what users write or pipe in, with the position that explains them.
#include <stdexcept>
#include <string>

namespace gpuplan {

/// The documented exit codes (README, "Exit codes"); the CLI maps outcomes to them in one place.
enum ExitCode : int {
  exit_ok = 0,
  exit_internal = 1,
  exit_bad_input = 2,
  exit_unschedulable = 3,
  exit_invalid_plan = 4,
};

/// Where in an input something was found. A line or column of 0 means "not known".
struct Position {
  std::string file;
  long line = 0;
  long column = 0;

  /// "file:line:col", leaving out the parts that are unknown.
  std::string str() const;
};

/// Bad input: the CLI prints what() ("file:line:col: message") and exits 2.
class InputError : public std::runtime_error {
 public:
  InputError(Position position, const std::string& message);
  const Position& position() const { return position_; }
  const std::string& message() const { return message_; }

 private:
  Position position_;
  std::string message_;
};

}  // namespace gpuplan
