// gpuplan simulate PLAN --fleet F: the plan replayed with durations other than the planned ones,
// under the static and the dynamic executor, against the best any executor could have done.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/history_input.hpp"
#include "cli/io.hpp"
#include "cli/number_options.hpp"
#include "cli/plan_input.hpp"
#include "cli/query_input.hpp"
#include "emit/gantt.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/rules.hpp"
#include "gpuplan/simulate.hpp"
#include "util/rounding.hpp"

namespace gpuplan::cli {

namespace {

struct SimulateArgs {
  std::string plan;
  std::string fleet;
  std::string rules;
  std::optional<double> sigma;
  std::vector<std::string> history;
  int runs = 20;
  std::uint64_t seed = 1;
  bool strict = false;  ///< a bad --history row is an error, not a warning
  bool json = false;
};

nlohmann::ordered_json spread_json(const Spread& s) {
  return {{"median", util::json_seconds(s.median)}, {"p95", util::json_seconds(s.p95)}};
}

std::string report_json(const SimulationReport& r, const SimulateArgs& args) {
  nlohmann::ordered_json noise;
  if (args.history.empty())
    noise = {{"model", "log-normal"}, {"sigma", args.sigma.value_or(0.5)}};
  else
    noise = {{"model", "history"},
             {"units_without_history", r.units_without_history},
             {"units_resharded", r.units_resharded}};
  nlohmann::ordered_json out = {
      {"runs", r.runs},
      {"seed", args.seed},
      {"units", r.units},
      {"noise", noise},
      {"planned_makespan", util::json_seconds(r.planned_makespan)},
      {"static", spread_json(r.static_makespan)},
      {"dynamic", spread_json(r.dynamic_makespan)},
      {"hindsight_bound_median", util::json_seconds(r.hindsight_bound.median)},
      {"hindsight_bound", spread_json(r.hindsight_bound)},
      {"hindsight_plan", spread_json(r.hindsight_plan)},
      {"dynamic_taken_elsewhere_median", r.taken_elsewhere_median},
  };
  return out.dump(2) + "\n";
}

std::string ratio(double value, double base) { return base > 0 ? fmt::format("{:.3f}x", value / base) : "-"; }

std::string report_text(const SimulationReport& r, const SimulateArgs& args) {
  std::string noise = args.history.empty()
                          ? fmt::format("log-normal durations, sigma {}", args.sigma.value_or(0.5))
                          : "durations drawn from each unit's own history";
  std::string out = fmt::format("{}: {} units, {} runs of {}, seed {}\n",
                                args.plan == "-" ? "<stdin>" : args.plan, r.units, r.runs, noise, args.seed);
  // Durations as the other commands write them (18h39m; --json keeps seconds): "67140.0" before.
  out += fmt::format("{:<18} {:>12} {:>12} {:>14} {:>18}\n", "makespan", "median", "p95", "median/plan",
                     "median/hindsight");
  double bound = r.hindsight_bound.median;
  out += fmt::format("{:<18} {:>12} {:>12} {:>14} {:>18}\n", "plan", emit::format_seconds(r.planned_makespan),
                     "", "1.000x", ratio(r.planned_makespan, bound));
  auto row = [&](const char* name, const Spread& s) {
    out +=
        fmt::format("{:<18} {:>12} {:>12} {:>14} {:>18}\n", name, emit::format_seconds(s.median),
                    emit::format_seconds(s.p95), ratio(s.median, r.planned_makespan), ratio(s.median, bound));
  };
  row("static executor", r.static_makespan);
  row("dynamic executor", r.dynamic_makespan);
  row("hindsight plan", r.hindsight_plan);
  row("hindsight bound", r.hindsight_bound);
  out += fmt::format("the dynamic executor ran a median of {} units off their planned node\n",
                     r.taken_elsewhere_median);
  return out;
}

}  // namespace

void add_simulate_command(CLI::App& app, int& status) {
  auto* command = app.add_subcommand(
      "simulate",
      "Replay a plan with real durations drawn around the planned ones (log-normal --sigma, or each unit's "
      "--history): the makespan of the static executor (each node runs its own list) and of the dynamic one "
      "(idle GPUs take units planned elsewhere), median and p95 over --runs, against a hindsight lower "
      "bound.");
  auto args = std::make_shared<SimulateArgs>();
  command->add_option("plan", args->plan, "the plan JSON (\"-\": standard input)")->required();
  command->add_option("--fleet", args->fleet, "the fleet YAML the plan is for")->required();
  auto* sigma =
      command
          ->add_option("--sigma", args->sigma,
                       "log-normal noise: real = planned × e^(S·Z), Z standard normal (default 0.5)")
          ->check(finite_number(0, 10));
  auto* history = command
                      ->add_option("--history", args->history,
                                   "draw each unit's duration from its own recent runs (any history format; "
                                   "repeatable); units without any keep their planned duration")
                      ->allow_extra_args(false);
  sigma->excludes(history);
  command->add_option("--runs", args->runs, "how many runs (default 20)")->transform(whole_number(1, 100000));
  command
      ->add_option("--seed", args->seed, "the random seed: the same seed gives the same report (default 1)")
      ->transform(whole_number(0, std::numeric_limits<std::uint64_t>::max()));
  command->add_option("--rules", args->rules, "rules file: the history window and the pack knobs");
  command->add_flag("--strict", args->strict,
                    "a bad --history row or a fleet warning is an error (exit 2), not a warning");
  command->add_flag("--json", args->json, "the report as JSON");
  command->callback([args, &status] {
    Plan plan = read_plan(args->plan);
    auto fleet_input = open_input(args->fleet);
    Fleet fleet = load_fleet(fleet_input.in(), fleet_input.name);
    print_fleet_warnings(fleet, args->strict);
    SimulateOptions options;
    if (!args->rules.empty()) {
      Input input = open_input(args->rules);
      options.rules = load_rules(input.in(), input.name);
    } else {
      take_pack_knobs(plan, options.rules);
    }
    options.runs = args->runs;
    options.seed = args->seed;
    options.noise.sigma = args->sigma.value_or(0.5);
    History history;
    if (!args->history.empty()) {
      Diagnostics diagnostics;
      // The plan's shard counts choose among a test's shard_N_of_M folders, as the query's do for plan.
      std::map<std::string, int> shards_now;
      for (const auto& a : plan.assignments)
        if (a.unit.shard_count > 1) shards_now[label_identity(a.unit.label)] = a.unit.shard_count;
      history = read_history_paths(args->history, args->strict, diagnostics, shards_now);
      print_history_diagnostics(diagnostics);
      options.noise.history = &history;
    }
    SimulationReport report = simulate(plan, fleet, options);
    if (options.noise.history && report.units_without_history > 0)
      std::cerr << fmt::format(
          "gpuplan: warning: {} of {} units have no history{} and keep their planned durations in every "
          "run\n",
          report.units_without_history, report.units,
          report.units_resharded == 0
              ? ""
              : fmt::format(" ({} of them only runs of another shard count than the plan's: their test was "
                            "resharded since)",
                            report.units_resharded));
    write_output("-", args->json ? report_json(report, *args) : report_text(report, *args));
    status = exit_ok;
  });
}

}  // namespace gpuplan::cli
