// gpuplan show: a plan as people read it in a terminal.
#include <unistd.h>

#include <memory>

#include "cli/commands.hpp"
#include "cli/io.hpp"
#include "cli/plan_input.hpp"
#include "gpuplan/emit.hpp"
#include "gpuplan/error.hpp"

namespace gpuplan::cli {

namespace {
struct ShowArgs {
  std::string plan = "-";
  int width = 0;
  std::string format = "text";
};
}  // namespace

void add_show_command(CLI::App& app, int& status) {
  auto* command = app.add_subcommand(
      "show", "Show a plan in the terminal: summary, a timeline per node, unschedulable units, diagnostics.");
  auto args = std::make_shared<ShowArgs>();
  command->add_option("plan", args->plan, "plan JSON written by `gpuplan plan` (default: standard input)");
  command
      ->add_option("--width", args->width, "columns to use (default: COLUMNS, else the terminal's, else 80)")
      ->check(CLI::Range(40, 1000));
  command->add_option("--format", args->format, "text, or markdown (for CI job summaries and PR comments)")
      ->check(CLI::IsMember({"text", "markdown"}))
      ->capture_default_str();
  command->callback([args, &status] {
    if (args->format == "markdown") {
      write_output("-", render_markdown(read_plan(args->plan)));
      status = exit_ok;
      return;
    }
    auto terminal = terminal_for(STDOUT_FILENO);
    TextOptions options{args->width > 0 ? args->width : terminal.width, terminal.color};
    write_output("-", render_text(read_plan(args->plan), options));
    status = exit_ok;
  });
}

}  // namespace gpuplan::cli
