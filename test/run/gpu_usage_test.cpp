// The NVML sampler against the stand-in library (test/nvml/fake_nvml.cpp): a unit's process
// tree, its peak per GPU, GPU use at all, and a machine without NVML.
#include "run/gpu_usage.hpp"

#include <dlfcn.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

using namespace gpuplan;

namespace {

/// Points GPUPLAN_NVML_LIBRARY at the stand-in and its process file at a scratch file.
struct FakeNvml {
  std::string processes = fmt::format("/tmp/gpuplan-fake-nvml-{}.txt", getpid());
  FakeNvml() {
    setenv("GPUPLAN_NVML_LIBRARY", GPUPLAN_FAKE_NVML, 1);
    setenv("GPUPLAN_FAKE_NVML_PROCESSES", processes.c_str(), 1);
    write("");
  }
  ~FakeNvml() {
    unsetenv("GPUPLAN_NVML_LIBRARY");
    unsetenv("GPUPLAN_FAKE_NVML_PROCESSES");
    std::remove(processes.c_str());
  }
  void write(const std::string& lines) const { std::ofstream(processes) << lines; }
};

/// Waits (up to 60 s) until a sampler has taken a whole sample after this call: one that began
/// after it, which the next one's start shows ended (a sample begins by counting the GPUs). A fixed
/// 60 or 100 ms was outlasted on a loaded machine, and the sampler never saw what the file said.
void wait_for_a_sample() {
  static auto* calls = reinterpret_cast<unsigned long (*)()>(
      dlsym(dlopen(GPUPLAN_FAKE_NVML, RTLD_NOW), "gpuplan_fake_nvml_count_calls"));
  REQUIRE(calls);
  const unsigned long before = calls();
  for (int tries = 0; tries < 6000 && calls() < before + 2; ++tries)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  REQUIRE(calls() >= before + 2);
}

/// A process group: `sh` leading it, with a `sleep` child; returns (leader, child).
std::pair<pid_t, pid_t> start_tree() {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  pid_t leader = fork();
  if (leader == 0) {
    setpgid(0, 0);
    pid_t child = fork();
    if (child == 0) {
      execlp("sleep", "sleep", "30", nullptr);
      _exit(127);
    }
    if (::write(fds[1], &child, sizeof child) != sizeof child) _exit(1);
    waitpid(child, nullptr, 0);
    _exit(0);
  }
  pid_t child = 0;
  REQUIRE(read(fds[0], &child, sizeof child) == sizeof child);
  close(fds[0]);
  close(fds[1]);
  return {leader, child};
}

void end_tree(pid_t leader) {
  kill(-leader, SIGKILL);
  waitpid(leader, nullptr, 0);
}

}  // namespace

TEST_CASE("The sampler records the peak of a unit's child processes per GPU", "[gpu_usage]") {
  FakeNvml fake;
  auto [leader, child] = start_tree();
  // The child holds 3000 MiB on GPU 1 and 500 on GPU 2; another process's memory does not count.
  fake.write(fmt::format("1 {} 3000\n2 {} 500\n1 {} 9000\n", child, child, getppid()));
  GpuUsageSampler sampler(open_nvml(), 0.02);
  sampler.start(leader);
  wait_for_a_sample();
  fake.write(fmt::format("1 {} 1000\n", child));
  wait_for_a_sample();
  GpuUsage usage = sampler.stop();
  end_tree(leader);
  CHECK(usage.measured);
  CHECK(usage.touched);
  REQUIRE(usage.peak_vram_mib);
  CHECK(*usage.peak_vram_mib == 3000);
}

TEST_CASE("A unit on GPUs it was not given is caught, by NVML index", "[gpu_usage]") {
  // A test that sets CUDA_VISIBLE_DEVICES itself: its child is on GPU 3 as well as its own GPU 1.
  FakeNvml fake;
  auto [leader, child] = start_tree();
  fake.write(fmt::format("1 {} 300\n3 {} 200\n0 {} 100\n", child, child, getppid()));
  for (const auto& [given, outside] : {std::pair{std::vector<int>{1}, std::vector<int>{3}},
                                       std::pair{std::vector<int>{1, 3}, std::vector<int>{}},
                                       std::pair{std::vector<int>{}, std::vector<int>{1, 3}}}) {
    GpuUsageSampler sampler(open_nvml(), 0.02);
    sampler.start(leader, given);
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    CHECK(sampler.stop().outside == outside);
  }
  end_tree(leader);
  CHECK(outside_gpus_warning("//ml:t", {1}, {}).empty());
  CHECK_THAT(outside_gpus_warning("//ml:t", {1}, {3}),
             Catch::StartsWith("//ml:t used GPU 3, which the plan did not give it (it was given GPU 1): it "
                               "picks its GPU itself"));
  CHECK_THAT(outside_gpus_warning("//ml:t", {}, {0, 2}),
             Catch::StartsWith("//ml:t used GPUs 0, 2, which the plan did not give it (it was given none)"));
}

