// `gpuplan export gitlab`: a child pipeline (for `trigger: include: artifact:`) with one job
// per node (runner tags send it there) and a job that merges the results.
#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "export/ci.hpp"
#include "export/yaml.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/export.hpp"

namespace gpuplan {

namespace {

/// The longest `timeout` GitLab takes (Project::MAX_BUILD_TIMEOUT, a month), here 30 days: a job over
/// it makes the whole child pipeline invalid ("timeout config should not exceed the limit").
constexpr long gitlab_timeout_limit_minutes = 30L * 24 * 60;

/// The most tags a GitLab job takes: Gitlab::Ci::Config::Entry::Tags (lib/gitlab/ci/config/entry/tags.rb)
/// finds a job of TAGS_LIMIT = 50 tags or more invalid, and with it the whole child pipeline.
constexpr std::size_t gitlab_tags_limit = 50;

/// The longest tag GitLab stores: Ci::Tag (app/models/ci/tag.rb) validates `name, length: {maximum: 255}`.
constexpr std::size_t gitlab_tag_length_limit = 255;

bool variable_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool variable_char(char c) { return variable_start(c) || (c >= '0' && c <= '9'); }

/// The first variable reference in `tag` that GitLab replaces when it creates the job: it passes a
/// job's tags through ExpandVariables.expand_existing (Gitlab::Ci::Pipeline::Seed::Build's
/// evaluate_runner_tags, since GitLab 14.1), whose VARIABLES_REGEXP (lib/expand_variables.rb) is
/// `$NAME`, `${NAME}` or `%NAME%`, replaced wherever such a variable exists (a predefined CI_*
/// one, or the project's, group's or instance's), with no escape. Empty when there is none.
std::string_view variable_reference(std::string_view tag) {
  for (std::size_t i = 0; i < tag.size(); ++i) {
    const char c = tag[i];
    if (c != '$' && c != '%') continue;
    const bool braced = c == '$' && i + 1 < tag.size() && tag[i + 1] == '{';
    std::size_t k = i + 1 + (braced ? 1 : 0);
    if (k >= tag.size() || !variable_start(tag[k])) continue;
    while (k < tag.size() && variable_char(tag[k])) ++k;
    if (c == '$' && !braced) return tag.substr(i, k - i);
    const char close = braced ? '}' : '%';
    if (k < tag.size() && tag[k] == close) return tag.substr(i, k + 1 - i);
  }
  return {};
}

/// Throws InputError for tags GitLab would not send the job to the node by: 50 or more, one over
/// 255 characters, or, from the node's name or a fleet label, one with a variable reference that
/// GitLab may replace (a `--tag '$RUNNER_TAG'` asks for that on purpose, and is left as it is).
void check_gitlab_tags(const CiOptions& o, const ExportNode& node, const std::vector<std::string>& tags) {
  if (tags.size() >= gitlab_tags_limit)
    throw InputError(
        Position{"export gitlab"},
        fmt::format("node \"{}\": its job would ask for {} runner tags, and GitLab takes fewer than {} "
                    "(Gitlab::Ci::Config::Entry::Tags::TAGS_LIMIT), refusing the whole child "
                    "pipeline otherwise: give fewer --tag and --fleet-tag options",
                    node.name, tags.size(), gitlab_tags_limit));
  for (std::size_t i = 0; i < tags.size(); ++i) {
    const std::string& tag = tags[i];
    const auto [option, source] = ci_tag_source(o, node, i, tag);
    if (tag.size() > gitlab_tag_length_limit)
      throw InputError(
          Position{option},
          fmt::format("{} gives a tag of {} characters, and GitLab stores runner tags of at most {} "
                      "(Ci::Tag's validation), so the job could not be created: {}",
                      source, tag.size(), gitlab_tag_length_limit,
                      option == "--tag" ? "shorten it" : "give the node a shorter name or label"));
    if (option == "--tag") continue;
    if (auto reference = variable_reference(tag); !reference.empty())
      throw InputError(
          Position{option},
          fmt::format(
              "{} gives the tag {:?}, in which GitLab replaces {} with that CI/CD variable's value "
              "when it creates the job (it expands $NAME, ${{NAME}} and %NAME% in a job's tags, with no "
              "escape: lib/expand_variables.rb), so the job would ask for another tag than the "
              "node's runner carries, and wait for it or run elsewhere: {}",
              source, tag, reference, ci_fleet_fix(option)));
  }
}

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
    check_gitlab_tags(o, node, tags);
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
