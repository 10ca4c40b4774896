#pragma once
// An error about one value of a JSON file read whole, whose line is found only once it is thrown.
#include <string>

#include "gpuplan/error.hpp"

namespace gpuplan {

/// Bad input about one value of a JSON file that was read whole, named by its JSON path
/// ("assignments[3]"): "FILE: PATH: what". A reader keeps no positions, so the CLI looks up the
/// line and column (util::locate_json_path, cli::at_plan_lines) only once such an error is
/// thrown, and throws at().
class JsonValueError : public InputError {
 public:
  JsonValueError(Position position, std::string json_path, std::string what);
  const std::string& json_path() const { return json_path_; }
  /// What is wrong, without the file and path: to say it of another value.
  const std::string& reason() const { return what_; }
  /// The same error at a line and column of its file.
  JsonValueError at(long line, long column) const;

 private:
  std::string json_path_, what_;
};

}  // namespace gpuplan