TEST_CASE("A unit none of whose processes is on a GPU did not touch one", "[gpu_usage]") {
  FakeNvml fake;
  auto [leader, child] = start_tree();
  fake.write(fmt::format("0 {} 700\n", getppid()));
  GpuUsageSampler sampler(open_nvml(), 0.02);
  sampler.start(leader, {1});
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  GpuUsage usage = sampler.stop();
  CHECK(usage.measured);
  CHECK_FALSE(usage.touched);
  CHECK_FALSE(usage.peak_vram_mib);
  // Given no GPU (run-under's --unplanned=warn: CUDA_VISIBLE_DEVICES empty), touching none says
  // nothing of what it needs: not measured (before, a measured false, and history suggest
  // advised removing the test's GPU tags).
  GpuUsageSampler none(open_nvml(), 0.02);
  none.start(leader);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  CHECK_FALSE(none.stop().measured);
  // Nor does one given only GPUs this machine lacks (--missing-gpus=warn): CUDA leaves them out.
  GpuUsageSampler missing(open_nvml(), 0.02);
  missing.start(leader, {12});
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  CHECK_FALSE(missing.stop().measured);
  end_tree(leader);
}

namespace {

/// What the sampler makes of a unit given GPU 2 (`shared`: beside other units) while NVML reports
/// `before` at its start, then each of `then` in turn until a sample saw it ("{}" there: the unit's PID).
GpuUsage sampled_on_gpu_2(const std::string& before, const std::vector<std::string>& then,
                          bool shared = false) {
  FakeNvml fake;
  auto [leader, child] = start_tree();
  fake.write(before);
  GpuUsageSampler sampler(open_nvml(), 0.02);
  sampler.start(leader, {2}, shared);
  for (const auto& lines : then) {
    fake.write(fmt::format(fmt::runtime(lines), child));
    wait_for_a_sample();
  }
  GpuUsage usage = sampler.stop();
  end_tree(leader);
  return usage;
}

}  // namespace

TEST_CASE("Where NVML lists no processes, a rise in the unit's GPUs' memory is the unit's", "[gpu_usage]") {
  // As on a VM whose driver sees no PID of ours: nvidia-smi says "No running processes found".
  // Before: what the idle GPU held; GPU 5 is another unit's.
  GpuUsage usage = sampled_on_gpu_2("2 0 40\n", {"2 0 3112\n5 0 9000\n"});
  CHECK(usage.touched);
  REQUIRE(usage.peak_vram_mib);
  CHECK(*usage.peak_vram_mib == 3072);
}

TEST_CASE("Where NVML lists PIDs of another PID namespace, the rise is the unit's too", "[gpu_usage]") {
  // As in a container: the driver reports the host's PIDs, none a process here (above pid_max).
  // Before, they were taken for another's: 15 GB held, recorded as no GPU touched.
  GpuUsage usage = sampled_on_gpu_2("2 0 40\n", {"2 0 40\n2 4194400 15000\n"});
  CHECK(usage.touched);
  REQUIRE(usage.peak_vram_mib);
  CHECK(*usage.peak_vram_mib == 15000);
}

TEST_CASE("On a GPU shared with units beside it, a rise no PID tells leaves the unit unmeasured",
          "[gpu_usage]") {
  // Under pack another unit's memory coming and going is in the same count: a neighbour that
  // freed 17 GB made a unit that took 22 GB look like 5 GB.
  GpuUsage usage = sampled_on_gpu_2("2 0 20000\n", {"2 0 25000\n"}, true);
  CHECK_FALSE(usage.measured);
  CHECK_FALSE(usage.touched);
  CHECK_FALSE(usage.peak_vram_mib);
}

