#pragma once
// The JSON forms `classify --json` and `explain --json` print.
#include <nlohmann/json.hpp>

#include "gpuplan/classify.hpp"
#include "util/json_writer.hpp"

namespace gpuplan::cli {

/// A test: label, bucket, reason, rule class, size, shards, requirements and where each came from.
void write_test(util::JsonWriter& out, const ClassifiedTest& test);
nlohmann::ordered_json test_to_json(const ClassifiedTest& test);

/// Where each requirement field came from: {"gpus": "tag gpu:2", "cuda": ["tag cuda>=12.4"], ...}.
void write_sources(util::JsonWriter& out, const Requirement& requirement);
nlohmann::ordered_json sources_to_json(const Requirement& requirement);

void write_diagnostics(util::JsonWriter& out, const Diagnostics& diagnostics);
nlohmann::ordered_json diagnostics_to_json(const Diagnostics& diagnostics);

}  // namespace gpuplan::cli
