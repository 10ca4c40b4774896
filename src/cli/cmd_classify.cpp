// gpuplan classify [FILE]: the tests in their buckets (gpu, cpu, skipped), with requirements.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "cli/commands.hpp"
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
};

std::vector<const ClassifiedTest*> in_bucket(const Classification& c, Bucket bucket) {
  std::vector<const ClassifiedTest*> tests;
  for (const auto& t : c.tests)
    if (t.bucket == bucket) tests.push_back(&t);
  return tests;
}

std::string render_table(const Classification& c) {
  std::string out;
  auto section = [&](std::string_view title, Bucket bucket, auto detail) {
    auto tests = in_bucket(c, bucket);
    out += fmt::format("{} ({})\n", title, tests.size());
    size_t width = 0;
    for (const auto* t : tests) width = std::max(width, t->target.label.size());
    for (const auto* t : tests) out += fmt::format("  {:<{}}  {}\n", t->target.label, width, detail(*t));
  };
  section("GPU tests", Bucket::gpu, [](const ClassifiedTest& t) {
    auto text = describe(t.requirement);
    if (t.target.shard_count > 1) text += fmt::format("; {} shards", t.target.shard_count);
    return text;
  });
  section("CPU tests", Bucket::cpu, [](const ClassifiedTest& t) { return t.reason; });
  section("Skipped tests", Bucket::skipped, [](const ClassifiedTest& t) { return t.reason; });
  if (!c.diagnostics.empty()) {
    out += fmt::format("Diagnostics ({})\n", c.diagnostics.size());
    for (const auto& d : c.diagnostics)
      out += fmt::format("  {}: {}{}\n", to_string(d.severity), d.label.empty() ? "" : d.label + ": ",
                         d.message);
  }
  out += "(`gpuplan explain LABEL` tells where each requirement came from)\n";
  return out;
}

/// One label a line, for `bazel test --target_pattern_file=FILE`.
std::string target_list(const Classification& c, Bucket bucket) {
  std::string out;
  for (const auto* t : in_bucket(c, bucket)) out += t->target.label + "\n";
  return out;
}

}  // namespace

void add_classify_command(CLI::App& app, int& status) {
  auto args = std::make_shared<ClassifyArgs>();
  auto* command = app.add_subcommand(
      "classify",
      "Sort the tests of bazel query output into GPU, CPU and skipped, with their GPU requirements");
  add_query_options(*command, args->query);
  args->query.drop_inputs = true;  // its outputs show no location, tag or exec_property
  command->add_flag("--json", args->json, "print JSON instead of a table");
  command->add_option("--cpu-targets", args->cpu_targets,
                      "write the CPU tests, one label a line, for bazel test --target_pattern_file");
  command->add_option("--gpu-targets", args->gpu_targets, "write the GPU tests likewise");
  command->callback([args, &status] {
    auto rules = read_rules(args->query);
    auto classification = read_and_classify(args->query, rules);
    if (!args->cpu_targets.empty()) write_output(args->cpu_targets, target_list(classification, Bucket::cpu));
    if (!args->gpu_targets.empty()) write_output(args->gpu_targets, target_list(classification, Bucket::gpu));
    Output output("-");
    if (args->json)
      write_classification_json(classification, output.sink());
    else
      output.write(render_table(classification));
    output.commit();
    print_diagnostic_totals(classification.diagnostics, args->json);
    status = exit_ok;
  });
}

}  // namespace gpuplan::cli
