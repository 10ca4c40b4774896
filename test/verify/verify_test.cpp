#include "gpuplan/verify.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <set>
#include <sstream>

#include "plan_fixture.hpp"

using namespace gpuplan;

namespace {

std::vector<Gpu> gpus(int count, const std::string& model, const std::string& family, std::int64_t vram,
                      const std::string& cc) {
  std::vector<Gpu> list;
  for (int i = 0; i < count; ++i) list.push_back({i, model, family, vram, *Version::parse(cc), ""});
  return list;
}

std::vector<std::vector<bool>> links(int count, const std::vector<std::pair<int, int>>& pairs,
                                     bool all = false) {
  std::vector<std::vector<bool>> nvlink(static_cast<size_t>(count),
                                        std::vector<bool>(static_cast<size_t>(count), all));
  for (int i = 0; i < count; ++i) nvlink[static_cast<size_t>(i)][static_cast<size_t>(i)] = false;
  for (auto [a, b] : pairs)
    nvlink[static_cast<size_t>(a)][static_cast<size_t>(b)] =
        nvlink[static_cast<size_t>(b)][static_cast<size_t>(a)] = true;
  return nvlink;
}

/// The fleet of test/data/plans/fleet.yaml, built by hand.
Fleet example_fleet() {
  Fleet fleet;
  fleet.source = "test/data/plans/fleet.yaml";
  for (const char* name : {"h100-0", "h100-1"})
    fleet.nodes.push_back({name,
                           "h100",
                           gpus(8, "H100-SXM-80GB", "h100", 81559, "9.0"),
                           *Version::parse("12.4"),
                           "550.54.15",
                           {},
                           links(8, {}, true)});
  fleet.nodes.push_back({"a100-0",
                         "a100",
                         gpus(4, "A100-SXM4-40GB", "a100", 40960, "8.0"),
                         *Version::parse("12.2"),
                         "535.104.05",
                         {},
                         links(4, {{0, 1}, {2, 3}})});
  fleet.nodes.push_back({"l4-0",
                         "l4",
                         gpus(2, "L4", "l4", 23034, "8.9"),
                         *Version::parse("12.2"),
                         "535.104.05",
                         {},
                         links(2, {})});
  return fleet;
}

Assignment& unit(Plan& plan, const std::string& id) {
  for (auto& a : plan.assignments)
    if (a.unit.id == id) return a;
  FAIL("no unit " << id);
  throw;
}

/// The assignment's env, to change: a plan read from a file holds one only where it is not
/// the planned one, so a consistent one is made here first.
std::map<std::string, std::string>& env_of(Assignment& a) {
  if (!a.env) a.env = planned_env(a, false);
  return *a.env;
}

/// Asserts exactly one violation, of `kind`, about `unit`, whose reason mentions `words`.
void require_one(const std::vector<Violation>& found, ViolationKind kind, const std::string& unit_id,
                 const std::string& words) {
  std::ostringstream all;
  for (const auto& v : found) all << to_string(v.kind) << " " << v.unit << ": " << v.reason << "\n";
  INFO(all.str());
  REQUIRE(found.size() == 1);
  REQUIRE(found[0].kind == kind);
  REQUIRE(found[0].unit == unit_id);
  REQUIRE_THAT(found[0].reason, Catch::Contains(words));
}

/// How many violations of `kind` about `unit_id` mention `words`.
long reported(const std::vector<Violation>& found, ViolationKind kind, const std::string& unit_id,
              const std::string& words) {
  return std::count_if(found.begin(), found.end(), [&](const Violation& v) {
    return v.kind == kind && v.unit == unit_id && v.reason.find(words) != std::string::npos;
  });
}

/// A pack plan: two single-GPU units with known VRAM sharing GPU 0 of l4-0 (23034 MiB).
Plan shared_gpu_plan(std::int64_t vram_each, int units) {
  Plan plan;
  plan.policy = Policy::pack;
  for (int i = 0; i < units; ++i) {
    Assignment a;
    a.unit.id = a.unit.label = fmt::format("//pack:t{}", i);
    a.unit.duration_s = 100;
    a.unit.vram_mib = vram_each;
    a.unit.requirement.edit().gpus = {1, "tag gpu"};
    a.node = "l4-0";
    a.gpus = {0};
    a.end_s = 100;
    plan.assignments.push_back(a);
  }
  plan.summary.makespan_s = 100;
  plan.summary.scheduled_units = plan.summary.gpu_units = units;
  return plan;
}

}  // namespace