TEST_CASE("On a shared GPU, a unit NVML lists by its PID is measured, before and after its processes",
          "[gpu_usage]") {
  // The list is empty before the test opens CUDA and after it exits: that is no rise to doubt.
  GpuUsage usage = sampled_on_gpu_2("2 0 40\n", {"2 0 40\n", "2 0 40\n2 {} 9000\n", "2 0 40\n"}, true);
  CHECK(usage.measured);
  CHECK(usage.touched);
  REQUIRE(usage.peak_vram_mib);
  CHECK(*usage.peak_vram_mib == 9000);
}

TEST_CASE("A unit whose GPUs stay as idle as NVML saw them did not touch one", "[gpu_usage]") {
  GpuUsage usage = sampled_on_gpu_2("2 0 40\n", {"2 0 60\n"});  // a rise no CUDA context is that small
  CHECK(usage.measured);
  CHECK_FALSE(usage.touched);
  CHECK_FALSE(usage.peak_vram_mib);
}

TEST_CASE("Memory NVML cannot tell still counts as touching a GPU", "[gpu_usage]") {
  FakeNvml fake;
  auto [leader, child] = start_tree();
  fake.write(fmt::format("3 {} -1\n", leader));
  GpuUsageSampler sampler(open_nvml(), 0.02);
  sampler.start(leader);
  GpuUsage usage = sampler.stop();
  end_tree(leader);
  CHECK(usage.touched);
  CHECK_FALSE(usage.peak_vram_mib);
}

TEST_CASE("Without NVML nothing is measured and nothing fails", "[gpu_usage]") {
  setenv("GPUPLAN_NVML_LIBRARY", "/nonexistent/libnvidia-ml.so.1", 1);
  auto nvml = open_nvml();
  unsetenv("GPUPLAN_NVML_LIBRARY");
  CHECK_FALSE(nvml);
  GpuUsageSampler sampler(nvml);
  sampler.start(getpid());
  GpuUsage usage = sampler.stop();
  CHECK_FALSE(usage.measured);
  CHECK_FALSE(usage.touched);
}

TEST_CASE("A GPU that NVML does not count on this machine is never handed out", "[gpu_usage]") {
  FakeNvml fake;
  setenv("GPUPLAN_FAKE_NVML_GPUS", "7", 1);  // an 8-GPU node whose GPU 7 fell off the bus
  auto nvml = open_nvml();
  REQUIRE(nvml);
  CHECK(missing_gpus({0, 6}, nvml.get()).empty());
  CHECK(missing_gpus({}, nvml.get()).empty());
  auto missing = missing_gpus({2, 7}, nvml.get());
  CHECK_THAT(missing,
             Catch::Contains("NVML sees 7 GPUs (0-6) on this machine, and the plan gives units GPU 7"));
  CHECK_THAT(missing, Catch::Contains("CUDA would leave it out of CUDA_VISIBLE_DEVICES"));
  // What a --missing-gpus=warn run's results record gives it: only the planned GPUs NVML counts.
  CHECK(present_gpus({2, 7}, nvml.get()) == std::vector<int>{2});
  CHECK(present_gpus({7}, nvml.get()).empty());
  CHECK(present_gpus({0, 6}, nvml.get()) == std::vector<int>{0, 6});
  setenv("GPUPLAN_FAKE_NVML_GPUS", "0", 1);  // the driver is there, its GPUs are gone
  CHECK_THAT(missing_gpus({0}, nvml.get()), Catch::Contains("NVML sees no GPU on this machine"));
  unsetenv("GPUPLAN_FAKE_NVML_GPUS");
}

TEST_CASE("Without NVML a machine with no GPU device file of any vendor has no GPU", "[gpu_usage]") {
  namespace fs = std::filesystem;
  const fs::path dev = fs::temp_directory_path() / fmt::format("gpuplan-dev-{}", getpid());
  fs::create_directories(dev / "dri");
  std::ofstream(dev / "null");
  std::ofstream(dev / "nvidiactl");  // the control device alone is no GPU
  std::ofstream(dev / "dri" / "card0");
  auto missing = missing_gpus({0}, nullptr, dev.string());
  CHECK_THAT(missing,
             Catch::Contains("this machine shows no GPU: NVML (libnvidia-ml.so.1) cannot be loaded"));
  CHECK(missing_gpus({}, nullptr, dev.string()).empty());      // a node with no GPU units needs none
  CHECK(present_gpus({0, 1}, nullptr, dev.string()).empty());  // a run there was given none
  for (const char* device : {"nvidia0", "kfd", "dri/renderD128"}) {
    std::ofstream(dev / device);
    CHECK(missing_gpus({3}, nullptr, dev.string()).empty());  // no count without NVML: any GPU will do
    CHECK(present_gpus({3}, nullptr, dev.string()) == std::vector<int>{3});
    fs::remove(dev / device);
  }
  fs::remove_all(dev);
}

