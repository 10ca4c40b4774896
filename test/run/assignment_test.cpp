#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <numeric>
#include <sstream>
#include <string>
#include <vector>

#include "gpuplan/error.hpp"
#include "gpuplan/json_value_error.hpp"
#include "gpuplan/run.hpp"
#include "run/dispatch.hpp"

using namespace gpuplan;

namespace {
/// The assignment place_test gives a launch of `label` on `node`; nullopt when it gives none.
std::optional<Assignment> planned_here(const Plan& plan, std::string_view node, std::string_view label,
                                       std::optional<int> shard) {
  return place_test(plan, node, label, shard).assignment;
}

Assignment placed(const std::string& node, const std::string& label, std::vector<int> gpus, double start,
                  std::optional<int> shard = std::nullopt) {
  Assignment a;
  a.unit.label = label;
  a.unit.id = shard ? label + "#shard-" + std::to_string(*shard) + "-of-2" : label;
  a.unit.shard_index = shard;
  a.unit.shard_count = shard ? 2 : 1;
  a.node = node;
  a.gpus = std::move(gpus);
  a.start_s = start;
  a.end_s = start + 10;
  return a;
}

Plan two_nodes() {
  Plan plan;
  plan.assignments = {placed("a", "//t:late", {1}, 10), placed("a", "//t:sharded", {0, 1}, 0, 1),
                      placed("a", "//t:sharded", {0}, 20, 0), placed("b", "//t:other", {5}, 0),
                      placed("a", "//t:early", {2}, 0)};
  return plan;
}

/// A node "here" of four GPUs with `vram_mib` each (0: unknown) and no NVLink.
Node four_gpu_node(std::int64_t vram_mib) {
  Node node;
  node.name = "here";
  for (int i = 0; i < 4; ++i) {
    Gpu gpu;
    gpu.index = i;
    gpu.vram_mib = vram_mib;
    node.gpus.push_back(gpu);
  }
  node.nvlink.assign(4, std::vector<bool>(4, false));
  return node;
}
}  // namespace

TEST_CASE("a node's units come in plan order: start, then first GPU") {
  auto units = node_assignments(two_nodes(), "a");
  std::vector<std::string> ids;
  for (const auto& u : units) ids.push_back(u.unit.id);
  REQUIRE(ids == std::vector<std::string>{"//t:sharded#shard-1-of-2", "//t:early", "//t:late",
                                          "//t:sharded#shard-0-of-2"});
}

TEST_CASE("a test is found by its label as Bazel spells it and its shard") {
  auto plan = two_nodes();
  REQUIRE(planned_here(plan, "a", "@//t:sharded", 1)->gpus == std::vector<int>{0, 1});
  REQUIRE(planned_here(plan, "a", "@@//t:sharded", 0)->gpus == std::vector<int>{0});
  REQUIRE_FALSE(planned_here(plan, "a", "//t:sharded", 2));
  REQUIRE_FALSE(planned_here(plan, "a", "//t:other", std::nullopt));
  REQUIRE(planned_here(plan, "b", "//t:other", std::nullopt));
}

TEST_CASE("an external test is found by the canonical name Bazel 6, 7 and 8 give TEST_TARGET") {
  // The default query of Bazel 7 prints the apparent name; TEST_TARGET, BEP and bazel-testlogs
  // the canonical one. Before, run-under refused each such test: "not in the plan".
  Plan plan;
  plan.assignments = {placed("a", "@rules_foo//x:t", {0}, 0), placed("a", "@@rules_bar~//y:t", {1}, 0)};
  for (auto spelling :
       {"@rules_foo//x:t", "@@rules_foo~//x:t", "@@rules_foo+//x:t", "@rules_foo~1.2.3//x:t"}) {
    INFO(spelling);
    CHECK(planned_here(plan, "a", spelling, std::nullopt)->gpus == std::vector<int>{0});
    CHECK(place_test(plan, "a", spelling, std::nullopt).kind == TestPlacement::Kind::planned);
  }
  CHECK(planned_here(plan, "a", "@rules_bar//y:t", std::nullopt)->gpus == std::vector<int>{1});
  CHECK(planned_here(plan, "a", "@@rules_bar+//y:t", std::nullopt)->gpus == std::vector<int>{1});
  CHECK_FALSE(planned_here(plan, "a", "@rules_fo//x:t", std::nullopt));
  CHECK_FALSE(planned_here(plan, "a", "//x:t", std::nullopt));
}

