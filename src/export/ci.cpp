// The pieces the CI exports share.
#include "export/ci.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>

#include "export/names.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/run.hpp"

namespace gpuplan {

namespace {

/// The longest job name GitLab takes.
constexpr std::size_t gitlab_job_name_limit = 255;

/// A Buildkite step key, as buildkite/pipeline-schema's schema.json (definitions/key) describes it:
/// at most 100 characters of `^[a-zA-Z0-9_\-:${}.,]+$`, and not a UUID (a key that begins with
/// "gpuplan-" never is). `$`, `{` and `}` are left out here: `pipeline upload` interpolates them.
constexpr std::size_t buildkite_key_limit = 100;

bool buildkite_key_ok(const std::string& key) {
  return !key.empty() && key.size() <= buildkite_key_limit && std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-' || c == ':' || c == '.' || c == ',';
  });
}

/// What a runner label, agent tag or runner tag cannot be: each is registered on the runner from a
/// comma-separated list (GitHub's `config.sh --labels`, `buildkite-agent start --tags`,
/// `gitlab-runner register --tag-list`) that is split at commas, trimmed and rid of empty items,
/// and GitLab splits a job's own tags at commas too. So no runner ever carries a tag that is
/// empty, has a comma or begins or ends with a space, and a job asking for it waits forever. Empty
/// when `tag` is one a runner can carry, else why not.
std::string tag_flaw(std::string_view tag) {
  if (tag.empty()) return "is empty";
  if (tag.find(',') != std::string_view::npos) return "has a comma";
  auto space = [](char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
  };
  if (space(tag.front()) || space(tag.back())) return "begins or ends with a space";
  return "";
}

/// Throws InputError naming where `tag` came from (`source`) when no runner can carry it.
void check_tag(std::string_view tag, std::string_view value, const std::string& source,
               std::string_view option) {
  const std::string flaw = tag_flaw(value);
  if (flaw.empty()) return;
  throw InputError(
      Position{std::string(option)},
      fmt::format(
          "{} gives the tag {:?}, whose value {}: runner labels and agent tags are registered from a "
          "comma-separated list (config.sh --labels, buildkite-agent start --tags, gitlab-runner "
          "register --tag-list), split at commas with spaces trimmed and empty items dropped, so no "
          "runner carries it and the job would wait forever: {}",
          source, std::string(tag), flaw,
          option == "--tag" ? "choose a value without commas or surrounding spaces" : ci_fleet_fix(option)));
}

/// `check_tag` of a tag as a CI system reads it: Buildkite's `KEY=VALUE` is checked in both parts.
void check_tag_parts(const std::string& tag, bool key_value, const std::string& source,
                     std::string_view option) {
  if (!key_value) return check_tag(tag, tag, source, option);
  const auto eq = tag.find('=');
  check_tag(tag, tag.substr(0, eq), source, option);
  if (eq != std::string::npos && eq + 1 < tag.size()) check_tag(tag, tag.substr(eq + 1), source, option);
}

}  // namespace

std::string ci_job_name(const ExportNode& node, std::string_view format) {
  std::string name = "gpuplan-" + node.name;
  if (name == ci_merge_job)
    throw InputError(
        Position{fmt::format("export {}", format)},
        fmt::format("node \"{}\": its job would be named {}, as the job that merges the results "
                    "is, and the pipeline would keep only one of them: rename the node in the fleet",
                    node.name, name));
  // GitLab refuses the whole pipeline for one job name over 255 characters; a fleet's node name
  // may have 253, so "gpuplan-" made one too long.
  if (format == "gitlab" && name.size() > gitlab_job_name_limit)
    throw InputError(Position{"export gitlab"},
                     fmt::format("node \"{}\": its job name {} would have {} characters, and GitLab takes at "
                                 "most {}: give the node a shorter name in the fleet",
                                 node.name, name, name.size(), gitlab_job_name_limit));
  // Buildkite refuses the upload for one key over 100 characters or of other characters (a
  // node name may have 253, and '@' or '/'): such a node's key is made from its name and a hash.
  if (format == "buildkite" && !buildkite_key_ok(name))
    return hashed_name("gpuplan-", node.name, "", buildkite_key_limit);
  return name;
}