TEST_CASE("the example plan is valid on its fleet") {
  REQUIRE(verify(example_plan(), example_fleet()).empty());
}

TEST_CASE("a unit on a node the fleet does not have is reported") {
  auto plan = example_plan();
  unit(plan, "//tf:conv_test").node = "a100-9";
  require_one(verify(plan, example_fleet()), ViolationKind::unknown_node, "//tf:conv_test",
              "\"a100-9\" is not in the fleet");
  // At its record, whose line the CLI names (before, the plan file alone).
  const auto at = std::find_if(plan.assignments.begin(), plan.assignments.end(),
                               [](const Assignment& a) { return a.unit.id == "//tf:conv_test"; });
  CHECK(verify(plan, example_fleet())[0].json_path ==
        fmt::format("assignments[{}]", at - plan.assignments.begin()));
}

TEST_CASE("a GPU index the node does not have is reported") {
  auto plan = example_plan();
  auto& a = unit(plan, "//xla:triton_test");
  a.gpus = {4};
  env_of(a)["CUDA_VISIBLE_DEVICES"] = "4";
  require_one(verify(plan, example_fleet()), ViolationKind::gpu_index, "//xla:triton_test",
              "GPU 4 does not exist on a100-0 (it has GPUs 0-3)");
}

TEST_CASE("a label with a newline is reported: exec's pattern file would read two labels") {
  auto plan = example_plan();
  auto& a = unit(plan, "//tf:nccl_test");
  a.unit.label = a.unit.id = "//tf:nccl_test\n//tf:other_test";
  auto found = verify(plan, example_fleet());
  REQUIRE_FALSE(found.empty());
  CHECK(found.front().kind == ViolationKind::coverage);
  CHECK_THAT(found.front().reason, Catch::Contains("control character 0x0a (byte 15)"));
}

TEST_CASE("a GPU listed twice for one unit is reported") {
  auto plan = example_plan();
  auto& a = unit(plan, "//tf:nccl_test");
  a.gpus = {1, 1};
  env_of(a)["CUDA_VISIBLE_DEVICES"] = "1,1";
  require_one(verify(plan, example_fleet()), ViolationKind::gpu_index, "//tf:nccl_test", "lists GPU 1 twice");
}

TEST_CASE("a unit given fewer GPUs than it needs is reported") {
  auto plan = example_plan();
  auto& a = unit(plan, "//tf:nccl_test");
  a.gpus = {1};
  env_of(a)["CUDA_VISIBLE_DEVICES"] = "1";
  require_one(verify(plan, example_fleet()), ViolationKind::gpu_count, "//tf:nccl_test",
              "holds 1 GPU but needs 2");
}

TEST_CASE("under whole-node a multi-GPU unit has its node to itself, holding the GPUs it asked for or all") {
  auto plan = example_plan();
  plan.policy = Policy::whole_node;
  auto found = verify(plan, example_fleet());
  auto reported = [&](ViolationKind kind, const std::string& id, const std::string& words) {
    return std::count_if(found.begin(), found.end(), [&](const Violation& v) {
      return v.kind == kind && v.unit == id && v.reason.find(words) != std::string::npos;
    });
  };
  // h100-1: //xla:fp8_gemm_test (1 GPU) runs beside //tf:nccl_test (2 GPUs), 1200-1380 s.
  CHECK(reported(ViolationKind::exclusive, "//xla:fp8_gemm_test",
                 "while //tf:nccl_test has the whole node (whole-node policy)") == 1);
  CHECK(reported(ViolationKind::gpu_count, "//tf:nccl_test", "") == 0);  // 2 of 8 GPUs: as asked
  unit(plan, "//tf:nccl_test").gpus = {1, 2, 3};
  found = verify(plan, example_fleet());
  CHECK(reported(ViolationKind::gpu_count, "//tf:nccl_test", "holds 3 GPUs but asks for 2") == 1);
}

