// gpuplan targets: the tests gpuplan reads from Bazel's output, as a table or JSON.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/io.hpp"
#include "cli/targets_input.hpp"

namespace gpuplan::cli {

namespace {

std::string summary(const TargetList& targets, const std::string& name) {
  if (targets.format.empty()) return fmt::format("no tests: {} is empty\n", name);
  std::string line = targets.tests.empty()
                         ? fmt::format("no tests in {} ({})", name, targets.format)
                         : fmt::format("{} test{} ({})", targets.tests.size(),
                                       targets.tests.size() == 1 ? "" : "s", targets.format);
  std::string dropped = describe(targets.dropped);
  return line + (dropped.empty() ? "; nothing dropped\n" : fmt::format("; dropped {}\n", dropped));
}

std::string table(const TargetList& targets) {
  std::vector<std::vector<std::string>> rows{{"LABEL", "KIND", "SIZE", "SHARDS", "FLAKY", "TAGS"}};
  bool configured = std::any_of(targets.tests.begin(), targets.tests.end(),
                                [](const Target& t) { return !t.configuration.empty(); });
  if (configured) rows[0].insert(rows[0].begin() + 1, "CONFIG");
  for (const Target& target : targets.tests) {
    std::vector<std::string> row{target.label,
                                 target.rule_class.empty() ? "-" : target.rule_class,
                                 target.has_attributes ? target.size : "-",
                                 target.shard_count > 0 ? std::to_string(target.shard_count) : "-",
                                 target.flaky ? "yes" : "-",
                                 fmt::format("{}", fmt::join(target.tags, ","))};
    if (configured) row.insert(row.begin() + 1, target.configuration);
    rows.push_back(std::move(row));
  }
  std::vector<std::size_t> widths(rows[0].size(), 0);
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  std::string text;
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i)
      line += i + 1 < row.size() ? fmt::format("{:<{}}  ", row[i], widths[i]) : row[i];
    while (!line.empty() && line.back() == ' ') line.pop_back();
    text += line + '\n';
  }
  return text;
}

nlohmann::ordered_json to_json(const TargetList& targets) {
  nlohmann::ordered_json tests = nlohmann::ordered_json::array();
  for (const Target& target : targets.tests) {
    tests.push_back({{"label", target.label},
                     {"rule_class", target.rule_class},
                     {"tags", target.tags},
                     {"size", target.size},
                     {"timeout", target.timeout},
                     {"shard_count", target.shard_count},
                     {"flaky", target.flaky},
                     {"exec_properties", target.exec_properties},
                     {"generator_function", target.generator_function},
                     {"location", target.location},
                     {"configuration", target.configuration},
                     {"has_attributes", target.has_attributes}});
  }
  const DroppedCounts& dropped = targets.dropped;
  return {{"format", targets.format},
          {"tests", std::move(tests)},
          {"dropped",
           {{"non_test_rules", dropped.non_test_rules},
            {"test_suites", dropped.test_suites},
            {"source_files", dropped.source_files},
            {"generated_files", dropped.generated_files},
            {"other", dropped.other},
            {"total", dropped.total()}}}};
}

}  // namespace

void add_targets_command(CLI::App& app, int& /*status*/) {
  struct Options {
    TargetsInput input;
    bool json = false;
  };
  auto options = std::make_shared<Options>();
  auto* command =
      app.add_subcommand("targets", "Show the tests gpuplan reads from bazel query/cquery output");
  add_targets_input(*command, options->input);
  command->add_flag("--json", options->json, "JSON for machines instead of a table");
  command->callback([options] {
    TargetList targets = read_targets_input(options->input);
    std::string name =
        options->input.path.empty() || options->input.path == "-" ? "<stdin>" : options->input.path;
    if (options->json) {
      write_output("-", to_json(targets).dump(2) + "\n");
      if (targets.tests.empty()) fmt::print(stderr, "gpuplan: {}", summary(targets, name));
    } else {
      write_output("-", (targets.tests.empty() ? "" : table(targets)) + summary(targets, name));
    }
  });
}

}  // namespace gpuplan::cli