void ci_check_node_name(const ExportNode& node, std::string_view format) {
  // The merge job reads gpuplan-results/*.csv, a glob that takes no '/' and no leading '.', and the
  // CI systems read artifact paths as globs too.
  const bool plain = !node.name.empty() && node.name.front() != '.' &&
                     std::none_of(node.name.begin(), node.name.end(), [](char c) {
                       return c == '/' || c == '\\' || c == '*' || c == '?' || c == '[' || c == ']' ||
                              c == '{' || c == '}' || static_cast<unsigned char>(c) < 0x20;
                     });
  if (plain) return;
  throw InputError(
      Position{fmt::format("export {}", format)},
      fmt::format("the plan has a node named {:?}, whose job's results file gpuplan-results/{}.csv "
                  "would not reach the merge job, which reads gpuplan-results/*.csv from artifact "
                  "globs (a node name no fleet takes: '/', '\\', a leading '.' or a glob's "
                  "'*?[]{{}}'): plan again with a fleet that names the node with letters, digits, "
                  "'-', '_' and '.'",
                  node.name, node.name));
}

std::string ci_results_path(const ExportNode& node) {
  return fmt::format("gpuplan-results/{}.csv", node.name);
}

std::string ci_exec_command(const CiOptions& o, const ExportNode& node) {
  // exec makes no directory for its results file, and a job's fresh checkout has no
  // gpuplan-results/: every job stopped at its start ("cannot write the results file", exit 2).
  std::string command =
      fmt::format("mkdir -p gpuplan-results && {} exec {} --node {} --results {}", shell_quote(o.gpuplan),
                  shell_quote(o.plan_path), shell_quote(node.name), shell_quote(ci_results_path(node)));
  if (o.command) command += " --command " + shell_quote(*o.command);
  if (!o.lock_dir.empty()) {
    // The runner machine's directory whose locks its other run-under and exec take too; a relative
    // one would be each job's checkout's own, and hand its GPUs to nobody else.
    if (o.lock_dir.front() != '/')
      throw InputError(Position{"--lock-dir"},
                       fmt::format("{:?} is relative: give an absolute path on the runner, the lock "
                                   "directory the machine's other run-under and exec take GPU locks in",
                                   o.lock_dir));
    command += " --lock-dir " + shell_quote(o.lock_dir);
  }
  if (o.warn_missing_gpus) command += " --missing-gpus=warn";
  if (!o.bazel_args.empty()) command += " --";
  for (const auto& arg : o.bazel_args) command += " " + shell_quote(arg);
  return command;
}

long ci_timeout_minutes(const CiOptions& o, const ExportNode& node) {
  if (!(o.time_margin >= 1)) throw InputError(Position{"--time-margin"}, "must be a number ≥ 1");
  if (o.startup_s < 0) throw InputError(Position{"--startup"}, "must be 0 or more seconds");
  // The job checks out, fetches the plan and builds before its first test: a node planned for
  // 60 s had 2 minutes for all of it.
  return std::max(
      1L,
      static_cast<long>(std::ceil(((node.end_s + node.reruns_s) * o.time_margin + o.startup_s) / 60 - 1e-9)));
}

