// Placeholder until history is written; the history work replaces this file.
#include "cli/history_input.hpp"

#include <stdexcept>

namespace gpuplan::cli {

Estimator estimator_for(const std::vector<std::string>& history_paths, const Rules& rules,
                        const Classification&, bool, Diagnostics&) {
  if (!history_paths.empty()) throw std::logic_error("--history: not written yet");
  return size_default_estimator(rules);
}

}  // namespace gpuplan::cli
