#include "cli/plan_input.hpp"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "cli/io.hpp"
#include "gpuplan/error.hpp"

namespace gpuplan::cli {

Plan read_plan(const std::string& path) {
  auto input = open_input(path);
  auto text = read_all(input);
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    auto end = text.begin() + static_cast<long>(std::min(e.byte, text.size()));
    long line = 1 + std::count(text.begin(), end, '\n');
    auto line_start = std::find(std::make_reverse_iterator(end), text.rend(), '\n').base();
    throw InputError(Position{input.name, line, std::max(1L, static_cast<long>(end - line_start))},
                     "not valid JSON; a plan is the JSON object `gpuplan plan` writes");
  }
  return plan_from_json(json, input.name);
}

}  // namespace gpuplan::cli