std::vector<std::string> ci_tags(const CiOptions& o, const ExportNode& node, bool key_value) {
  std::vector<std::string> tags = o.tags;
  // Buildkite's agents are a map: a --tag of the node tag's or a fleet tag's key was replaced.
  if (key_value)
    for (const auto& tag : o.tags) {
      std::string key = tag.substr(0, tag.find('='));
      if (key == o.node_tag || std::find(o.fleet_tags.begin(), o.fleet_tags.end(), key) != o.fleet_tags.end())
        throw InputError(Position{"--tag"},
                         fmt::format("\"{}\": the tag {} names the node{}, and one would replace the other: "
                                     "choose another key",
                                     tag, key, key == o.node_tag ? " (--node-tag)" : " (--fleet-tag)"));
    }
  for (const auto& tag : o.tags) check_tag_parts(tag, key_value, fmt::format("--tag {:?}", tag), "--tag");
  if (!o.node_tag.empty()) {
    tags.push_back(key_value ? o.node_tag + "=" + node.name : node.name);
    check_tag_parts(tags.back(), key_value,
                    fmt::format("node {:?}'s name (--node-tag {})", node.name, o.node_tag), "--node-tag");
  }
  for (const auto& key : o.fleet_tags) {
    auto it = node.labels.find(key);
    if (it == node.labels.end())
      throw InputError(Position{"--fleet-tag"},
                       fmt::format("node \"{}\" has no fleet label \"{}\"", node.name, key));
    tags.push_back(key_value ? key + "=" + it->second : it->second);
    check_tag_parts(tags.back(), key_value,
                    fmt::format("node {:?}'s fleet label {} (--fleet-tag {})", node.name, key, key),
                    "--fleet-tag");
  }
  return tags;
}

std::string_view ci_fleet_fix(std::string_view option) {
  return option == "--fleet-tag" ? "give the label a value of letters, digits, '-', '_' and '.' in the fleet"
                                 : "rename the node in the fleet, and plan again";
}

CiTagSource ci_tag_source(const CiOptions& o, const ExportNode& node, std::size_t index,
                          std::string_view tag) {
  if (index < o.tags.size()) return {"--tag", fmt::format("--tag {:?}", tag)};
  if (!o.node_tag.empty() && index == o.tags.size())
    return {"--node-tag", fmt::format("node {:?}'s name (--node-tag {})", node.name, o.node_tag)};
  const auto& key = o.fleet_tags.at(index - o.tags.size() - (o.node_tag.empty() ? 0 : 1));
  return {"--fleet-tag", fmt::format("node {:?}'s fleet label {} (--fleet-tag {})", node.name, key, key)};
}

void ci_check_told_apart(CiTagsSeen& seen, const CiOptions& o, const ExportNode& node,
                         const std::vector<std::string>& tags, std::string_view format, bool fold_case) {
  auto sorted = tags;
  std::sort(sorted.begin(), sorted.end());
  auto key = sorted;
  if (fold_case)
    for (auto& tag : key)
      std::transform(tag.begin(), tag.end(), tag.begin(), [](unsigned char c) { return std::tolower(c); });
  std::sort(key.begin(), key.end());
  auto [it, added] = seen.try_emplace(key, node.name, sorted);
  if (added) return;
  const auto& [other, other_tags] = it->second;
  throw InputError(
      Position{fmt::format("export {}", format)},
      fmt::format("nodes {:?} and {:?} get the {} [{}]{}, so either job may run on either machine: {}", other,
                  node.name, format == "github-matrix" ? "runner labels" : "tags", fmt::join(tags, ", "),
                  other_tags == sorted ? "" : ", which GitHub compares without case",
                  o.node_tag.empty() ? "leave out --no-node-tag, or tell them apart with --fleet-tag"
                                     : "rename one node, or tell them apart with --fleet-tag"));
}

std::string ci_merge_command(const CiOptions& o) {
  // With no results (a plan without GPU units, or no node job got as far) the glob stays as
  // written, and history summarize refused the file of that name: the pipeline failed.
  return fmt::format(
      "set -- gpuplan-results/*.csv; if [ -e \"$1\" ]; then {} history summarize \"$@\" -o "
      "gpuplan-results/history.json; else echo 'gpuplan: no results to merge'; fi",
      shell_quote(o.gpuplan));
}

}  // namespace gpuplan
