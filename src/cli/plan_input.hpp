#pragma once
// Reading a plan file for the commands that take one (show, render, verify).
#include <string>

#include "gpuplan/plan.hpp"

namespace gpuplan::cli {

/// Reads and checks the plan at `path` ("-" or "": standard input). Throws InputError
/// with the line and column of bad JSON, or the JSON path of a bad field.
Plan read_plan(const std::string& path);

}  // namespace gpuplan::cli
