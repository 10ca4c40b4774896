// Placeholder until this stage is written; the issue that owns it replaces this file.
#include <stdexcept>
#include "gpuplan/solve.hpp"

namespace gpuplan {

Plan make_plan(const Classification&, const std::vector<Unit>&, const Fleet&, const SolveOptions&) { throw std::logic_error("solve: not written yet"); }
}  // namespace gpuplan