TEST_CASE("two versions of one module are two tests, though one identity") {
  // multiple_version_override: @@foo~1.0 and @@foo~2.0 are both "@foo" by their apparent name.
  // The second version's test ran on the first's GPU (and, under --claims, took its result).
  Plan plan;
  plan.assignments = {placed("a", "@@foo~1.0//t:x", {0}, 0), placed("a", "@@foo~2.0//t:x", {1}, 0)};
  CHECK(place_test(plan, "a", "@@foo~2.0//t:x", std::nullopt).assignment->gpus == std::vector<int>{1});
  CHECK(place_test(plan, "a", "@foo~1.0//t:x", std::nullopt).assignment->gpus == std::vector<int>{0});
  CHECK(planned_here(plan, "a", "@@foo~2.0//t:x", std::nullopt)->gpus == std::vector<int>{1});
  // By the apparent name it could be either: refused, naming both, rather than the first.
  auto apparent = place_test(plan, "a", "@foo//t:x", std::nullopt);
  CHECK(apparent.kind == TestPlacement::Kind::refused);
  CHECK_THAT(apparent.reason, Catch::Contains("@@foo~1.0//t:x, @@foo~2.0//t:x"));
  CHECK_FALSE(planned_here(plan, "a", "@foo//t:x", std::nullopt));
  // Two CPU tests: either runs with no GPU visible, so the launch runs as one.
  Plan cpu;
  cpu.cpu_tests = {{"@@foo~1.0//t:x", "no GPU annotation"}, {"@@foo~2.0//t:x", "no GPU annotation"}};
  CHECK(place_test(cpu, "a", "@foo//t:x", std::nullopt).kind == TestPlacement::Kind::cpu);
}

TEST_CASE("a test planned as one unit matches every shard Bazel runs") {
  auto plan = two_nodes();
  REQUIRE(planned_here(plan, "a", "//t:late", 3)->gpus == std::vector<int>{1});
}

TEST_CASE("the node's GPU count is known up to the highest planned index") {
  REQUIRE(planned_gpu_count(two_nodes(), "a") == 3);
  REQUIRE(planned_gpu_count(two_nodes(), "b") == 6);
  REQUIRE(planned_gpu_count(two_nodes(), "c") == 0);
}

TEST_CASE("a unit's environment has its GPUs and its shard, and nothing else the plan sets") {
  auto a = placed("a", "//t:sharded", {0, 1}, 0, 1);
  a.env = std::map<std::string, std::string>{
      {"CUDA_VISIBLE_DEVICES", "7"}, {"LD_PRELOAD", "/tmp/evil.so"}, {"PATH", "/tmp"}};
  auto env = planned_env(a, false);
  REQUIRE(env["CUDA_VISIBLE_DEVICES"] == "0,1");
  REQUIRE(env["TEST_SHARD_INDEX"] == "1");
  REQUIRE(env["TEST_TOTAL_SHARDS"] == "2");
  REQUIRE(env.size() == 3);
  REQUIRE(planned_env(placed("a", "//t:x", {}, 0), false).at("CUDA_VISIBLE_DEVICES").empty());
}

TEST_CASE(
    "a shard run by a command gets googletest's names for its shard too, as Bazel's test-setup gives them") {
  auto shard = placed("a", "//t:sharded", {0}, 0, 1);
  auto env = command_env(shard, false);
  CHECK(env.at("GTEST_SHARD_INDEX") == "1");  // else a gtest binary runs every case in every shard
  CHECK(env.at("GTEST_TOTAL_SHARDS") == "2");
  CHECK(env.at("TEST_SHARD_INDEX") == "1");
  CHECK_FALSE(command_env(placed("a", "//t:x", {1}, 0), false).contains("GTEST_SHARD_INDEX"));
}

