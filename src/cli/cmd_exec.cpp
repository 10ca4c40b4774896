// Placeholder until this command is written; the issue that owns it replaces this file.
#include <stdexcept>

#include "cli/commands.hpp"

namespace gpuplan::cli {

void add_exec_command(CLI::App& app, int& /*status*/) {
  auto* command = app.add_subcommand("exec", "(not written yet)");
  command->callback([] { throw std::logic_error("gpuplan exec: not written yet"); });
}

}  // namespace gpuplan::cli
