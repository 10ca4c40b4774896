// Placeholder until this stage is written; the issue that owns it replaces this file.
#include <stdexcept>
#include "gpuplan/emit.hpp"

namespace gpuplan {

std::string render_text(const Plan&, const TextOptions&) { throw std::logic_error("emit: not written yet"); }
std::string render_svg(const Plan&) { throw std::logic_error("emit: not written yet"); }
std::string render_html(const Plan&) { throw std::logic_error("emit: not written yet"); }
}  // namespace gpuplan