TEST_CASE("CUDA numbers a unit's GPUs as the plan, nvidia-smi and NVML do, in PCI bus order") {
  auto a = placed("a", "//t:x", {1}, 0);
  // CUDA's own order is fastest first: CUDA_VISIBLE_DEVICES=1 could be another GPU than the
  // fleet's GPU 1, and not the NVLink partner the plan chose.
  auto env = command_env(a, false);
  CHECK(env.at("CUDA_DEVICE_ORDER") == "PCI_BUS_ID");
  CHECK(env.at("CUDA_VISIBLE_DEVICES") == "1");
  CHECK(command_env(a, false).at("CUDA_DEVICE_ORDER") == "PCI_BUS_ID");
  CHECK_FALSE(planned_env(a, false).contains("CUDA_DEVICE_ORDER"));  // the plan's env is the contract's
}

namespace {
/// The GPUs of `count` that Intel's driver shows a process with `env` (intel/compute-runtime,
/// ExecutionEnvironment::parseAffinityMask): an unset or empty ZE_AFFINITY_MASK shows them all;
/// else each entry, read with std::stoul, that names a device, and an entry past the last one
/// is left out.
std::vector<int> level_zero_devices(const std::map<std::string, std::string>& env, int count) {
  std::vector<int> shown;
  if (!env.contains("ZE_AFFINITY_MASK") || env.at("ZE_AFFINITY_MASK").empty()) {
    for (int gpu = 0; gpu < count; ++gpu) shown.push_back(gpu);
    return shown;
  }
  std::stringstream items(env.at("ZE_AFFINITY_MASK"));
  for (std::string item; std::getline(items, item, ',');) {
    auto index = static_cast<std::uint32_t>(std::stoul(item, nullptr, 0));
    if (index < static_cast<std::uint32_t>(count)) shown.push_back(static_cast<int>(index));
  }
  return shown;
}
}  // namespace

TEST_CASE("Intel's Level Zero is given the unit's GPUs too, in PCI order") {
  // Level Zero ignores CUDA_VISIBLE_DEVICES: without its own list a test on an Intel node sees
  // every GPU and takes the first, beside the test the plan gave that GPU.
  auto env = command_env(placed("a", "//t:x", {2, 3}, 0), false);
  CHECK(env.at("ZE_AFFINITY_MASK") == "2,3");
  CHECK(env.at("ZE_ENABLE_PCI_ID_DEVICE_ORDER") == "1");
  CHECK(level_zero_devices(env, 8) == std::vector<int>{2, 3});
  CHECK(command_env(placed("a", "//t:x", {5}, 0), false).at("ZE_AFFINITY_MASK") == "5");
  CHECK_FALSE(planned_env(placed("a", "//t:x", {2, 3}, 0), false).contains("ZE_AFFINITY_MASK"));
}

TEST_CASE("a unit without GPUs sees none on an Intel node, where Level Zero takes no list for every GPU") {
  // A CPU-bucket test, or one --unplanned=warn runs: with no ZE_AFFINITY_MASK it saw every GPU
  // of an Intel node (PyTorch's XPU, SYCL), and one that uses a GPU when it finds one ran on
  // GPU 0 beside the test planned there. Nor a node of 16 cards of 4 tiles each, counted as tiles.
  auto cpu = command_env(placed("a", "//t:x", {}, 0), false);
  CHECK(cpu.at("CUDA_VISIBLE_DEVICES").empty());
  CHECK(level_zero_devices(cpu, 8).empty());
  CHECK(level_zero_devices(cpu, 64).empty());
  // Not an empty mask, which shows every GPU, nor a word, on which the driver's std::stoul throws.
  CHECK_FALSE(cpu.at("ZE_AFFINITY_MASK").empty());
  CHECK_NOTHROW(std::stoi(cpu.at("ZE_AFFINITY_MASK")));
}

