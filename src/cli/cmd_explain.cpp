// gpuplan explain LABEL [FILE]: why a test is in its bucket, and where each requirement came from.
#include <fmt/format.h>

#include <algorithm>
#include <string>

#include "cli/classification_json.hpp"
#include "cli/commands.hpp"
#include "cli/history_input.hpp"
#include "cli/io.hpp"
#include "cli/query_input.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/size.hpp"

namespace gpuplan::cli {

namespace {

struct ExplainArgs {
  std::string label;
  QueryOptions query;
  std::vector<std::string> history;
  bool json = false;
};

/// The planned duration of one shard (or of the whole test, shard empty).
struct ShardEstimate {
  std::optional<int> shard;
  Estimate estimate;
};

std::vector<ShardEstimate> estimates_of(const ClassifiedTest& test, const Estimator& estimate) {
  std::vector<ShardEstimate> estimates;
  if (test.bucket != Bucket::gpu) return estimates;
  if (test.target.shard_count <= 1) return {{std::nullopt, estimate(test, std::nullopt)}};
  for (int shard = 0; shard < test.target.shard_count; ++shard)
    estimates.push_back({shard, estimate(test, shard)});
  return estimates;
}

const ClassifiedTest& find_test(const Classification& c, const std::string& label, const std::string& input) {
  auto wanted = canonical_label(label);
  auto found = std::find_if(c.tests.begin(), c.tests.end(), [&](const ClassifiedTest& t) {
    return canonical_label(t.target.label) == wanted;
  });
  if (found != c.tests.end()) return *found;
  // The nearest label by shared prefix, to catch typos in the target name.
  const ClassifiedTest* nearest = nullptr;
  size_t best = 0;
  for (const auto& t : c.tests) {
    auto other = canonical_label(t.target.label);
    auto common = static_cast<size_t>(
        std::mismatch(wanted.begin(), wanted.end(), other.begin(), other.end()).first - wanted.begin());
    if (common > best) best = common, nearest = &t;
  }
  auto name = input.empty() || input == "-" ? std::string("<stdin>") : input;
  throw InputError(
      Position{name},
      fmt::format("{} is not one of the {} tests read{}", label, c.tests.size(),
                  nearest ? fmt::format(" (did you mean {}?)", nearest->target.label) : std::string()));
}

std::string or_none(const std::string& text) { return text.empty() ? "none" : text; }

std::string render_text(const ClassifiedTest& test, const std::vector<ShardEstimate>& estimates,
                        const Diagnostics& diagnostics) {
  const auto& t = test.target;
  std::string out = fmt::format("{}\n", t.label);
  auto field = [&](std::string_view name, const std::string& value) {
    out += fmt::format("  {:<20}{}\n", name, value);
  };
  field("rule", or_none(t.rule_class) + (t.location.empty() ? "" : " at " + t.location));
  field("tags", or_none(fmt::format("{}", fmt::join(t.tags, ", "))));
  std::vector<std::string> properties;
  for (const auto& [k, v] : t.exec_properties) properties.push_back(fmt::format("{}={}", k, v));
  field("exec_properties", or_none(fmt::format("{}", fmt::join(properties, ", "))));
  field("generator_function", or_none(t.generator_function));
  field("size", t.size.str() + (t.shard_count > 1 ? fmt::format(", {} shards", t.shard_count) : "") +
                    (t.flaky ? ", flaky" : ""));
  out += "\nannotations read\n";
  if (test.annotations.empty()) out += "  none\n";
  for (const auto& a : test.annotations) out += fmt::format("  {} → {}\n", a.source, a.meaning);

  out += "\nrequirements\n";
  const auto& r = test.requirement;
  auto requirement = [&](std::string_view name, const std::string& value, const std::string& source) {
    out += fmt::format("  {:<20}{:<16}from {}\n", name, value, source);
  };
  requirement("gpus", std::to_string(r.gpus.value), r.gpus.source);
  if (r.gpu_mem_mib)
    requirement("gpu memory", "≥ " + format_mib(r.gpu_mem_mib->value), r.gpu_mem_mib->source);
  for (const auto& c : r.cuda) requirement("cuda", describe(c.value), c.source);
  for (const auto& c : r.compute_capability) requirement("compute capability", describe(c.value), c.source);
  if (r.gpu_models)
    requirement("gpu models", fmt::format("{}", fmt::join(r.gpu_models->value, "|")), r.gpu_models->source);
  if (r.nvlink) requirement("nvlink", r.nvlink->value ? "yes" : "no", r.nvlink->source);
  if (r.exclusive) requirement("whole node", r.exclusive->value ? "yes" : "no", r.exclusive->source);
  if (r.vendor) requirement("vendor", vendor_display(r.vendor->value), r.vendor->source);

  out += fmt::format("\nbucket: {}\n  {}\n", to_string(test.bucket), test.reason);
  if (!estimates.empty()) out += "\nplanned duration\n";
  for (const auto& [shard, e] : estimates)
    out +=
        fmt::format("  {:<20}{:<16}from {}{}\n", shard ? fmt::format("shard {}", *shard) : "whole test",
                    fmt::format("{:g}s", e.seconds), e.source,
                    e.peak_vram_mib ? fmt::format(", peak GPU memory {}", format_mib(*e.peak_vram_mib)) : "");
  if (!diagnostics.empty()) {
    out += "\ndiagnostics\n";
    for (const auto& d : diagnostics) out += fmt::format("  {}: {}\n", to_string(d.severity), d.message);
  }
  return out;
}

std::string render_json(const ClassifiedTest& test, const std::vector<ShardEstimate>& estimates,
                        const Diagnostics& diagnostics) {
  auto j = test_to_json(test);
  const auto& t = test.target;
  j["tags"] = t.tags;
  nlohmann::ordered_json properties = nlohmann::ordered_json::object();
  for (const auto& [k, v] : t.exec_properties) properties[k] = v;
  j["exec_properties"] = properties;
  j["generator_function"] = t.generator_function;
  j["location"] = t.location;
  j["annotations"] = nlohmann::ordered_json::array();
  for (const auto& a : test.annotations)
    j["annotations"].push_back({{"source", a.source}, {"meaning", a.meaning}});
  j["planned_duration"] = nlohmann::ordered_json::array();
  for (const auto& [shard, e] : estimates)
    j["planned_duration"].push_back(
        {{"shard_index", shard ? nlohmann::ordered_json(*shard) : nlohmann::ordered_json(nullptr)},
         {"seconds", e.seconds},
         {"source", e.source},
         {"peak_vram_mib",
          e.peak_vram_mib ? nlohmann::ordered_json(*e.peak_vram_mib) : nlohmann::ordered_json(nullptr)}});
  j["diagnostics"] = diagnostics_to_json(diagnostics);
  return j.dump(2) + "\n";
}

}  // namespace

void add_explain_command(CLI::App& app, int& status) {
  auto args = std::make_shared<ExplainArgs>();
  auto* command = app.add_subcommand("explain",
                                     "Show a test's tags and attributes, each requirement derived from them "
                                     "with its source, and its bucket");
  command->add_option("LABEL", args->label, "the test, e.g. //ml:train_test")->required();
  add_query_options(*command, args->query);
  command->add_option(
      "--history", args->history,
      "past runs (BEP JSON, JUnit XML, CSV, bazel-testlogs; repeatable) for the planned duration");
  command->add_flag("--json", args->json, "print JSON instead of text");
  command->callback([args, &status] {
    auto rules = read_rules(args->query);
    auto classification = read_and_classify(args->query, rules, true);
    const auto& test = find_test(classification, args->label, args->query.targets.path);
    Diagnostics own;
    std::copy_if(classification.diagnostics.begin(), classification.diagnostics.end(),
                 std::back_inserter(own),
                 [&](const Diagnostic& d) { return d.label == canonical_label(test.target.label); });
    Diagnostics history_diagnostics;
    auto estimate =
        estimator_for(args->history, rules, classification, args->query.strict, history_diagnostics);
    auto estimates = estimates_of(test, estimate);
    own.insert(own.end(), history_diagnostics.begin(), history_diagnostics.end());
    write_output("-", args->json ? render_json(test, estimates, own) : render_text(test, estimates, own));
    print_diagnostic_totals(classification.diagnostics, false);
    status = exit_ok;
  });
}

}  // namespace gpuplan::cli
