// gpuplan compare: the same tests planned under several policies and fleets, side by side.
#include <unistd.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/history_input.hpp"
#include "cli/io.hpp"
#include "cli/query_input.hpp"
#include "gpuplan/emit.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/solve.hpp"
#include "gpuplan/units.hpp"

namespace gpuplan::cli {

namespace {
struct CompareArgs {
  QueryOptions query;
  std::vector<std::string> fleets;
  std::vector<std::string> policies{"exact"};
  std::vector<std::string> history;
  std::string shards = "per-shard";
  bool json = false;
  std::string output = "-";
};
}  // namespace

void add_compare_command(CLI::App& app, int& status) {
  auto* command = app.add_subcommand(
      "compare",
      "Plan the same tests under several policies and/or fleets and compare makespan, bound, gap, "
      "GPU-hours reserved and used, utilisation and unschedulable units.");
  auto args = std::make_shared<CompareArgs>();
  add_query_options(*command, args->query);
  add_untagged_option(*command, args->query);
  command->add_option("--fleet", args->fleets, "a fleet YAML; repeat to compare fleets")->required();
  command
      ->add_option(
          "--policies,--policy", args->policies,
          "policies to compare, comma-separated or repeated (default: exact); --policy as plan spells it")
      ->delimiter(',')
      ->check(CLI::IsMember({"whole-node", "exact", "pack"}));
  command
      ->add_option("--history", args->history,
                   "past runs (BEP JSON, JUnit XML, CSV/JSON, bazel-testlogs); repeatable")
      ->allow_extra_args(false);
  command
      ->add_option("--shards", args->shards,
                   "per-shard (default): a unit per shard; whole: a sharded test is one unit")
      ->check(CLI::IsMember({"per-shard", "whole"}));
  command->add_flag("--json", args->json, "write JSON instead of a table");
  command->add_option("-o,--output", args->output, "write here instead of standard output");
  command->callback([args, &status] {
    auto inputs = args->fleets;
    inputs.push_back(args->query.rules);
    one_standard_input(args->query.targets.path, inputs);
    auto rules = read_rules(args->query);
    Diagnostics diagnostics;
    QueryOptions query = args->query;
    std::optional<History> history;
    read_history_for_classifying(args->history, query, rules, history, diagnostics);
    auto tests = read_and_classify(query, rules);
    if (!history)
      history = read_history_option(args->history, args->query.strict, diagnostics, shard_counts_now(tests));
    check_history_against_tests(history, rules, tests, args->query.strict);
    auto estimator = estimator_for(history, rules, tests);
    history.reset();
    auto units = take_units(tests, args->shards == "whole" ? ShardMode::whole : ShardMode::per_shard,
                            estimator, rules);  // the GPU tests are dropped next
    long gpu_tests = 0;
    auto listed = without_gpu_tests(std::move(tests), gpu_tests);
    // What plan says of the same tests: the rows compare plans of them.
    diagnostics.insert(diagnostics.begin(), listed.diagnostics.begin(), listed.diagnostics.end());
    std::vector<Comparison> rows;
    long fleet_warnings = 0;
    for (const auto& path : args->fleets) {
      auto input = open_input(path);
      auto fleet = load_fleet(input.in(), input.name);
      fleet_warnings += print_fleet_warnings(fleet, args->query.strict);
      for (const auto& name : args->policies) {
        SolveOptions options;
        options.policy = *parse_policy(name);
        options.rules = rules;
        Plan plan = make_plan(listed, units, fleet, options);
        plan.summary.tests += gpu_tests;
        plan.summary.gpu_tests += gpu_tests;
        rows.push_back(compare(plan, fleet));
      }
    }
    auto terminal = terminal_for(STDOUT_FILENO);
    bool to_terminal = args->output == "-";
    write_output(args->output,
                 args->json ? comparison_to_json(rows).dump(2) + "\n"
                            : render_comparison(rows, {terminal.width, to_terminal && terminal.color}));
    print_diagnostic_totals(diagnostics, true, false, fleet_warnings);
    status = exit_ok;
  });
}

}  // namespace gpuplan::cli
