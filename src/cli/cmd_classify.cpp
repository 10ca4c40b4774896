// Placeholder until this command is written; the issue that owns it replaces this file.
#include <stdexcept>

#include "cli/commands.hpp"

namespace gpuplan::cli {

void add_classify_command(CLI::App& app, int& /*status*/) {
  auto* command = app.add_subcommand("classify", "(not written yet)");
  command->callback([] { throw std::logic_error("gpuplan classify: not written yet"); });
}

}  // namespace gpuplan::cli
