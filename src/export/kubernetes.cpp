// `gpuplan export kubernetes`: one batch/v1 Job per node, pinned to it, running `gpuplan exec`
// on the node's slice of the plan, which a ConfigMap beside it carries.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string_view>

#include "export/names.hpp"
#include "export/yaml.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/export.hpp"
#include "gpuplan/run.hpp"
#include "util/fingerprint.hpp"
#include "util/json_writer.hpp"

namespace gpuplan {

namespace {

using Json = nlohmann::ordered_json;

/// What a ConfigMap can hold: the API server refuses objects over 1 MiB; keep room for the rest.
constexpr std::size_t configmap_limit = std::size_t{1000} * 1000;

bool alnum(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); }

/// A label value: at most 63 characters, alphanumerics with `-_.` inside (empty is allowed).
bool label_value_ok(const std::string& v) {
  if (v.empty()) return true;
  return v.size() <= 63 && alnum(v.front()) && alnum(v.back()) &&
         std::all_of(v.begin(), v.end(), [](char c) { return alnum(c) || c == '-' || c == '_' || c == '.'; });
}

/// A DNS-1123 subdomain (a node's name, a label key's prefix): lower-case alphanumerics, '-' and
/// '.', beginning and ending with an alphanumeric, at most 253.
bool dns_subdomain_ok(const std::string& s) {
  return !s.empty() && s.size() <= 253 && alnum(s.front()) && alnum(s.back()) &&
         std::all_of(s.begin(), s.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.';
         });
}

/// A label key: an optional DNS-subdomain prefix and "/", then a name like a label value.
bool label_key_ok(const std::string& k) {
  auto slash = k.rfind('/');
  std::string name = slash == std::string::npos ? k : k.substr(slash + 1);
  if (name.empty() || !label_value_ok(name)) return false;
  return slash == std::string::npos || dns_subdomain_ok(k.substr(0, slash));
}

/// An extended resource a device plugin advertises: a label key with a domain, outside
/// kubernetes.io's (which only Kubernetes' own resources use). "gpu" alone was let through, and
/// the API server refused the Job.
bool extended_resource_ok(const std::string& r) {
  auto slash = r.find('/');
  if (slash == std::string::npos || !label_key_ok(r)) return false;
  std::string domain = r.substr(0, slash);
  return domain != "kubernetes.io" && !domain.ends_with(".kubernetes.io") && !domain.starts_with("requests.");
}

/// A DNS-1123 label for object names: `prefix`, the node's name, then `tail`, at most 63 (a name
/// that is not one already gets a hash of the original, hashed_name). `tail` is empty or a '-' and
/// a DNS label.
std::string object_name(const std::string& prefix, const std::string& node, const std::string& tail = "") {
  return hashed_name(prefix, node, tail, 63);
}

/// What tells one plan's Jobs from another's: 8 hex digits of a fingerprint of the plan as
/// gpuplan writes it. A Job's spec cannot be changed once made, and `kubectl apply` of a Job by
/// the name of a finished one says "unchanged" and runs nothing.
std::string plan_id(const Plan& plan) {
  util::Fingerprint fingerprint;
  write_plan_json(plan, [&](std::string_view bytes) { fingerprint.add(bytes); });
  return fmt::format("{:08x}", fingerprint.value() & 0xffffffffu);
}

/// The longest --run-id: with "gpuplan-", the plan's ID and a hash, a Job name still keeps 16
/// characters of a long node name.
constexpr std::size_t max_run_id = 20;

Json toleration(const std::string& spec) {
  Json t = Json::object();
  std::string rest = spec;
  std::string effect;
  if (auto colon = rest.rfind(':'); colon != std::string::npos) {
    effect = rest.substr(colon + 1);
    rest = rest.substr(0, colon);
    if (effect != "NoSchedule" && effect != "PreferNoSchedule" && effect != "NoExecute")
      throw InputError(
          Position{"--toleration"},
          fmt::format("\"{}\": the effect must be NoSchedule, PreferNoSchedule or NoExecute", spec));
  }
  auto eq = rest.find('=');
  std::string key = rest.substr(0, eq);
  if (!label_key_ok(key))
    throw InputError(Position{"--toleration"}, fmt::format("\"{}\": \"{}\" is not a taint key", spec, key));
  t["key"] = key;
  if (eq == std::string::npos) {
    t["operator"] = "Exists";
  } else {
    // The API server takes an Equal toleration's value only as a label value: "a b" or x/y made
    // a Job it refused at apply.
    std::string value = rest.substr(eq + 1);
    if (!label_value_ok(value))
      throw InputError(Position{"--toleration"},
                       fmt::format("\"{}\": \"{}\" is not a taint value (at most 63 letters, digits, '-', "
                                   "'_' and '.', beginning and ending with a letter or digit)",
                                   spec, value));
    t["operator"] = "Equal";
    t["value"] = value;
  }
  if (!effect.empty()) t["effect"] = effect;
  return t;
}