TEST_CASE("two units on one GPU at once are reported as double-booked") {
  auto plan = example_plan();
  auto& a = unit(plan, "//xla:fp8_gemm_test");  // GPU 0 of h100-1 from 1200s
  a.start_s = 1100;
  a.end_s = 1400;
  require_one(verify(plan, example_fleet()), ViolationKind::double_booked, "//xla:fp8_gemm_test",
              "GPU 0 of h100-1 is also held by //jax:pmap_test from 0s to 1200s");
}

TEST_CASE("a unit planned to last 0 s inside another's time on its GPU is double-booked too") {
  // exec would start it beside the other; verify had called such a plan valid.
  auto plan = example_plan();
  auto& a = unit(plan, "//xla:fp8_gemm_test");  // GPU 0 of h100-1, where //jax:pmap_test runs until 1200s
  a.start_s = a.end_s = 600;
  a.unit.duration_s = 0;
  CHECK(reported(verify(plan, example_fleet()), ViolationKind::double_booked, "//xla:fp8_gemm_test",
                 "also held by //jax:pmap_test") == 1);
}

TEST_CASE("a unit of 1 ms starting with another on one GPU is double-booked, within the rounding tolerance") {
  // A run of 0 s in the history plans a unit at 1 ms, the size of the millisecond tolerance the
  // plan's rounded times need: verify called two such units at once valid.
  auto plan = example_plan();
  auto& a = unit(plan, "//xla:fp8_gemm_test");  // GPU 0 of h100-1, where //jax:pmap_test runs from 0s
  a.start_s = 0;
  a.end_s = a.unit.duration_s = 0.001;
  CHECK(reported(verify(plan, example_fleet()), ViolationKind::double_booked, "//xla:fp8_gemm_test",
                 "also held by //jax:pmap_test") == 1);
  auto& b = unit(plan, "//tf:conv_test");  // a100-0, where //ml:allreduce_test holds the node from 0s
  b.start_s = 0;
  b.end_s = b.unit.duration_s = 0.001;
  CHECK(reported(verify(plan, example_fleet()), ViolationKind::exclusive, "//tf:conv_test",
                 "while //ml:allreduce_test has the whole node") == 1);
  // Two 1 ms units at once, as two tests with 0 s history runs are planned.
  auto two = example_plan();
  for (const char* id : {"//xla:fp8_gemm_test", "//tf:conv_test"}) {
    auto& u = unit(two, id);
    u.node = "h100-1";
    u.gpus = {0};
    u.start_s = 1200;
    u.end_s = 1200.001;
    u.unit.duration_s = 0.001;
  }
  CHECK(reported(verify(two, example_fleet()), ViolationKind::double_booked, "//tf:conv_test",
                 "also held by //xla:fp8_gemm_test") +
            reported(verify(two, example_fleet()), ViolationKind::double_booked, "//xla:fp8_gemm_test",
                     "also held by //tf:conv_test") ==
        1);
}

TEST_CASE("under pack units share a GPU within its VRAM and the tests-per-GPU limit") {
  REQUIRE(verify(shared_gpu_plan(8000, 2), example_fleet()).empty());
}

TEST_CASE("under pack sharing over the VRAM left after headroom is reported") {
  require_one(verify(shared_gpu_plan(12000, 2), example_fleet()), ViolationKind::double_booked, "//pack:t1",
              "needing 24000MiB");
}

TEST_CASE("under pack a unit counts at least its gpu-mem, whatever vram_mib the plan wrote") {
  // Each test asks gpu-mem 12000 MiB; the plan says it reserves 1024: before, 2 × 1024 fitted.
  auto plan = shared_gpu_plan(1024, 2);
  for (auto& a : plan.assignments)
    a.unit.requirement.edit().gpu_mem_mib = Sourced<std::int64_t>{12000, "tag gpu-mem:12000MiB"};
  require_one(verify(plan, example_fleet()), ViolationKind::double_booked, "//pack:t1", "needing 24000MiB");
}

