// gpuplan plan [QUERY] --fleet FLEET: the GPU tests placed on the fleet, as the plan JSON (SPEC 6).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/history_input.hpp"
#include "cli/io.hpp"
#include "cli/keep.hpp"
#include "cli/number_options.hpp"
#include "cli/plan_input.hpp"
#include "cli/progress.hpp"
#include "cli/query_input.hpp"
#include "emit/gantt.hpp"
#include "gpuplan/emit.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/fleet.hpp"
#include "gpuplan/limits.hpp"
#include "gpuplan/solve.hpp"
#include "gpuplan/units.hpp"
#include "util/text.hpp"

namespace gpuplan::cli {

namespace {

struct PlanArgs {
  QueryOptions query;
  std::string fleet;
  std::string policy = "exact";
  std::string shards = "per-shard";
  double time_limit_s = 0;
  std::vector<std::string> history;
  std::string format = "json";
  std::string output;
};

/// The GPUs of every node of the fleet.
int gpu_count(const Fleet& fleet) {
  int gpus = 0;
  for (const auto& node : fleet.nodes) gpus += static_cast<int>(node.gpus.size());
  return gpus;
}

/// What a person wants to know after planning, in a few lines on standard error.
std::string summary_of(const Plan& plan) {
  const auto& s = plan.summary;
  std::string out = fmt::format("gpuplan: {} test{}: {} GPU, {} CPU, {} skipped\n", s.tests,
                                util::plural(s.tests), s.gpu_tests, s.cpu_tests, s.skipped_tests);
  out += fmt::format("gpuplan: {} of {} GPU units placed ({}), {} unschedulable\n", s.scheduled_units,
                     s.gpu_units, to_string(plan.policy), s.unschedulable_units);
  if (s.scheduled_units > 0) {
    double gap = s.lower_bound_s > 0 ? 100 * (s.makespan_s / s.lower_bound_s - 1) : 0;
    out += fmt::format("gpuplan: makespan {}, lower bound {} (gap {:.1f}%), GPU utilisation {:.1f}%\n",
                       emit::format_seconds(s.makespan_s), emit::format_seconds(s.lower_bound_s), gap,
                       100 * s.gpu_utilization);
  }
  // Units sharing a reason are one line, biggest group first: 247 units with 6 reasons read as 6 lines.
  constexpr std::size_t named = 3;
  for (const auto& [reason, units] : unschedulable_by_reason(plan)) {
    if (units.size() == 1) {
      out += fmt::format("gpuplan: unschedulable: {}: {}\n", units[0]->unit.id, reason);
      continue;
    }
    std::vector<std::string_view> first;
    for (std::size_t i = 0; i < std::min(named, units.size()); ++i) first.push_back(units[i]->unit.id);
    out += fmt::format(
        "gpuplan: unschedulable: {} units: {}: {}{}\n", units.size(), reason, fmt::join(first, ", "),
        units.size() > named ? fmt::format(" and {} more (the plan lists them)", units.size() - named) : "");
  }
  return out;
}

void run(const PlanArgs& args, int& status) {
  one_standard_input(args.query.targets.path, {args.fleet, args.query.rules});
  Rules rules = read_rules(args.query);
  auto fleet_input = open_input(args.fleet);
  Fleet fleet = load_fleet(fleet_input.in(), fleet_input.name);
  const long fleet_warnings = print_fleet_warnings(fleet, args.query.strict);
  Diagnostics history_diagnostics;
  QueryOptions query = args.query;
  std::optional<History> history;
  read_history_for_classifying(args.history, query, rules, history, history_diagnostics);
  Classification tests = read_and_classify(query, rules);
  drop_classification_inputs(tests);
  if (!history)
    history =
        read_history_option(args.history, args.query.strict, history_diagnostics, shard_counts_now(tests));
  check_history_against_tests(history, rules, tests, args.query.strict);
  ShardsFromSiblings from_siblings;
  Estimator estimate =
      noting_shards_from_siblings(estimator_for(history, rules, tests), rules.vram_headroom, from_siblings);
  const RunsLeftOut left_out = runs_left_out(history, tests, rules.history_window);
  history.reset();
  ShardMode mode = args.shards == "whole" ? ShardMode::whole : ShardMode::per_shard;
  std::vector<Unit> units = take_units(tests, mode, estimate, rules);  // the GPU tests are dropped next
  std::string coverage =
      history_coverage(args.history, units, from_siblings, left_out, args.query.strict, history_diagnostics);
  long gpu_tests = 0;
  Classification listed = without_gpu_tests(std::move(tests), gpu_tests);

  progress::stage(fmt::format("planning {} units on {} GPUs", units.size(), gpu_count(fleet)));
  SolveOptions options;
  options.policy = parse_policy(args.policy).value_or(Policy::exact);
  options.time_limit_s = args.time_limit_s;
  options.rules = rules;
  Plan plan = make_plan(listed, std::move(units), fleet, options);
  plan.summary.tests += gpu_tests;
  plan.summary.gpu_tests += gpu_tests;
  plan.diagnostics.insert(plan.diagnostics.end(), history_diagnostics.begin(), history_diagnostics.end());

  progress::stage("writing " + (args.output.empty() || args.output == "-" ? "the plan" : args.output));
  Output output(args.output);
  PlanRecords records;
  if (args.format == "text") {
    bool to_terminal = args.output.empty() || args.output == "-";
    Terminal terminal = to_terminal ? terminal_for(1) : Terminal{};
    output.write(render_text(plan, TextOptions{terminal.width, terminal.color}));
  } else {
    records = write_plan_json_noting_records(plan, output.sink());
  }
  output.commit();
  if (args.format != "text" && !args.output.empty() && args.output != "-")
    write_plan_index(args.output, plan, records);  // what run-under reads instead of the whole plan
  progress::finish();
  std::cerr << summary_of(plan) << coverage;
  print_diagnostic_totals(plan.diagnostics, true, false, fleet_warnings);
  status = plan.unschedulable.empty() ? exit_ok : exit_unschedulable;
  keep_until_exit(std::move(plan));  // freed by the process's end, not block by block
}

}  // namespace

void add_plan_command(CLI::App& app, int& status) {
  auto args = std::make_shared<PlanArgs>();
  auto* command = app.add_subcommand(
      "plan", "Place the GPU tests of a bazel query on a fleet so that they finish as early as possible");
  add_query_options(*command, args->query);
  add_untagged_option(*command, args->query);
  args->query.drop_inputs = true;
  command->add_option("--fleet", args->fleet, "the fleet (YAML, README \"Fleet\")")->required();
  command->add_option("--policy", args->policy, "whole-node, exact (default) or pack")
      ->check(CLI::IsMember({"whole-node", "exact", "pack"}));
  command
      ->add_option("--shards", args->shards, "per-shard (default): one unit per shard; whole: one per test")
      ->check(CLI::IsMember({"per-shard", "whole"}));
  command
      ->add_option("--time-limit", args->time_limit_s,
                   "seconds to spend improving the first plan (default 0: the fast, deterministic plan)")
      ->check(finite_number(0, max_duration_s));
  command->add_option("--history", args->history, "past runs: BEP JSON, JUnit XML, CSV (repeatable)")
      ->allow_extra_args(false);
  command->add_option("--format", args->format, "json (default): the plan for launchers; text: a preview")
      ->check(CLI::IsMember({"json", "text"}));
  command->add_option("-o,--output", args->output,
                      "write the plan to this file (atomically) instead of stdout");
  command->callback([args, &status] { run(*args, status); });
}

}  // namespace gpuplan::cli
