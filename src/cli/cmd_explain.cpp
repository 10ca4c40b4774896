// Placeholder until this command is written; the issue that owns it replaces this file.
#include <stdexcept>

#include "cli/commands.hpp"

namespace gpuplan::cli {

void add_explain_command(CLI::App& app, int& /*status*/) {
  auto* command = app.add_subcommand("explain", "(not written yet)");
  command->callback([] { throw std::logic_error("gpuplan explain: not written yet"); });
}

}  // namespace gpuplan::cli
