// gpuplan targets: the tests gpuplan reads from Bazel's output, as a table or JSON.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/io.hpp"
#include "cli/targets_input.hpp"
#include "util/json_writer.hpp"
#include "util/text.hpp"

namespace gpuplan::cli {

namespace {

std::string summary(const TargetList& targets, const std::string& name) {
  if (targets.format.empty()) return fmt::format("no tests: {} is empty\n", name);
  std::string line = targets.tests.empty() ? fmt::format("no tests in {} ({})", name, targets.format)
                                           : fmt::format("{} test{} ({})", targets.tests.size(),
                                                         util::plural(targets.tests.size()), targets.format);
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

/// The list as JSON, written test by test: a million tests never become one document in memory.
void write_json(const TargetList& targets, Output& output) {
  util::JsonWriter out(output.sink());
  out.begin_object();
  out.key("format").value(targets.format);
  out.key("tests").begin_array();
  for (const Target& target : targets.tests) {
    out.begin_object();
    out.key("label").value(target.label);
    out.key("rule_class").value(target.rule_class.str());
    out.key("tags").begin_array();
    for (const auto& tag : target.tags) out.value(tag.str());
    out.end_array();
    out.key("size").value(target.size.str());
    out.key("timeout").value(target.timeout.str());
    out.key("shard_count").value(target.shard_count);
    out.key("flaky").value(target.flaky);
    out.key("exec_properties").begin_object();
    for (const auto& [key, value] : target.exec_properties) out.key(key).value(value);
    out.end_object();
    out.key("generator_function").value(target.generator_function.str());
    out.key("location").value(target.location);
    out.key("configuration").value(target.configuration.str());
    out.key("has_attributes").value(target.has_attributes);
    out.end_object();
  }
  out.end_array();
  const DroppedCounts& dropped = targets.dropped;
  out.key("dropped").begin_object();
  out.key("non_test_rules").value(static_cast<std::int64_t>(dropped.non_test_rules));
  out.key("test_suites").value(static_cast<std::int64_t>(dropped.test_suites));
  out.key("source_files").value(static_cast<std::int64_t>(dropped.source_files));
  out.key("generated_files").value(static_cast<std::int64_t>(dropped.generated_files));
  out.key("other").value(static_cast<std::int64_t>(dropped.other));
  out.key("total").value(static_cast<std::int64_t>(dropped.total()));
  out.end_object();
  out.end_object();
  out.raw("\n");
  out.flush();
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
      Output output("-");
      write_json(targets, output);
      output.commit();
      if (targets.tests.empty()) fmt::print(stderr, "gpuplan: {}", summary(targets, name));
    } else {
      write_output("-", (targets.tests.empty() ? "" : table(targets)) + summary(targets, name));
    }
  });
}

}  // namespace gpuplan::cli
