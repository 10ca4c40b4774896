#include "cli/query_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "cli/io.hpp"
#include "cli/progress.hpp"
#include "gpuplan/error.hpp"

namespace gpuplan::cli {

void add_query_options(CLI::App& command, QueryOptions& options) {
  add_targets_input(command, options.targets);
  command.add_option("--rules", options.rules, "the repository's own conventions and knobs (YAML)");
  command.add_flag("--strict", options.strict,
                   "conflicting or malformed annotations are errors (exit 2), not warnings");
  command.add_flag("--include-manual", options.include_manual, "plan tests tagged manual too");
}

Rules read_rules(const QueryOptions& options) {
  if (options.rules.empty()) return Rules{};
  auto input = open_input(options.rules);
  return load_rules(input.in(), input.name);
}

void add_untagged_option(CLI::App& command, QueryOptions& options) {
  options.refuse_untagged = true;
  command.add_flag("--allow-untagged", options.allow_untagged,
                   "plan labels-only input (--output=label) even with no tags and no rules that read labels");
}

namespace {

std::string input_name(const QueryOptions& options) {
  const auto& path = options.targets.path;
  return path.empty() || path == "-" ? std::string("<stdin>") : path;
}

/// Labels-only input that nothing can classify: every test would silently be a CPU test.
void refuse_untagged(const QueryOptions& options, const TargetList& targets, const Rules& rules) {
  if (!options.refuse_untagged || options.allow_untagged || targets.tests.empty()) return;
  if (std::any_of(targets.tests.begin(), targets.tests.end(),
                  [](const Target& t) { return t.has_attributes; }))
    return;
  if (std::any_of(rules.rules.begin(), rules.rules.end(),
                  [](const Rule& r) { return r.label || (r.rule_class && !r.tag && !r.generator_function); }))
    return;
  throw InputError(
      Position{input_name(options)},
      fmt::format(
          "the input is {} output: labels without tags, so all {} tests would be planned as CPU tests. "
          "Give the tags: bazel query --output=xml (or --output=streamed_jsonproto), or join them with "
          "--attrs FILE, or classify by label with --rules; --allow-untagged plans it anyway",
          targets.format.empty() ? "labels-only" : targets.format, targets.tests.size()));
}

}  // namespace

void print_fleet_warnings(const Fleet& fleet) {
  for (const auto& w : fleet.warnings) std::cerr << fmt::format("gpuplan: warning: {}\n", w);
}

void print_diagnostic_totals(const Diagnostics& diagnostics, bool list_warnings) {
  constexpr long shown = 10;
  long warnings = 0, notes = 0, errors = 0;
  std::string first;
  for (const auto& d : diagnostics) {
    if (d.severity == Severity::note) {
      ++notes;
      continue;
    }
    (d.severity == Severity::error ? errors : warnings)++;
    if (first.empty() && !d.label.empty()) first = d.label;
    if (list_warnings && warnings + errors <= shown)
      std::cerr << fmt::format("gpuplan: {}: {}{}{}\n", to_string(d.severity), d.label,
                               d.label.empty() ? "" : ": ", d.message);
  }
  if (list_warnings && warnings + errors > shown)
    std::cerr << fmt::format("gpuplan: … and {} more\n", warnings + errors - shown);
  std::string counts = fmt::format("{} warning{}, {} note{}", warnings, warnings == 1 ? "" : "s", notes,
                                   notes == 1 ? "" : "s");
  if (errors > 0) counts = fmt::format("{} error{}, {}", errors, errors == 1 ? "" : "s", counts);
  std::cerr << fmt::format("gpuplan: {}; gpuplan explain {} for one test\n", counts,
                           first.empty() ? "LABEL" : first);
}

Classification read_and_classify(const QueryOptions& options, const Rules& rules, bool annotations) {
  auto targets = read_targets_input(options.targets);
  refuse_untagged(options, targets, rules);
  progress::stage(fmt::format("classifying {} tests", targets.tests.size()));
  auto classification =
      classify(std::move(targets), rules, {options.include_manual, options.strict, annotations});
  if (!has_errors(classification.diagnostics)) return classification;
  std::string errors;
  long count = 0;
  for (const auto& d : classification.diagnostics) {
    if (d.severity != Severity::error) continue;
    ++count;
    errors += fmt::format("\n  {}: {}", d.label, d.message);
  }
  throw InputError(Position{input_name(options)},
                   fmt::format("{} annotation error{} (--strict):{}", count, count == 1 ? "" : "s", errors));
}

Classification without_gpu_tests(Classification tests, long& gpu_tests) {
  auto is_gpu = [](const ClassifiedTest& t) { return t.bucket == Bucket::gpu; };
  gpu_tests = std::count_if(tests.tests.begin(), tests.tests.end(), is_gpu);
  std::erase_if(tests.tests, is_gpu);
  tests.tests.shrink_to_fit();
  return tests;
}

}  // namespace gpuplan::cli
