#pragma once
// What the CI exports (GitHub, Buildkite, GitLab) share: the command a node's job runs,
// its timeout, and the labels that send it to the node.
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuplan/export.hpp"

namespace gpuplan {

/// The merge job's name (GitLab) or step key (Buildkite).
inline constexpr std::string_view ci_merge_job = "gpuplan-merge";

/// A node's job name (GitLab) or step key (Buildkite), "gpuplan-NODE"; for Buildkite, where that
/// is no step key (over 100 characters, or characters besides letters, digits and `_-:.,`), one
/// made of the node's name and a hash (hashed_name). Throws InputError for a node whose job would
/// take the merge job's name (one would silently replace the other), or a GitLab job name over 255.
std::string ci_job_name(const ExportNode& node, std::string_view format);

/// Throws InputError for a node name whose results file the merge job would not read (a plan edited
/// by hand, or made by another tool; a fleet takes none of these): `a/b` left its results in
/// gpuplan-results/a/b.csv, which gpuplan-results/*.csv never reads, `../x` outside the folder, `.x`
/// a file the glob skips, and `g[1]` an artifact glob that matched another file.
void ci_check_node_name(const ExportNode& node, std::string_view format);

/// Where a node's job leaves its results, relative to the job's working directory.
std::string ci_results_path(const ExportNode& node);

/// The shell command a node's job runs: `mkdir -p gpuplan-results && gpuplan exec PLAN --node NODE
/// --results gpuplan-results/NODE.csv`.
std::string ci_exec_command(const CiOptions& options, const ExportNode& node);

/// The job's timeout: the node's planned end (with reruns) × the margin + the startup, in whole
/// minutes, at least 1.
long ci_timeout_minutes(const CiOptions& options, const ExportNode& node);

/// The static tags, then "NODE_TAG=NODE" (or the node name alone when `key_value` is false),
/// then each fleet label asked for. A missing fleet label is an InputError naming node and key, and
/// so is a tag no runner can carry (empty, a comma, a leading or trailing space: runners register
/// their labels from a comma-separated list), naming the option it came from.
std::vector<std::string> ci_tags(const CiOptions& options, const ExportNode& node, bool key_value);

/// Where the `index`th of ci_tags' tags came from: `option` ("--tag", "--node-tag" or
/// "--fleet-tag") and a `source` to name in a message ("node \"a-0\"'s fleet label zone
/// (--fleet-tag zone)").
struct CiTagSource {
  std::string option;
  std::string source;
};
CiTagSource ci_tag_source(const CiOptions& options, const ExportNode& node, std::size_t index,
                          std::string_view tag);

/// How to change a tag that came from the fleet (`option` "--fleet-tag" or "--node-tag"): the
/// label's value, or the node's name.
std::string_view ci_fleet_fix(std::string_view option);

/// Nodes by the tags their jobs ask for, to tell that no two ask for the same (ci_check_told_apart).
using CiTagsSeen = std::map<std::vector<std::string>, std::pair<std::string, std::vector<std::string>>>;

/// Throws InputError when another node's job asked for the same `tags` as `node`'s (compared
/// without case when `fold_case`, as GitHub compares runner labels), else remembers them in
/// `seen`: either job could run on either machine, on GPUs the plan gave the other's units.
void ci_check_told_apart(CiTagsSeen& seen, const CiOptions& options, const ExportNode& node,
                         const std::vector<std::string>& tags, std::string_view format, bool fold_case);

/// The merge step's command: every node's results into one rolling history file; with none (a
/// plan without GPU units), a line that says so, and success.
std::string ci_merge_command(const CiOptions& options);

}  // namespace gpuplan