namespace {
/// The GPUs of `count` that ROCm's HIP shows a process with `env` (ROCm/clr,
/// rocclr/device/rocm/rocdevice.cpp, Device::init): HIP_VISIBLE_DEVICES if not empty, else
/// CUDA_VISIBLE_DEVICES; an empty list is no list, and a list ends at its first invalid index.
std::vector<int> hip_devices(const std::map<std::string, std::string>& env, int count) {
  auto value = [&](const char* name) { return env.contains(name) ? env.at(name) : std::string(); };
  std::string list =
      value("HIP_VISIBLE_DEVICES").empty() ? value("CUDA_VISIBLE_DEVICES") : value("HIP_VISIBLE_DEVICES");
  std::vector<int> all(static_cast<std::size_t>(count));
  std::iota(all.begin(), all.end(), 0);
  if (list.empty()) return all;
  std::vector<int> shown;
  std::stringstream items(list);
  for (std::string item; std::getline(items, item, ',');) {
    int index = std::atoi(item.c_str());
    if (index < 0 || index >= count || item != std::to_string(index)) break;
    shown.push_back(index);
  }
  return shown;
}
}  // namespace

TEST_CASE(
    "a unit without GPUs sees none on an AMD node either, where HIP takes an empty list for every GPU") {
  // A CPU-bucket test, or one --unplanned=warn runs with no GPU visible: on an AMD node the empty
  // CUDA_VISIBLE_DEVICES showed it all 8 GPUs, and a test that uses a GPU when it finds one ran on
  // GPU 0 beside the test planned there.
  CHECK(hip_devices(command_env(placed("a", "//t:cpu", {}, 0), false), 8).empty());
  CHECK(hip_devices(command_env(placed("a", "//t:x", {2, 3}, 0), false), 8) == std::vector<int>{2, 3});
  // CUDA reads its own list, empty as before: no GPU.
  CHECK(command_env(placed("a", "//t:cpu", {}, 0), false).at("CUDA_VISIBLE_DEVICES").empty());
}

namespace {
/// The GPUs of `count` that ROCm's OpenCL shows a process with `env` (ROCm/clr,
/// rocdevice.cpp, Device::init, outside HIP): GPU_DEVICE_ORDINAL only, read as HIP reads its list.
std::vector<int> rocm_opencl_devices(const std::map<std::string, std::string>& env, int count) {
  std::map<std::string, std::string> as_hip;
  if (env.contains("GPU_DEVICE_ORDINAL")) as_hip["HIP_VISIBLE_DEVICES"] = env.at("GPU_DEVICE_ORDINAL");
  return hip_devices(as_hip, count);
}
}  // namespace

TEST_CASE("an OpenCL test on an AMD node sees only its unit's GPUs") {
  // ROCm's OpenCL reads GPU_DEVICE_ORDINAL and no other list: without it, a unit given GPUs 2
  // and 3 saw all 8 GPUs of the node, those of the tests planned beside it too.
  auto env = command_env(placed("a", "//t:x", {2, 3}, 0), false);
  CHECK(rocm_opencl_devices(env, 8) == std::vector<int>{2, 3});
  CHECK(rocm_opencl_devices(command_env(placed("a", "//t:cpu", {}, 0), false), 8).empty());
}

TEST_CASE("HIP is given the unit's GPUs in its own list, the one Ray and PyTorch on ROCm read") {
  // Ray's AMD support refuses a HIP_VISIBLE_DEVICES other than CUDA_VISIBLE_DEVICES, and older
  // releases one unset (ray.init() failed in every GPU test on an AMD node); PyTorch on ROCm
  // counts an inherited ROCR_VISIBLE_DEVICES, not CUDA_VISIBLE_DEVICES, when HIP's is unset.
  auto env = command_env(placed("a", "//t:x", {2, 3}, 0), false);
  CHECK(env.at("HIP_VISIBLE_DEVICES") == env.at("CUDA_VISIBLE_DEVICES"));
  CHECK(hip_devices(env, 8) == std::vector<int>{2, 3});
  // The plan's env is the contract's: CUDA_VISIBLE_DEVICES only.
  CHECK_FALSE(planned_env(placed("a", "//t:x", {2, 3}, 0), false).contains("HIP_VISIBLE_DEVICES"));
}

