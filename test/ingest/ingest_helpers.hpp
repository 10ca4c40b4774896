#pragma once
// Reading test inputs from strings and from the fixtures under test/data/, and what the readers
// say of a test.
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

/// A file of the source tree, whole ("" when it is missing).
inline std::string source_file(const std::string& path) {
  std::string file = GPUPLAN_SOURCE_DIR;
  file += '/';
  file += path;  // not one `+` chain: GCC 12 warns of its inlined copy (-Warray-bounds)
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// What the readers say of a test, every field classification reads.
inline std::string said(const gpuplan::Target& t) {
  std::string out = t.label + "|" + std::string(t.rule_class) + "|" + std::string(t.size) + "|" +
                    std::string(t.timeout) + "|" + std::to_string(t.shard_count) + "|" +
                    std::to_string(t.shard_count_unresolved) + std::to_string(t.flaky) +
                    std::to_string(t.has_attributes) + "|" + std::string(t.generator_function) + "|";
  for (const auto& tag : t.tags) out += std::string(tag) + ",";
  for (const auto& c : t.constraints) out += std::string(c.label) + (c.exec ? "e," : ",");
  out += t.selected_exec_properties ? "selected" : "";
  return out;
}

inline const Target& find(const TargetList& list, std::string_view label) {
  for (const Target& target : list.tests)
    if (target.label == label) return target;
  throw std::runtime_error("no test " + std::string(label));
}

}  // namespace gpuplan::testing
