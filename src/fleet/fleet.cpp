// Placeholder until this stage is written; the issue that owns it replaces this file.
#include <stdexcept>
#include "gpuplan/fleet.hpp"

namespace gpuplan {

Fleet load_fleet(std::istream&, const std::string&) { throw std::logic_error("fleet: not written yet"); }
}  // namespace gpuplan
