#pragma once
// Reading test inputs from strings and from the fixtures under test/data/.
#include <fstream>
#include <sstream>
#include <string>

#include "gpuplan/ingest.hpp"

namespace gpuplan::testing {

inline TargetList read_text(const std::string& text, std::optional<InputFormat> format = std::nullopt) {
  std::istringstream in(text);
  return read_targets(in, "input", format);
}

inline TargetList read_fixture(const std::string& path, std::optional<InputFormat> format = std::nullopt) {
  std::ifstream in(std::string(GPUPLAN_SOURCE_DIR) + "/test/data/" + path, std::ios::binary);
  if (!in) throw std::runtime_error("missing fixture " + path);
  return read_targets(in, path, format);
}

inline const Target& find(const TargetList& list, std::string_view label) {
  for (const Target& target : list.tests)
    if (target.label == label) return target;
  throw std::runtime_error("no test " + std::string(label));
}

}  // namespace gpuplan::testing
