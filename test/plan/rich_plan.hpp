#pragma once
#include "gpuplan/plan.hpp"

// A plan with every kind of field: the fixture of the plan JSON's bytes.
inline gpuplan::Plan rich_plan() {
  using namespace gpuplan;
  Plan plan;
  plan.policy = Policy::pack;
  plan.fleet = "fleets/ci \"main\".yaml";
  Assignment a;
  a.unit.id = "//ml:train#shard-1-of-4";
  a.unit.label = "//ml:train";
  a.unit.shard_index = 1;
  a.unit.shard_count = 4;
  a.unit.duration_s = 300.12345;
  a.unit.duration_source = "history-p90";
  a.unit.vram_mib = 40960;
  a.unit.size = "large";
  a.unit.timeout = "long";
  a.unit.flaky = true;
  a.unit.requirement.edit().gpus = {2, "tag gpu:2"};
  a.unit.requirement.edit().gpu_mem_mib = Sourced<std::int64_t>{40960, "tag gpu-mem:40GiB"};
  a.unit.requirement.edit().cuda.push_back({*VersionConstraint::parse(">=12.4"), "tag cuda>=12.4"});
  a.unit.requirement.edit().cuda.push_back({*VersionConstraint::parse("<13.0"), "tag cuda<13.0"});
  a.unit.requirement.edit().compute_capability.push_back(
      {*VersionConstraint::parse(">=8.0"), "tag requires-gpu-sm80"});
  a.unit.requirement.edit().gpu_models =
      Sourced<std::vector<std::string>>{{"h100", "a100"}, "tag gpu-model:h100|a100"};
  a.unit.requirement.edit().nvlink = Sourced<bool>{true, "tag nvlink"};
  a.node = "h100-0";
  a.gpus = {0, 1};
  a.start_s = 1.0005;
  a.end_s = 301.12395;
  a.env = std::map<std::string, std::string>{
      {"CUDA_VISIBLE_DEVICES", "0,1"}, {"TEST_SHARD_INDEX", "1"}, {"TEST_TOTAL_SHARDS", "4"}};
  plan.assignments.push_back(a);
  Assignment b;
  b.unit.id = "@repo//tools:lint_gpu_test";
  b.unit.label = "@repo//tools:lint_gpu_test";
  b.unit.duration_s = 60;
  b.unit.duration_source = "size-default";
  b.unit.requirement.edit().gpus = {1, "tag gpu"};
  b.unit.requirement.edit().exclusive = Sourced<bool>{true, "tag gpu-exclusive"};
  b.node = "l4-3";
  b.gpus = {0};
  b.start_s = 0;
  b.end_s = 60;
  b.env = std::map<std::string, std::string>{{"CUDA_VISIBLE_DEVICES", "0"}};
  plan.assignments.push_back(b);
  UnschedulableUnit u;
  u.unit.id = "//big:t";
  u.unit.label = "//big:t";
  u.unit.duration_s = 1e7 / 3;
  u.unit.duration_source = "history-timeout";
  u.unit.requirement.edit().gpus = {16, "tag gpu:16"};
  u.reason = "needs 16 GPUs; the largest node has 8 — ask for fewer\tor add \"bigger\" nodes";
  plan.unschedulable.push_back(u);
  plan.cpu_tests.push_back({"//a:b", "no GPU annotation"});
  plan.cpu_tests.push_back({"//a:c", "tag cpu-only → CPU only"});
  plan.skipped_tests.push_back({"//a:manual_test", "tagged manual"});
  plan.diagnostics.push_back({Severity::warning, "//x:y", "tag gpu:0",
                              "gpu:0 is malformed: the GPU count must be at least 1; it is ignored"});
  plan.diagnostics.push_back({Severity::note, "", "input", "3 targets that are not tests left out"});
  auto& s = plan.summary;
  s.tests = 7;
  s.cpu_tests = 2;
  s.gpu_tests = 3;
  s.skipped_tests = 1;
  s.gpu_units = 3;
  s.scheduled_units = 2;
  s.unschedulable_units = 1;
  s.makespan_s = 301.12395;
  s.lower_bound_s = 250.5;
  s.gpu_utilization = 0.123456;
  s.pack_slowdown = 1.25;
  return plan;
}
