// `gpuplan export buildkite`: a pipeline for `buildkite-agent pipeline upload`: one command
// step per node (agent tags send it there), a wait that lets failures through, a merge step.
#include <fmt/format.h>

#include <map>
#include <string_view>

#include "export/ci.hpp"
#include "export/yaml.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/export.hpp"
#include "gpuplan/run.hpp"

namespace gpuplan {

namespace {

/// `buildkite-agent pipeline upload` replaces $VAR and ${VAR} with the uploading job's values
/// before any step runs; $$ is a $ it leaves for the step's own shell.
void escape_interpolation(nlohmann::ordered_json& value) {
  if (value.is_string()) {
    std::string escaped;
    for (char c : value.get_ref<const std::string&>()) escaped += c == '$' ? "$$" : std::string(1, c);
    value = escaped;
  } else if (value.is_structured()) {
    for (auto& item : value) escape_interpolation(item);
  }
}

/// Throws InputError for an agent tag from the node's name or a fleet label whose value Buildkite
/// reads as a wildcard: "a value of `*`, or none after the `=`, matches any agent with that tag"
/// (buildkite/docs pages/agent/v3/cli_start.md, "Agent targeting"), so the step would run on any
/// node's agent, on GPUs the plan gave that node's units. A `--tag queue=*` asks for it on purpose.
void check_wildcard(const CiOptions& o, const ExportNode& node, const std::vector<std::string>& tags) {
  for (std::size_t i = 0; i < tags.size(); ++i) {
    const auto eq = tags[i].find('=');
    const std::string_view value =
        eq == std::string::npos ? std::string_view("true") : std::string_view(tags[i]).substr(eq + 1);
    if (value != "*" && !value.empty()) continue;
    const auto [option, source] = ci_tag_source(o, node, i, tags[i]);
    if (option == "--tag") continue;
    throw InputError(
        Position{option},
        fmt::format("{} gives the agent tag {:?}, whose {} Buildkite reads as any value (agent targeting: a "
                    "value of '*', or none, matches every agent with that tag), so the step would run on "
                    "any node's agent: {}",
                    source, tags[i], value.empty() ? "empty value" : "value '*'", ci_fleet_fix(option)));
  }
}

}  // namespace

std::string buildkite_pipeline(const Plan& plan, const Fleet* fleet, const CiOptions& o) {
  using Json = nlohmann::ordered_json;
  Json steps = Json::array();
  const auto nodes = export_nodes(plan, fleet);
  // A pipeline upload takes at most 500 steps; a step per node, the wait and the merge step.
  if (nodes.size() + 2 > 500)
    throw InputError(
        Position{"export buildkite"},
        fmt::format("the plan uses {} nodes, a step each besides a wait and a merge step, and "
                    "buildkite-agent pipeline upload takes at most 500 steps: split the fleet into "
                    "several pipelines (one plan each)",
                    nodes.size()));
  CiTagsSeen seen;
  std::map<std::string, std::string> node_of_key;
  for (const auto& node : nodes) {
    Json agents = Json::object();
    ci_check_node_name(node, "buildkite");
    auto tags = ci_tags(o, node, true);
    check_wildcard(o, node, tags);
    // Two nodes' steps with the same agent tags (--no-node-tag) may each run on the other's agent.
    ci_check_told_apart(seen, o, node, tags, "buildkite", false);
    for (const auto& tag : tags) {
      auto eq = tag.find('=');
      agents[tag.substr(0, eq)] = eq == std::string::npos ? "true" : tag.substr(eq + 1);
    }
    Json step;
    step["label"] =
        fmt::format(":gear: GPU tests on {} ({} unit{})", node.name, node.units, node.units == 1 ? "" : "s");
    std::string key = ci_job_name(node, "buildkite");
    // A key made with a hash can be another node's own: GPU_1's is gpu-1-HASH's.
    if (auto [other, added] = node_of_key.try_emplace(key, node.name); !added)
      throw InputError(Position{"export buildkite"},
                       fmt::format("nodes \"{}\" and \"{}\" would both get the step key {}, and Buildkite "
                                   "refuses the upload: rename one node in the fleet",
                                   other->second, node.name, key));
    step["key"] = key;
    step["command"] = Json::array(
        {"buildkite-agent artifact download " + shell_quote(o.plan_path) + " .", ci_exec_command(o, node)});
    step["agents"] = agents;
    step["timeout_in_minutes"] = ci_timeout_minutes(o, node);
    step["artifact_paths"] = Json::array({ci_results_path(node)});
    steps.push_back(std::move(step));
  }
  if (!nodes.empty()) steps.push_back(Json::object({{"wait", nullptr}, {"continue_on_failure", true}}));
  Json merge;
  merge["label"] = ":bar_chart: Merge GPU test results";
  merge["key"] = ci_merge_job;
  // The download fails when no step uploaded a file: without nodes none will, and with them none
  // may have got as far (their own steps fail the build then); the merge says it had none.
  merge["command"] = Json::array();
  if (!nodes.empty())
    merge["command"].push_back(
        "buildkite-agent artifact download 'gpuplan-results/*.csv' . || echo 'gpuplan: no results were "
        "uploaded'");
  merge["command"].push_back(ci_merge_command(o));
  merge["artifact_paths"] = Json::array({"gpuplan-results/history.json"});
  steps.push_back(std::move(merge));
  escape_interpolation(steps);
  return "# Made by gpuplan export buildkite: upload with `buildkite-agent pipeline upload FILE`.\n" +
         to_yaml(Json::object({{"steps", steps}}));
}

}  // namespace gpuplan
