#include "export/yaml.hpp"

#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace gpuplan;
using Json = nlohmann::ordered_json;

namespace {
/// YAML back to JSON the way a YAML 1.2 core-schema reader types plain scalars.
Json back(const YAML::Node& node) {
  if (node.IsMap()) {
    Json out = Json::object();
    for (const auto& kv : node) out[kv.first.as<std::string>()] = back(kv.second);
    return out;
  }
  if (node.IsSequence()) {
    Json out = Json::array();
    for (const auto& item : node) out.push_back(back(item));
    return out;
  }
  if (node.IsNull()) return nullptr;
  auto text = node.Scalar();
  if (node.Tag() == "!") return text;  // quoted or a literal block: always a string
  if (text == "true" || text == "false") return text == "true";
  try {
    std::size_t used = 0;
    long long n = std::stoll(text, &used);
    if (used == text.size()) return n;
    double d = std::stod(text, &used);
    if (used == text.size()) return d;
  } catch (const std::exception&) {
  }
  return text;
}
}  // namespace

TEST_CASE("YAML written for a manifest reads back as the same JSON") {
  Json value = Json::parse(R"({
    "apiVersion": "batch/v1", "on": "yes", "n": 3, "x": 1.5, "t": true, "none": null,
    "tricky": ["true", "no", "0123", "-1", "a: b", "#c", "- d", "", " lead", "x'y\"z", "@h", "$V", "ü"],
    "empty_map": {}, "empty_list": [], "nested": [[1, 2], {"k": {"deep": [{"a": 1, "b": [3]}]}}],
    "text": "{\n \"plan\": 1\n}\n", "no_newline": "a\nb", "labels": {"kubernetes.io/hostname": "h100-0"}
  })");
  auto yaml = to_yaml(value);
  CHECK(back(YAML::Load(yaml)) == value);
}

TEST_CASE("YAML 1.1's one-letter booleans are quoted, as kubectl's go-yaml v2 reads them") {
  // A node named y: kubernetes.io/hostname: y was the boolean true to kubectl, and the Job was refused.
  for (std::string word : {"y", "Y", "n", "N"})
    CHECK(to_yaml(Json::object({{"k", word}})) == "k: \"" + word + "\"\n");
  CHECK(to_yaml(Json::object({{"k", "yy"}})) == "k: yy\n");
}

TEST_CASE("multi-line text becomes a literal block, readable as it is") {
  auto yaml = to_yaml(Json::object({{"plan.json", "{\n \"a\": 1\n}\n"}}));
  CHECK(yaml == "plan.json: |\n  {\n   \"a\": 1\n  }\n");
}
