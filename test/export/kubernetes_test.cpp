#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "gpuplan/error.hpp"
#include "gpuplan/export.hpp"

using namespace gpuplan;

namespace {
Plan plan_on(std::vector<std::pair<std::string, double>> nodes_and_ends) {
  Plan plan;
  for (const auto& [node, end] : nodes_and_ends) {
    Assignment a;
    a.unit.label = a.unit.id = "//a:t";
    a.node = node;
    a.gpus = {1};
    a.end_s = end;
    plan.assignments.push_back(a);
  }
  return plan;
}
KubernetesOptions options() {
  KubernetesOptions o;
  o.image = "registry.example.com/gpuplan:1";
  return o;
}
std::map<std::string, std::string> manifest_files(const Plan& plan, const Fleet* fleet,
                                                  const KubernetesOptions& o) {
  return kubernetes_manifests(plan, fleet, o).files;
}
YAML::Node job_in(const std::string& manifest) {
  auto docs = YAML::LoadAll(manifest);
  REQUIRE(docs.size() == 2);
  return docs[1];
}
}  // namespace

TEST_CASE("each node gets a Job pinned to it that runs gpuplan exec on its slice of the plan") {
  auto files = manifest_files(plan_on({{"h100-1", 600}, {"h100-0", 100}}), nullptr, options());
  REQUIRE(files.size() == 2);
  auto docs = YAML::LoadAll(files.at("gpuplan-h100-0.yaml"));
  REQUIRE(docs.size() == 2);
  CHECK(docs[0]["kind"].as<std::string>() == "ConfigMap");
  auto slice = parse_plan(docs[0]["data"]["plan.json"].as<std::string>(), "configmap");
  REQUIRE(slice.assignments.size() == 1);
  CHECK(slice.assignments[0].node == "h100-0");
  auto pod = docs[1]["spec"]["template"]["spec"];
  CHECK(pod["nodeSelector"]["kubernetes.io/hostname"].as<std::string>() == "h100-0");
  CHECK(pod["containers"][0]["resources"]["limits"]["nvidia.com/gpu"].as<int>() == 2);
  CHECK(pod["containers"][0]["command"][4].as<std::string>() == "h100-0");
  CHECK(docs[1]["spec"]["activeDeadlineSeconds"].as<long>() == 150 + 300);
  auto flaky = plan_on({{"h100-0", 100}});
  flaky.assignments[0].unit.flaky = true;  // Bazel may run it twice more
  flaky.assignments[0].unit.duration_s = 100;
  CHECK(job_in(manifest_files(flaky, nullptr, options())
                   .at("gpuplan-h100-0.yaml"))["spec"]["activeDeadlineSeconds"]
            .as<long>() == 450 + 300);
  auto o = options();
  o.bazel_args = {"--config=cuda"};  // the team's options for exec's bazel test, after its --
  auto command = YAML::LoadAll(
      manifest_files(plan_on({{"h100-0", 100}}), nullptr, o)
          .at("gpuplan-h100-0.yaml"))[1]["spec"]["template"]["spec"]["containers"][0]["command"];
  CHECK(command[command.size() - 2].as<std::string>() == "--");
  CHECK(command[command.size() - 1].as<std::string>() == "--config=cuda");
  o.warn_missing_gpus = true;  // exec's --missing-gpus=warn, before --: no Job could be given it before
  command = YAML::LoadAll(
      manifest_files(plan_on({{"h100-0", 100}}), nullptr, o)
          .at("gpuplan-h100-0.yaml"))[1]["spec"]["template"]["spec"]["containers"][0]["command"];
  CHECK(command[command.size() - 3].as<std::string>() == "--missing-gpus=warn");
}

TEST_CASE("with a fleet, a Job asks for every GPU of its node so indices match the host's") {
  Fleet fleet;
  Node node;
  node.name = "h100-0";
  node.gpus.resize(8);
  node.labels = {{"zone", "a"}};
  fleet.nodes.push_back(node);
  auto o = options();
  o.fleet_selectors = {"zone"};
  o.gpu_resource = "amd.com/gpu";
  auto pod = job_in(manifest_files(plan_on({{"h100-0", 60}}), &fleet, o)
                        .at("gpuplan-h100-0.yaml"))["spec"]["template"]["spec"];
  CHECK(pod["containers"][0]["resources"]["limits"]["amd.com/gpu"].as<int>() == 8);
  CHECK(pod["nodeSelector"]["zone"].as<std::string>() == "a");
  CHECK_THROWS_AS(manifest_files(plan_on({{"h100-9", 60}}), &fleet, o), InputError);
}

