// Placeholder until this command is written; the issue that owns it replaces this file.
#include <stdexcept>

#include "cli/commands.hpp"

namespace gpuplan::cli {

void add_targets_command(CLI::App& app, int& /*status*/) {
  auto* command = app.add_subcommand("targets", "(not written yet)");
  command->callback([] { throw std::logic_error("gpuplan targets: not written yet"); });
}

}  // namespace gpuplan::cli
