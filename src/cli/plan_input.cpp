#include "cli/plan_input.hpp"

#include "cli/io.hpp"

namespace gpuplan::cli {

Plan read_plan(const std::string& path) {
  auto input = open_input(path);
  return parse_plan(read_all(input), input.name);
}

}  // namespace gpuplan::cli