// A container's /dev/shm is 64 MiB: NCCL and PyTorch's DataLoader failed in the Job where the same
// test passed under exec on the node, whose /dev/shm is half its memory.
TEST_CASE("a Job's container has /dev/shm of the node's memory, not the runtime's 64 MiB") {
  auto pod = job_in(manifest_files(plan_on({{"h100-0", 60}}), nullptr, options())
                        .at("gpuplan-h100-0.yaml"))["spec"]["template"]["spec"];
  std::string volume;
  for (const auto& mount : pod["containers"][0]["volumeMounts"])
    if (mount["mountPath"].as<std::string>() == "/dev/shm") volume = mount["name"].as<std::string>();
  REQUIRE(!volume.empty());
  bool in_memory = false;
  for (const auto& v : pod["volumes"])
    if (v["name"].as<std::string>() == volume && v["emptyDir"])
      in_memory = v["emptyDir"]["medium"].as<std::string>() == "Memory";
  CHECK(in_memory);
}

// The NVIDIA resource on an AMD node leaves the pod Pending until its deadline: each node asks
// for its own vendor's device plugin resource unless --gpu-resource says otherwise.
TEST_CASE("a Job asks for the resource of its node's GPU vendor: from the fleet, else from its units") {
  Fleet fleet;
  for (auto [name, vendor] : {std::pair{"h100-0", "nvidia"}, {"mi300x-0", "amd"}, {"max-0", "intel"}}) {
    Node node;
    node.name = name;
    node.gpus.resize(8);
    for (auto& gpu : node.gpus) gpu.vendor = vendor;
    fleet.nodes.push_back(node);
  }
  auto plan = plan_on({{"h100-0", 60}, {"mi300x-0", 60}, {"max-0", 60}});
  auto limits = [](const std::map<std::string, std::string>& files, const std::string& node) {
    return job_in(files.at("gpuplan-" + node +
                           ".yaml"))["spec"]["template"]["spec"]["containers"][0]["resources"]["limits"];
  };
  auto files = manifest_files(plan, &fleet, options());
  CHECK(limits(files, "h100-0")["nvidia.com/gpu"].as<int>() == 8);
  CHECK(limits(files, "mi300x-0")["amd.com/gpu"].as<int>() == 8);
  CHECK_FALSE(limits(files, "mi300x-0")["nvidia.com/gpu"]);
  CHECK(limits(files, "max-0")["gpu.intel.com/i915"].as<int>() == 8);
  // Without a fleet, a unit that asks for an AMD GPU says the node is AMD.
  auto amd = plan_on({{"mi300x-0", 60}});
  Requirement r;
  r.vendor = Sourced<std::string>{"amd", "tag requires-gpu-amd"};
  amd.assignments[0].unit.requirement = SharedRequirement(r);
  CHECK(limits(manifest_files(amd, nullptr, options()), "mi300x-0")["amd.com/gpu"].as<int>() == 2);
  auto chosen = options();
  chosen.gpu_resource = "example.com/gpu";
  CHECK(limits(manifest_files(plan, &fleet, chosen), "mi300x-0")["example.com/gpu"].as<int>() == 8);
}

