#pragma once
// `gpuplan show --summary`: a plan's totals and one line per node, for plans too big to chart.
#include <string>

#include "gpuplan/emit.hpp"
#include "gpuplan/plan.hpp"

namespace gpuplan {

/// The summary `render_text` starts with, then a table with one row per node in plan order
/// (GPUs drawn, units, busy until, GPU busy share) and the counts of unschedulable units
/// and diagnostics. No line is wider than options.width (at least 40).
std::string render_node_summary(const Plan& plan, const TextOptions& options);

}  // namespace gpuplan