TEST_CASE("NVML tells the driver's CUDA version and each GPU's name and compute capability", "[gpu_usage]") {
  FakeNvml fake;
  setenv("GPUPLAN_FAKE_NVML_GPUS", "2", 1);
  setenv("GPUPLAN_FAKE_NVML_CUDA", "12.2", 1);
  setenv("GPUPLAN_FAKE_NVML_CC", "8.0", 1);
  setenv("GPUPLAN_FAKE_NVML_NAME", "NVIDIA A100-SXM4-80GB", 1);
  auto nvml = open_nvml();
  auto machine = describe_machine(nvml.get());
  for (const char* name :
       {"GPUPLAN_FAKE_NVML_GPUS", "GPUPLAN_FAKE_NVML_CUDA", "GPUPLAN_FAKE_NVML_CC", "GPUPLAN_FAKE_NVML_NAME"})
    unsetenv(name);
  REQUIRE(machine);
  CHECK(machine->cuda == Version{{12, 2}});
  REQUIRE(machine->gpus.size() == 2);
  CHECK(machine->gpus[1].name == "NVIDIA A100-SXM4-80GB");
  CHECK(machine->gpus[1].compute_capability == Version{{8, 0}});
  CHECK_FALSE(machine->gpus[1].mig);
  CHECK(machine->gpus[1].memory_mib == 80 * 1024);
  auto unknown = describe_machine(open_nvml().get());  // a driver that cannot say: nothing is known
  REQUIRE(unknown);
  CHECK_FALSE(unknown->cuda);
  CHECK_FALSE(unknown->gpus[0].compute_capability);
  CHECK_FALSE(describe_machine(nullptr));
}

TEST_CASE("A unit whose GPUs or driver lack what it needs cannot run as planned", "[gpu_usage]") {
  Machine machine{Version{{12, 2}},
                  {{"NVIDIA A100-SXM4-80GB", Version{{8, 0}}}, {"NVIDIA H100", Version{{9, 0}}}}};
  auto needing = [](const char* field, const char* constraint) {
    Requirement r;
    r.gpus = {1, "tag gpu"};
    auto parsed = *VersionConstraint::parse(constraint);
    (std::string_view(field) == "cuda" ? r.cuda : r.compute_capability).push_back({parsed, "tag"});
    return r;
  };
  CHECK(unmet_here(needing("cc", ">=9.0"), {1}, machine).empty());
  CHECK_THAT(
      unmet_here(needing("cc", ">=9.0"), {1, 0}, machine),
      Catch::StartsWith("needs compute capability ≥ 9.0, and GPU 0 of this machine (NVIDIA A100-SXM4-80GB) "
                        "has 8.0 (NVML): the fleet the plan was made from is wrong about this machine"));
  CHECK(unmet_here(needing("cuda", ">=12.0"), {0}, machine).empty());
  CHECK_THAT(unmet_here(needing("cuda", ">=12.4"), {0}, machine),
             Catch::StartsWith("needs CUDA ≥ 12.4, and this machine's driver supports CUDA 12.2 (NVML)"));
  Requirement amd;
  amd.vendor = Sourced<std::string>{"amd", "tag requires-gpu-amd"};
  CHECK_THAT(unmet_here(amd, {1}, machine), Catch::StartsWith("needs AMD GPUs, and GPU 1 of this machine"));
  Machine sliced = machine;  // GPU 1 in MIG mode: any unit given it sees one slice of it
  sliced.gpus[1].mig = true;
  CHECK(unmet_here(Requirement{}, {0}, sliced).empty());
  CHECK_THAT(unmet_here(Requirement{}, {0, 1}, sliced),
             Catch::StartsWith("is given GPU 1, which is in MIG mode on this machine (NVML): CUDA shows a "
                               "process one MIG instance at most"));
  Machine sized = machine;  // GPU 0 of 24 GiB; GPU 1 an 80 GB GPU, whose NVML total is 81,559 MiB
  sized.gpus[0].memory_mib = 24576;
  sized.gpus[1].memory_mib = 81559;
  Requirement big;
  big.gpu_mem_mib = Sourced<std::int64_t>{61440, "tag"};
  CHECK_THAT(
      unmet_here(big, {1, 0}, sized),
      Catch::StartsWith("needs 60GiB (61440 MiB) per GPU, and GPU 0 of this machine (NVIDIA A100-SXM4-80GB) "
                        "has 24576 MiB (NVML)"));
  big.gpu_mem_mib->value = 81920;  // gpu-mem:80GiB on the 80 GB GPU: as sold
  CHECK(unmet_here(big, {1}, sized).empty());
  CHECK(unmet_here(big, {0}, machine).empty());        // NVML that cannot say what memory a GPU has
  Machine silent{std::nullopt, {{"", std::nullopt}}};  // NVML that cannot say: nothing to hold against it
  CHECK(unmet_here(needing("cc", ">=9.0"), {0}, silent).empty());
  CHECK(unmet_here(needing("cuda", ">=12.4"), {0}, silent).empty());
}