TEST_CASE("a unit sharing its GPU under pack is told to grow its memory, not to take most of it at start") {
  auto a = placed("a", "//t:x", {2}, 0);
  a.unit.requirement.edit().gpus = {1, "tag"};
  a.unit.vram_mib = 4096;
  REQUIRE(shares_gpu(a.unit, Policy::pack));
  REQUIRE_FALSE(shares_gpu(a.unit, Policy::exact));
  REQUIRE_FALSE(shares_gpu(a.unit, Policy::whole_node));
  // JAX preallocates 75% of the GPU's memory at its first operation and TensorFlow nearly all of it:
  // a second such test on the GPU would find none left.
  REQUIRE(planned_env(a, true) ==
          std::map<std::string, std::string>{{"CUDA_VISIBLE_DEVICES", "2"},
                                             {"TF_FORCE_GPU_ALLOW_GROWTH", "true"},
                                             {"XLA_PYTHON_CLIENT_PREALLOCATE", "false"}});
  a.unit.requirement.edit().exclusive = Sourced<bool>{true, "tag"};
  REQUIRE_FALSE(shares_gpu(a.unit, Policy::pack));
  a.unit.requirement.edit().exclusive.reset();
  a.unit.vram_mib.reset();
  REQUIRE_FALSE(shares_gpu(a.unit, Policy::pack));  // unknown memory: a GPU of its own
  a.unit.vram_mib = 4096;
  a.unit.requirement.edit().gpus = {2, "tag"};
  REQUIRE_FALSE(shares_gpu(a.unit, Policy::pack));
}

TEST_CASE("timeouts follow the timeout attribute, else Bazel's default for the size") {
  Unit u;
  u.size = "small";
  REQUIRE(timeout_seconds(u) == 60);
  u.size = "enormous";
  REQUIRE(timeout_seconds(u) == 3600);
  u.timeout = "long";
  REQUIRE(timeout_seconds(u) == 900);
  u.timeout = "";
  u.size = "medium";
  REQUIRE(timeout_seconds(u) == 300);
}

TEST_CASE("a unit from another node gets GPUs here that meet its needs, an NVLink set when it needs one") {
  Node node = four_gpu_node(0);
  node.nvlink[1][3] = node.nvlink[3][1] = true;
  auto a = placed("there", "//t:x", {0, 1}, 0);
  a.unit.requirement.edit().gpus = {2, "tag"};
  REQUIRE(gpus_here(a, node, {1, 2, 3}) == std::vector<int>{1, 2});
  a.unit.requirement.edit().nvlink = Sourced<bool>{true, "tag"};
  REQUIRE(gpus_here(a, node, {0, 1, 2, 3}) == std::vector<int>{1, 3});
  REQUIRE_FALSE(gpus_here(a, node, {0, 1, 2}));
  REQUIRE_FALSE(gpus_here(a, node, {3}));
}

TEST_CASE("a unit that holds the node starts only when all are free, on the GPUs it is given on its own") {
  Node node = four_gpu_node(24576);
  auto a = placed("there", "//t:alone", {2}, 0);
  a.unit.requirement.edit().exclusive = Sourced<bool>{true, "tag"};
  // Its count, as on the node it was planned on (before, every GPU of this one: a gpu:1
  // gpu-exclusive test saw 4 GPUs where it was taken over and 1 where it was planned).
  REQUIRE(gpus_here(a, node, {0, 1, 2, 3}, true) == std::vector<int>{0});
  REQUIRE_FALSE(gpus_here(a, node, {0, 1, 3}, true));
  // Given every GPU of the node it holds (exclusive, no count): this node's, all of them.
  a.unit.requirement.edit().every_node_gpu = Sourced<bool>{true, "tag exclusive"};
  REQUIRE(gpus_here(a, node, {0, 1, 2, 3}, true) == std::vector<int>{0, 1, 2, 3});
  REQUIRE_FALSE(gpus_here(a, node, {0, 1, 3}, true));
  // The memory it reserves counts as the planner counts it: more than these GPUs have.
  a.unit.vram_mib = 30000;
  REQUIRE_FALSE(gpus_here(a, node, {0, 1, 2, 3}, true));
}