TEST_CASE("node names Kubernetes objects cannot carry get a lower-case name and a hash") {
  auto by_label = options();
  by_label.node_key = "example.com/gpu-node";  // a label of the team's: its values may have capitals
  auto files = manifest_files(plan_on({{"GPU_Box.1", 60}, {"gpu-box-1", 60}}), nullptr, by_label);
  REQUIRE(files.size() == 2);
  CHECK(files.count("gpuplan-gpu-box-1.yaml") == 1);
  for (const auto& [name, content] : files) {
    auto job_name = job_in(content)["metadata"]["name"].as<std::string>();
    CHECK(job_name.size() <= 63);
    CHECK(job_name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") == std::string::npos);
  }
  // A hashed name can be another node's own; one Job then replaced the other, and its units
  // never ran.
  std::string hashed;
  for (const auto& [name, content] : files)
    if (name != "gpuplan-gpu-box-1.yaml") hashed = name.substr(8, name.size() - 8 - 5);  // gpuplan-X.yaml
  REQUIRE(hashed.starts_with("gpu-box-1-"));
  CHECK_THROWS_WITH(
      manifest_files(plan_on({{"GPU_Box.1", 60}, {hashed, 60}}), nullptr, by_label),
      Catch::Contains("nodes \"GPU_Box.1\" and \"" + hashed + "\" would both get the Job gpuplan-" + hashed));
  // Pinned by kubernetes.io/hostname, a node name with capitals matches no Kubernetes node (their
  // names, and the kubelet's hostname label, are lowercase): the Job would wait Pending until its
  // deadline, so the export refuses it.
  CHECK_THROWS_WITH(manifest_files(plan_on({{"GPU-1", 60}}), nullptr, options()),
                    Catch::Contains("node \"GPU-1\" cannot be a Kubernetes node name"));
  // Nor can an underscore, or an empty name (before, both were written and waited Pending).
  for (const char* node : {"gpu_node_1", "", "gpu-1."}) {
    INFO(node);
    CHECK_THROWS_WITH(manifest_files(plan_on({{node, 60}}), nullptr, options()),
                      Catch::Contains("cannot be a Kubernetes node name"));
  }
  // Pinned by another label, the node's name must be a label value (a trailing '.' is not).
  CHECK_THROWS_WITH(manifest_files(plan_on({{"gpu-3.", 60}}), nullptr, by_label),
                    Catch::Contains("node \"gpu-3.\" cannot be the value of the label example.com/gpu-node"));
}

TEST_CASE("tolerations are read as kubectl taint writes them, and bad options are errors") {
  auto o = options();
  o.tolerations = {"nvidia.com/gpu:NoSchedule", "dedicated=ci:NoExecute"};
  auto pod = job_in(
      manifest_files(plan_on({{"n", 60}}), nullptr, o).at("gpuplan-n.yaml"))["spec"]["template"]["spec"];
  CHECK(pod["tolerations"][0]["operator"].as<std::string>() == "Exists");
  CHECK(pod["tolerations"][1]["value"].as<std::string>() == "ci");
  CHECK(pod["tolerations"][1]["effect"].as<std::string>() == "NoExecute");
  o.tolerations = {"a:Sometimes"};
  CHECK_THROWS_AS(manifest_files(plan_on({{"n", 60}}), nullptr, o), InputError);
  // An Equal toleration's value is a label value to the API server, which refused these Jobs.
  for (const std::string& bad :
       std::vector<std::string>{"a=has space:NoSchedule", "a=x/y", "a=-x", "a=" + std::string(64, 'v')}) {
    INFO(bad);
    o.tolerations = {bad};
    CHECK_THROWS_WITH(manifest_files(plan_on({{"n", 60}}), nullptr, o),
                      Catch::Contains("is not a taint value"));
  }
  o.tolerations = {"a=:NoSchedule", "b=x_y.z-1"};  // an empty value is one
  CHECK_NOTHROW(manifest_files(plan_on({{"n", 60}}), nullptr, o));
  o = options();
  o.labels = {{"team", "has space"}};
  CHECK_THROWS_AS(manifest_files(plan_on({{"n", 60}}), nullptr, o), InputError);
  o = options();
  o.image = "";
  CHECK_THROWS_AS(manifest_files(plan_on({{"n", 60}}), nullptr, o), InputError);
}

// A Job's name was gpuplan-NODE whatever the plan: `kubectl apply` of the next plan's export said
// the finished Jobs were "unchanged" and ran none of the new tests, and passed.
TEST_CASE("each plan, and each --run-id, gets Jobs and ConfigMaps of their own names") {
  auto names = [](const Plan& plan, const KubernetesOptions& o) {
    auto docs = YAML::LoadAll(manifest_files(plan, nullptr, o).at("gpuplan-h100-0.yaml"));
    return std::pair{docs[0]["metadata"]["name"].as<std::string>(),
                     docs[1]["metadata"]["name"].as<std::string>()};
  };
  auto first = plan_on({{"h100-0", 60}});
  auto second = plan_on({{"h100-0", 60}, {"h100-0", 90}});
  second.assignments[1].unit.label = second.assignments[1].unit.id = "//a:new_test";
  auto [map1, job1] = names(first, options());
  auto [map2, job2] = names(second, options());
  CHECK(job1 != job2);
  CHECK(map1 != map2);
  CHECK(map1 == job1 + "-plan");
  CHECK(job1.starts_with("gpuplan-h100-0-"));
  CHECK(names(first, options()).second == job1);  // the same plan, the same bytes
  auto rerun = options();
  rerun.run_id = "8812-2";
  auto [map3, job3] = names(first, rerun);
  CHECK(job3 == job1 + "-8812-2");
  CHECK(map3 == job3 + "-plan");
  auto job = job_in(manifest_files(first, nullptr, rerun).at("gpuplan-h100-0.yaml"));
  CHECK(job["metadata"]["labels"]["gpuplan.dev/run"].as<std::string>() == "8812-2");
  CHECK(job["metadata"]["labels"]["gpuplan.dev/plan"].as<std::string>() == job1.substr(job1.size() - 8));
  CHECK(job["spec"]["ttlSecondsAfterFinished"].as<long>() == 86400);
  // A long node name still makes a name of at most 63 characters that ends in the IDs.
  std::string long_node(60, 'g');
  rerun.run_id = std::string(20, '7');
  auto long_job = job_in(manifest_files(plan_on({{long_node, 60}}), nullptr, rerun).begin()->second);
  auto long_name = long_job["metadata"]["name"].as<std::string>();
  CHECK(long_name.size() <= 63);
  CHECK(long_name.ends_with("-" + std::string(20, '7')));
  for (const std::string& bad :
       std::vector<std::string>{"Run1", "a_b", "-1", "1-", "a.b", std::string(21, '1')}) {
    INFO(bad);
    rerun.run_id = bad;
    CHECK_THROWS_WITH(manifest_files(first, nullptr, rerun), Catch::Contains("is not a run ID"));
  }
  rerun.run_id = "a--b";  // a DNS label may hold "--"
  CHECK_NOTHROW(manifest_files(first, nullptr, rerun));
}

// The API server refused these Jobs; the export wrote them, exit 0.
TEST_CASE("a service account, priority class or GPU resource the API server refuses is refused") {
  auto refused = [](auto set, const std::string& option) {
    auto o = options();
    set(o);
    CHECK_THROWS_WITH(manifest_files(plan_on({{"n", 60}}), nullptr, o), Catch::Contains(option));
  };
  refused([](KubernetesOptions& o) { o.service_account = "x_y"; }, "\"x_y\" is not a Kubernetes name");
  refused([](KubernetesOptions& o) { o.priority_class = "Batch"; }, "\"Batch\" is not a Kubernetes name");
  refused([](KubernetesOptions& o) { o.gpu_resource = "gpu"; }, "\"gpu\" is not an extended resource name");
  refused([](KubernetesOptions& o) { o.gpu_resource = "kubernetes.io/gpu"; },
          "is not an extended resource name");
  // A MIG slice: exec refuses a GPU in MIG mode, so every Job failed when it started.
  refused([](KubernetesOptions& o) { o.gpu_resource = "nvidia.com/mig-1g.10gb"; },
          "\"nvidia.com/mig-1g.10gb\" is a MIG slice, and gpuplan hands out whole GPUs");
  // Time-slicing's or MPS's shared replicas (renameByDefault): several may be one GPU, or GPUs
  // other pods use at once; the Jobs failed at exec's check, or shared their GPUs.
  refused([](KubernetesOptions& o) { o.gpu_resource = "nvidia.com/gpu.shared"; },
          "\"nvidia.com/gpu.shared\" is a shared replica of a GPU");
  refused([](KubernetesOptions& o) { o.results_claim = "Results"; }, "\"Results\" is not a Kubernetes name");
  auto o = options();
  o.service_account = "gpu-ci.runner";
  o.priority_class = "batch-high";
  o.results_claim = "gpu.results";  // a DNS subdomain, as PersistentVolumeClaim names are: refused before
  o.gpu_resource = "example.com/gpu";
  CHECK_NOTHROW(manifest_files(plan_on({{"n", 60}}), nullptr, o));
}

// Every rule the old message listed was kept; the real reason went unsaid.
TEST_CASE("a node name over the hostname label's 63 characters is refused saying so") {
  std::string node = std::string(60, 'a') + ".example.com";
  CHECK_THROWS_WITH(manifest_files(plan_on({{node, 60}}), nullptr, options()),
                    Catch::Contains("has 72 characters, and the label kubernetes.io/hostname") &&
                        Catch::Contains("holds at most 63") &&
                        Catch::Contains("name the fleet's node with at most 63 characters"));
}

// A namespace of 64 good characters was refused with the characters a name may have, which it had.
TEST_CASE("a --namespace over a DNS label's 63 characters is refused saying the limit") {
  auto o = options();
  o.namespace_name = std::string(64, 'a');
  CHECK_THROWS_WITH(manifest_files(plan_on({{"n", 60}}), nullptr, o),
                    Catch::Contains("is not a Kubernetes namespace name (a DNS label: at most 63") &&
                        Catch::Contains("it has 64 characters"));
  o.namespace_name = "CI";
  CHECK_THROWS_WITH(manifest_files(plan_on({{"n", 60}}), nullptr, o),
                    !Catch::Contains("characters:") && Catch::Contains("at most 63"));
  o.namespace_name = std::string(63, 'a');
  CHECK_NOTHROW(manifest_files(plan_on({{"n", 60}}), nullptr, o));
  o = options();
  o.service_account = std::string(254, 'a');
  CHECK_THROWS_WITH(manifest_files(plan_on({{"n", 60}}), nullptr, o),
                    Catch::Contains("at most 253") && Catch::Contains("it has 254 characters"));
  o = options();
  o.labels["team"] = std::string(64, 'a');
  CHECK_THROWS_WITH(manifest_files(plan_on({{"n", 60}}), nullptr, o), Catch::Contains("at most 63"));
}

// --label app.kubernetes.io/name=foo replaced gpuplan's own label, silently.
TEST_CASE("a --label of a key gpuplan sets itself is refused") {
  for (const char* key : {"app.kubernetes.io/name", "app.kubernetes.io/component", "gpuplan.dev/plan"}) {
    INFO(key);
    auto o = options();
    o.labels = {{key, "foo"}};
    CHECK_THROWS_WITH(manifest_files(plan_on({{"n", 60}}), nullptr, o),
                      Catch::Contains("is a label gpuplan sets itself"));
  }
}

// Client-side kubectl apply keeps the whole ConfigMap in an annotation of at most 256 KiB: a slice
// of a few hundred KiB passed the 1 MiB check and was refused at apply.
TEST_CASE("a ConfigMap too large for a client-side kubectl apply is named with its size") {
  Plan plan;
  for (int i = 0; i < 1500; ++i) {
    Assignment a;
    a.unit.label = a.unit.id =
        "//tensorflow/python/kernel_tests/linalg:matrix_solve_op_test_gpu_" + std::to_string(i);
    a.node = "big-0";
    a.gpus = {i % 8};
    a.start_s = i;
    a.end_s = i + 1;
    plan.assignments.push_back(a);
  }
  plan.assignments.push_back(plan.assignments[0]);
  plan.assignments.back().node = "small-0";
  auto made = kubernetes_manifests(plan, nullptr, options());
  REQUIRE(made.too_large_for_client_side_apply.size() == 1);
  const auto& [node, bytes] = made.too_large_for_client_side_apply[0];
  CHECK(node == "big-0");
  auto configmap = YAML::LoadAll(made.files.at("gpuplan-big-0.yaml"))[0];
  const auto slice = configmap["data"]["plan.json"].as<std::string>();
  CHECK(slice.size() < 1000 * 1000);
  CHECK(bytes > slice.size());  // the slice, escaped as a JSON string, and the rest of the object
  CHECK(bytes > kubernetes_annotations_limit);
  CHECK(made.files.size() == 2);
}

// The slice was written, parsed back and dumped on one line; now the plan writer's text is made
// compact as it is: the same bytes, a plan's strings with spaces, quotes and ": " in them too.
TEST_CASE("a ConfigMap carries its node's slice on one line, as nlohmann's dump writes the plan") {
  Plan plan = plan_on({{"h100-0", 100}, {"h100-1", 200}, {"h100-0", 300}});
  plan.assignments[2].unit.label = plan.assignments[2].unit.id = "//a b:\"quoted\": test";
  plan.assignments[2].unit.duration_s = 12.345;
  plan.assignments[2].start_s = 0.5;
  plan.assignments[2].env = std::map<std::string, std::string>{{"MESSAGE", "a \\ \"b\": c\t"}};
  auto configmap = YAML::LoadAll(manifest_files(plan, nullptr, options()).at("gpuplan-h100-0.yaml"))[0];
  CHECK(configmap["data"]["plan.json"].as<std::string>() == to_json(node_slice(plan, {0, 2})).dump() + "\n");
}

TEST_CASE("a plan without GPU units gives no manifests") {
  auto made = kubernetes_manifests(Plan{}, nullptr, options());
  CHECK(made.files.empty());
  CHECK(made.too_large_for_client_side_apply.empty());
}