void check_options(const KubernetesOptions& o) {
  if (o.image.empty() || o.image.find_first_of(" \t\r\n") != std::string::npos)
    throw InputError(Position{"--image"},
                     "the image must be one word, e.g. registry.example.com/ci/gpuplan:1.0");
  if (!(o.time_margin >= 1)) throw InputError(Position{"--time-margin"}, "must be a number ≥ 1");
  if (o.startup_s < 0) throw InputError(Position{"--startup"}, "must be 0 or more seconds");
  if (o.ttl_after_finished_s < 0)
    throw InputError(Position{"--ttl-after-finished"}, "must be 0 or more seconds");
  // A DNS label's characters ("a--b" too), since it ends each object's name.
  if (!o.run_id.empty() && (o.run_id.size() > max_run_id || !dns_subdomain_ok(o.run_id) ||
                            o.run_id.find('.') != std::string::npos))
    throw InputError(Position{"--run-id"},
                     fmt::format("\"{}\" is not a run ID: at most {} lower-case letters, digits and '-', "
                                 "beginning and ending with a letter or digit (e.g. the CI run's number)",
                                 o.run_id, max_run_id));
  if (!label_key_ok(o.node_key))
    throw InputError(Position{"--node-key"}, fmt::format("\"{}\" is not a label key", o.node_key));
  if (o.gpu_resource && !extended_resource_ok(*o.gpu_resource))
    throw InputError(Position{"--gpu-resource"},
                     fmt::format("\"{}\" is not an extended resource name: a domain, '/' and a name (e.g. "
                                 "nvidia.com/gpu), the domain not kubernetes.io's",
                                 *o.gpu_resource));
  // NVIDIA's device plugin under the mixed MIG strategy advertises each MIG profile as its own
  // resource (nvidia.com/mig-1g.10gb): the pod gets slices of GPUs in MIG mode, which exec refuses
  // before any unit runs (a 2-GPU test would see one slice), so every Job failed, after the export
  // exited 0.
  if (o.gpu_resource && o.gpu_resource->starts_with("nvidia.com/mig-"))
    throw InputError(
        Position{"--gpu-resource"},
        fmt::format("\"{}\" is a MIG slice, and gpuplan hands out whole GPUs: exec refuses a GPU "
                    "in MIG mode, so each Job would fail. Ask for whole GPUs (nvidia.com/gpu) on "
                    "nodes with MIG off",
                    *o.gpu_resource));
  // The device plugin's shared replicas (time-slicing or MPS under renameByDefault: true) are
  // handed out "indiscriminately": a Job asking for 8 may get replicas of 3 GPUs, which exec
  // refuses, or 8 GPUs that other pods' replicas run on at the same time (under MPS each with a
  // fraction of the GPU's memory), where the plan gave each unit its GPU alone. Every such Job failed,
  // or ran its tests beside others', after the export exited 0.
  if (o.gpu_resource && o.gpu_resource->starts_with("nvidia.com/") && o.gpu_resource->ends_with(".shared"))
    throw InputError(
        Position{"--gpu-resource"},
        fmt::format("\"{}\" is a shared replica of a GPU (the device plugin's time-slicing or MPS), and "
                    "gpuplan plans whole GPUs no one else uses: a Job asking for several may get replicas "
                    "of fewer GPUs, which exec refuses, or GPUs other pods run on at the same time. Ask "
                    "for whole GPUs (nvidia.com/gpu) on nodes without sharing",
                    *o.gpu_resource));
  for (const auto& [k, v] : o.labels) {
    if (!label_key_ok(k) || !label_value_ok(v))
      throw InputError(Position{"--label"},
                       fmt::format("\"{}={}\" is not a Kubernetes label (a key: an optional DNS-subdomain "
                                   "prefix and '/', then a name; the name and the value: at most 63 "
                                   "letters, digits, '-', '_' and '.', beginning and ending with a "
                                   "letter or digit)",
                                   k, v));
    // It replaced gpuplan's own, which a CI selects its Jobs by.
    if (k == "app.kubernetes.io/name" || k == "app.kubernetes.io/component" || k.starts_with("gpuplan.dev/"))
      throw InputError(Position{"--label"},
                       fmt::format("\"{}\" is a label gpuplan sets itself (app.kubernetes.io/name, "
                                   "app.kubernetes.io/component, gpuplan.dev/...): choose another key",
                                   k));
  }
  // A namespace's name is a DNS-1123 label; the message said only which characters, so a name of
  // 64 good ones was refused without the reason.
  if (!o.namespace_name.empty() && object_name("", o.namespace_name) != o.namespace_name)
    throw InputError(
        Position{"--namespace"},
        fmt::format("\"{}\" is not a Kubernetes namespace name (a DNS label: at most 63 lower-case "
                    "letters, digits and '-', beginning and ending with a letter or digit){}",
                    o.namespace_name,
                    o.namespace_name.size() > 63
                        ? fmt::format(": it has {} characters", o.namespace_name.size())
                        : ""));
  // The API server takes these as DNS subdomains only: x_y or Batch made a Job it refused.
  auto subdomain = [](const std::string& option, const std::string& v) {
    if (!v.empty() && !dns_subdomain_ok(v))
      throw InputError(
          Position{option},
          fmt::format("\"{}\" is not a Kubernetes name (at most 253 lower-case letters, digits, '-' and '.', "
                      "beginning and ending with a letter or digit){}",
                      v, v.size() > 253 ? fmt::format(": it has {} characters", v.size()) : ""));
  };
  subdomain("--service-account", o.service_account);
  subdomain("--priority-class", o.priority_class);
  // A PersistentVolumeClaim's name is a DNS subdomain too: gpu.results was refused as no DNS label.
  subdomain("--results-claim", o.results_claim.value_or(""));
}

