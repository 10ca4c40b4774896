#pragma once
// What every fuzz target shares. A reader may answer any input with a result or an
// InputError (exit 2); anything else that escapes (another exception, a crash, a sanitizer
// report, a hang) is a finding. Results are dumped as the commands' JSON would be, so text
// that JSON cannot carry (bytes that are not UTF-8) is a finding too.
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "gpuplan/error.hpp"
#include "gpuplan/target.hpp"

namespace gpuplan::fuzz {

/// The reader a target of a shared harness (ingest_fuzz.cpp, history_fuzz.cpp) fuzzes, from its
/// name: "xml" for fuzz_ingest_xml. The harness compiles once; chosen.cpp, compiled for each
/// target with GPUPLAN_FUZZ_CHOSEN, says which.
std::string_view chosen_reader();

/// The fuzzer's bytes as a string.
inline std::string text(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

/// Runs `read`; an InputError is the expected answer to bad input.
template <class Read>
int expect_input_errors(Read&& read) {
  try {
    read();
  } catch (const InputError& error) {
    if (error.position().file.empty()) __builtin_trap();  // every error names its file
  }
  return 0;
}

/// The targets as `targets --json` would carry them: every string must be UTF-8.
inline void dump_targets(const TargetList& targets) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& target : targets.tests) {
    nlohmann::json tags = nlohmann::json::array();
    for (const auto& tag : target.tags) tags.push_back(tag.str());
    nlohmann::json properties = nlohmann::json::object();
    for (const auto& [key, value] : target.exec_properties) properties[key] = value;
    out.push_back({{"label", target.label},
                   {"rule_class", target.rule_class.str()},
                   {"tags", tags},
                   {"size", target.size.str()},
                   {"timeout", target.timeout.str()},
                   {"shard_count", target.shard_count},
                   {"exec_properties", properties},
                   {"generator_function", target.generator_function.str()},
                   {"location", target.location},
                   {"configuration", target.configuration.str()}});
  }
  (void)out.dump();
}

/// Splits the input at the first line "----" (for targets that read two texts).
inline std::pair<std::string, std::string> split_two(std::string all) {
  std::size_t at = all.find("\n----\n");
  if (at == std::string::npos) return {all, {}};
  return {all.substr(0, at + 1), all.substr(at + 6)};
}

}  // namespace gpuplan::fuzz