TEST_CASE("dispatch order is the longest planned unit first, then the earliest planned start, then the id") {
  auto a = placed("n", "//t:a", {0}, 10);
  a.end_s = 20;  // 10 s
  auto b = placed("n", "//t:b", {0}, 0);
  b.end_s = 30;  // 30 s
  auto c = placed("n", "//t:c", {1}, 5);
  c.end_s = 15;  // 10 s, earlier start than a
  auto d = placed("n", "//t:d", {2}, 5);
  d.end_s = 15;  // as c, larger id
  std::vector<Assignment> all{a, d, c, b};
  std::sort(all.begin(), all.end(), dispatched_before);
  std::vector<std::string> ids;
  for (const auto& x : all) ids.push_back(x.unit.id);
  REQUIRE(ids == std::vector<std::string>{"//t:b", "//t:c", "//t:d", "//t:a"});
}

TEST_CASE("a node's GPUs are the fleet's when it is given, and must hold every GPU the plan uses") {
  auto plan = two_nodes();  // node a: GPUs 0-2 planned
  REQUIRE(run_node_gpus(plan, "a", nullptr, "") == std::vector<int>{0, 1, 2});
  Node node = four_gpu_node(0);
  // A unit that holds the node holds GPU 3 too, which the plan leaves idle and others may take.
  REQUIRE(run_node_gpus(plan, "a", &node, "fleet.yaml") == std::vector<int>{0, 1, 2, 3});
  node.gpus.resize(2);
  REQUIRE_THROWS_WITH(run_node_gpus(plan, "a", &node, "fleet.yaml"),
                      Catch::Contains("node a has no GPU 2 here, which the plan runs units on"));
}

TEST_CASE("a unit of a broken plan never runs on no GPU, on a GPU twice or on fewer GPUs than it needs") {
  auto a = placed("a", "//t:x", {0, 1}, 0);
  a.unit.requirement.edit().gpus = {2, "tag"};
  REQUIRE_NOTHROW(check_launchable(a, "plan.json"));
  a.gpus = {};
  REQUIRE_THROWS_WITH(check_launchable(a, "plan.json"),
                      Catch::Contains("//t:x on node a has no GPUs in the plan"));
  a.gpus = {1, 1};
  REQUIRE_THROWS_WITH(check_launchable(a, "plan.json"), Catch::Contains("lists GPU 1 twice"));
  a.gpus = {-1, 0};
  REQUIRE_THROWS_WITH(check_launchable(a, "plan.json"), Catch::Contains("lists GPU -1"));
  a.gpus = {0};
  REQUIRE_THROWS_WITH(check_launchable(a, "plan.json"), Catch::Contains("holds 1 GPU but needs 2"));
}

TEST_CASE(
    "a plan whose shards of one test disagree on their count is not run: cases would run twice or never") {
  // A hand-edited plan: exec ran shard 1 with TEST_TOTAL_SHARDS=3 and shard 0 with 2.
  Plan plan;
  plan.assignments = {placed("n", "//a:t", {0}, 0, 0), placed("n", "//a:t", {1}, 0, 1)};
  REQUIRE_NOTHROW(check_planned_once(plan, "plan.json"));
  plan.assignments[1].unit.shard_count = 3;
  REQUIRE_THROWS_WITH(
      check_planned_once(plan, "plan.json"),
      "plan.json: assignments[1]: the shards of //a:t disagree on their count, 2 (//a:t#shard-0-of-2) and 3 "
      "(//a:t#shard-1-of-2): with two TEST_TOTAL_SHARDS, some of its cases would run twice and "
      "others never; not run (`gpuplan verify` checks the whole plan)");
  plan.assignments[1] = placed("m", "//a:t", {0}, 0, 0);
  REQUIRE_THROWS_WITH(check_planned_once(plan, "plan.json"),
                      Catch::Contains("is planned twice (on n and on m)"));
  // The second unit's JSON path, for the CLI to find its line (before, the file alone).
  REQUIRE_THROWS_AS(check_planned_once(plan, "plan.json"), JsonValueError);
  try {
    check_planned_once(plan, "plan.json");
  } catch (const JsonValueError& e) {
    CHECK(e.json_path() == "assignments[1]");
    CHECK(
        std::string(e.at(40, 5).what()).starts_with("plan.json:40:5: assignments[1]: //a:t#shard-0-of-2 is"));
  }
}