Json metadata(const std::string& name, const Json& labels, const KubernetesOptions& o) {
  Json m = Json::object();
  m["name"] = name;
  if (!o.namespace_name.empty()) m["namespace"] = o.namespace_name;
  m["labels"] = labels;
  return m;
}

/// The resource each vendor's device plugin advertises: NVIDIA's k8s-device-plugin, AMD's ROCm
/// k8s-device-plugin, and Intel's GPU plugin (i915 driver, which the Data Center GPU Max parts use).
std::string vendor_resource(const std::string& vendor) {
  if (vendor == "amd") return "amd.com/gpu";
  if (vendor == "intel") return "gpu.intel.com/i915";
  return "nvidia.com/gpu";
}

/// The annotation client-side `kubectl apply` keeps each object in, as JSON.
constexpr std::string_view last_applied_annotation = "kubectl.kubernetes.io/last-applied-configuration";

constexpr const char* plan_dir = "/etc/gpuplan";
constexpr const char* results_dir = "/var/lib/gpuplan/results";

}  // namespace

KubernetesManifests kubernetes_manifests(const Plan& plan, const Fleet* fleet, const KubernetesOptions& o) {
  check_options(o);
  std::vector<Json> tolerations;
  for (const auto& spec : o.tolerations) tolerations.push_back(toleration(spec));

  KubernetesManifests out;
  auto& files = out.files;
  const auto by_node = assignments_by_node(plan);
  // A new plan, or a new --run-id, gives new Jobs; the files keep the node's name, so that the
  // next export replaces them.
  const std::string id = plan_id(plan);
  const std::string tail = "-" + id + (o.run_id.empty() ? "" : "-" + o.run_id);
  std::map<std::string, std::string> node_of_job;
  for (const auto& node : export_nodes(plan, fleet)) {
    // A node name may have 253 characters, the hostname label's value only 63: the rules the
    // message below lists were all kept, and it read as a riddle.
    if (o.node_key == "kubernetes.io/hostname" && dns_subdomain_ok(node.name) && node.name.size() > 63)
      throw InputError(
          Position{"plan"},
          fmt::format("node \"{}\" has {} characters, and the label kubernetes.io/hostname, which "
                      "pins the Job to its node, holds at most 63 (so does any label value --node-key "
                      "could pin by): name the fleet's node with at most 63 characters, as its nodes "
                      "are labelled, and plan again",
                      node.name, node.name.size()));
    // Kubernetes node names are DNS subdomains, lowercase, and so is the kubelet's hostname
    // label: a Job pinned to GPU-1 or gpu_node_1 would wait Pending for a node no one has, until
    // its deadline. A selector by another label needs a label value.
    if (o.node_key == "kubernetes.io/hostname" && !(dns_subdomain_ok(node.name) && label_value_ok(node.name)))
      throw InputError(Position{"plan"},
                       fmt::format("node \"{}\" cannot be a Kubernetes node name (lowercase letters, digits, "
                                   "'-' and '.', beginning and ending with a letter or digit), which "
                                   "kubernetes.io/hostname pins the Job to: name the fleet's node as "
                                   "Kubernetes does, or pin by another label with --node-key",
                                   node.name));
    if (node.name.empty() || !label_value_ok(node.name))
      throw InputError(
          Position{"plan"},
          fmt::format("node \"{}\" cannot be the value of the label {} that --node-key pins the "
                      "Job by (at most 63 letters, digits, '-', '_' and '.', beginning and ending "
                      "with a letter or digit): name the fleet's node so, or label the nodes "
                      "with a value that is",
                      node.name, o.node_key));
    std::string file_name = object_name("gpuplan-", node.name);
    std::string job_name = object_name("gpuplan-", node.name, tail);
    // A hashed name can be another node's own: NODE-A's is node-a-206ef7b3's.
    if (auto [other, added] = node_of_job.try_emplace(file_name, node.name); !added)
      throw InputError(Position{"export kubernetes"},
                       fmt::format("nodes \"{}\" and \"{}\" would both get the Job {}, and one would replace "
                                   "the other: rename one node in the fleet",
                                   other->second, node.name, job_name));

    Json labels = Json::object();
    labels["app.kubernetes.io/name"] = "gpuplan";
    labels["app.kubernetes.io/component"] = "exec";
    labels["gpuplan.dev/node"] = node.name;
    labels["gpuplan.dev/plan"] = id;
    if (!o.run_id.empty()) labels["gpuplan.dev/run"] = o.run_id;
    for (const auto& [k, v] : o.labels) labels[k] = v;

    // One line, as nlohmann's dump() writes the slice: the plan writer's text, its whitespace
    // outside strings dropped (parsing it back to dump it cost a third of the export's time).
    std::string slice;
    write_plan_json(node_slice(plan, by_node.at(node.name)), [&](std::string_view piece) { slice += piece; });
    slice = util::compact(slice) + "\n";
    if (slice.size() > configmap_limit)
      throw InputError(Position{"plan"},
                       fmt::format("the plan for node \"{}\" is {} bytes; a ConfigMap holds at most 1 MiB "
                                   "(split the run across more nodes, or plan fewer units per node)",
                                   node.name, slice.size()));
    Json configmap = Json::object();
    configmap["apiVersion"] = "v1";
    configmap["kind"] = "ConfigMap";
    configmap["metadata"] = metadata(job_name + "-plan", labels, o);
    configmap["data"] = Json::object({{"plan.json", ""}});
    // Client-side apply keeps the ConfigMap, its slice escaped, in an annotation of 256 KiB at
    // most: a slice of 200 KiB was refused at apply, well below the 1 MiB checked above. The
    // ConfigMap is dumped without the slice, whose escaped length is counted.
    if (std::size_t bytes =
            last_applied_annotation.size() + configmap.dump().size() + util::escaped_size(slice) + 1;
        bytes > kubernetes_annotations_limit)
      out.too_large_for_client_side_apply.push_back({node.name, bytes});
    configmap["data"]["plan.json"] = std::move(slice);

    Json selector = Json::object();
    selector[o.node_key] = node.name;
    for (const auto& key : o.fleet_selectors) {
      auto it = node.labels.find(key);
      if (it == node.labels.end())
        throw InputError(Position{"--fleet-selector"},
                         fmt::format("node \"{}\" has no fleet label \"{}\"", node.name, key));
      if (!label_key_ok(key) || !label_value_ok(it->second))
        throw InputError(
            Position{"--fleet-selector"},
            fmt::format("node \"{}\": \"{}: {}\" is not a Kubernetes label", node.name, key, it->second));
      selector[key] = it->second;
    }

    std::string plan_file = std::string(plan_dir) + "/plan.json";
    Json command = Json::array({o.gpuplan, "exec", plan_file, "--node", node.name});
    if (o.command) {
      command.push_back("--command");
      command.push_back(*o.command);
    }
    Json mounts =
        Json::array({Json::object({{"name", "plan"}, {"mountPath", plan_dir}, {"readOnly", true}})});
    Json volumes = Json::array(
        {Json::object({{"name", "plan"}, {"configMap", Json::object({{"name", job_name + "-plan"}})}})});
    if (o.results_claim) {
      command.push_back("--results");
      command.push_back(fmt::format("{}/{}.csv", results_dir, node.name));
      mounts.push_back(Json::object({{"name", "results"}, {"mountPath", results_dir}}));
      volumes.push_back(Json::object(
          {{"name", "results"}, {"persistentVolumeClaim", Json::object({{"claimName", *o.results_claim}})}}));
    }
    // A container's /dev/shm is a tmpfs of 64 MiB (the runtime's default, which a pod spec cannot
    // set), where a machine's is half its memory: NCCL's shared-memory buffers and PyTorch's
    // DataLoader workers fail there ("ncclShmOpen", "bus error"), so a multi-GPU test that passes
    // under exec on the node failed in its Job. A memory-backed emptyDir there is the node's memory.
    mounts.push_back(Json::object({{"name", "dshm"}, {"mountPath", "/dev/shm"}}));
    volumes.push_back(Json::object({{"name", "dshm"}, {"emptyDir", Json::object({{"medium", "Memory"}})}}));
    if (o.warn_missing_gpus) command.push_back("--missing-gpus=warn");
    if (!o.bazel_args.empty()) command.push_back("--");
    for (const auto& arg : o.bazel_args) command.push_back(arg);

    Json container = Json::object();
    container["name"] = "gpuplan";
    container["image"] = o.image;
    container["command"] = command;
    // The container sees its GPUs in PCI bus order, as nvidia-smi and the fleet number them.
    container["env"] = Json::array({Json::object({{"name", "CUDA_DEVICE_ORDER"}, {"value", "PCI_BUS_ID"}})});
    Json gpus = Json::object({{o.gpu_resource.value_or(vendor_resource(node.vendor)), node.gpus}});
    container["resources"] = Json::object({{"limits", gpus}, {"requests", gpus}});
    container["volumeMounts"] = mounts;

    Json pod = Json::object();
    pod["restartPolicy"] = "Never";
    pod["nodeSelector"] = selector;
    if (!o.service_account.empty()) pod["serviceAccountName"] = o.service_account;
    if (!o.priority_class.empty()) pod["priorityClassName"] = o.priority_class;
    if (!tolerations.empty()) pod["tolerations"] = tolerations;
    pod["containers"] = Json::array({container});
    pod["volumes"] = volumes;

    Json spec = Json::object();
    spec["backoffLimit"] = 0;
    // Every plan makes Jobs of its own names: the finished ones go, with their pods and logs.
    spec["ttlSecondsAfterFinished"] = o.ttl_after_finished_s;
    spec["activeDeadlineSeconds"] = std::max(
        1L, static_cast<long>(std::ceil((node.end_s + node.reruns_s) * o.time_margin - 1e-9)) + o.startup_s);
    spec["template"] = Json::object({{"metadata", Json::object({{"labels", labels}})}, {"spec", pod}});

    Json job = Json::object();
    job["apiVersion"] = "batch/v1";
    job["kind"] = "Job";
    job["metadata"] = metadata(job_name, labels, o);
    job["spec"] = spec;

    files[file_name + ".yaml"] = fmt::format(
        "{} the {} unit(s) planned on {} ({} GPU(s)).\n"
        "---\n{}---\n{}",
        kubernetes_manifest_mark, node.units, node.name, node.gpus, to_yaml(configmap), to_yaml(job));
  }
  return out;
}

}  // namespace gpuplan
