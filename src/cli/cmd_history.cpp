// gpuplan history summarize FILES... -o history.json: many runs into one compact rolling history.
// gpuplan history show LABEL --history FILE...: a test's samples and the estimate a plan would use.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>

#include "cli/commands.hpp"
#include "cli/history_input.hpp"
#include "cli/io.hpp"
#include "cli/progress.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/rules.hpp"
#include "gpuplan/target.hpp"

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

  /// The rules file's knobs, then the flags over them.
  void resolve_rules() {
    if (!rules_path.empty()) {
      Input input = open_input(rules_path);
      rules = load_rules(input.in(), input.name);
    }
    if (percentile) rules.history_percentile = *percentile;
    if (window) rules.history_window = *window;
  }
};

void print_warnings(const Diagnostics& diagnostics) {
  for (const auto& diagnostic : diagnostics)
    std::cerr << fmt::format("gpuplan: {}: {}: {}\n", to_string(diagnostic.severity), diagnostic.source,
                             diagnostic.message);
}

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
  History history = read_history_paths(options.paths, options.strict, diagnostics);
  Output output(options.output);
  progress::stage("writing " + output.name());
  write_summary(history, options.rules.history_window, output.sink());
  output.commit();
  progress::finish();
  print_warnings(diagnostics);
  std::cerr << fmt::format("gpuplan: {} samples of {} units from {} inputs; {} cached results ignored\n",
                           history.sample_count(), history.samples.size(), options.paths.size(),
                           history.cached_results);
  return exit_ok;
}

int show_command(HistoryOptions& options) {
  options.resolve_rules();
  Diagnostics diagnostics;
  History history = read_history_paths(options.paths, options.strict, diagnostics);
  print_warnings(diagnostics);
  std::string label = canonical_label(options.label);
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
      for (const auto& sample : recent_samples(it->second, options.rules.history_window)) {
        nlohmann::ordered_json s{{"seconds", sample.seconds}, {"timed_out", sample.timed_out}};
        if (sample.peak_vram_mib) s["peak_vram_mib"] = *sample.peak_vram_mib;
        unit["recent"].push_back(std::move(s));
      }
      auto estimate = estimate_from_samples(it->second, options.rules);
      unit["estimate"] = {{"seconds", estimate->seconds}, {"source", estimate->source}};
      if (estimate->peak_vram_mib) unit["estimate"]["peak_vram_mib"] = *estimate->peak_vram_mib;
      j["units"].push_back(std::move(unit));
    }
    write_output("-", j.dump(2) + "\n");
    return exit_ok;
  }
  std::string out;
  for (auto it = history.samples.lower_bound(SampleKey{label, std::nullopt});
       it != history.samples.end() && it->first.label == label; ++it) {
    auto recent = recent_samples(it->second, options.rules.history_window);
    out += fmt::format("{}: {} {}; the last {}, oldest first:\n", unit_name(it->first, history),
                       it->second.size(), it->second.size() == 1 ? "sample" : "samples", recent.size());
    for (const auto& sample : recent) {
      out += fmt::format("  {:>12}", seconds_text(sample.seconds));
      if (sample.peak_vram_mib) out += fmt::format("  peak {} MiB", *sample.peak_vram_mib);
      if (sample.timed_out) out += "  timed out (at least this long)";
      out += '\n';
    }
    auto estimate = estimate_from_samples(it->second, options.rules);
    out += fmt::format("  estimate: {} ({})", seconds_text(estimate->seconds), estimate->source);
    if (estimate->peak_vram_mib)
      out += fmt::format(", VRAM {} MiB (peak plus {:g}% headroom)", *estimate->peak_vram_mib,
                         options.rules.vram_headroom * 100);
    out += '\n';
  }
  if (out.empty())
    out = fmt::format("{}: no history; a plan uses the median of its size class, else the size default\n",
                      label);
  write_output("-", out);
  return exit_ok;
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
      ->check(CLI::Range(1, 100000));
  summarize->add_option("--rules", options->rules_path, "Rules file whose history_window applies");
  summarize->add_flag("--strict", options->strict, "A bad row is an error (exit 2), not a warning");
  progress::add_quiet_flag(*summarize);
  summarize->callback([options, &status] { status = summarize_command(*options); });

  auto* show = history->add_subcommand("show", "Print a test's samples and the estimate a plan would use");
  show->add_option("label", options->label, "The test's label")->required();
  show->add_option("--history", options->paths, "History inputs (repeatable), oldest first")->required();
  show->add_option("--percentile", options->percentile,
                   "The percentile of the recent samples (default: the rules', 90)")
      ->check(CLI::Range(0.0, 100.0));
  show->add_option("--window", options->window,
                   "Recent samples per unit that count (default: the rules', 20)")
      ->check(CLI::Range(1, 100000));
  show->add_option("--rules", options->rules_path,
                   "Rules file with history_percentile, history_window, vram_headroom");
  show->add_flag("--strict", options->strict, "A bad row is an error (exit 2), not a warning");
  show->add_flag(
      "--json", options->json,
      "Print {label, units: [{unit, shard, samples, recent: [{seconds, timed_out, peak_vram_mib}], "
      "estimate: {seconds, source, peak_vram_mib}}]} (units empty: no history)");
  show->callback([options, &status] { status = show_command(*options); });
}

}  // namespace gpuplan::cli
