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

/// The list as JSON, each test written as the reader finds it: a million tests are never
/// held, as targets or as a document (issue 14).
class JsonTargets : public TargetSink {
 public:
  explicit JsonTargets(Output& output) : out_(output.sink()) {}

  void start(InputFormat format) override { begin(std::string(to_string(format))); }

  void test(Target&& target) override {
    ++tests_;
    out_.begin_object();
    out_.key("label").value(target.label);
    out_.key("rule_class").value(target.rule_class.str());
    out_.key("tags").begin_array();
    for (const auto& tag : target.tags) out_.value(tag.str());
    out_.end_array();
    out_.key("size").value(target.size.str());
    out_.key("timeout").value(target.timeout.str());
    out_.key("shard_count").value(target.shard_count);
    out_.key("flaky").value(target.flaky);
    out_.key("exec_properties").begin_object();
    for (const auto& [key, value] : target.exec_properties) out_.key(key).value(value);
    out_.end_object();
    out_.key("generator_function").value(target.generator_function.str());
    out_.key("location").value(target.location);
    out_.key("configuration").value(target.configuration.str());
    out_.key("has_attributes").value(target.has_attributes);
    out_.end_object();
  }

  /// The rest, once the input is read: `targets` holds its format and dropped counts.
  void finish(const TargetList& targets) {
    if (!started_) begin(targets.format);  // blank input: no format was detected
    out_.end_array();
    const DroppedCounts& dropped = targets.dropped;
    out_.key("dropped").begin_object();
    out_.key("non_test_rules").value(static_cast<std::int64_t>(dropped.non_test_rules));
    out_.key("test_suites").value(static_cast<std::int64_t>(dropped.test_suites));
    out_.key("source_files").value(static_cast<std::int64_t>(dropped.source_files));
    out_.key("generated_files").value(static_cast<std::int64_t>(dropped.generated_files));
    out_.key("other").value(static_cast<std::int64_t>(dropped.other));
    out_.key("total").value(static_cast<std::int64_t>(dropped.total()));
    out_.end_object();
    out_.end_object();
    out_.raw("\n");
    out_.flush();
  }

  long tests() const { return tests_; }

 private:
  void begin(const std::string& format) {
    started_ = true;
    out_.begin_object();
    out_.key("format").value(format);
    out_.key("tests").begin_array();
  }

  util::JsonWriter out_;
  bool started_ = false;
  long tests_ = 0;
};

}  // namespace

void add_targets_command(CLI::App& app, int& /*status*/) {
  struct Options {
    TargetsInput input;
    bool json = false;
    std::string output = "-";
  };
  auto options = std::make_shared<Options>();
  auto* command =
      app.add_subcommand("targets", "Show the tests gpuplan reads from bazel query/cquery output");
  add_targets_input(*command, options->input);
  command->add_flag("--json", options->json, "JSON for machines instead of a table");
  command->add_option("-o,--output", options->output,
                      "write to this file (atomically: whole or not at all) instead of stdout, where "
                      "--json streams each test as it is read");
  command->callback([options] {
    std::string name =
        options->input.path.empty() || options->input.path == "-" ? "<stdin>" : options->input.path;
    if (options->json) {
      Output output(options->output);
      JsonTargets json(output);
      TargetList targets = read_targets_input(options->input, nullptr, json);
      json.finish(targets);
      output.commit();
      if (json.tests() == 0) fmt::print(stderr, "gpuplan: {}", summary(targets, name));
    } else {
      TargetList targets = read_targets_input(options->input);
      write_output(options->output, (targets.tests.empty() ? "" : table(targets)) + summary(targets, name));
    }
  });
}

}  // namespace gpuplan::cli
