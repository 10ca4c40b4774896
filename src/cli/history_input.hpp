#pragma once
// `--history FILE` (repeatable; files or bazel-testlogs directories), shared by the commands that plan.
#include <string>
#include <vector>

#include "gpuplan/classify.hpp"
#include "gpuplan/diagnostic.hpp"
#include "gpuplan/rules.hpp"
#include "gpuplan/units.hpp"

namespace gpuplan::cli {

/// The estimator a plan uses: history where there is some, then the fallbacks
/// (size-class median, size default). With no paths, the size defaults alone.
/// Skipped bad rows become warnings in `diagnostics`; under `strict` they throw InputError.
Estimator estimator_for(const std::vector<std::string>& history_paths, const Rules& rules,
                        const Classification& tests, bool strict, Diagnostics& diagnostics);

}  // namespace gpuplan::cli
