// gpuplan verify: does a plan keep its promises on this fleet (and to this query)?
#include <fmt/format.h>

#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "cli/commands.hpp"
#include "cli/history_input.hpp"
#include "cli/io.hpp"
#include "cli/plan_input.hpp"
#include "cli/query_input.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/fleet.hpp"
#include "gpuplan/verify.hpp"
#include "util/text.hpp"

namespace gpuplan::cli {

namespace {
struct VerifyArgs {
  std::string plan;
  std::string fleet;
  QueryOptions query;
  bool json = false;  ///< print the verdict as one JSON object (for CI scripts) instead of lines
  std::vector<std::string> history;
};
}  // namespace

void add_verify_command(CLI::App& app, int& status) {
  auto* command = app.add_subcommand(
      "verify",
      "Check a plan against the fleet (and the query, if given): GPUs exist and are not double-booked, "
      "requirements and exclusivity hold, every GPU test is there once, times and env agree. "
      "Exit 0: valid; 4: invalid.");
  auto args = std::make_shared<VerifyArgs>();
  command->add_option("plan", args->plan, "the plan JSON to check (\"-\": standard input)")->required();
  command->add_option("--fleet", args->fleet, "the fleet YAML the plan is meant for")->required();
  add_query_options(*command, args->query);
  add_untagged_option(*command, args->query);  // the query read as plan read it
  command->get_option("FILE")->description("the bazel query output the plan was made from (optional)");
  command
      ->add_option(
          "--history", args->history,
          "past runs (results records; repeatable): with --classify-by-deps, a GPU test whose runs "
          "used a GPU stays one, as in the plan made with them (memory is checked by the plan's vram_mib and "
          "the tests' gpu-mem, not by these runs' peaks: plan again with --history for those)")
      ->allow_extra_args(false);
  command->add_flag("--json", args->json,
                    "print {plan, valid, units, fleet, policy, query_checked, violations: [{unit, kind, "
                    "reason}]} instead of lines; the exit code is the same");
  command->callback([args, command, &status] {
    auto plan = read_plan(args->plan);
    auto fleet_input = open_input(args->fleet);
    auto fleet = load_fleet(fleet_input.in(), fleet_input.name);
    const long fleet_warnings = print_fleet_warnings(fleet, args->query.strict);
    VerifyOptions options;
    options.rules = read_rules(args->query);
    if (args->query.rules.empty()) take_pack_knobs(plan, options.rules);
    std::optional<Classification> query;
    Diagnostics diagnostics;  // the query's classification's and the history's skipped rows
    if (command->get_option("FILE")->count() > 0) {
      if (args->query.targets.path == "-" && args->plan == "-")
        throw InputError(Position{"<stdin>"}, "the plan and the query cannot both come from standard input");
      QueryOptions query_options = args->query;
      std::optional<History> history;  // only what --classify-by-deps weighs
      read_history_for_classifying(args->history, query_options, options.rules, history, diagnostics);
      query = read_and_classify(query_options, options.rules);
      diagnostics.insert(diagnostics.begin(), query->diagnostics.begin(), query->diagnostics.end());
      options.query = &*query;
    }
    auto violations = verify(plan, fleet, options);
    auto name = args->plan == "-" ? std::string("<stdin>") : args->plan;
    // Each violation of a unit at its record's line, as exec and the exports name a unit planned
    // twice (before, the file alone: the record of 1 of 10,000 units was left to search for).
    std::vector<std::string> paths;
    for (const auto& v : violations) paths.push_back(v.json_path);
    const auto spots = locate_plan_records(args->plan, paths);
    std::string out;
    if (args->json) {
      nlohmann::ordered_json j;
      j["plan"] = name;
      j["valid"] = violations.empty();
      j["units"] = plan.assignments.size();
      j["fleet"] = fleet.source;
      j["policy"] = to_string(plan.policy);
      j["query_checked"] = query.has_value();
      j["violations"] = nlohmann::ordered_json::array();
      for (std::size_t i = 0; i < violations.size(); ++i) {
        const auto& v = violations[i];
        nlohmann::ordered_json one = {{"unit", v.unit}, {"kind", to_string(v.kind)}, {"reason", v.reason}};
        if (spots[i]) {
          one["line"] = spots[i]->line;
          one["column"] = spots[i]->column;
        }
        j["violations"].push_back(std::move(one));
      }
      write_output("-", j.dump(2) + "\n");
      if (query) print_diagnostic_totals(diagnostics, true, false, fleet_warnings);
      status = violations.empty() ? exit_ok : exit_invalid_plan;
      return;
    }
    for (std::size_t i = 0; i < violations.size(); ++i) {
      const auto& v = violations[i];
      out += fmt::format("{}{}: {}: {} [{}]\n", name,
                         spots[i] ? fmt::format(":{}:{}", spots[i]->line, spots[i]->column) : std::string(),
                         v.unit.empty() ? "plan" : v.unit, v.reason, to_string(v.kind));
    }
    if (violations.empty())
      out += fmt::format("{}: valid: {} units on {} ({} policy){}\n", name, plan.assignments.size(),
                         fleet.source, to_string(plan.policy),
                         query ? ", every GPU test of the query once" : "");
    else
      out += fmt::format("{}: invalid: {} violation{}\n", name, violations.size(),
                         util::plural(violations.size()));
    write_output("-", out);
    if (query) print_diagnostic_totals(diagnostics, true, false, fleet_warnings);
    status = violations.empty() ? exit_ok : exit_invalid_plan;
  });
}

}  // namespace gpuplan::cli
