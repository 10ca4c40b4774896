#pragma once
// Pieces of the plan JSON that other documents repeat (`classify --json` writes each test's
// requirements as the plan does), written straight into a streaming writer.
#include "gpuplan/diagnostic.hpp"
#include "gpuplan/requirements.hpp"
#include "util/json_writer.hpp"

namespace gpuplan {

/// {"gpus": 2, "gpu_mem_mib": 40960, "cuda": ">=12.4", ...}: the requirement fields as the plan writes them.
void write_requirements(util::JsonWriter& out, const Requirement& requirement);

/// [{"severity", "label", "source", "message"}, ...]: the plan's diagnostics, and those of
/// `classify --json` and `explain --json`.
void write_diagnostics(util::JsonWriter& out, const Diagnostics& diagnostics);

}  // namespace gpuplan
