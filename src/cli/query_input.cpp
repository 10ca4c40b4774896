#include "cli/query_input.hpp"

#include <fmt/format.h>

#include <algorithm>

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

Classification read_and_classify(const QueryOptions& options, const Rules& rules, bool annotations) {
  auto targets = read_targets_input(options.targets);
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
  const auto& path = options.targets.path;
  auto name = path.empty() || path == "-" ? std::string("<stdin>") : path;
  throw InputError(Position{name},
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
