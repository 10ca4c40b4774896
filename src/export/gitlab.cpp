// `gpuplan export gitlab`: a child pipeline (for `trigger: include: artifact:`) with one job
// per node (runner tags send it there) and a job that merges the results.
#include <fmt/format.h>

#include <algorithm>

#include "export/ci.hpp"
#include "export/yaml.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/export.hpp"

namespace gpuplan {

namespace {

/// The longest `timeout` GitLab takes (Project::MAX_BUILD_TIMEOUT, a month), here 30 days: a job over
/// it makes the whole child pipeline invalid ("timeout config should not exceed the limit").
constexpr long gitlab_timeout_limit_minutes = 30L * 24 * 60;

/// The least memory Ruby takes for `value` as GitLab's YAML loader makes it, as
/// Gitlab::Utils::DeepSize adds it up (ObjectSpace.memsize_of of every object, keys and values,
/// each time it occurs), on any Ruby from 2.7: a String is one 40-byte slot up to 23 bytes, else
/// at least its 24-byte header, bytes and NUL; a non-empty Hash at least 160 (its slot and
/// table of 8 entries); an Array at least 40. Every scalar this export writes is a string.
std::size_t ruby_string_size(std::size_t length) { return length <= 23 ? 40 : 24 + length + 1; }

std::size_t ruby_deep_size(const nlohmann::ordered_json& value) {
  if (value.is_string()) return ruby_string_size(value.get_ref<const std::string&>().size());
  std::size_t size = 0;
  if (value.is_object()) {
    size = value.empty() ? 40 : 160;
    for (const auto& [key, item] : value.items()) size += ruby_string_size(key.size()) + ruby_deep_size(item);
  } else if (value.is_array()) {
    size = std::max<std::size_t>(40, 16 + 8 * value.size());
    for (const auto& item : value) size += ruby_deep_size(item);
  }
  return size;
}

}  // namespace

std::string gitlab_pipeline(const Plan& plan, const Fleet* fleet, const CiOptions& o,
                            std::size_t* parsed_bytes) {
  using Json = nlohmann::ordered_json;
  Json pipeline;
  pipeline["stages"] = Json::array({"gpu-test", "gpu-merge"});
  // The plan comes from the parent pipeline's job that made it (see the README).
  Json needs_plan = Json::array({Json::object({{"pipeline", "$PARENT_PIPELINE_ID"}, {"job", o.plan_job}})});
  CiTagsSeen seen;
  for (const auto& node : export_nodes(plan, fleet)) {
    Json job;
    job["stage"] = "gpu-test";
    ci_check_node_name(node, "gitlab");
    auto tags = ci_tags(o, node, false);
    // Two nodes' jobs with the same tags (--no-node-tag) may each run on the other's runner.
    ci_check_told_apart(seen, o, node, tags, "gitlab", false);
    job["tags"] = tags;
    const long timeout = ci_timeout_minutes(o, node);
    if (timeout > gitlab_timeout_limit_minutes)
      throw InputError(
          Position{"export gitlab"},
          fmt::format(
              "node \"{}\": its job's timeout would be {} minutes (its {:.0f} s of planned work × "
              "--time-margin {:g} + --startup {} s), and GitLab takes at most a month ({} minutes), "
              "refusing the whole child pipeline otherwise: plan over more nodes, or lower --time-margin",
              node.name, timeout, node.end_s + node.reruns_s, o.time_margin, o.startup_s,
              gitlab_timeout_limit_minutes));
    job["timeout"] = fmt::format("{} minutes", timeout);
    job["needs"] = needs_plan;
    job["script"] = Json::array({ci_exec_command(o, node)});
    job["artifacts"] = Json::object({{"when", "always"}, {"paths", Json::array({ci_results_path(node)})}});
    pipeline[ci_job_name(node, "gitlab")] = std::move(job);
  }
  Json merge;
  merge["stage"] = "gpu-merge";
  // The later stage waits for every node's job and gets their artifacts without `needs`, which
  // GitLab caps at 50 jobs: a pipeline of more nodes was refused.
  merge["when"] = "always";
  merge["script"] = Json::array({ci_merge_command(o)});
  merge["artifacts"] =
      Json::object({{"when", "always"}, {"paths", Json::array({"gpuplan-results/history.json"})}});
  pipeline[std::string(ci_merge_job)] = std::move(merge);
  std::string yaml =
      "# Made by gpuplan export gitlab: a child pipeline, run by a trigger job (see the README).\n" +
      to_yaml(pipeline);
  // GitLab checks the file's bytes and, larger, the parsed YAML's memory (its depth, here 4, is far
  // below max_yaml_depth's 100).
  if (parsed_bytes) *parsed_bytes = std::max(yaml.size(), ruby_deep_size(pipeline));
  return yaml;
}

}  // namespace gpuplan
