#pragma once
// What the SVG chart and the HTML page share: escaping and the summary line.
#include <string>
#include <string_view>

#include "gpuplan/plan.hpp"

namespace gpuplan::emit {

/// `text` made safe for XML/HTML text and attribute values: &<>"' escaped, control characters
/// other than newline replaced.
std::string escape(std::string_view text);

/// What a chart's tooltip says of a unit that holds GPUs it does not run on (Lane::held), whose
/// lanes it draws faint in the unit's colour.
inline constexpr std::string_view held_note = "holds the whole node: its other GPUs are held, not used";

/// "policy exact · fleet f.yaml · 16 units on 4 nodes, 1 unschedulable · makespan 28m · ..."
std::string summary_line(const Plan& plan);

}  // namespace gpuplan::emit
