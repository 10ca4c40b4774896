// gpuplan history summarize FILES... -o history.json: many runs into one compact rolling history.
// gpuplan history show LABEL --history FILE...: a test's samples and the estimate a plan would use.
// gpuplan history suggest --history FILE... --plan PLAN: what measured GPU use says of the tags.
#include <fmt/format.h>

#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.hpp"
#include "cli/history_input.hpp"
#include "cli/io.hpp"
#include "cli/number_options.hpp"
#include "cli/plan_input.hpp"
#include "cli/progress.hpp"
#include "cli/query_input.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/fleet.hpp"
#include "gpuplan/graph.hpp"
#include "gpuplan/rules.hpp"
#include "gpuplan/target.hpp"
#include "util/text.hpp"

namespace gpuplan::cli {

namespace {

struct HistoryOptions {
  std::vector<std::string> paths;
  std::string rules_path;
  std::string output = "-";
  std::string label;
  bool strict = false;
  bool json = false;  ///< history show: one JSON object instead of the text
  Rules rules;        ///< only the history knobs: percentile, window, VRAM headroom
  std::optional<double> percentile;
  std::optional<int> window;
  std::optional<int> max_age_days;  ///< summarize: leave out tests with no run in that many days
  std::string plan;                 ///< suggest: the plan whose GPU tests are judged
  std::string query;                ///< suggest: bazel query output, for the tests' annotations
  std::string fleet;                ///< suggest: the GPUs' memory
  AdviceOptions advice;

