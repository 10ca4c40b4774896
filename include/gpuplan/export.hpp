#pragma once
// Exports of a plan for launchers other than Slurm: Kubernetes Jobs and CI pipelines
// (GitHub Actions matrix, Buildkite, GitLab). Each takes the plan (and, optionally, the
// fleet for node labels and GPU counts) and returns file contents; src/cli writes them.
#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuplan/fleet.hpp"
#include "gpuplan/history.hpp"
#include "gpuplan/plan.hpp"
#include "gpuplan/run.hpp"

namespace gpuplan {

/// A nodes's facts every export needs, in plan order of node names.
struct ExportNode {
  std::string name;
  int gpus = 0;         ///< the node's GPU count: the fleet's, else 1 + the highest planned index
  int units = 0;        ///< units planned on it
  double end_s = 0;     ///< when its last unit is planned to end
  double reruns_s = 0;  ///< what Bazel's reruns of its flaky units may add (rerun_allowance_s)
  std::map<std::string, std::string> labels;  ///< the fleet's labels for it (empty without a fleet)
  std::vector<std::string> unit_ids;          ///< in plan order
  /// The vendor of the node's GPUs ("nvidia", "amd", "intel"): the fleet's, else the one its
  /// units ask for; empty when neither says, or when they name several.
  std::string vendor;
};

/// The nodes that have units in `plan`, by name. With a fleet, a planned node the fleet
/// lacks is an InputError naming the node.
std::vector<ExportNode> export_nodes(const Plan& plan, const Fleet* fleet);

/// `gpuplan export kubernetes`: what goes into the Jobs.
struct KubernetesOptions {
  std::string image;                ///< the container image that has gpuplan and the test toolchain
  std::string namespace_name;       ///< metadata.namespace; empty: left out (kubectl's current one)
  std::string gpuplan = "gpuplan";  ///< the gpuplan binary inside the image
  /// The extended resource the device plugin advertises; unset: each node's vendor's
  /// (nvidia.com/gpu, amd.com/gpu, gpu.intel.com/i915), nvidia.com/gpu where no vendor is known.
  std::optional<std::string> gpu_resource;
  std::string node_key = "kubernetes.io/hostname";  ///< the node label whose value is the plan's node name
  std::vector<std::string> fleet_selectors;         ///< fleet label keys added to the nodeSelector
  std::string service_account;
  std::string priority_class;
  std::vector<std::string> tolerations;  ///< "KEY[=VALUE]:EFFECT" or "KEY[=VALUE]" (kubectl taint spelling)
  std::map<std::string, std::string> labels;  ///< extra labels on every object and pod
  double time_margin = 1.5;  ///< activeDeadlineSeconds = (planned end + reruns) × this + startup
  int startup_s = 300;       ///< added to the deadline: image pull, scheduling
  /// Told apart from earlier runs of the same plan: part of every object's name. Empty: the
  /// names are the plan's own, and applying the same plan again runs nothing.
  std::string run_id;
  int ttl_after_finished_s = 86400;          ///< a finished Job (and its pods) is deleted this long after
  std::optional<std::string> command;        ///< passed to `gpuplan exec --command`
  std::vector<std::string> bazel_args;       ///< after exec's --: options for its default bazel test
  std::optional<std::string> results_claim;  ///< a PersistentVolumeClaim the results CSVs go to
  bool warn_missing_gpus = false;            ///< passed as `gpuplan exec --missing-gpus=warn`
};

/// The first line of every manifest starts so: how a later export knows the files it may replace.
inline constexpr std::string_view kubernetes_manifest_mark = "# Made by gpuplan export kubernetes:";

/// What an object's annotations may hold in all (keys and values), 256 KiB. Client-side
/// `kubectl apply` keeps the whole object as JSON in its kubectl.kubernetes.io/last-applied-configuration
/// annotation, so it refuses an object about this large (kubernetes/kubectl#712); `kubectl apply
/// --server-side` keeps no such annotation, and takes what the API server takes.
inline constexpr std::size_t kubernetes_annotations_limit = 262144;

/// A node whose ConfigMap client-side `kubectl apply` refuses: its name, and the bytes the
/// last-applied-configuration annotation would take (key, the ConfigMap as JSON and a newline).
struct ClientSideApplyTooLarge {
  std::string node;
  std::size_t bytes = 0;
};

/// What `export kubernetes` writes, and what a user must know of it.
struct KubernetesManifests {
  /// File name → manifest (YAML): "gpuplan-NODE.yaml" holding the node's ConfigMap (its slice of
  /// the plan) and its Job. Empty for a plan without GPU units.
  std::map<std::string, std::string> files;
  std::vector<ClientSideApplyTooLarge> too_large_for_client_side_apply;  ///< in node order
};

/// The manifests of every node with units. Throws InputError for a bad option or a plan slice a
/// ConfigMap cannot hold.
KubernetesManifests kubernetes_manifests(const Plan& plan, const Fleet* fleet,
                                         const KubernetesOptions& options);

/// Per node, the places of its assignments in the plan: one pass (a pass a node took 9 s at
/// 10,000 nodes).
std::map<std::string, std::vector<std::size_t>> assignments_by_node(const Plan& plan);

/// The plan with only the assignments at those places, a node's (and no unschedulable units, CPU
/// tests or diagnostics): what `gpuplan exec --node NODE` needs, smaller by the number of nodes.
Plan node_slice(const Plan& plan, const std::vector<std::size_t>& assignments);

/// Where a CI job runs and what it runs, shared by the CI exports.
struct CiOptions {
  std::string plan_path = "plan.json";  ///< the plan as the CI job sees it
  std::string gpuplan = "gpuplan";
  std::optional<std::string> command;   ///< passed to `gpuplan exec --command`
  std::vector<std::string> bazel_args;  ///< after exec's --: options for its default bazel test
  /// Passed to `gpuplan exec --lock-dir` (absolute: the runner's); empty: exec's default.
  std::string lock_dir;
  bool warn_missing_gpus = false;       ///< passed as `gpuplan exec --missing-gpus=warn`
  std::string node_tag;                 ///< the runner label / agent tag key naming the node
  std::vector<std::string> tags;        ///< static runner labels or agent tags ("KEY=VALUE" for Buildkite)
  std::vector<std::string> fleet_tags;  ///< fleet label keys whose values become labels/tags
  double time_margin = 1.5;  ///< job timeouts: (planned end + reruns) × this + startup, in minutes, up
  int startup_s = 300;       ///< added to the timeout: checkout, plan download, the build before the tests
  bool with_units = true;    ///< list each node's units in the matrix
  std::string plan_job = "gpuplan-plan";  ///< GitLab: the parent pipeline's job whose artifact is the plan
};

/// `gpuplan export github-matrix`: {"include":[{"node":…,"runs-on":[…],"gpus":…,"units":[…],…}]}.
std::string github_matrix(const Plan& plan, const Fleet* fleet, const CiOptions& options);

/// `gpuplan export buildkite`: a pipeline YAML with one command step per node, a wait that
/// lets failures through, and a step that merges the per-node results.
std::string buildkite_pipeline(const Plan& plan, const Fleet* fleet, const CiOptions& options);

/// `gpuplan export gitlab`: a child pipeline YAML with one job per node and a merge job. With
/// `parsed_bytes`, also the least GitLab counts of it against its instance's `max_yaml_size_bytes`
/// (gitlab_parsed_bytes).
std::string gitlab_pipeline(const Plan& plan, const Fleet* fleet, const CiOptions& options,
                            std::size_t* parsed_bytes = nullptr);

/// GitLab's default `max_yaml_size_bytes` (2.megabytes; an instance setting, 1 MB before 2024): a CI
/// file whose bytes, or whose parsed YAML's memory (Gitlab::Utils::DeepSize: ObjectSpace.memsize_of
/// of every hash, array, key and value), exceed it makes no pipeline.
inline constexpr std::size_t gitlab_default_max_yaml_bytes = 2 * 1024 * 1024;

/// One <testcase> of a JUnit report.
struct JunitCase {
  std::string label{};
  std::optional<int> shard_index{};  ///< 0-based; empty when unsharded
  double seconds = 0;
  std::string node{};
  std::vector<int> gpus{};
  std::string failure_type{};  ///< empty: it passed
  std::string failure_message{};
  bool cached = false;         ///< Bazel reported a cached result: nothing ran
  std::string bazel_status{};  ///< the test's overallStatus in Bazel's build events (FLAKY); empty: none
  bool filtered = false;       ///< it ran under a test filter, only some of its cases (RunRecord::filtered)
};

/// JUnit XML, as CI systems read it: one <testsuite> per node, one <testcase> per case
/// (classname the package, name the target and shard, time its seconds) with its label, node,
/// GPUs (`cached` when Bazel ran nothing, `bazel_status` where Bazel gave one, `filtered` when it
/// ran under a test filter) as properties,
/// and a <failure> where it failed.
/// Cases in the order given; text that XML 1.0 cannot hold is replaced, never dropped.
std::string junit_xml(const std::vector<JunitCase>& cases);

/// The cases of a node's units that one `bazel test` ran, as Bazel's build events say they
/// ended: per unit (a shard: the testResults of that shard; a whole test: of all its shards),
/// each run's last attempt (a FLAKY test's failed first attempt is not a failure), failing
/// when one did not pass unless the test's overallStatus is PASSED or FLAKY, `cached` when each
/// was taken from Bazel's cache, `filtered` when one ran only some test cases (BepOutcome::filtered);
/// a unit with no testResult fails with `no_result` as its message. Labels match by label_identity.
std::vector<JunitCase> bazel_junit_cases(const std::vector<Assignment>& units, const BepOutcomes& events,
                                         const std::string& node, const std::string& no_result);

/// junit_xml of every record.
std::string results_junit(const std::vector<RunRecord>& records);

/// junit_xml of every record, and of each unit in `not_run` (on `node`) a failure of type
/// no-result with `why` as its message, as bazel_junit_cases gives a unit Bazel did not run: a
/// report that leaves them out passes a run that never ran them.
std::string results_junit(const std::vector<RunRecord>& records, const std::vector<Assignment>& not_run,
                          const std::string& node, const std::string& why);

}  // namespace gpuplan