TEST_CASE("under pack more units on a GPU than max_tests_per_gpu is reported") {
  VerifyOptions options;
  options.rules.max_tests_per_gpu = 2;
  require_one(verify(shared_gpu_plan(1000, 3), example_fleet(), options), ViolationKind::double_booked,
              "//pack:t2", "runs 3 units at once from 0s (at most 2 under pack)");
}

TEST_CASE("under pack a unit with unknown VRAM does not share") {
  auto plan = shared_gpu_plan(1000, 2);
  plan.assignments[1].unit.vram_mib.reset();
  require_one(verify(plan, example_fleet()), ViolationKind::double_booked, "//pack:t1", "known VRAM need");
}

TEST_CASE(
    "under pack a shared unit's env must keep JAX and TensorFlow from taking the GPU's memory at start") {
  auto plan = shared_gpu_plan(1000, 2);
  env_of(plan.assignments[0]) = {{"CUDA_VISIBLE_DEVICES", "0"}, {"TF_FORCE_GPU_ALLOW_GROWTH", "true"}};
  require_one(verify(plan, example_fleet()), ViolationKind::env, "//pack:t0",
              "env has no XLA_PYTHON_CLIENT_PREALLOCATE; it should be \"false\"");
  plan = shared_gpu_plan(1000, 1);
  plan.policy = Policy::exact;
  env_of(plan.assignments[0])["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false";
  require_one(verify(plan, example_fleet()), ViolationKind::env, "//pack:t0",
              "env sets XLA_PYTHON_CLIENT_PREALLOCATE, but the unit does not share its GPU");
}

TEST_CASE("a node short of a unit's requirements is reported, naming the requirement") {
  auto plan = example_plan();
  auto fleet = example_fleet();
  SECTION("GPU memory") {
    auto& a = unit(plan, "//ml:inference_test#shard-0-of-2");
    a.unit.requirement.edit().gpu_mem_mib = Sourced<std::int64_t>{32768, "tag gpu-mem:32GiB"};
    a.unit.vram_mib = 32768;
    auto found = verify(plan, fleet);
    REQUIRE(found.size() == 2);
    REQUIRE_THAT(found[0].reason,
                 Catch::Contains("needs 32GiB on each GPU (tag gpu-mem:32GiB) but GPU 1 of l4-0"));
    REQUIRE_THAT(found[1].reason, Catch::Contains("reserves 32GiB per GPU"));
  }
  SECTION("CUDA version") {
    fleet.nodes[0].cuda = *Version::parse("12.2");
    auto found = verify(plan, fleet);
    REQUIRE(found.size() == 4);  // each shard of //ml:train_test on h100-0
    REQUIRE(found[0].reason == "needs CUDA >=12.4 but h100-0 has CUDA 12.2");
  }
  SECTION("compute capability") {
    auto& a = unit(plan, "//xla:triton_test");
    a.unit.requirement.edit().compute_capability = {
        {*VersionConstraint::parse(">=9.0"), "tag requires-gpu-sm90"}};
    require_one(verify(plan, fleet), ViolationKind::requirement, "//xla:triton_test",
                "needs compute capability >=9.0 (tag requires-gpu-sm90) but GPU 3 of a100-0");
  }
  SECTION("GPU model") {
    auto& a = unit(plan, "//tf:conv_test");
    a.unit.requirement.edit().gpu_models =
        Sourced<std::vector<std::string>>{{"h100", "l4"}, "tag gpu-model:h100|l4"};
    require_one(verify(plan, fleet), ViolationKind::requirement, "//tf:conv_test", "needs GPU model h100|l4");
  }
  SECTION("NVLink") {
    auto& a = unit(plan, "//tf:mirrored_strategy_test");  // GPUs 0,1 of a100-0: a pair
    a.unit.requirement.edit().nvlink = Sourced<bool>{true, "tag nvlink"};
    REQUIRE(verify(plan, fleet).empty());
    a.gpus = {1, 2};
    env_of(a)["CUDA_VISIBLE_DEVICES"] = "1,2";
    auto found = verify(plan, fleet);
    REQUIRE(std::count_if(found.begin(), found.end(), [](const Violation& v) {
              return v.kind == ViolationKind::requirement &&
                     v.reason.find("not all NVLink-connected") != std::string::npos;
            }) == 1);
  }
}

TEST_CASE("the query's requirements are checked, not the plan's copy of them") {
  auto plan = example_plan();
  Classification query;
  for (const auto& a : plan.assignments) {
    ClassifiedTest test{{}, Bucket::gpu, "tagged", a.unit.requirement, {}};
    test.target.label = a.unit.label;
    test.target.shard_count = a.unit.shard_count > 1 ? a.unit.shard_count : 0;
    if (query.tests.empty() || query.tests.back().target.label != a.unit.label) query.tests.push_back(test);
  }
  query.tests.push_back({{}, Bucket::gpu, "tagged", plan.unschedulable[0].unit.requirement, {}});
  query.tests.back().target.label = plan.unschedulable[0].unit.label;
  VerifyOptions options{&query, {}};
  REQUIRE(verify(plan, example_fleet(), options).empty());
  for (auto& t : query.tests)
    if (t.target.label == "//tf:conv_test")
      t.requirement.edit().gpu_mem_mib = Sourced<std::int64_t>{65536, "tag gpu-mem:64GiB"};
  require_one(verify(plan, example_fleet(), options), ViolationKind::requirement, "//tf:conv_test",
              "needs 64GiB on each GPU (tag gpu-mem:64GiB)");
}

TEST_CASE("a unit given every GPU of the node it holds is reported when it holds fewer") {
  auto plan = example_plan();
  auto& a = unit(plan, "//ml:allreduce_test");  // a100-0, GPUs 0-3: the whole node
  a.unit.requirement.edit().gpus = {1, "tag gpu"};
  a.unit.requirement.edit().every_node_gpu = Sourced<bool>{true, "tag exclusive"};
  REQUIRE(verify(plan, example_fleet()).empty());
  a.gpus = {0};
  env_of(a)["CUDA_VISIBLE_DEVICES"] = "0";
  require_one(verify(plan, example_fleet()), ViolationKind::gpu_count, "//ml:allreduce_test",
              "holds GPU 0 but is given every GPU of a100-0 that it may use (0,1,2,3): it holds the node and "
              "gives no GPU count (tag exclusive)");
}

TEST_CASE("a unit beside an exclusive unit on its node is reported") {
  auto plan = example_plan();
  auto& a = unit(plan, "//tf:conv_test");  // a100-0, after //ml:allreduce_test (exclusive, 0-600s)
  a.start_s = 500;
  a.end_s = 545;
  auto found = verify(plan, example_fleet());
  REQUIRE(std::count_if(found.begin(), found.end(), [](const Violation& v) {
            return v.kind == ViolationKind::exclusive && v.unit == "//tf:conv_test" &&
                   v.reason.find("while //ml:allreduce_test has the whole node") != std::string::npos;
          }) == 1);
}

TEST_CASE("a unit listed twice is reported") {
  auto plan = example_plan();
  plan.unschedulable.push_back({unit(plan, "//tf:conv_test").unit, "copied by hand"});
  ++plan.summary.unschedulable_units;
  ++plan.summary.gpu_units;
  CHECK(reported(verify(plan, example_fleet()), ViolationKind::coverage, "//tf:conv_test",
                 "listed more than once") == 1);
  // At the second record, the copy; a violation of the plan as a whole at none.
  plan.summary.makespan_s += 1;
  const auto found = verify(plan, example_fleet());
  auto twice = std::find_if(found.begin(), found.end(), [](const Violation& v) {
    return v.reason.starts_with("is listed more than once");
  });
  REQUIRE(twice != found.end());
  CHECK(twice->json_path == fmt::format("unschedulable[{}]", plan.unschedulable.size() - 1));
  auto makespan = std::find_if(found.begin(), found.end(), [](const Violation& v) {
    return v.reason.find("makespan_s") != std::string::npos;
  });
  REQUIRE(makespan != found.end());
  CHECK(makespan->json_path.empty());
}

TEST_CASE("a unit whose id is not its label and shard, or a second unit of one shard, is reported") {
  // A copy of a shard under another id ran the shard twice, and verify said every test was there once.
  auto plan = example_plan();
  Assignment copy = plan.assignments.front();
  for (const auto& a : plan.assignments)
    if (a.unit.shard_index) copy = a;
  REQUIRE(copy.unit.shard_index);
  const std::string original = copy.unit.id;
  copy.unit.id += "b";
  plan.assignments.push_back(copy);
  auto found = verify(plan, example_fleet());
  CHECK(reported(found, ViolationKind::coverage, original + "b", "is not the id of its label and shard") ==
        1);
  CHECK(reported(found, ViolationKind::coverage, original + "b", "runs the same shard as " + original) == 1);
}

TEST_CASE("against the query every GPU test must be in the plan, each shard once") {
  auto plan = example_plan();
  Classification query;
  auto add = [&](const std::string& label, Bucket bucket, int shards) {
    ClassifiedTest test;
    test.target.label = label;
    test.target.shard_count = shards;
    test.bucket = bucket;
    test.reason = bucket == Bucket::cpu ? "no GPU annotation" : "tag gpu";
    test.requirement.edit().gpus = {bucket == Bucket::gpu ? 1 : 0, "tag gpu"};
    query.tests.push_back(test);
  };
  std::set<std::string> labels;
  for (const auto& a : plan.assignments) labels.insert(a.unit.label);
  labels.insert("//ml:cuda11_compat_test");
  for (const auto& l : labels)
    add(l, Bucket::gpu, l == "//ml:train_test" ? 4 : l == "//ml:inference_test" ? 2 : 0);
  for (auto& t : query.tests) {
    for (const auto& a : plan.assignments)
      if (a.unit.label == t.target.label) t.requirement = a.unit.requirement;
    for (const auto& u : plan.unschedulable)
      if (u.unit.label == t.target.label) t.requirement = u.unit.requirement;
  }
  VerifyOptions options{&query, {}};
  REQUIRE(verify(plan, example_fleet(), options).empty());

  SECTION("a missing test") {
    add("//new:gpu_test", Bucket::gpu, 0);
    require_one(verify(plan, example_fleet(), options), ViolationKind::coverage, "//new:gpu_test",
                "is a GPU test of the query but is not in the plan");
  }
  SECTION("a missing shard") {
    std::erase_if(plan.assignments,
                  [](const Assignment& a) { return a.unit.id == "//ml:train_test#shard-2-of-4"; });
    --plan.summary.scheduled_units;
    --plan.summary.gpu_units;
    require_one(verify(plan, example_fleet(), options), ViolationKind::coverage, "//ml:train_test",
                "shard 2 of 4 is missing");
  }
  SECTION("a test that fits listed unschedulable: it would never run") {
    // //ml:cuda11_compat_test needs CUDA < 12, which no node has; asked for no more than 1 GPU,
    // the plan dropped a test the fleet can run, and verify had said the plan was valid.
    for (auto& t : query.tests)
      if (t.target.label == "//ml:cuda11_compat_test") t.requirement.edit().cuda.clear();
    require_one(verify(plan, example_fleet(), options), ViolationKind::coverage, "//ml:cuda11_compat_test",
                "is listed unschedulable (");
    CHECK_THAT(verify(plan, example_fleet(), options)[0].reason, Catch::Contains("but h100-0 can run it"));
  }
  SECTION("a test that fits only with NVLink it cannot have stays unschedulable") {
    for (auto& t : query.tests)
      if (t.target.label == "//ml:cuda11_compat_test") {
        t.requirement.edit().cuda.clear();
        t.requirement.edit().gpus = {3, "tag gpu:3"};
        t.requirement.edit().nvlink = Sourced<bool>{true, "tag nvlink"};
        t.requirement.edit().gpu_models = Sourced<std::vector<std::string>>{{"a100"}, "tag gpu-model:a100"};
      }
    CHECK(verify(plan, example_fleet(), options).empty());  // a100-0's 4 GPUs are linked in pairs
    for (auto& t : query.tests)
      if (t.target.label == "//ml:cuda11_compat_test") t.requirement.edit().gpus = {2, "tag gpu:2"};
    CHECK(reported(verify(plan, example_fleet(), options), ViolationKind::coverage, "//ml:cuda11_compat_test",
                   "but a100-0 can run it: 4 of its GPUs meet what it needs") == 1);
  }
  SECTION("a summary that miscounts the plan") {
    plan.summary.gpu_tests = 12;
    plan.summary.scheduled_units = 17;
    auto found = verify(plan, example_fleet(), options);
    CHECK(reported(found, ViolationKind::summary, "", "the summary's gpu_tests is 12 but the plan has 13") ==
          1);
    CHECK(reported(found, ViolationKind::summary, "",
                   "the summary's scheduled_units is 17 but the plan has 16") == 1);
    CHECK(reported(found, ViolationKind::summary, "", "the summary's tests is 20 but the plan has 19") == 1);
  }
  SECTION("a CPU test placed on a GPU") {
    for (auto& t : query.tests)
      if (t.target.label == "//tf:conv_test") t = {t.target, Bucket::cpu, "no GPU annotation", {}, {}};
    require_one(verify(plan, example_fleet(), options), ViolationKind::coverage, "//tf:conv_test",
                "is a CPU test in the query (no GPU annotation)");
  }
}

TEST_CASE("inconsistent times are reported") {
  auto plan = example_plan();
  SECTION("an end that is not start + duration") {
    unit(plan, "//tf:conv_test").end_s = 640;
    require_one(verify(plan, example_fleet()), ViolationKind::times, "//tf:conv_test",
                "runs from 600s to 640s, 40s, but its duration_s is 45s");
  }
  SECTION("a negative start") {
    auto& a = unit(plan, "//ml:video_decode_test");
    a.start_s = -10;
    a.end_s = 290;
    require_one(verify(plan, example_fleet()), ViolationKind::times, "//ml:video_decode_test",
                "starts at -10s");
  }
  SECTION("a makespan other than the last end") {
    plan.summary.makespan_s = plan.summary.lower_bound_s = 1500;
    require_one(verify(plan, example_fleet()), ViolationKind::times, "",
                "makespan_s is 1500s but the last unit ends at 1680s");
  }
}

TEST_CASE("an environment that disagrees with the assignment is reported") {
  auto plan = example_plan();
  SECTION("CUDA_VISIBLE_DEVICES") {
    env_of(unit(plan, "//tf:nccl_test"))["CUDA_VISIBLE_DEVICES"] = "0,1";
    require_one(verify(plan, example_fleet()), ViolationKind::env, "//tf:nccl_test",
                "CUDA_VISIBLE_DEVICES is \"0,1\" but should be \"1,2\"");
  }
  SECTION("the shard index") {
    env_of(unit(plan, "//ml:train_test#shard-3-of-4"))["TEST_SHARD_INDEX"] = "4";
    require_one(verify(plan, example_fleet()), ViolationKind::env, "//ml:train_test#shard-3-of-4",
                "TEST_SHARD_INDEX is \"4\" but should be \"3\"");
  }
  SECTION("shard variables on a test that is not sharded") {
    env_of(unit(plan, "//tf:conv_test"))["TEST_TOTAL_SHARDS"] = "2";
    require_one(verify(plan, example_fleet()), ViolationKind::env, "//tf:conv_test",
                "sets TEST_TOTAL_SHARDS but is not a shard");
  }
  SECTION("a variable gpuplan does not set") {
    env_of(unit(plan, "//tf:conv_test"))["LD_PRELOAD"] = "/tmp/x.so";
    require_one(verify(plan, example_fleet()), ViolationKind::env, "//tf:conv_test",
                "env sets LD_PRELOAD, which executors never apply");
  }
}

TEST_CASE("without the query a test's shards must all be there, of one count") {
  // A plan that dropped a shard, or mixed shards of 3 with shards of 5, was valid without the query.
  auto plan = example_plan();
  plan.summary.gpu_utilization = 0;  // not checked: the sections change the busy time
  SECTION("a missing shard") {
    std::erase_if(plan.assignments,
                  [](const Assignment& a) { return a.unit.id == "//ml:train_test#shard-2-of-4"; });
    --plan.summary.scheduled_units;
    --plan.summary.gpu_units;
    require_one(verify(plan, example_fleet()), ViolationKind::coverage, "//ml:train_test",
                "shard 2 of 4 is missing");
  }
  SECTION("shards of two counts") {
    auto& a = unit(plan, "//ml:train_test#shard-3-of-4");
    a.unit.shard_count = 5;
    a.unit.id = "//ml:train_test#shard-3-of-5";
    env_of(a)["TEST_TOTAL_SHARDS"] = "5";
    require_one(verify(plan, example_fleet()), ViolationKind::coverage, "//ml:train_test#shard-3-of-5",
                "has shard_count 5 but //ml:train_test#shard-0-of-4 gives the test 4 shards");
  }
  SECTION("a whole test beside its shards") {
    Assignment whole = unit(plan, "//ml:train_test#shard-0-of-4");
    whole.unit.id = whole.unit.label;
    whole.unit.shard_index.reset();
    whole.unit.shard_count = 1;
    whole.env = {};
    whole.start_s += 100000;
    whole.end_s += 100000;
    plan.assignments.push_back(whole);
    ++plan.summary.scheduled_units;
    ++plan.summary.gpu_units;
    plan.summary.makespan_s = whole.end_s;
    require_one(verify(plan, example_fleet()), ViolationKind::coverage, "//ml:train_test",
                "is in the plan both as a whole test and as shards");
  }
}

TEST_CASE("an unsharded test listed twice is reported as listed twice, not as a whole test beside shards") {
  auto plan = example_plan();
  Classification query;
  std::set<std::string> labels;
  for (const auto& a : plan.assignments) labels.insert(a.unit.label);
  for (const auto& u : plan.unschedulable) labels.insert(u.unit.label);
  for (const auto& l : labels) {
    ClassifiedTest test;
    test.target.label = l;
    test.target.shard_count = l == "//ml:train_test" ? 4 : l == "//ml:inference_test" ? 2 : 0;
    test.bucket = Bucket::gpu;
    for (const auto& a : plan.assignments)
      if (a.unit.label == l) test.requirement = a.unit.requirement;
    for (const auto& u : plan.unschedulable)
      if (u.unit.label == l) test.requirement = u.unit.requirement;
    query.tests.push_back(test);
  }
  plan.unschedulable.push_back({unit(plan, "//tf:conv_test").unit, "copied by hand"});
  ++plan.summary.unschedulable_units;
  ++plan.summary.gpu_units;
  VerifyOptions options{&query, {}};
  auto found = verify(plan, example_fleet(), options);
  CHECK(reported(found, ViolationKind::coverage, "//tf:conv_test", "listed more than once") == 1);
  CHECK(reported(found, ViolationKind::coverage, "//tf:conv_test", "as shards") == 0);
}

TEST_CASE("a summary's gpu_utilization other than its units' busy share of the fleet is reported") {
  auto plan = example_plan();
  const auto fleet = example_fleet();
  double busy = 0;
  std::map<std::pair<std::string, int>, std::vector<std::pair<double, double>>> spans;
  for (const auto& a : plan.assignments)
    for (int g : a.gpus) spans[{a.node.str(), g}].emplace_back(a.start_s, a.end_s);
  for (auto& [gpu, of_gpu] : spans) {
    std::sort(of_gpu.begin(), of_gpu.end());
    double until = 0;
    for (auto [start, end] : of_gpu) {
      busy += std::max(0.0, end - std::max(start, until));
      until = std::max(until, end);
    }
  }
  plan.summary.gpu_utilization = std::round(busy / (22 * plan.summary.makespan_s) * 10000) / 10000;
  CHECK(verify(plan, fleet).empty());
  plan.summary.gpu_utilization = 0.99;
  require_one(verify(plan, fleet), ViolationKind::summary, "", "the summary's gpu_utilization is 0.99 but");
}
