// gpuplan render: the plan as a Gantt chart, SVG or a self-contained HTML page.
#include <fmt/format.h>

#include <memory>
#include <optional>
#include <string>

#include "cli/commands.hpp"
#include "cli/io.hpp"
#include "cli/plan_input.hpp"
#include "cli/query_input.hpp"
#include "gpuplan/emit.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/fleet.hpp"

namespace gpuplan::cli {

namespace {
struct RenderArgs {
  std::string plan = "-";
  std::string output;
  std::string format;
  std::string fleet;  ///< --fleet: draw its idle nodes and GPUs too
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
  command->add_option(
      "--fleet", args->fleet,
      "the fleet the plan is for: the SVG and HTML charts then draw its idle nodes and GPUs too");
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
    if (!args->fleet.empty() && format == "trace")
      throw CLI::ValidationError("--fleet",
                                 "only the svg and html charts draw idle nodes; leave --fleet out");
    std::optional<Fleet> fleet;
    if (!args->fleet.empty()) {
      auto fleet_input = open_input(args->fleet);
      fleet = load_fleet(fleet_input.in(), fleet_input.name);
      print_fleet_warnings(*fleet);
    }
    auto plan = read_plan(args->plan);
    if (fleet) check_plan_on_fleet(plan, args->plan, *fleet);
    order_as_written(plan, fleet ? &*fleet : nullptr);
    Output output(args->output);
    if (format == "trace")
      write_trace(plan, output.sink());
    else if (format == "html")
      write_html(plan, fleet ? &*fleet : nullptr, output.sink());
    else
      write_svg(plan, fleet ? &*fleet : nullptr, output.sink());
    output.commit();
    status = exit_ok;
  });
}

}  // namespace gpuplan::cli
