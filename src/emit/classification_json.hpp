#pragma once
// The pieces of the JSON `classify --json` and `explain --json` print.
#include <nlohmann/json.hpp>

#include "gpuplan/classify.hpp"
#include "util/json_writer.hpp"

namespace gpuplan::emit {

/// A test: label, bucket, reason, rule class, size, shards, requirements and where each came
/// from ({"gpus": "tag gpu:2", "cuda": ["tag cuda>=12.4"], ...}).
void write_test(util::JsonWriter& out, const ClassifiedTest& test);
nlohmann::ordered_json test_to_json(const ClassifiedTest& test);

/// The diagnostics as `write_diagnostics` (plan/json_parts.hpp) streams them.
nlohmann::ordered_json diagnostics_to_json(const Diagnostics& diagnostics);

}  // namespace gpuplan::emit
