// gpuplan classify [FILE]: the tests in their buckets (gpu, cpu, skipped), with requirements.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <string>

#include "cli/commands.hpp"
#include "cli/history_input.hpp"
#include "cli/io.hpp"
#include "cli/query_input.hpp"
#include "gpuplan/emit.hpp"

namespace gpuplan::cli {

namespace {

struct ClassifyArgs {
  QueryOptions query;
  bool json = false;
  std::string cpu_targets;
  std::string gpu_targets;
  std::vector<std::string> history;
};

std::vector<const ClassifiedTest*> in_bucket(const Classification& c, Bucket bucket) {
  std::vector<const ClassifiedTest*> tests;
  for (const auto& t : c.tests)
    if (t.bucket == bucket) tests.push_back(&t);
  return tests;
}

/// The buckets as text, a line at a time to `out`: a million tests' lines are never one string.
void write_table(const Classification& c, Output& out) {
  std::string line;
  auto section = [&](std::string_view title, Bucket bucket, auto detail) {
    auto tests = in_bucket(c, bucket);
    out.write(fmt::format("{} ({})\n", title, tests.size()));
    // A label longer than the column gets a line of its own, its detail under the column: one long
    // label pushed every test's detail past the terminal's edge.
    constexpr size_t widest = 48;
    size_t width = 0;
    for (const auto* t : tests)
      if (t->target.label.size() <= widest) width = std::max(width, t->target.label.size());
    for (const auto* t : tests) {
      line.clear();
      if (t->target.label.size() > widest)
        fmt::format_to(std::back_inserter(line), "  {}\n  {:<{}}  {}\n", t->target.label, "", width,
                       detail(*t));
      else
        fmt::format_to(std::back_inserter(line), "  {:<{}}  {}\n", t->target.label, width, detail(*t));
      out.write(line);
    }
  };
  section("GPU tests", Bucket::gpu, [](const ClassifiedTest& t) {
    auto text = describe(t.requirement);
    if (t.target.shard_count > 1) text += fmt::format("; {} shards", t.target.shard_count);
    return text;
  });
  section("CPU tests", Bucket::cpu, [](const ClassifiedTest& t) { return t.reason; });
  section("Skipped tests", Bucket::skipped, [](const ClassifiedTest& t) { return t.reason; });
  if (!c.diagnostics.empty()) {
    out.write(fmt::format("Diagnostics ({})\n", c.diagnostics.size()));
    for (const auto& d : c.diagnostics)
      out.write(fmt::format("  {}: {}{}\n", to_string(d.severity), d.label.empty() ? "" : d.label + ": ",
                            d.message));
  }
  out.write("(`gpuplan explain LABEL` tells where each requirement came from)\n");
}

/// One label a line, for `bazel test --target_pattern_file=FILE`, written whole or not at all.
void write_target_list(const std::string& path, const Classification& c, Bucket bucket) {
  Output out(path);
  for (const auto* t : in_bucket(c, bucket)) {
    out.write(t->target.label);
    out.write("\n");
  }
  out.commit();
}

}  // namespace

void add_classify_command(CLI::App& app, int& status) {
  auto args = std::make_shared<ClassifyArgs>();
  auto* command = app.add_subcommand(
      "classify",
      "Sort the tests of bazel query output into GPU, CPU and skipped, with their GPU requirements");
  add_query_options(*command, args->query);
  add_untagged_option(*command, args->query);
  args->query.drop_inputs = true;  // its outputs show no location, tag or exec_property
  command->add_flag("--json", args->json, "print JSON instead of a table");
  command->add_option("--cpu-targets", args->cpu_targets,
                      "write the CPU tests, one label a line, for bazel test --target_pattern_file");
  command->add_option("--gpu-targets", args->gpu_targets, "write the GPU tests likewise");
  command
      ->add_option(
          "--history", args->history,
          "past runs (results records; repeatable): a CPU test whose runs used a GPU is a warning, and "
          "with --classify-by-deps a GPU test whose runs used one stays a GPU test")
      ->allow_extra_args(false);
  command->callback([args, &status] {
    namespace fs = std::filesystem;
    // A path that cannot be resolved fails when it is written, with its own message.
    auto resolved = [](const std::string& path) {
      std::error_code ec;
      auto full = fs::weakly_canonical(fs::absolute(path, ec), ec);
      return ec ? fs::path() : full;
    };
    if (!args->cpu_targets.empty() && !args->gpu_targets.empty() && !resolved(args->cpu_targets).empty() &&
        resolved(args->cpu_targets) == resolved(args->gpu_targets))
      throw InputError(
          Position{args->gpu_targets},
          "--cpu-targets and --gpu-targets name the same file: the GPU list would replace the CPU one");
    auto rules = read_rules(args->query);
    QueryOptions query = args->query;
    Diagnostics history_diagnostics;
    std::optional<History> history;
    read_history_for_classifying(args->history, query, rules, history, history_diagnostics);
    auto classification = read_and_classify(query, rules);
    if (!history)
      history = read_history_option(args->history, query.strict, history_diagnostics,
                                    shard_counts_now(classification));
    check_history_against_tests(history, rules, classification, query.strict);
    classification.diagnostics.insert(classification.diagnostics.end(), history_diagnostics.begin(),
                                      history_diagnostics.end());
    if (!args->cpu_targets.empty()) write_target_list(args->cpu_targets, classification, Bucket::cpu);
    if (!args->gpu_targets.empty()) write_target_list(args->gpu_targets, classification, Bucket::gpu);
    Output output("-");
    if (args->json)
      write_classification_json(classification, output.sink());
    else
      write_table(classification, output);
    output.commit();
    print_diagnostic_totals(classification.diagnostics, args->json);
    status = exit_ok;
  });
}

}  // namespace gpuplan::cli
