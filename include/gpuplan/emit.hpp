#pragma once
// Plans for people: the terminal preview and the Gantt chart (SVG, self-contained HTML).
#include <string>

#include "gpuplan/plan.hpp"

namespace gpuplan {

struct TextOptions {
  int width = 80;      ///< terminal columns
  bool color = false;  ///< ANSI colours (the CLI decides: a terminal, and NO_COLOR unset)
};

std::string render_text(const Plan& plan, const TextOptions& options);
std::string render_svg(const Plan& plan);
std::string render_html(const Plan& plan);

}  // namespace gpuplan
