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
  command.add_flag("--classify-by-deps", options.classify_by_deps,
                   "GPU-annotated tests whose dependency graph reaches no GPU code go to the CPU bucket "
                   "(FILE: bazel query 'deps(tests(//...))' --output=xml)");
}

Rules read_rules(const QueryOptions& options) {
  if (options.rules.empty()) return Rules{};
  auto input = open_input(options.rules);
  return load_rules(input.in(), input.name);
}

GpuDepPatterns gpu_patterns(const Rules& rules) {
  auto patterns = GpuDepPatterns::defaults();
  patterns.gpu_deps.insert(patterns.gpu_deps.end(), rules.gpu_deps.begin(), rules.gpu_deps.end());
  patterns.gpu_free = rules.gpu_free;
  return patterns;
}

namespace {

std::string input_name(const QueryOptions& options) {
  const auto& path = options.targets.path;
  return path.empty() || path == "-" ? std::string("<stdin>") : path;
}

/// --classify-by-deps: the graph must be there, or every GPU test would look GPU-free.
void apply_classify_by_deps(const QueryOptions& options, Classification& classification, DepsInput& deps) {
  if (deps.graph.edge_count() == 0 && !classification.tests.empty())
    throw InputError(Position{input_name(options)},
                     "--classify-by-deps needs the dependency graph: this input has no rule inputs (make it "
                     "with bazel query 'deps(tests(//...))' --output=xml or --output=streamed_jsonproto)");
  deps.moved_to_cpu = classify_by_deps(classification, deps.graph, *deps.reach);
  long unknown = 0;
  for (const auto& test : classification.tests) {
    auto node = deps.graph.find(canonical_label(test.target.label));
    if (test.bucket == Bucket::gpu && node && deps.reach->unknown(*node)) ++unknown;
  }
  std::cerr << fmt::format(
      "gpuplan: --classify-by-deps moved {} GPU test{} that reach no GPU code to the CPU bucket",
      deps.moved_to_cpu, deps.moved_to_cpu == 1 ? "" : "s");
  if (unknown > 0)
    std::cerr << fmt::format("; {} left as they are: their deps are not in the input (query deps(...))",
                             unknown);
  std::cerr << '\n';
}

}  // namespace

Classification read_and_classify(const QueryOptions& options, const Rules& rules, bool annotations,
                                 DepsInput* deps) {
  bool by_deps = options.classify_by_deps || rules.classify_by_deps;
  DepsInput local;
  if (by_deps && !deps) deps = &local;
  auto targets = read_targets_input(options.targets, deps ? &deps->graph : nullptr);
  if (deps) deps->reach = std::make_unique<GpuReach>(deps->graph, gpu_patterns(rules));
  progress::stage(fmt::format("classifying {} tests", targets.tests.size()));
  auto classification =
      classify(std::move(targets), rules, {options.include_manual, options.strict, annotations});
  if (by_deps) apply_classify_by_deps(options, classification, *deps);
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
