// gpuplan show: a plan as people read it in a terminal.
#include <fmt/format.h>
#include <fnmatch.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "cli/commands.hpp"
#include "cli/io.hpp"
#include "cli/number_options.hpp"
#include "cli/plan_input.hpp"
#include "cli/query_input.hpp"
#include "gpuplan/emit.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/fleet.hpp"
#include "gpuplan/node_summary.hpp"

namespace gpuplan::cli {

namespace {
struct ShowArgs {
  std::string plan = "-";
  int width = 0;
  std::string format = "text";
  std::vector<std::string> nodes;   ///< --node: only these nodes' units
  std::vector<std::string> labels;  ///< --label: only units whose label matches one of these
  bool summary = false;             ///< --summary: totals and a line per node, no chart
  std::string fleet;                ///< --fleet: draw its idle nodes and GPUs too
};

/// "//ml/..." matches every label under //ml; otherwise a shell glob (`*`, `?`, `[...]`) on the label.
bool label_matches(const std::string& pattern, const std::string& label) {
  if (pattern.size() > 4 && pattern.ends_with("/...")) {
    auto package = std::string_view(pattern).substr(0, pattern.size() - 4);
    return label.starts_with(package) && label.size() > package.size() &&
           (label[package.size()] == ':' || label[package.size()] == '/');
  }
  return fnmatch(pattern.c_str(), label.c_str(), 0) == 0;
}

/// The plan with only the units --node and --label keep; `note` says what was left out.
Plan filter_plan(Plan plan, const ShowArgs& args, std::string& note) {
  if (args.nodes.empty() && args.labels.empty()) return plan;
  std::set<std::string> known;
  for (const auto& a : plan.assignments) known.insert(a.node.str());
  for (const auto& node : args.nodes)
    if (!known.contains(node))
      throw CLI::ValidationError(
          "--node", fmt::format("{}: no unit of the plan runs there (nodes with units: {})", node,
                                fmt::join(known, ", ")));
  auto keep_label = [&](const Unit& unit) {
    return args.labels.empty() || std::any_of(args.labels.begin(), args.labels.end(), [&](const auto& p) {
             return label_matches(p, unit.label) || label_matches(p, unit.id);
           });
  };
  auto total = plan.assignments.size();
  std::erase_if(plan.assignments, [&](const Assignment& a) {
    bool node_ok = args.nodes.empty() ||
                   std::find(args.nodes.begin(), args.nodes.end(), a.node.str()) != args.nodes.end();
    return !node_ok || !keep_label(a.unit);
  });
  auto unschedulable = plan.unschedulable.size();
  std::erase_if(plan.unschedulable,
                [&](const UnschedulableUnit& u) { return !args.nodes.empty() || !keep_label(u.unit); });
  note = fmt::format(
      "Showing {} of {} scheduled units and {} of {} unschedulable ({}{}{}); the summary is the whole "
      "plan's.\n",
      plan.assignments.size(), total, plan.unschedulable.size(), unschedulable,
      args.nodes.empty() ? "" : fmt::format("--node {}", fmt::join(args.nodes, ",")),
      !args.nodes.empty() && !args.labels.empty() ? " " : "",
      args.labels.empty() ? "" : fmt::format("--label {}", fmt::join(args.labels, ",")));
  return plan;
}
}  // namespace

void add_show_command(CLI::App& app, int& status) {
  auto* command = app.add_subcommand(
      "show", "Show a plan in the terminal: summary, a timeline per node, unschedulable units, diagnostics.");
  auto args = std::make_shared<ShowArgs>();
  command->add_option("plan", args->plan, "plan JSON written by `gpuplan plan` (default: standard input)");
  command
      ->add_option("--width", args->width, "columns to use (default: COLUMNS, else the terminal's, else 80)")
      ->transform(whole_number(Terminal::min_width, Terminal::max_width));
  command->add_option("--format", args->format, "text, or markdown (for CI job summaries and PR comments)")
      ->check(CLI::IsMember({"text", "markdown"}))
      ->capture_default_str();
  command->add_option("--node", args->nodes, "only the units on this node (repeatable)");
  command->add_option("--label", args->labels,
                      "only the units whose label matches: //pkg/... (the package and below) or a shell glob "
                      "such as '//ml:*_test' (repeatable)");
  command->add_flag(
      "--summary", args->summary,
      "the summary and one line per node (GPUs drawn, units, busy until, share of its GPUs' time busy until "
      "the makespan), no chart");
  command->add_option("--fleet", args->fleet,
                      "the fleet the plan is for: its idle nodes and GPUs are drawn too (text view)");
  command->callback([args, &status] {
    // The plan read first: a fleet it does not fit is refused before anything is written.
    auto whole_plan = read_plan(args->plan);
    if (args->format == "markdown") {
      write_output("-", render_markdown(whole_plan));
      status = exit_ok;
      return;
    }
    auto terminal = terminal_for(STDOUT_FILENO);
    TextOptions options{args->width > 0 ? args->width : terminal.width, terminal.color};
    std::optional<Fleet> fleet;
    if (!args->fleet.empty()) {
      auto fleet_input = open_input(args->fleet);
      fleet = load_fleet(fleet_input.in(), fleet_input.name);
      print_fleet_warnings(*fleet);
      check_plan_on_fleet(whole_plan, args->plan, *fleet);
      if (args->nodes.empty() && args->labels.empty()) options.fleet = &*fleet;
    }
    order_as_written(whole_plan, fleet ? &*fleet : nullptr);
    std::string note;
    auto plan = filter_plan(std::move(whole_plan), *args, note);
    write_output("-",
                 note + (args->summary ? render_node_summary(plan, options) : render_text(plan, options)));
    status = exit_ok;
  });
}

}  // namespace gpuplan::cli
