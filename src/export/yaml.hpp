#pragma once
// JSON values written as block-style YAML, for the manifests and pipelines the exports write.
#include <nlohmann/json.hpp>
#include <string>

namespace gpuplan {

/// `value` as YAML that parses back to the same JSON: block mappings and sequences, strings
/// plain where YAML cannot misread them, else double-quoted as JSON quotes them (a valid YAML
/// scalar), multi-line text as a literal block. Key order is kept, so output is deterministic.
std::string to_yaml(const nlohmann::ordered_json& value);

}  // namespace gpuplan
