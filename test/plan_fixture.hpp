#pragma once
// test/data/plans/example.plan.json, read once for the emit and verify tests.
#include <fstream>
#include <nlohmann/json.hpp>

#include "gpuplan/plan.hpp"

inline gpuplan::Plan example_plan() {
  std::ifstream in(GPUPLAN_SOURCE_DIR "/test/data/plans/example.plan.json");
  return gpuplan::plan_from_json(nlohmann::json::parse(in), "example.plan.json");
}
