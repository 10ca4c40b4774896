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

std::string summary(const TargetList& targets, std::size_t tests, const std::string& name) {
  if (targets.format.empty()) return fmt::format("no tests: {} is empty\n", name);
  std::string line = tests == 0 ? fmt::format("no tests in {} ({})", name, targets.format)
                                : fmt::format("{} test{} ({})", tests, util::plural(tests), targets.format);
  std::string dropped = describe(targets.dropped);
  return line + (dropped.empty() ? "; nothing dropped\n" : fmt::format("; dropped {}\n", dropped));
}

/// The list as a table whose columns line up: the widths need every test first, so each is
/// kept as it is read, but only its cells (its label in one text for all): 120 bytes a test
/// at 1M tests, where whole targets and a table of strings took 830 (issue 14).
class TableTargets : public TargetSink {
 public:
  void test(Target&& target) override {
    labels_.append(target.label);
    tags_.insert(tags_.end(), target.tags.begin(), target.tags.end());
    rows_.push_back({labels_.size(), tags_.size(), target.rule_class, target.size, target.configuration,
                     target.shard_count_unresolved ? -1 : target.shard_count, target.flaky,
                     target.has_attributes});
    const Row& row = rows_.back();
    auto widen = [&](std::size_t column, std::size_t width) {
      widths_[column] = std::max(widths_[column], width);
    };
    widen(0, target.label.size());
    widen(1, target.configuration.size());
    widen(2, kind(row).size());
    widen(3, size(row).size());
    widen(4, shards(row).size());  // FLAKY is "yes" or "-", and TAGS is not padded
    configured_ = configured_ || !target.configuration.empty();
  }

  std::size_t tests() const { return rows_.size(); }

  /// The header and a line a test, in the order read, to `out`.
  void write(Output& out) const {
    std::vector<std::string> cells{"LABEL", "CONFIG", "KIND", "SIZE", "SHARDS", "FLAKY", "TAGS"};
    std::vector<std::size_t> widths = widths_;
    for (std::size_t i = 0; i < cells.size(); ++i) widths[i] = std::max(widths[i], cells[i].size());
    std::string line;
    auto put = [&](const std::vector<std::string>& row) {
      line.clear();
      for (std::size_t i = 0; i < row.size(); ++i) {
        if (i == 1 && !configured_) continue;
        if (i + 1 < row.size())
          fmt::format_to(std::back_inserter(line), "{:<{}}  ", row[i], widths[i]);
        else
          line += row[i];
      }
      while (!line.empty() && line.back() == ' ') line.pop_back();
      line += '\n';
      out.write(line);
    };
    put(cells);
    std::size_t label_begin = 0;
    std::size_t tags_begin = 0;
    for (const Row& row : rows_) {
      cells = {labels_.substr(label_begin, row.label_end - label_begin),
               row.configuration.str(),
               kind(row),
               size(row),
               shards(row),
               row.flaky ? "yes" : "-",
               fmt::format("{}", fmt::join(tags_.begin() + static_cast<std::ptrdiff_t>(tags_begin),
                                           tags_.begin() + static_cast<std::ptrdiff_t>(row.tags_end), ","))};
      put(cells);
      label_begin = row.label_end;
      tags_begin = row.tags_end;
    }
  }

 private:
  struct Row {
    std::size_t label_end;  ///< in labels_, where the label before it ends
    std::size_t tags_end;   ///< in tags_
    Symbol rule_class;
    Symbol size;
    Symbol configuration;
    int shard_count;  ///< -1: a select() the query does not resolve
    bool flaky;
    bool has_attributes;
  };
  static std::string kind(const Row& row) { return row.rule_class.empty() ? "-" : row.rule_class.str(); }
  static std::string size(const Row& row) { return row.has_attributes ? row.size.str() : "-"; }
  static std::string shards(const Row& row) {
    return row.shard_count > 0 ? std::to_string(row.shard_count) : row.shard_count < 0 ? "select()" : "-";
  }

  std::string labels_;
  std::vector<Symbol> tags_;
  std::vector<Row> rows_;
  std::vector<std::size_t> widths_ = std::vector<std::size_t>(7, 0);
  bool configured_ = false;
};

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
    out_.key("shard_count");
    if (target.shard_count_unresolved)
      out_.null();  // a select() the query does not resolve: unknown, not 0
    else
      out_.value(target.shard_count);
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
      if (json.tests() == 0) fmt::print(stderr, "gpuplan: {}", summary(targets, 0, name));
    } else {
      TableTargets table;
      TargetList targets = read_targets_input(options->input, nullptr, table);
      Output output(options->output);
      if (table.tests() > 0) table.write(output);
      output.write(summary(targets, table.tests(), name));
      output.commit();
    }
  });
}

}  // namespace gpuplan::cli
