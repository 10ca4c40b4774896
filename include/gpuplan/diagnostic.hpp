#pragma once
// Findings about a test that do not stop the run (or do, under --strict).
#include <string>
#include <vector>

namespace gpuplan {

enum class Severity { note, warning, error };

std::string_view to_string(Severity severity);

/// One finding, as it appears in the plan's "diagnostics" array.
struct Diagnostic {
  Severity severity = Severity::warning;
  std::string label;    ///< the test it is about; empty when about the whole input
  std::string source;   ///< what caused it: "tag gpu:0", "exec_properties resources:gpu", "rules.yaml:12"
  std::string message;  ///< a sentence a person understands, with the resolution taken
};

using Diagnostics = std::vector<Diagnostic>;

bool has_errors(const Diagnostics& diagnostics);

}  // namespace gpuplan