  /// The rules file's knobs, then the flags over them.
  void resolve_rules() {
    if (!rules_path.empty()) {
      Input input = open_input(rules_path);
      rules = load_rules(input.in(), input.name);
    }
    if (percentile) {
      if (auto problem = quantile_problem(*percentile); !problem.empty())
        throw InputError(Position{"--percentile"}, problem);
      rules.history_percentile = *percentile;
    }
    if (window) rules.history_window = *window;
  }
};

std::string seconds_text(double seconds) { return fmt::format("{:.3f}s", seconds); }

std::string unit_name(const SampleKey& key, const History& history) {
  if (!key.shard) return key.label;
  auto count = history.shard_counts.find(key.label);
  if (count == history.shard_counts.end()) return fmt::format("{} shard {}", key.label, *key.shard);
  return fmt::format("{} shard {} of {}", key.label, *key.shard, count->second);
}

int summarize_command(HistoryOptions& options) {
  options.resolve_rules();
  Diagnostics diagnostics;
  // A rolling history (`summarize history.json bep.json -o history.json`) has no file to read on
  // its first run: an input that is the output and does not exist yet starts it.
  if (options.output != "-" && !std::filesystem::exists(options.output)) {
    auto same = [&](const std::string& path) {
      return path != "-" && std::filesystem::absolute(path).lexically_normal() ==
                                std::filesystem::absolute(options.output).lexically_normal();
    };
    if (std::erase_if(options.paths, same) > 0)
      diagnostics.push_back(Diagnostic{Severity::note, "", options.output,
                                       "does not exist yet: the rolling history starts with this run"});
  }
  History history = read_history_paths(options.paths, options.strict, diagnostics);
  // Tests removed or moved since stay in a rolling history for ever without it.
  const long dropped = options.max_age_days
                           ? history.drop_tests_older_than(std::int64_t{*options.max_age_days} * 86'400'000)
                           : 0;
  Output output(options.output, true);  // history.json bep.json -o history.json: a rolling history
  progress::stage("writing " + output.name());
  write_summary(history, options.rules.history_window, output.sink());
  output.commit();
  progress::finish();
  const std::string counts = print_history_diagnostics(diagnostics);
  std::cerr << fmt::format(
      "gpuplan: {} sample{} of {} unit{} from {} input{}; {} cached results ignored{}{}; {}\n",
      history.sample_count(), util::plural(history.sample_count()), history.samples.size(),
      util::plural(history.samples.size()), options.paths.size(), util::plural(options.paths.size()),
      history.cached_results,
      history.skipped_runs > 0 ? fmt::format("; {} run{} that skipped every test case left out",
                                             history.skipped_runs, util::plural(history.skipped_runs))
                               : std::string(),
      options.max_age_days ? fmt::format("; {} test{} with no run in the {} day{} before the newest left out",
                                         dropped, util::plural(dropped), *options.max_age_days,
                                         util::plural(static_cast<long>(*options.max_age_days)))
                           : std::string(),
      counts);
  return exit_ok;
}

int show_command(HistoryOptions& options) {
  options.resolve_rules();
  Diagnostics diagnostics;
  std::string label = label_identity(options.label);
  // Only this test's runs are held: a monorepo's history is read through, not kept.
  History history = read_history_paths(options.paths, options.strict, diagnostics, {}, LabelFilter{label});
  std::cerr << fmt::format("gpuplan: {}\n", print_history_diagnostics(diagnostics));
  if (options.json) {
    nlohmann::ordered_json j;
    j["label"] = label;
    j["units"] = nlohmann::ordered_json::array();
    for (auto it = history.samples.lower_bound(SampleKey{label, std::nullopt});
         it != history.samples.end() && it->first.label == label; ++it) {
      nlohmann::ordered_json unit;
      unit["unit"] = unit_name(it->first, history);
      unit["shard"] = it->first.shard ? nlohmann::ordered_json(*it->first.shard) : nlohmann::ordered_json();
      unit["samples"] = it->second.size();
      unit["recent"] = nlohmann::ordered_json::array();
      for (const auto& sample : window_samples(it->second, options.rules.history_window)) {
        nlohmann::ordered_json s{
            {"seconds", sample.seconds}, {"timed_out", sample.timed_out}, {"failed", sample.failed}};
        if (sample.peak_vram_mib) s["peak_vram_mib"] = *sample.peak_vram_mib;
        if (sample.peak_up_front) s["peak_up_front"] = true;
        if (sample.given_no_gpu) s["given_no_gpu"] = true;
        if (sample.gpus_given) s["gpus"] = *sample.gpus_given;
        if (sample.gpus_asked) s["gpus_asked"] = *sample.gpus_asked;
        if (sample.filtered) s["filtered"] = true;
        unit["recent"].push_back(std::move(s));
      }
      // Without a query the test's GPU need is unknown: only filtered runs are left out here.
      if (auto estimate = estimate_from_samples(whole_runs(it->second, std::nullopt), options.rules)) {
        unit["estimate"] = {{"seconds", std::max(estimate->seconds, min_planned_seconds)},
                            {"source", estimate->source}};
        if (estimate->peak_vram_mib) unit["estimate"]["peak_vram_mib"] = *estimate->peak_vram_mib;
        // As the text says: a plan may give the test its size's default or median instead.
        if (estimate->source == "history-timeout") unit["estimate"]["lower_bound"] = true;
      } else {
        unit["estimate"] = nullptr;
      }
      j["units"].push_back(std::move(unit));
    }
    write_output("-", j.dump(2) + "\n");
    return exit_ok;
  }
  std::string out;
  for (auto it = history.samples.lower_bound(SampleKey{label, std::nullopt});
       it != history.samples.end() && it->first.label == label; ++it) {
    // The samples the estimate uses: the last window's, and older ones whose peak it still counts.
    auto recent = window_samples(it->second, options.rules.history_window);
    const std::size_t last = recent_samples(it->second, options.rules.history_window).size();
    out += fmt::format("{}: {} {}; the last {}{}, oldest first:\n", unit_name(it->first, history),
                       it->second.size(), it->second.size() == 1 ? "sample" : "samples", last,
                       recent.size() > last
                           ? fmt::format(" and {} older that measured memory", recent.size() - last)
                           : std::string());
    for (const auto& sample : recent) {
      out += fmt::format("  {:>12}", seconds_text(sample.seconds));
      if (sample.peak_vram_mib)
        out += fmt::format("  peak {} MiB{}", *sample.peak_vram_mib,
                           sample.peak_up_front ? " (taken up front)" : "");
      if (sample.timed_out) out += "  timed out (at least this long)";
      if (sample.failed) out += "  failed";
      if (sample.given_no_gpu) out += "  given no GPU (left out if the test needs one)";
      if (sample.gpus_given.value_or(0) > 0)
        out += fmt::format("  given {} GPU{}{} (left out if the test needs more{})", *sample.gpus_given,
                           *sample.gpus_given == 1 ? "" : "s",
                           !sample.gpus_asked ? std::string()
                           : *sample.gpus_asked <= *sample.gpus_given
                               ? std::string(", all it asked for then")
                               : fmt::format(" of the {} it asked for then", *sample.gpus_asked),
                           *sample.gpus_given == 1 ? "" : " or asks for fewer");
      if (sample.filtered) out += "  filtered to some test cases (left out)";
      out += '\n';
    }
    auto estimate = estimate_from_samples(whole_runs(it->second, std::nullopt), options.rules);
    if (!estimate) {
      out += "  estimate: none (every run was filtered to some test cases)\n";
      continue;
    }
    // As the plan takes it: never under 1 ms (before, "0.000s" of a test the plan gives 1 ms), and
    // a timeout only a lower bound, which the test's size default or its size's median may exceed
    // (before, "estimate: 1.081s" alone of a test the plan gave its 60 s default).
    out += fmt::format("  estimate: {} ({})", seconds_text(std::max(estimate->seconds, min_planned_seconds)),
                       estimate->source);
    if (estimate->source == "history-timeout")
      out +=
          ", a lower bound: its runs only timed out, and a plan takes the test's size default or its "
          "size's median where longer";
    if (estimate->peak_vram_mib)
      out += fmt::format(", VRAM {} MiB (peak plus {:g}% headroom)", *estimate->peak_vram_mib,
                         options.rules.vram_headroom * 100);
    else if (std::any_of(recent.begin(), recent.end(),
                         [](const Sample& s) { return s.peak_vram_mib && !s.peak_up_front; }))
      out += ", VRAM unknown (every peak is of a run that failed or was cut short)";
    else if (std::any_of(recent.begin(), recent.end(), [](const Sample& s) { return s.peak_up_front; }))
      out += fmt::format(
          ", VRAM unknown (every peak is memory its framework took up front, {:.0f}% or more of "
          "its GPU's)",
          up_front_share * 100);
    out += '\n';
  }
  if (out.empty())
    out = fmt::format("{}: no history; a plan uses the median of its size class, else the size default\n",
                      label);
  write_output("-", out);
  return exit_ok;
}

/// The GPU tests of --plan and --query: the plan says where each ran, the query what it declared.
std::vector<AdvisedTest> advised_tests(const HistoryOptions& options) {
  std::map<std::string, AdvisedTest> tests;
  if (!options.plan.empty()) {
    Plan plan = read_plan(options.plan);
    auto add = [&](const Unit& unit, const std::string& node) {
      auto& test = tests[label_identity(unit.label)];
      // The declared gpu-mem only: a floor the plan took from the runs ("gpu_mem_measured") is
      // no tag (before, it was judged as one: "declared gpu-mem far above use", of a number no
      // one wrote). A shard given a floor may come before one that keeps the tag.
      const auto& r = *unit.requirement;
      if (!test.gpu_mem_mib && r.gpu_mem_mib && !gpu_mem_measured(r)) test.gpu_mem_mib = r.gpu_mem_mib->value;
      if (gpu_mem_measured(r))
        test.gpu_mem_floor_mib = std::max(test.gpu_mem_floor_mib.value_or(0), r.gpu_mem_mib->value);
      if (!test.label.empty()) return;
      test.label = label_identity(unit.label);
      // A plan keeps no tags; cpu-only beside them would be a conflict (CPU-only wins, a warning).
      test.cpu_change = "remove its GPU annotations (--query names them)";
      test.planned_node = node;
      test.shard_count = unit.shard_count;
    };
    for (const auto& a : plan.assignments) add(a.unit, a.node);
    for (const auto& u : plan.unschedulable) add(u.unit, "");
  }
  if (!options.query.empty()) {
    QueryOptions query;
    query.targets.path = options.query;
    query.rules = options.rules_path;
    query.strict = options.strict;
    for (const auto& c : read_and_classify(query, read_rules(query), true).tests) {
      if (c.bucket != Bucket::gpu) continue;
      auto& test = tests[label_identity(c.target.label)];
      test.label = label_identity(c.target.label);
      test.gpu_mem_mib.reset();
      test.gpu_mem_source.clear();
      test.gpu_mem_floor_mib.reset();  // the query says what the test declares
      if (c.requirement->gpu_mem_mib) {
        test.gpu_mem_mib = c.requirement->gpu_mem_mib->value;
        test.gpu_mem_source = c.requirement->gpu_mem_mib->source;
      }
      test.shard_count = std::max(1, c.target.shard_count);
      auto removal = gpu_annotation_removal(c);
      test.cpu_change = removal.empty() ? "add tag cpu-only" : removal;
    }
  }
  std::vector<AdvisedTest> list;
  list.reserve(tests.size());
  for (auto& [label, test] : tests) list.push_back(std::move(test));
  return list;
}

std::string mib_text(std::optional<std::int64_t> mib) { return mib ? fmt::format("{} MiB", *mib) : "-"; }

std::string advice_text(const HistoryAdvice& advice, const AdviceOptions& options) {
  std::string out;
  auto section = [&](AdviceKind kind, std::string_view title) {
    std::vector<const Advice*> list;
    for (const auto& a : advice.advice)
      if (a.kind == kind) list.push_back(&a);
    out += fmt::format("{}{} ({})\n", out.empty() ? "" : "\n", title, list.size());
    for (const auto* a : list) {
      out += fmt::format("  {}\n", a->label);
      if (kind == AdviceKind::never_touched_gpu)
        out += fmt::format("      measured: no GPU touched in {} run{}\n", a->runs, util::plural(a->runs));
      else if (kind == AdviceKind::near_capacity)
        // The peak is held against the smallest GPU the test ran on, which need not be where it was
        // measured: "peak 30000 of 24576 MiB on l4-0" read as if l4-0 had held 30000 MiB.
        out += a->peak_node == a->node
                   ? fmt::format("      measured: peak {} of {} on {} (headroom {:g}%)\n",
                                 mib_text(a->peak_vram_mib), mib_text(a->gpu_vram_mib), a->node,
                                 options.vram_headroom * 100)
                   : fmt::format(
                         "      measured: peak {} on {}; held against {} on {}, the smallest GPU it "
                         "ran on (headroom {:g}%)\n",
                         mib_text(a->peak_vram_mib),
                         a->peak_node.empty() ? std::string("a node its runs do not name")
                         : a->peak_gpu_vram_mib
                             ? fmt::format("{} ({})", a->peak_node, mib_text(a->peak_gpu_vram_mib))
                             : a->peak_node,
                         mib_text(a->gpu_vram_mib), a->node, options.vram_headroom * 100);
      else if (kind == AdviceKind::memory_up_front)
        out += fmt::format("      measured: peak {} in {} run{}, {:.0f}% or more of its GPU's memory\n",
                           mib_text(a->peak_vram_mib), a->runs, util::plural(a->runs), up_front_share * 100);
      else
        out += fmt::format("      measured: peak {}, declared {}\n", mib_text(a->peak_vram_mib),
                           mib_text(a->declared_mib));
      out += fmt::format("      change: {}\n", a->change);
    }
  };
  section(AdviceKind::never_touched_gpu,
          fmt::format("GPU tests that touched no GPU in their last {} runs: candidates for the CPU bucket",
                      options.last));
  section(AdviceKind::near_capacity, "GPU tests whose peak memory comes within the headroom of their GPU's");
  section(
      AdviceKind::gpu_mem_too_high,
      fmt::format("GPU tests whose declared gpu-mem is {:g}x or more what they use", options.over_factor));
  section(AdviceKind::memory_up_front,
          "GPU tests whose peak is memory their framework took up front (JAX, TensorFlow): what they need "
          "is unknown");
  return out;
}

std::string advice_json(const HistoryAdvice& advice, const AdviceOptions& options) {
  nlohmann::ordered_json j;
  j["last"] = options.last;
  j["vram_headroom"] = options.vram_headroom;
  j["tests"] = advice.tests;
  j["measured_tests"] = advice.measured;
  auto optional = [](std::optional<std::int64_t> v) {
    return v ? nlohmann::ordered_json(*v) : nlohmann::ordered_json();
  };
  for (auto kind : {AdviceKind::never_touched_gpu, AdviceKind::near_capacity, AdviceKind::gpu_mem_too_high,
                    AdviceKind::memory_up_front}) {
    auto& list = j[std::string(to_string(kind))] = nlohmann::ordered_json::array();
    for (const auto& a : advice.advice) {
      if (a.kind != kind) continue;
      nlohmann::ordered_json o{
          {"label", a.label}, {"runs", a.runs}, {"peak_vram_mib", optional(a.peak_vram_mib)}};
      if (kind == AdviceKind::near_capacity) {
        o["gpu_vram_mib"] = optional(a.gpu_vram_mib);
        o["node"] = a.node;
        o["peak_node"] = a.peak_node.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(a.peak_node);
      }
      o["declared_gpu_mem_mib"] = optional(a.declared_mib);
      if (kind == AdviceKind::near_capacity || kind == AdviceKind::gpu_mem_too_high)
        o["suggested_gpu_mem_mib"] = optional(a.suggested_mib);
      o["change"] = a.change;
      list.push_back(std::move(o));
    }
  }
  return j.dump(2) + "\n";
}

int suggest_command(HistoryOptions& options) {
  if (options.plan.empty() && options.query.empty())
    throw InputError(Position{"history suggest"},
                     "which tests are GPU tests? give --plan PLAN (and/or --query QUERY for their tags)");
  options.resolve_rules();
  options.advice.vram_headroom = options.rules.vram_headroom;
  long fleet_warnings = 0;
  if (!options.fleet.empty()) {
    Input input = open_input(options.fleet);
    const Fleet fleet = load_fleet(input.in(), input.name);
    fleet_warnings = print_fleet_warnings(fleet, options.strict);
    for (const auto& node : fleet.nodes) {
      std::int64_t smallest = 0;
      for (const auto& gpu : node.gpus) {
        smallest = smallest == 0 ? gpu.vram_mib : std::min(smallest, gpu.vram_mib);
        options.advice.largest_gpu_mib = std::max(options.advice.largest_gpu_mib, gpu.vram_mib);
      }
      if (smallest > 0) options.advice.node_vram_mib[node.name] = smallest;
    }
  }
  auto tests = advised_tests(options);
  Diagnostics diagnostics;
  std::map<std::string, int> shards_now;
  for (const auto& test : tests)
    if (test.shard_count > 1) shards_now[label_identity(test.label)] = test.shard_count;
  History history = read_history_paths(options.paths, options.strict, diagnostics, shards_now);
  print_history_diagnostics(diagnostics);
  auto advice = advise(history, tests, options.advice);
  for (auto& diagnostic : advice.unjudged) {
    if (options.strict) diagnostic.severity = Severity::error;
    std::cerr << fmt::format("gpuplan: {}: {}: {}\n", to_string(diagnostic.severity), diagnostic.label,
                             diagnostic.message);
    diagnostics.push_back(diagnostic);
  }
  const bool failed = options.strict && !advice.unjudged.empty();
  if (!failed)
    write_output(options.output,
                 options.json ? advice_json(advice, options.advice) : advice_text(advice, options.advice));
  std::cerr << fmt::format(
      "gpuplan: {} GPU tests, {} with measured GPU use in their last {} runs; {} suggestions{}{}; {}\n",
      advice.tests, advice.measured, options.advice.last, advice.advice.size(),
      options.fleet.empty() ? " (without --fleet, no GPU memory to hold peaks against)" : "",
      advice.unjudged.empty()
          ? ""
          : fmt::format("; {} tests judged without their nodes' GPUs (nodes not in {}, or none known){}",
                        advice.unjudged.size(), options.fleet, failed ? ", an error under --strict" : ""),
      diagnostic_counts(diagnostics, fleet_warnings));
  return failed ? exit_bad_input : exit_ok;
}

}  // namespace

void add_history_command(CLI::App& app, int& status) {
  auto options = std::make_shared<HistoryOptions>();
  auto* history = app.add_subcommand("history", "Learn test durations and GPU memory from past runs");
  history->require_subcommand(1);

  auto* summarize = history->add_subcommand(
      "summarize",
      "Merge runs (BEP JSON, bazel-testlogs, CSV/JSON, earlier summaries) into one compact history file");
  summarize
      ->add_option("files", options->paths, "History inputs, oldest first; directories are bazel-testlogs")
      ->required();
  summarize->add_option("-o,--output", options->output,
                        "Where to write the summary (default: standard output)");
  summarize
      ->add_option("--window", options->window,
                   "Samples kept per unit, the newest (default: the rules' history_window, 20)")
      ->transform(whole_number(1, 100000));
  summarize
      ->add_option("--max-age", options->max_age_days,
                   "Leave out tests with no run in the DAYS before the newest run read (removed or moved)")
      ->transform(whole_number(1, 100000));
  summarize->add_option("--rules", options->rules_path, "Rules file whose history_window applies");
  summarize->add_flag("--strict", options->strict, "A bad row is an error (exit 2), not a warning");
  progress::add_quiet_flag(*summarize);
  summarize->callback([options, &status] { status = summarize_command(*options); });

  auto* show = history->add_subcommand("show", "Print a test's samples and the estimate a plan would use");
  show->add_option("label", options->label, "The test's label")->required();
  show->add_option("--history", options->paths, "History inputs (repeatable), oldest first")
      ->required()
      ->allow_extra_args(false);
  show->add_option("--percentile", options->percentile,
                   "The percentile of the recent samples (default: the rules', 90)")
      ->check(finite_number(0, 100));
  show->add_option("--window", options->window,
                   "Recent samples per unit that count (default: the rules', 20)")
      ->transform(whole_number(1, 100000));
  show->add_option("--rules", options->rules_path,
                   "Rules file with history_percentile, history_window, vram_headroom");
  show->add_flag("--strict", options->strict, "A bad row is an error (exit 2), not a warning");
  show->add_flag(
      "--json", options->json,
      "Print {label, units: [{unit, shard, samples, recent: [{seconds, timed_out, failed, peak_vram_mib}], "
      "estimate: {seconds, source, peak_vram_mib}}]} (units empty: no history)");
  show->callback([options, &status] { status = show_command(*options); });

  auto* suggest = history->add_subcommand(
      "suggest",
      "From measured GPU use (results records' gpu_touched, peak_vram_mib): GPU tests that never touched a "
      "GPU, peaks near their GPU's memory, declared gpu-mem far above use, peaks that are memory taken up "
      "front; each with the tag change");
  suggest->add_option("--history", options->paths, "History inputs (repeatable), oldest first")
      ->required()
      ->allow_extra_args(false);
  suggest->add_option("--plan", options->plan, "the plan: its GPU tests, their gpu-mem and nodes");
  suggest->add_option("--query", options->query,
                      "bazel query output: GPU tests by their tags, and the exact tags to change");
  suggest->add_option("--fleet", options->fleet, "the fleet: each node's GPU memory, to hold peaks against");
  suggest->add_option("--rules", options->rules_path, "Rules file (vram_headroom; the rules of --query)");
  suggest->add_option("--last", options->advice.last, "the runs that count: each unit's newest N")
      ->transform(whole_number(1, 100000))
      ->capture_default_str();
  suggest
      ->add_option("--min-runs", options->advice.min_runs,
                   "measured runs a test needs before it is called CPU-only")
      ->transform(whole_number(1, 100000))
      ->capture_default_str();
  suggest
      ->add_option("--over", options->advice.over_factor,
                   "a declared gpu-mem this many times the peak plus headroom (and 1 GiB more) is too high")
      ->check(finite_number(1, 1000))
      ->capture_default_str();
  suggest->add_flag("--strict", options->strict,
                    "A bad row, a fleet warning, or a peak whose node the fleet lacks, is an error (exit 2), "
                    "not a warning");
  suggest->add_flag(
      "--json", options->json,
      "Print {last, vram_headroom, tests, measured_tests, never-touched-gpu: [...], near-capacity: "
      "[...], gpu-mem-too-high: [...], memory-up-front: [...]}, each entry {label, runs, peak_vram_mib, ..., "
      "change}");
  suggest->add_option("-o,--output", options->output, "write the report to this file instead of stdout");
  suggest->callback([options, &status] { status = suggest_command(*options); });
}

}  // namespace gpuplan::cli
