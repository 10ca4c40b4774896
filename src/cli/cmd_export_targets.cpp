// gpuplan export kubernetes | github-matrix | buildkite | gitlab: the launchers besides Slurm.
// Each reads the plan (and optionally the fleet, for GPU counts and labels), then writes
// what src/export/ made of it; nothing is written when anything is wrong.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <iostream>
#include <memory>
#include <optional>

#include "cli/commands.hpp"
#include "cli/earlier_exports.hpp"
#include "cli/io.hpp"
#include "cli/number_options.hpp"
#include "cli/plan_input.hpp"
#include "cli/query_input.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/export.hpp"
#include "gpuplan/limits.hpp"
#include "gpuplan/run.hpp"

namespace gpuplan::cli {

namespace {

/// The inputs every export target reads.
struct ExportInput {
  std::string plan;
  std::string fleet_path;
  bool strict = false;  ///< the fleet's guesses (warnings) are errors
  std::string out = "-";

  /// The plan, refused when a job's exec would refuse it at run time (a unit twice, on no GPU).
  Plan read_plan() const {
    auto input = open_input(plan);
    auto read = parse_plan(input.in(), input.name);
    check_exportable(read, input.name);
    return read;
  }
  /// The fleet, when given, which must have every GPU the plan uses on its nodes; its warnings
  /// are counted in `said`.
  std::optional<Fleet> read_fleet(const Plan& read, ExportRemarks& said) const {
    if (fleet_path.empty()) return std::nullopt;
    auto input = open_input(fleet_path);
    auto fleet = load_fleet(input.in(), input.name);
    said.warnings += print_fleet_warnings(fleet, strict);
    check_fits_fleet(read, fleet, plan, input.name);
    return fleet;
  }
};

struct KubernetesExport {
  ExportInput input;
  KubernetesOptions options;
  std::vector<std::string> labels;
  std::string results_claim;
  std::string command;
};

/// Without the fleet a Job asks for the GPUs its units use, not the node's count: a unit that must
/// have its node to itself (gpu-exclusive, or several GPUs under whole-node) may then share it
/// with other pods on the GPUs the Job did not take. Named on stderr, a few and a count; returns
/// how many warnings it printed (0 or 1).
long warn_alone_units(const Plan& plan, const std::string& path) {
  std::vector<std::string> alone;
  for (const auto& a : plan.assignments)
    if (holds_whole_node(a, plan.policy)) alone.push_back(fmt::format("{} on {}", a.unit.id, a.node.str()));
  if (alone.empty()) return 0;
  constexpr std::size_t named = 5;
  const std::size_t more = alone.size() > named ? alone.size() - named : 0;
  alone.resize(alone.size() - more);
  std::cerr << fmt::format(
      "gpuplan: warning: {}: {} unit{} must have {} node to {} (gpu-exclusive or whole-node), but without "
      "--fleet {} Job asks only for the GPUs the plan uses there, and other pods may take the node's others: "
      "{}{}; give --fleet\n",
      path, alone.size() + more, alone.size() + more == 1 ? "" : "s",
      alone.size() + more == 1 ? "its" : "their", alone.size() + more == 1 ? "itself" : "themselves",
      alone.size() + more == 1 ? "its" : "each one's", fmt::join(alone, ", "),
      more ? fmt::format(" and {} more", more) : "");
  return 1;
}

/// Client-side `kubectl apply` keeps each object in an annotation of at most 256 KiB, so it refuses
/// a ConfigMap whose plan slice is far below the 1 MiB the export checks. Named, a few and a count;
/// returns how many warnings it printed (0 or 1).
long warn_client_side_apply(const std::vector<ClientSideApplyTooLarge>& too_large, const std::string& out) {
  if (too_large.empty()) return 0;
  constexpr std::size_t named = 5;
  std::vector<std::string> nodes;
  for (std::size_t i = 0; i < too_large.size() && i < named; ++i)
    nodes.push_back(fmt::format("{} ({} bytes)", too_large[i].node, too_large[i].bytes));
  const std::size_t more = too_large.size() - nodes.size();
  std::cerr << fmt::format(
      "gpuplan: warning: the ConfigMap of node{} {}{} would take more than the {} bytes an object's "
      "annotations hold in the last-applied-configuration annotation of a plain kubectl apply, which "
      "refuses it (metadata.annotations: Too long): apply with kubectl apply --server-side -f {}\n",
      too_large.size() == 1 ? "" : "s", fmt::join(nodes, ", "), more ? fmt::format(" and {} more", more) : "",
      kubernetes_annotations_limit, out);
  return 1;
}

int export_kubernetes(KubernetesExport& e) {
  for (const auto& label : e.labels) {
    auto eq = label.find('=');
    if (eq == std::string::npos)
      throw InputError(Position{"--label"}, fmt::format("\"{}\" is not KEY=VALUE", label));
    e.options.labels[label.substr(0, eq)] = label.substr(eq + 1);
  }
  if (!e.results_claim.empty()) e.options.results_claim = e.results_claim;
  if (!e.command.empty()) e.options.command = e.command;
  check_bazel_args(e.options.bazel_args, !e.command.empty());
  auto plan = e.input.read_plan();
  ExportRemarks said;
  if (e.command.empty()) said.warnings += warn_split_tests(plan, "", e.input.plan);
  auto fleet = e.input.read_fleet(plan, said);
  auto [files, too_large] = kubernetes_manifests(plan, fleet ? &*fleet : nullptr, e.options);
  if (!fleet && !files.empty()) {
    std::cerr << "gpuplan: warning: no --fleet: each Job asks for the GPUs its plan uses (1 + the highest "
                 "index), not the whole node, so the device plugin picks which ones, and for nvidia.com/gpu "
                 "unless its units ask for another vendor (see README, Kubernetes)\n";
    said.warnings += 1 + warn_alone_units(plan, e.input.plan);
  }
  FolderOutput folder(e.input.out);  // the manifests appear together or not at all
  for (const auto& [name, content] : files) folder.write(name, content);
  folder.commit();
  if (files.empty()) {
    // `kubectl apply -f DIR` of a folder without manifests fails ("error reading [DIR]: recognized
    // file extensions are [.json .yaml .yml]"), after an export that said to run it.
    std::cerr << fmt::format(
        "gpuplan: note: {} has no GPU units on any node: no Job was written to {}, and there is nothing "
        "to apply (kubectl apply -f of a folder without manifests fails; see README, Kubernetes, for a "
        "step that skips it)\n",
        e.input.plan, e.input.out);
    ++said.notes;
  } else {
    std::cout << fmt::format(
        "wrote {} Job(s) with their ConfigMaps to {}; run them with kubectl apply --server-side -f {}\n",
        files.size(), e.input.out, e.input.out);
  }
  said.warnings += warn_client_side_apply(too_large, e.input.out);
  // Every node's Job mounts the claim at once: a ReadWriteOnce one attaches to a single node, and
  // the other Jobs waited ("Multi-Attach error", or Pending by a local volume's node affinity)
  // past their deadlines. The export cannot see the claim's access mode, so it says what it needs.
  if (e.options.results_claim && files.size() > 1) {
    std::cerr << fmt::format(
        "gpuplan: note: the Jobs of {} nodes mount the PersistentVolumeClaim {} at once, so it must be "
        "ReadWriteMany: a ReadWriteOnce claim attaches to one node, and the Jobs on the others wait "
        "(ContainerCreating, \"Multi-Attach error\") past their deadlines (see README, Kubernetes)\n",
        files.size(), *e.options.results_claim);
    ++said.notes;
  }
  // `kubectl apply -f DIR` applies every manifest there: an earlier plan's for a node this one
  // does not use would run its old units again.
  remove_earlier_exports(e.input.out, files, ".yaml", kubernetes_manifest_mark, "manifest(s)");
  said.warnings += warn_unschedulable(plan, e.input.plan);
  print_export_totals(said);
  return exit_ok;
}

struct CiExport {
  ExportInput input;
  CiOptions options;
  std::string command;
  bool no_node_tag = false;
  bool no_units = false;
};

/// What a user must know of a pipeline besides its warnings: said after it is written, and counted.
using CiNotes = std::function<ExportRemarks(const Plan& plan, const CiExport& e)>;

/// GitLab fails a pipeline of more jobs than the instance's `ci_pipeline_size` (size_limit_exceeded)
/// once it is triggered: 500 on GitLab.com's Free plan; on a self-managed instance none unless its
/// administrator set one. So is a child pipeline over the default max_yaml_size_bytes (2 MB, counted
/// as the parsed YAML's memory: `parsed_bytes` is the least it can be), which GitLab refuses.
/// Neither is refused here, since the limits are the instance's.
ExportRemarks gitlab_notes(const Plan& plan, const CiExport& e, std::size_t parsed_bytes) {
  ExportRemarks said;
  if (parsed_bytes > gitlab_default_max_yaml_bytes) {
    std::cerr << fmt::format(
        "gpuplan: warning: {}: GitLab counts the child pipeline ({} nodes) as at least {} bytes of parsed "
        "YAML (the memory of its hashes, arrays and strings), and refuses a CI file over its instance's "
        "max_yaml_size_bytes, {} bytes (2 MB) by default: the trigger job then fails with no pipeline. Where "
        "yours is no higher, split the fleet into several plans, or have an administrator raise it\n",
        e.input.plan, assignments_by_node(plan).size(), parsed_bytes, gitlab_default_max_yaml_bytes);
    ++said.warnings;
  }
  constexpr std::size_t gitlab_com_free_jobs = 500;
  const std::size_t jobs = assignments_by_node(plan).size() + 1;
  if (jobs <= gitlab_com_free_jobs) return said;
  std::cerr << fmt::format(
      "gpuplan: warning: {}: the child pipeline has {} jobs (one per node and the merge job), and GitLab "
      "fails a pipeline of more jobs than its instance's ci_pipeline_size (size_limit_exceeded): {} on "
      "GitLab.com's Free plan; on a self-managed instance none unless its administrator set one. Where "
      "yours is lower, split the fleet into several plans\n",
      e.input.plan, jobs, gitlab_com_free_jobs);
  ++said.warnings;
  return said;
}

/// A step reaches its node by an agent tag (`hostname=NODE` by default), which an agent has only
/// when started with it: without, the step waits for an agent that never comes.
ExportRemarks buildkite_notes(const Plan& plan, const CiExport& e) {
  if (e.options.node_tag.empty() || plan.assignments.empty()) return {};
  std::cerr << fmt::format(
      "gpuplan: note: each step asks for an agent tagged {0}=NODE: {1}or give each agent its tag "
      "(buildkite-agent start --tags {0}=NODE, or tags=\"{0}=NODE\" in buildkite-agent.cfg); a step no "
      "agent's tags match waits for one (see README, Buildkite)\n",
      e.options.node_tag,
      e.options.node_tag == "hostname" ? "start the agents with buildkite-agent start --tags-from-host (the "
                                         "tag is then the machine's host "
                                         "name, which must be its node's name in the fleet), "
                                       : "");
  return {.warnings = 0, .notes = 1};
}

template <typename Make>
int export_ci(CiExport& e, Make make, CiNotes notes = nullptr) {
  if (!e.command.empty()) e.options.command = e.command;
  check_bazel_args(e.options.bazel_args, !e.command.empty());
  if (e.no_node_tag) e.options.node_tag.clear();
  e.options.with_units = !e.no_units;
  auto plan = e.input.read_plan();
  ExportRemarks said;
  if (e.command.empty()) said.warnings += warn_split_tests(plan, "", e.input.plan);
  auto fleet = e.input.read_fleet(plan, said);
  write_output(e.input.out, make(plan, fleet ? &*fleet : nullptr, e.options));
  if (notes) {
    const ExportRemarks noted = notes(plan, e);
    said.warnings += noted.warnings;
    said.notes += noted.notes;
  }
  said.warnings += warn_unschedulable(plan, e.input.plan);
  print_export_totals(said);
  return exit_ok;
}

void add_common(CLI::App* app, ExportInput& input, bool directory) {
  app->add_option("plan", input.plan, "the plan (JSON)")->required();
  app->add_option("--fleet", input.fleet_path, "the fleet YAML: GPU counts and labels of the nodes");
  app->add_flag("--strict", input.strict, strict_fleet_help);
  if (directory)
    app->add_option("-o,--output", input.out, "the directory to write the manifests into")->required();
  else
    app->add_option("-o,--output", input.out, "where to write it (default: standard output)");
}

void add_ci_options(CLI::App* app, CiExport& e, const std::string& tag_help) {
  app->add_option("--plan-path", e.options.plan_path, "the plan's path as the CI job sees it")
      ->capture_default_str();
  app->add_option("--gpuplan", e.options.gpuplan, "the gpuplan binary on the runners")->capture_default_str();
  app->add_option("--command", e.command, "the command template the jobs pass to gpuplan exec");
  app->add_option("--lock-dir", e.options.lock_dir,
                  "passed to each job's gpuplan exec: the runner machine's lock directory (absolute) "
                  "whose GPU locks its other run-under and exec take too");
  add_missing_gpus_option(*app, e.options.warn_missing_gpus, export_missing_gpus_help);
  app->add_option("bazel-options", e.options.bazel_args, export_bazel_options_help);
  app->add_option("--tag", e.options.tags, tag_help);
  app->add_option("--node-tag", e.options.node_tag, "the tag naming the node the job must run on")
      ->capture_default_str();
  app->add_flag("--no-node-tag", e.no_node_tag, "leave the node's own tag out");
  app->add_option("--fleet-tag", e.options.fleet_tags,
                  "a fleet label whose value becomes a tag too (repeatable)");
  app->add_option(
         "--time-margin", e.options.time_margin,
         "job timeouts are the node's planned end, with two more runs of its flaky units, times this, plus "
         "--startup")
      ->check(finite_number(1, 100))
      ->capture_default_str();
  app->add_option("--startup", e.options.startup_s,
                  "seconds added to job timeouts for checkout, fetching the plan and the build")
      ->transform(whole_number(0, static_cast<std::uint64_t>(max_duration_s)))
      ->capture_default_str();
}

}  // namespace

void add_export_targets(CLI::App& export_command, int& status) {
  auto k8s = std::make_shared<KubernetesExport>();
  auto* kubernetes = export_command.add_subcommand(
      "kubernetes",
      "One batch/v1 Job per node (running gpuplan exec) with its slice of the plan in a ConfigMap");
  add_common(kubernetes, k8s->input, true);
  kubernetes
      ->add_option("--image", k8s->options.image, "the container image with gpuplan and the tests' toolchain")
      ->required();
  kubernetes->add_option("--namespace", k8s->options.namespace_name, "metadata.namespace of every object");
  kubernetes->add_option("--gpuplan", k8s->options.gpuplan, "the gpuplan binary in the image")
      ->capture_default_str();
  kubernetes->add_option("--gpu-resource", k8s->options.gpu_resource,
                         "the device plugin's resource name (default: by the node's GPU vendor, "
                         "nvidia.com/gpu, amd.com/gpu or gpu.intel.com/i915)");
  kubernetes
      ->add_option("--node-key", k8s->options.node_key, "the node label whose value is the plan's node name")
      ->capture_default_str();
  kubernetes->add_option("--fleet-selector", k8s->options.fleet_selectors,
                         "a fleet label added to the nodeSelector (repeatable; needs --fleet)");
  kubernetes->add_option("--service-account", k8s->options.service_account, "spec.serviceAccountName");
  kubernetes->add_option("--priority-class", k8s->options.priority_class, "spec.priorityClassName");
  kubernetes->add_option("--toleration", k8s->options.tolerations,
                         "KEY[=VALUE][:EFFECT], as kubectl taint writes it (repeatable)");
  kubernetes->add_option("--label", k8s->labels, "KEY=VALUE on every object and pod (repeatable)");
  kubernetes
      ->add_option("--time-margin", k8s->options.time_margin,
                   "activeDeadlineSeconds is the node's planned end, with two more runs of its flaky units, "
                   "times this, plus --startup")
      ->check(finite_number(1, 100))
      ->capture_default_str();
  kubernetes
      ->add_option("--startup", k8s->options.startup_s,
                   "seconds added to the deadline for image pull and scheduling")
      ->transform(whole_number(0, static_cast<std::uint64_t>(max_duration_s)))
      ->capture_default_str();
  kubernetes->add_option("--run-id", k8s->options.run_id,
                         "a run of the same plan again: part of every object's name, so that its Jobs "
                         "are new (at most 20 lower-case letters, digits and '-')");
  kubernetes
      ->add_option("--ttl-after-finished", k8s->options.ttl_after_finished_s,
                   "seconds after which a finished Job and its pods are deleted")
      ->transform(whole_number(0, static_cast<std::uint64_t>(max_duration_s)))
      ->capture_default_str();
  kubernetes->add_option("--command", k8s->command, "the command template the jobs pass to gpuplan exec");
  add_missing_gpus_option(*kubernetes, k8s->options.warn_missing_gpus, export_missing_gpus_help);
  kubernetes->add_option("bazel-options", k8s->options.bazel_args, export_bazel_options_help);
  kubernetes->add_option("--results-claim", k8s->results_claim,
                         "a PersistentVolumeClaim to mount; each Job appends its results to NODE.csv there");
  kubernetes->callback([k8s, &status] { status = export_kubernetes(*k8s); });

  auto gh = std::make_shared<CiExport>();
  gh->options.node_tag = "node";
  gh->options.tags = {"self-hosted"};
  auto* github = export_command.add_subcommand(
      "github-matrix", "The JSON a GitHub Actions strategy.matrix takes: one entry per node");
  add_common(github, gh->input, false);
  add_ci_options(github, *gh, "a runner label every job gets (repeatable; default: self-hosted)");
  github->add_flag("--no-units", gh->no_units, "leave the unit lists out (a smaller matrix)");
  github->callback([gh, &status] { status = export_ci(*gh, github_matrix); });

  auto bk = std::make_shared<CiExport>();
  bk->options.node_tag = "hostname";
  auto* buildkite = export_command.add_subcommand(
      "buildkite", "A Buildkite pipeline: one step per node, then a step that merges the results");
  add_common(buildkite, bk->input, false);
  add_ci_options(buildkite, *bk, "an agent tag KEY=VALUE every step asks for (repeatable), e.g. queue=gpu");
  buildkite->callback([bk, &status] { status = export_ci(*bk, buildkite_pipeline, buildkite_notes); });

  auto gl = std::make_shared<CiExport>();
  gl->options.node_tag = "node";
  auto* gitlab = export_command.add_subcommand(
      "gitlab", "A GitLab child pipeline: one job per node, then a job that merges the results");
  add_common(gitlab, gl->input, false);
  add_ci_options(gitlab, *gl, "a runner tag every job asks for (repeatable)");
  gitlab
      ->add_option("--plan-job", gl->options.plan_job, "the parent pipeline's job whose artifact is the plan")
      ->capture_default_str();
  gitlab->callback([gl, &status] {
    std::size_t parsed_bytes = 0;
    status = export_ci(
        *gl,
        [&parsed_bytes](const Plan& plan, const Fleet* fleet, const CiOptions& o) {
          return gitlab_pipeline(plan, fleet, o, &parsed_bytes);
        },
        [&parsed_bytes](const Plan& plan, const CiExport& e) { return gitlab_notes(plan, e, parsed_bytes); });
  });
}

}  // namespace gpuplan::cli
