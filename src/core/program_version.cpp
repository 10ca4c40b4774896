// This program's version, from CMake's project version (the one file that sees it).
#include "gpuplan/version.hpp"

namespace gpuplan {

const char* program_version() { return GPUPLAN_VERSION; }

}  // namespace gpuplan
