// gpuplan render: the plan as a Gantt chart, SVG or a self-contained HTML page.
#include <fmt/format.h>

#include <memory>
#include <string>

#include "cli/commands.hpp"
#include "cli/io.hpp"
#include "cli/plan_input.hpp"
#include "gpuplan/emit.hpp"
#include "gpuplan/error.hpp"

namespace gpuplan::cli {

namespace {
struct RenderArgs {
  std::string plan = "-";
  std::string output;
  std::string format;
};
}  // namespace

void add_render_command(CLI::App& app, int& status) {
  auto* command = app.add_subcommand(
      "render",
      "Draw a plan as a Gantt chart: lanes per node and GPU, a bar per unit, makespan and bound marked.");
  auto args = std::make_shared<RenderArgs>();
  command->add_option("plan", args->plan, "plan JSON written by `gpuplan plan` (default: standard input)");
  command
      ->add_option("-o,--output", args->output,
                   "the chart: FILE.svg, FILE.html or FILE.trace.json (\"-\": standard output)")
      ->required();
  command
      ->add_option("--format", args->format,
                   "svg, html or trace (Chrome trace-event JSON; default: from the output's extension)")
      ->check(CLI::IsMember({"svg", "html", "trace"}));
  command->callback([args, &status] {
    std::string format = args->format;
    if (format.empty()) {
      if (args->output.ends_with(".json"))
        format = "trace";
      else if (args->output.ends_with(".svg"))
        format = "svg";
      else if (args->output.ends_with(".html") || args->output.ends_with(".htm"))
        format = "html";
      else
        throw InputError(Position{args->output},
                         "cannot tell the chart format from the name; use .svg, .html or .json, or --format");
    }
    auto plan = read_plan(args->plan);
    write_output(args->output, format == "svg"     ? render_svg(plan)
                               : format == "trace" ? render_trace(plan)
                                                   : render_html(plan));
    status = exit_ok;
  });
}

}  // namespace gpuplan::cli
