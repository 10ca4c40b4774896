#pragma once
// Reading the history fixtures in test/data/history (see the README there for how they were made).
#include <fstream>
#include <sstream>
#include <string>

#include "gpuplan/history.hpp"

namespace gpuplan::test {

inline std::string history_fixture(const std::string& name) {
  return std::string(GPUPLAN_SOURCE_DIR) + "/test/data/history/" + name;
}

inline HistoryRead read_bep_fixture(const std::string& name) {
  std::ifstream in(history_fixture(name));
  return read_bep(in, name, true);
}

inline HistoryRead read_bep_text(const std::string& text, bool strict) {
  std::istringstream in(text);
  return read_bep(in, "bep.json", strict);
}

inline HistoryRead read_table_text(const std::string& text, bool strict) {
  std::istringstream in(text);
  return read_table(in, "history.csv", strict);
}

}  // namespace gpuplan::test