TEST_CASE("Processes that end while the sampler reads /proc do not stop it", "[gpu_usage]") {
  // A unit that starts and ends processes all the time (a test runner, a shell loop): one that
  // ends between the sampler's open and read of its /proc/PID/stat made the read fail, which
  // std::ifstream threw on the sampling thread, and exec or run-under died of std::terminate.
  FakeNvml fake;
  pid_t leader = fork();
  if (leader == 0) {
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // the loop ends with this test, even one that crashes
    execlp("sh", "sh", "-c", "while :; do /bin/true & /bin/true & /bin/true & wait; done", nullptr);
    _exit(127);
  }
  GpuUsageSampler sampler(open_nvml(), 0.0);
  sampler.start(leader, {0});
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  GpuUsage usage = sampler.stop();
  end_tree(leader);
  CHECK(usage.measured);
  CHECK_FALSE(usage.touched);
}

TEST_CASE("GPUs outside a launcher's CUDA_VISIBLE_DEVICES or ROCR_VISIBLE_DEVICES are refused",
          "[gpu_usage]") {
  // A Slurm job given GPUs 5 and 6 of a node NVML sees whole: exec replaced its CUDA_VISIBLE_DEVICES
  // by the plan's 2 and 3, other jobs' GPUs, without a word. ROCm counts indices within its list.
  CHECK(outside_allocation({2, 3}, nullptr, nullptr).empty());
  CHECK(outside_allocation({2, 3}, "", "").empty());
  CHECK(outside_allocation({2, 3}, "0,1,2,3", nullptr).empty());
  CHECK_THAT(
      outside_allocation({2, 3}, "5,6", nullptr),
      Catch::Contains("CUDA_VISIBLE_DEVICES=5,6 (a launcher's allocation), which does not hold GPU 2"));
  for (const char* named : {"GPU-aaaa-bbbb", "MIG-aaaa-bbbb", "NoDevFiles"})
    CHECK_THAT(outside_allocation({0}, named, nullptr), Catch::Contains("which names no GPU by index"));
  // As CUDA reads the list: blanks and a trailing comma are nothing, -1 ends it (and hides every GPU).
  CHECK(outside_allocation({0, 1}, "0, 1,", nullptr).empty());
  CHECK(outside_allocation({1, 0}, "1,0", nullptr).empty());
  CHECK_THAT(outside_allocation({0}, "-1", nullptr),
             Catch::Contains("CUDA_VISIBLE_DEVICES=-1, which hides every GPU"));
  CHECK_THAT(outside_allocation({1}, "0,-1,1", nullptr), Catch::Contains("does not hold GPU 1"));
  CHECK(outside_allocation({0, 1}, nullptr, "0,1,2").empty());
  CHECK_THAT(outside_allocation({0}, nullptr, "2,3"), Catch::Contains("ROCR_VISIBLE_DEVICES=2,3"));
  CHECK_THAT(outside_allocation({5}, nullptr, "0,1"), Catch::Contains("up to GPU 5"));
}
