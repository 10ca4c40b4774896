// gpuplan explain LABEL [FILE]: why a test is in its bucket, where each requirement came from,
// and, for deps(...) input, its shortest path to GPU code.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "cli/commands.hpp"
#include "cli/history_input.hpp"
#include "cli/io.hpp"
#include "cli/query_input.hpp"
#include "gpuplan/emit.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/plan.hpp"
#include "util/rounding.hpp"

namespace gpuplan::cli {

namespace {

struct ExplainArgs {
  std::string label;
  QueryOptions query;
  std::vector<std::string> history;
  std::string policy = "exact";
  std::string shards = "per-shard";
  bool json = false;
};

const ClassifiedTest& find_test(const Classification& c, const std::string& label, const std::string& input) {
  auto wanted = label_identity(label);
  auto found = std::find_if(c.tests.begin(), c.tests.end(), [&](const ClassifiedTest& t) {
    return label_identity(t.target.label) == wanted;
  });
  if (found != c.tests.end()) return *found;
  // The nearest label by shared prefix, to catch typos in the target name; a label written
  // without its // (ml:train_test) is compared with it, a bare name (train_test) with the names.
  const bool bare = label.find(':') == std::string::npos && label.find('/') == std::string::npos;
  if (bare)
    wanted = label;
  else if (!label.starts_with("//") && !label.starts_with("@"))
    wanted = label_identity("//" + label);
  const ClassifiedTest* nearest = nullptr;
  size_t best = 0;
  for (const auto& t : c.tests) {
    auto other = canonical_label(t.target.label);
    if (bare) other = other.substr(other.rfind(':') + 1);
    auto common = static_cast<size_t>(
        std::mismatch(wanted.begin(), wanted.end(), other.begin(), other.end()).first - wanted.begin());
    if (common > best) best = common, nearest = &t;
  }
  auto name = input.empty() || input == "-" ? std::string("<stdin>") : input;
  throw InputError(
      Position{name},
      fmt::format("{} is not one of the {} tests read{}", label, c.tests.size(),
                  nearest ? fmt::format(" (did you mean {}?)", nearest->target.label) : std::string()));
}

/// What the dependency graph says of the test, when the input carried one.
GpuPathView graph_view(const DepsInput& deps, const Classification& tests, const ClassifiedTest& test,
                       const std::map<std::string, std::string>& used_gpu) {
  GpuPathView view;
  auto node = deps.graph.find(canonical_label(test.target.label));
  view.present = deps.graph.edge_count() > 0 && node.has_value();
  if (!view.present) return view;
  if (deps.reach->unknown(*node)) view.undeclared = deps.graph.label(deps.reach->first_undeclared(*node));
  view.reaches = deps.reach->reaches(*node);
  if (!view.reaches && view.undeclared.empty() && test.bucket == Bucket::gpu) {
    auto blind = blind_tests(tests, deps.graph, *deps.reach, used_gpu);
    const std::string& rule_class = test.target.rule_class.str();
    view.blind_reason = blind.reason(canonical_label(test.target.label), rule_class);
    view.without_implicit = blind.without_implicit.contains(canonical_label(test.target.label));
    if (auto used = blind.used_gpu.find(label_identity(test.target.label)); used != blind.used_gpu.end())
      view.used_gpu = used->second;
    else if (!view.blind_reason.empty() && !view.without_implicit)
      view.blind = rule_class;
    if (blind.unsupplied.contains(canonical_label(test.target.label)))
      view.suppliers = blind.suppliers.at(rule_class);
  }
  for (auto step : deps.reach->path(*node)) view.path.emplace_back(deps.graph.label(step));
  if (!view.path.empty()) {
    auto gpu_code = *deps.graph.find(view.path.back());
    view.pattern = deps.reach->matched_pattern(gpu_code);
    view.file_kind = deps.reach->file_kind(gpu_code);
    view.linkopt = deps.reach->linkopt(gpu_code);
    if (view.pattern.empty() && view.file_kind.empty() && view.linkopt.empty())
      view.rule_class = deps.graph.rule_class(gpu_code);
  }
  return view;
}

/// The test's units as `plan` makes them under `mode` and `policy`, each with the duration the plan
/// gives it: the estimate, summed over the shards of a test planned whole, slowed down by
/// `pack_slowdown` where it shares its GPU under `pack`, in whole milliseconds. Before, explain
/// showed each shard's estimate whatever the plan's --shards and --policy, so a test planned
/// whole (3600 s) or slowed down (90 s) read 900 s a shard, or 60 s.
std::vector<ShardEstimate> planned_units(const ClassifiedTest& test,
                                         const std::vector<ShardEstimate>& per_shard,
                                         const Estimator& estimate, const Rules& rules, ShardMode mode,
                                         Policy policy) {
  std::vector<ShardEstimate> planned;
  if (test.bucket != Bucket::gpu) return planned;
  Classification one;
  one.tests.push_back(test);
  for (const auto& unit : make_units(one, mode, estimate, rules)) {
    ShardEstimate row{unit.shard_index, Estimate{unit.duration_s, unit.duration_source.str(), std::nullopt}};
    if (shares_gpu(unit, policy)) row.slowdown = rules.pack_slowdown;
    row.estimate.seconds = util::json_seconds(unit.duration_s * row.slowdown);
    // A shard's measured memory; of a sharded test planned whole, the most of its shards', known
    // only where every shard measured it (as make_units reserves it).
    bool every_shard = true;
    for (const auto& s : per_shard) {
      if (unit.shard_index && s.shard != unit.shard_index) continue;
      if (!s.estimate.peak_vram_mib)
        every_shard = false;
      else
        row.estimate.peak_vram_mib =
            std::max(row.estimate.peak_vram_mib.value_or(0), *s.estimate.peak_vram_mib);
    }
    if (!every_shard) row.estimate.peak_vram_mib.reset();
    planned.push_back(std::move(row));
  }
  return planned;
}

/// The units of `test` that history gives a memory floor, as `plan` makes them (a unit a shard):
/// the GPU memory the plan requires of them, which no tag of the test says. Before, explain
/// showed none of it, and a test planned only onto 80 GB GPUs looked as if any GPU would do.
std::vector<MemoryFloorView> memory_floors(const ClassifiedTest& test,
                                           const std::vector<ShardEstimate>& estimates,
                                           const Estimator& estimate, const Rules& rules, ShardMode mode) {
  std::vector<MemoryFloorView> floors;
  if (test.bucket != Bucket::gpu) return floors;
  Classification one;
  one.tests.push_back(test);
  for (const auto& unit : make_units(one, mode, estimate, rules)) {
    if (!gpu_mem_measured(*unit.requirement)) continue;
    MemoryFloorView floor;
    floor.shard = unit.shard_index;
    floor.peak_mib = unit.requirement->gpu_mem_mib->value;
    floor.vram_headroom = rules.vram_headroom;
    floor.with_headroom_mib = with_headroom(floor.peak_mib, rules.vram_headroom);
    floor.vram_mib = unit.vram_mib;
    auto e = std::find_if(estimates.begin(), estimates.end(),
                          [&](const ShardEstimate& s) { return s.shard == unit.shard_index; });
    if (e != estimates.end() && e->estimate.least_vram_mib)
      floor.with_headroom_mib = *e->estimate.least_vram_mib;
    floor.measured_by = e != estimates.end() && e->estimate.source.ends_with("-other-shards")
                            ? "its other shards' runs"
                            : "its runs that failed or were cut short";
    floors.push_back(std::move(floor));
  }
  return floors;
}

}  // namespace

void add_explain_command(CLI::App& app, int& status) {
  auto args = std::make_shared<ExplainArgs>();
  auto* command = app.add_subcommand("explain",
                                     "Show a test's tags and attributes, each requirement derived from them "
                                     "with its source, and its bucket");
  command->add_option("LABEL", args->label, "the test, e.g. //ml:train_test")->required();
  add_query_options(*command, args->query);
  add_untagged_option(*command, args->query);  // as plan: before, no word of the guess plan warns of
  command
      ->add_option(
          "--history", args->history,
          "past runs (BEP JSON, JUnit XML, CSV, bazel-testlogs; repeatable) for the planned duration")
      ->allow_extra_args(false);
  command
      ->add_option("--policy", args->policy,
                   "the plan's policy, for the planned duration (pack slows shared units down)")
      ->check(CLI::IsMember({"whole-node", "exact", "pack"}));
  command
      ->add_option("--shards", args->shards,
                   "the plan's --shards, for the planned duration: per-shard (default) or whole")
      ->check(CLI::IsMember({"per-shard", "whole"}));
  command->add_flag("--json", args->json, "print JSON instead of text");
  command->callback([args, &status] {
    auto rules = read_rules(args->query);
    Diagnostics history_diagnostics;
    QueryOptions query = args->query;
    // Read with the query's shard counts, as `plan` reads it (before, without them: stale
    // shard_N_of_M folders beside today's won, with a warning, and explain disagreed with plan).
    std::optional<History> history;
    read_history_for_classifying(args->history, query, rules, history, history_diagnostics);
    // --strict is about this test (and the input as a whole), not the others in the file: what it
    // makes errors of is as for every command, and only this test's stop the run.
    query.refuse_errors = false;
    DepsInput deps;
    auto classification = read_and_classify(query, rules, true, &deps);
    if (!history)
      history = read_history_option(args->history, args->query.strict, history_diagnostics,
                                    shard_counts_now(classification));
    const auto used = used_gpu(history, rules);
    check_history_against_tests(history, rules, classification, false);
    const auto& test = find_test(classification, args->label, args->query.targets.path);
    Diagnostics own;
    std::copy_if(classification.diagnostics.begin(), classification.diagnostics.end(),
                 std::back_inserter(own), [&](const Diagnostic& d) {
                   return d.label.empty() || d.label == canonical_label(test.target.label);
                 });
    auto estimate = estimator_for(history, rules, classification);
    const ShardMode mode = args->shards == "whole" ? ShardMode::whole : ShardMode::per_shard;
    const auto estimates = planned_durations(test, estimate);
    auto floors = memory_floors(test, estimates, estimate, rules, mode);
    Explanation explanation{&test,
                            planned_units(test, estimates, estimate, rules, mode,
                                          parse_policy(args->policy).value_or(Policy::exact)),
                            std::move(own),
                            graph_view(deps, classification, test, used),
                            std::move(floors),
                            rules.vram_headroom};
    explanation.diagnostics.insert(explanation.diagnostics.end(), history_diagnostics.begin(),
                                   history_diagnostics.end());
    if (args->query.strict)  // check_history_against_tests was asked not to stop on the others'
      for (auto& d : explanation.diagnostics)
        if (d.severity == Severity::warning && d.source == "--history") d.severity = Severity::error;
    write_output("-", args->json ? explanation_to_json(explanation) : render_explanation(explanation));
    print_diagnostic_totals(explanation.diagnostics, false, true);
    status = has_errors(explanation.diagnostics) ? exit_bad_input : exit_ok;
  });
}

}  // namespace gpuplan::cli
