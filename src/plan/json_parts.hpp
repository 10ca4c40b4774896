#pragma once
// Pieces of the plan JSON that other documents repeat (`classify --json` writes each test's
// requirements as the plan does), written straight into a streaming writer.
#include "gpuplan/requirements.hpp"
#include "util/json_writer.hpp"

namespace gpuplan {

/// {"gpus": 2, "gpu_mem_mib": 40960, "cuda": ">=12.4", ...}: requirements_to_json, streamed.
void write_requirements(util::JsonWriter& out, const Requirement& requirement);

}  // namespace gpuplan
