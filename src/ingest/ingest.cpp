// Placeholder until this stage is written; the issue that owns it replaces this file.
#include <stdexcept>
#include "gpuplan/ingest.hpp"

namespace gpuplan {

std::optional<InputFormat> parse_input_format(std::string_view) { throw std::logic_error("ingest: not written yet"); }
std::string_view to_string(InputFormat) { throw std::logic_error("ingest: not written yet"); }
TargetList read_targets(std::istream&, const std::string&, std::optional<InputFormat>) { throw std::logic_error("ingest: not written yet"); }
void join_attributes(TargetList&, const TargetList&) { throw std::logic_error("ingest: not written yet"); }
}  // namespace gpuplan