// SYCL numbers the devices a unit's ZE_AFFINITY_MASK shows it from 0, so a caller's
// ONEAPI_DEVICE_SELECTOR=level_zero:0 (a CI image pinned to "card 0") showed a unit of GPUs 2 and 3
// only GPU 2: its 2-device cases skipped, and it passed. Such a selector is not passed on.
TEST_CASE("a caller's ONEAPI_DEVICE_SELECTOR that would hide some of a unit's GPUs does not reach it") {
  CHECK_THAT(oneapi_selector_hides_gpus("level_zero:0", 2),
             Catch::Contains("shows only device 0 of level_zero"));
  CHECK(oneapi_selector_hides_gpus("level_zero:0", 1).empty());  // the unit's one GPU
  CHECK(oneapi_selector_hides_gpus("level_zero:0,1", 2).empty());
  CHECK_THAT(oneapi_selector_hides_gpus("level_zero:1", 1), Catch::Contains("names device 1 of level_zero"));
  CHECK_THAT(oneapi_selector_hides_gpus("opencl:cpu", 1), Catch::Contains("shows no GPU"));
  CHECK_THAT(oneapi_selector_hides_gpus("!*:gpu", 4), Catch::Contains("discards every GPU"));
  CHECK_THAT(oneapi_selector_hides_gpus("*:gpu;!level_zero:1", 2), Catch::Contains("discards device 1"));
  // Backends only: the runtime the team chose, every GPU of the unit still shown.
  for (const char* harmless : {"level_zero:*", "level_zero:gpu", "opencl:gpu,cpu", "!opencl:*", "!*:cpu",
                               "level_zero:*.*", "opencl:gpu;level_zero:gpu", "LEVEL_ZERO:GPU"})
    CHECK(oneapi_selector_hides_gpus(harmless, 2).empty());
  // A unit without GPUs has none to hide; a selector SYCL refuses says so itself.
  CHECK(oneapi_selector_hides_gpus("level_zero:3", 0).empty());
  CHECK(oneapi_selector_hides_gpus("gpu", 2).empty());

  const auto two = command_env(placed("a", "//t:x", {2, 3}, 0), false);
  CHECK_FALSE(inherited_by_unit("ONEAPI_DEVICE_SELECTOR", "level_zero:0", two));
  CHECK(inherited_by_unit("ONEAPI_DEVICE_SELECTOR", "level_zero:gpu", two));
  CHECK(inherited_by_unit("ONEAPI_DEVICE_SELECTOR", "level_zero:0",
                          command_env(placed("a", "//t:y", {5}, 0), false)));
  CHECK(inherited_by_unit("ONEAPI_DEVICE_SELECTOR", "level_zero:1",
                          command_env(placed("a", "//t:cpu", {}, 0), false)));
  // The variables the plan chooses never come from the caller; an empty ROCR_VISIBLE_DEVICES neither.
  CHECK_FALSE(inherited_by_unit("ZE_AFFINITY_MASK", "0", two));
  CHECK_FALSE(inherited_by_unit("ROCR_VISIBLE_DEVICES", "", two));
  CHECK(inherited_by_unit("ROCR_VISIBLE_DEVICES", "0,1,2,3", two));
  CHECK(inherited_by_unit("PATH", "/usr/bin", two));
}
