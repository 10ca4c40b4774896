#pragma once
// The Gantt chart as an <svg> element, shared by the SVG file and the HTML page.
#include <string>
#include <string_view>

#include "gpuplan/plan.hpp"

namespace gpuplan::emit {

/// `text` made safe for XML/HTML text and attribute values: &<>"' escaped, control characters
/// other than newline replaced.
std::string escape(std::string_view text);

/// The chart: title and summary, a time axis, a lane per GPU of each node, one
/// <g class="bar"> per assignment (with a <title> tooltip), makespan and bound marked,
/// a legend of the tests and the unschedulable units.
std::string chart_svg(const Plan& plan);

/// "policy exact · fleet f.yaml · 16 units on 4 nodes, 1 unschedulable · makespan 28m · ..."
std::string summary_line(const Plan& plan);

}  // namespace gpuplan::emit
