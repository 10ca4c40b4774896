// Which reader this fuzz target's shared harness fuzzes (fuzz.hpp): the one line compiled per target.
#include "fuzz.hpp"

std::string_view gpuplan::fuzz::chosen_reader() { return GPUPLAN_FUZZ_CHOSEN; }
