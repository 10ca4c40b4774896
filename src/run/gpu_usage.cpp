// NVML through dlopen, the process tree through /proc, and the sampling thread.
#include "run/gpu_usage.hpp"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include "gpuplan/size.hpp"

namespace gpuplan {

namespace {

// The few NVML declarations gpuplan needs (nvml.h is not installed where there is no driver).
using NvmlReturn = int;
using NvmlDevice = void*;
/// nvmlProcessInfo_t as the _v2 and _v3 calls fill it.
struct ProcessInfo {
  unsigned int pid;
  unsigned long long used_gpu_memory;  ///< bytes; ~0ULL when NVML does not know
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
/// nvmlProcessInfo_v1_t, for drivers that only have the unsuffixed call.
struct ProcessInfoV1 {
  unsigned int pid;
  unsigned long long used_gpu_memory;
};
constexpr NvmlReturn nvml_success = 0;
constexpr NvmlReturn nvml_insufficient_size = 7;
constexpr unsigned long long nvml_value_not_available = ~0ULL;
/// nvmlMemory_t.
struct MemoryInfo {
  unsigned long long total, free, used;
};
/// A rise in a GPU's memory in use below this is no process's: the smallest CUDA context is larger.
constexpr std::uint64_t unseen_process_threshold = 64ULL << 20;

/// The parent of every process, from /proc/PID/stat: "pid (comm) state ppid pgrp ...".
struct ProcessTable {
  std::map<pid_t, pid_t> parent, group;
};

/// A /proc file's text; empty when it cannot be read. Plain read(2): a process that ends between
/// the open and the read makes it fail with ESRCH, which std::ifstream's buffer turns into an
/// exception, and on the sampling thread that was std::terminate for exec and run-under.
std::string read_proc_file(const std::string& path) {
  std::string text;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[1024];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      text.clear();
      break;
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

ProcessTable read_processes() {
  ProcessTable table;
  DIR* proc = opendir("/proc");
  if (!proc) return table;
  while (dirent* entry = readdir(proc)) {
    char* end = nullptr;
    long pid = std::strtol(entry->d_name, &end, 10);
    if (*end != '\0' || pid <= 0) continue;
    std::string text = read_proc_file(std::string("/proc/") + entry->d_name + "/stat");
    auto close = text.rfind(')');  // the command name may hold spaces and parentheses
    if (close == std::string::npos) continue;
    std::istringstream rest(text.substr(close + 1));
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (!(rest >> state >> ppid >> pgrp)) continue;
    table.parent[static_cast<pid_t>(pid)] = static_cast<pid_t>(ppid);
    table.group[static_cast<pid_t>(pid)] = static_cast<pid_t>(pgrp);
  }
  closedir(proc);
  return table;
}

/// `root`, its descendants and the members of its process group (`root` leads it).
std::set<pid_t> process_tree(pid_t root) {
  ProcessTable table = read_processes();
  std::set<pid_t> tree{root};
  for (const auto& [pid, group] : table.group)
    if (group == root) tree.insert(pid);
  for (bool grew = true; grew;) {
    grew = false;
    for (const auto& [pid, parent] : table.parent)
      if (tree.count(parent) && tree.insert(pid).second) grew = true;
  }
  return tree;
}

}  // namespace

class Nvml {
 public:
  explicit Nvml(void* library) : library_(library) {}
  ~Nvml() {
    if (shutdown_) shutdown_();
    dlclose(library_);
  }
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool load() {
    auto init = symbol<NvmlReturn (*)()>("nvmlInit_v2");
    shutdown_ = symbol<NvmlReturn (*)()>("nvmlShutdown");
    count_ = symbol<NvmlReturn (*)(unsigned int*)>("nvmlDeviceGetCount_v2");
    handle_ = symbol<NvmlReturn (*)(unsigned int, NvmlDevice*)>("nvmlDeviceGetHandleByIndex_v2");
    memory_ = symbol<NvmlReturn (*)(NvmlDevice, void*)>("nvmlDeviceGetMemoryInfo");
    cuda_version_ = symbol<NvmlReturn (*)(int*)>("nvmlSystemGetCudaDriverVersion_v2");
    name_ = symbol<NvmlReturn (*)(NvmlDevice, char*, unsigned int)>("nvmlDeviceGetName");
    capability_ = symbol<NvmlReturn (*)(NvmlDevice, int*, int*)>("nvmlDeviceGetCudaComputeCapability");
    mig_mode_ = symbol<NvmlReturn (*)(NvmlDevice, unsigned int*, unsigned int*)>("nvmlDeviceGetMigMode");
    processes_ = symbol<Processes>("nvmlDeviceGetComputeRunningProcesses_v3");
    if (!processes_) processes_ = symbol<Processes>("nvmlDeviceGetComputeRunningProcesses_v2");
    if (!processes_) processes_v1_ = symbol<ProcessesV1>("nvmlDeviceGetComputeRunningProcesses");
    if (!init || !count_ || !handle_ || (!processes_ && !processes_v1_)) return false;
    if (init() != nvml_success) {
      shutdown_ = nullptr;
      return false;
    }
    return true;
  }

  /// Per GPU, the processes on it and the bytes each holds; nullopt when NVML fails.
  std::optional<std::vector<std::vector<ProcessInfo>>> processes() {
    unsigned int devices = 0;
    if (count_(&devices) != nvml_success) return std::nullopt;
    std::vector<std::vector<ProcessInfo>> all(devices);
    for (unsigned int d = 0; d < devices; ++d) {
      NvmlDevice device = nullptr;
      if (handle_(d, &device) != nvml_success) return std::nullopt;
      for (unsigned int room = 16;; room *= 4) {
        unsigned int count = room;
        NvmlReturn status = nvml_success;
        all[d].resize(room);
        if (processes_) {
          status = processes_(device, &count, all[d].data());
        } else {
          std::vector<ProcessInfoV1> v1(room);
          status = processes_v1_(device, &count, v1.data());
          for (unsigned int i = 0; i < count && i < room; ++i)
            all[d][i] = {v1[i].pid, v1[i].used_gpu_memory, 0, 0};
        }
        if (status == nvml_insufficient_size && room < 65536) continue;
        if (status != nvml_success) return std::nullopt;
        all[d].resize(count);
        break;
      }
    }
    return all;
  }

  /// How many GPUs NVML sees on this machine; nullopt when it cannot say.
  std::optional<unsigned int> device_count() {
    unsigned int devices = 0;
    if (count_(&devices) != nvml_success) return std::nullopt;
    return devices;
  }

  /// The highest CUDA version the driver supports; nullopt when NVML cannot say.
  std::optional<Version> cuda() {
    int version = 0;
    if (!cuda_version_ || cuda_version_(&version) != nvml_success || version <= 0) return std::nullopt;
    return Version{{version / 1000, version % 1000 / 10}};
  }

  /// GPU `index`'s name ("NVIDIA A100-SXM4-80GB") and compute capability, as far as NVML says.
  MachineGpu gpu(int index) {
    MachineGpu gpu;
    NvmlDevice device = nullptr;
    if (handle_(static_cast<unsigned int>(index), &device) != nvml_success) return gpu;
    char name[96] = {};
    if (name_ && name_(device, name, sizeof name) == nvml_success) gpu.name = name;
    int major = 0, minor = 0;
    if (capability_ && capability_(device, &major, &minor) == nvml_success)
      gpu.compute_capability = Version{{major, minor}};
    unsigned int current = 0, pending = 0;  // NVML_DEVICE_MIG_ENABLE is 1; GPUs without MIG say NOT_SUPPORTED
    gpu.mig = mig_mode_ && mig_mode_(device, &current, &pending) == nvml_success && current == 1;
    if (auto info = memory(index); info && info->total > 0)
      gpu.memory_mib = static_cast<std::int64_t>(info->total >> 20);
    return gpu;
  }

  /// GPU `index`'s memory: in all and in use; nullopt when NVML cannot say.
  std::optional<MemoryInfo> memory(int index) {
    NvmlDevice device = nullptr;
    MemoryInfo info{};
    if (!memory_ || index < 0 || handle_(static_cast<unsigned int>(index), &device) != nvml_success ||
        memory_(device, &info) != nvml_success)
      return std::nullopt;
    return info;
  }
  std::optional<std::uint64_t> used_bytes(int index) {
    auto info = memory(index);
    return info ? std::optional(info->used) : std::nullopt;
  }

 private:
  // NVML's structs are passed as void*: the C library's own types are not ours, and a call
  // through a pointer naming our struct types is a function-type mismatch to UBSan.
  using Processes = NvmlReturn (*)(NvmlDevice, unsigned int*, void*);
  using ProcessesV1 = NvmlReturn (*)(NvmlDevice, unsigned int*, void*);
  template <class F>
  F symbol(const char* name) {
    return reinterpret_cast<F>(dlsym(library_, name));
  }
  void* library_;
  NvmlReturn (*shutdown_)() = nullptr;
  NvmlReturn (*count_)(unsigned int*) = nullptr;
  NvmlReturn (*handle_)(unsigned int, NvmlDevice*) = nullptr;
  Processes processes_ = nullptr;
  ProcessesV1 processes_v1_ = nullptr;
  NvmlReturn (*memory_)(NvmlDevice, void*) = nullptr;
  NvmlReturn (*cuda_version_)(int*) = nullptr;
  NvmlReturn (*name_)(NvmlDevice, char*, unsigned int) = nullptr;
  NvmlReturn (*capability_)(NvmlDevice, int*, int*) = nullptr;
  NvmlReturn (*mig_mode_)(NvmlDevice, unsigned int*, unsigned int*) = nullptr;
};

std::shared_ptr<Nvml> open_nvml() {
  const char* configured = std::getenv("GPUPLAN_NVML_LIBRARY");
  const char* path = configured && *configured ? configured : "libnvidia-ml.so.1";
  // Every signal blocked while the library loads and starts: a thread it starts takes none of
  // gpuplan's, whose handlers must run on one thread in the order they came (os::cut_short).
  sigset_t all, before;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &before);
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  auto nvml = library ? std::make_shared<Nvml>(library) : nullptr;
  const bool loaded = nvml && nvml->load();
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  return loaded ? nvml : nullptr;
}

namespace {

/// A GPU's device file of any vendor's driver in `dev`: /dev/nvidiaN (NVIDIA), /dev/kfd (AMD's
/// ROCm), /dev/dri/renderDN (AMD's and Intel's render nodes).
bool has_gpu_device(const std::string& dev) {
  auto numbered = [](std::string_view name, std::string_view prefix) {
    return name.size() > prefix.size() && name.starts_with(prefix) &&
           name.find_first_not_of("0123456789", prefix.size()) == std::string_view::npos;
  };
  auto any_in = [&](const std::string& dir, std::string_view prefix) {
    DIR* d = opendir(dir.c_str());
    if (!d) return false;
    bool found = false;
    while (dirent* entry = readdir(d))
      if ((found = numbered(entry->d_name, prefix))) break;
    closedir(d);
    return found;
  };
  return access((dev + "/kfd").c_str(), F_OK) == 0 || any_in(dev, "nvidia") ||
         any_in(dev + "/dri", "renderD");
}

}  // namespace

std::string missing_gpus(const std::vector<int>& gpus, Nvml* nvml, const std::string& dev) {
  if (gpus.empty()) return {};
  const int highest = *std::max_element(gpus.begin(), gpus.end());
  if (auto count = nvml ? nvml->device_count() : std::nullopt) {
    if (highest < static_cast<int>(*count)) return {};
    return fmt::format(
        "NVML sees {} on this machine, and the plan gives units GPU {}: CUDA would leave it out of "
        "CUDA_VISIBLE_DEVICES, a unit given it would run without it, and a test that skips its GPU paths "
        "when it finds no GPU would pass. Check nvidia-smi here (a GPU that fell off the bus; a container or "
        "job given fewer GPUs than the node has)",
        *count == 0 ? std::string("no GPU")
                    : fmt::format("{} GPU{} (0-{})", *count, *count == 1 ? "" : "s", *count - 1),
        highest);
  }
  if (has_gpu_device(dev)) return {};
  return fmt::format(
      "this machine shows no GPU: NVML (libnvidia-ml.so.1) cannot be loaded, and {} has no GPU device "
      "(nvidiaN, kfd, dri/renderDN): the units would run without their GPUs, and a test that skips its GPU "
      "paths when it finds no GPU would pass (a machine without GPUs, or a container started without them)",
      dev);
}

std::vector<int> present_gpus(const std::vector<int>& gpus, Nvml* nvml, const std::string& dev) {
  if (gpus.empty()) return {};
  if (auto count = nvml ? nvml->device_count() : std::nullopt) {
    std::vector<int> present;
    for (int gpu : gpus)
      if (gpu >= 0 && gpu < static_cast<int>(*count)) present.push_back(gpu);
    return present;
  }
  return has_gpu_device(dev) ? gpus : std::vector<int>{};
}

std::string outside_allocation(const std::vector<int>& gpus, const char* cuda_visible,
                               const char* rocr_visible) {
  if (gpus.empty()) return {};
  const int highest = *std::max_element(gpus.begin(), gpus.end());
  // The list as indices, read as CUDA reads it: blanks around items and empty items left out,
  // the list ending at the first negative number ("-1" hides every GPU); nullopt when an item is no
  // index at all (a UUID, a MIG instance, Slurm's NoDevFiles).
  auto indices = [](std::string_view list) -> std::optional<std::vector<int>> {
    std::vector<int> out;
    for (size_t at = 0; at <= list.size();) {
      auto end = std::min(list.find(',', at), list.size());
      auto item = list.substr(at, end - at);
      at = end + 1;
      while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
      while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
      if (item.empty()) continue;
      int value = 0;
      auto [last, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
      if (ec != std::errc() || last != item.data() + item.size()) return std::nullopt;
      if (value < 0) break;
      out.push_back(value);
    }
    return out;
  };
  const std::string harm =
      "a unit would run on GPUs another job holds, or on none, and a test that skips its GPU paths when it "
      "finds no GPU would pass. Give the job the node's GPUs (Slurm: --exclusive with every GPU, as export "
      "slurm does), or run outside the allocation";
  const std::string started = "this process was started with";
  if (cuda_visible && *cuda_visible) {
    auto given = indices(cuda_visible);
    if (!given)
      return fmt::format(
          "{} CUDA_VISIBLE_DEVICES={} (a launcher's allocation), which names no GPU by index, and exec and "
          "run-under replace it by the plan's indices: {}",
          started, cuda_visible, harm);
    if (given->empty())
      return fmt::format(
          "{} CUDA_VISIBLE_DEVICES={}, which hides every GPU (a CPU job's), and exec and run-under replace "
          "it by the plan's indices: {}",
          started, cuda_visible, harm);
    for (int gpu : gpus)
      if (std::find(given->begin(), given->end(), gpu) == given->end())
        return fmt::format(
            "{} CUDA_VISIBLE_DEVICES={} (a launcher's allocation), which does not hold GPU {} that the plan "
            "runs units on, and exec and run-under replace it by the plan's indices: {}",
            started, cuda_visible, gpu, harm);
  }
  if (rocr_visible && *rocr_visible) {
    auto given = indices(rocr_visible);
    bool first_ones = given && static_cast<int>(given->size()) > highest;
    for (int i = 0; first_ones && i <= highest; ++i) first_ones = (*given)[static_cast<size_t>(i)] == i;
    if (!first_ones)
      return fmt::format(
          "{} ROCR_VISIBLE_DEVICES={} (a launcher's allocation), which ROCm counts the plan's GPU indices "
          "within (up to GPU {} here), so they would not be the GPUs the plan means: {}",
          started, rocr_visible, highest, harm);
  }
  return {};
}

std::optional<Machine> describe_machine(Nvml* nvml) {
  auto count = nvml ? nvml->device_count() : std::nullopt;
  if (!count) return std::nullopt;
  Machine machine;
  machine.cuda = nvml->cuda();
  for (unsigned int i = 0; i < *count; ++i) machine.gpus.push_back(nvml->gpu(static_cast<int>(i)));
  return machine;
}

std::string unmet_here(const Requirement& requirement, const std::vector<int>& gpus, const Machine& machine,
                       std::string_view harm) {
  const std::string tail = harm.empty() ? std::string() : fmt::format(": {}", harm);
  auto constraints = [](const auto& list) {
    std::vector<std::string> parts;
    for (const auto& c : list) parts.push_back(describe(c.value));
    return fmt::format("{}", fmt::join(parts, ", "));
  };
  for (int index : gpus)
    if (index >= 0 && static_cast<size_t>(index) < machine.gpus.size() &&
        machine.gpus[static_cast<size_t>(index)].mig)
      return fmt::format(
          "is given GPU {}, which is in MIG mode on this machine (NVML): CUDA shows a process one MIG "
          "instance at most, a slice of one GPU, whatever CUDA_VISIBLE_DEVICES lists, so a test that counts "
          "its GPUs or their memory would skip what it lacks and pass. Turn MIG off there (nvidia-smi -i {} "
          "-mig 0) or leave the node out of the fleet",
          index, index);
  for (const auto& c : requirement.cuda)
    if (machine.cuda && !c.value.satisfied_by(*machine.cuda))
      return fmt::format("needs CUDA {}, and this machine's driver supports CUDA {} (NVML){}",
                         constraints(requirement.cuda), machine.cuda->str(), tail);
  for (int index : gpus) {
    if (index < 0 || static_cast<size_t>(index) >= machine.gpus.size()) continue;  // missing_gpus says so
    const MachineGpu& gpu = machine.gpus[static_cast<size_t>(index)];
    auto named = gpu.name.empty() ? std::string() : fmt::format(" ({})", gpu.name);
    if (requirement.vendor && requirement.vendor->value != "nvidia")
      return fmt::format("needs {} GPUs, and GPU {} of this machine{} is NVIDIA's (NVML){}",
                         vendor_display(requirement.vendor->value), index, named, tail);
    for (const auto& c : requirement.compute_capability)
      if (gpu.compute_capability && !c.value.satisfied_by(*gpu.compute_capability))
        return fmt::format("needs compute capability {}, and GPU {} of this machine{} has {} (NVML){}",
                           constraints(requirement.compute_capability), index, named,
                           gpu.compute_capability->str(), tail);
    // Below the need by more than an 80 GB GPU's NVML total is below gpu-mem:80GiB (81,559 MiB of
    // 81,920): a test that sizes its work to the memory it finds would pass on less.
    if (const auto& need = requirement.gpu_mem_mib;
        need && gpu.memory_mib && *gpu.memory_mib * 10 < need->value * 9)
      return fmt::format("needs {} ({} MiB) per GPU, and GPU {} of this machine{} has {} MiB (NVML){}",
                         format_mib(need->value), need->value, index, named, *gpu.memory_mib, tail);
  }
  return {};
}

namespace {

/// Whether NVML lists a GPU's processes by PIDs of another PID namespace: one that is no process
/// here. In a container the driver reports the host's PIDs (NVIDIA/nvidia-docker#1483), and the
/// unit's processes were taken for others: a test that held 15 GB was recorded as touching no GPU,
/// and history suggest advised moving it to the CPU bucket.
bool foreign_pids(const std::vector<ProcessInfo>& processes) {
  return std::any_of(processes.begin(), processes.end(), [](const ProcessInfo& p) {
    return ::kill(static_cast<pid_t>(p.pid), 0) != 0 && errno == ESRCH;
  });
}

}  // namespace

GpuUsageSampler::GpuUsageSampler(std::shared_ptr<Nvml> nvml, double interval_s)
    : nvml_(std::move(nvml)), interval_s_(interval_s) {}

GpuUsageSampler::~GpuUsageSampler() {
  if (running_) stop();
}

void GpuUsageSampler::start(pid_t root, std::vector<int> gpus, bool shared) {
  root_ = root;
  gpus_ = std::move(gpus);
  shared_ = shared;
  unattributed_ = false;
  usage_ = {};
  if (!nvml_) return;
  baseline_.clear();
  for (int gpu : gpus_) baseline_.push_back(nvml_->used_bytes(gpu).value_or(0));
  running_ = true;
  // The thread takes no signal: run-under's stop signals and its test's SIGCHLD are handled on its main
  // thread, in the order they came (os::cut_short); taken here, a SIGCHLD could be handled before a
  // stop that came first, and a test that trapped the stop and exited 0 pass.
  sigset_t all, before;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &before);
  try {
    thread_ = std::thread([this] {
      for (;;) {
        sample();
        std::unique_lock lock(wake_mutex_);  // stop() wakes it at once: a launch waits for no sleep
        if (wake_.wait_for(lock, std::chrono::duration<double>(interval_s_), [this] { return !running_; }))
          return;
      }
    });
  } catch (const std::system_error& e) {
    // No thread to be had (ulimit -u, no memory for its stack): the unit runs unmeasured, as on a
    // machine without NVML, rather than measured by its last sample alone. Before, exec ended
    // there (exit 1), the units running killed.
    static bool said = false;
    if (!std::exchange(said, true))
      std::cerr << fmt::format(
          "gpuplan: warning: no thread to measure the units' GPU use: {} (a limit of processes, ulimit -u, "
          "or of memory); such units run unmeasured\n",
          e.code().message());
    nvml_.reset();
  }
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

GpuUsage GpuUsageSampler::stop() {
  if (!nvml_) return {};
  {
    std::lock_guard lock(wake_mutex_);
    running_ = false;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  sample();
  std::lock_guard lock(mutex_);
  // A unit given no GPU (CUDA_VISIBLE_DEVICES empty: run-under's --unplanned=warn), or only GPUs
  // this machine lacks (--missing-gpus=warn: CUDA leaves them out), could touch none through
  // CUDA: that it touched none says nothing of what it needs, and recorded as measured it made
  // history suggest advise dropping its GPU annotations. A GPU it took itself still counts.
  const bool given_one = std::any_of(gpus_.begin(), gpus_.end(), [&](int gpu) {
    return gpu >= 0 && static_cast<std::size_t>(gpu) < device_count_;
  });
  if (!given_one && !usage_.touched) usage_.measured = false;
  // On a GPU shared with units beside it, with no PID to tell them apart, a rise in memory in use
  // is anyone's and a fall hides the unit's: a number would understate it, "untouched" mislead.
  if (unattributed_ && !usage_.touched) usage_ = GpuUsage{};
  return usage_;
}

void GpuUsageSampler::sample() {
  auto devices = nvml_->processes();
  if (!devices) return;
  // The unit's processes, read from /proc only when a GPU lists a process or its memory rose
  // with none listed: a scan of every process each sample, where no GPU had one, was half of a
  // `run-under` launch (the thread's first sample and stop()'s last, both on its way).
  std::optional<std::set<pid_t>> tree;
  auto unit_processes = [&]() -> const std::set<pid_t>& {
    if (!tree) tree = process_tree(root_);
    return *tree;
  };
  std::lock_guard lock(mutex_);
  usage_.measured = true;
  device_count_ = devices->size();
  for (size_t i = 0; i < gpus_.size(); ++i) {
    const auto gpu = static_cast<size_t>(gpus_[i]);
    if (gpu >= devices->size() || (!(*devices)[gpu].empty() && !foreign_pids((*devices)[gpu])))
      continue;  // NVML sees its processes
    auto used = nvml_->used_bytes(gpus_[i]);
    if (!used || *used < baseline_[i] + unseen_process_threshold) continue;
    if (shared_) {  // the rise may be a neighbour's
      unattributed_ = true;
      continue;
    }
    usage_.touched = true;
    record_peak(gpus_[i], *used - baseline_[i], unit_processes());
  }
  for (const auto& on_device : *devices) {
    unsigned long long bytes = 0;
    bool known = true, here = false;
    std::set<pid_t> on_it;
    for (const auto& p : on_device) {
      if (!unit_processes().count(static_cast<pid_t>(p.pid))) continue;
      here = true;
      on_it.insert(static_cast<pid_t>(p.pid));
      if (p.used_gpu_memory == nvml_value_not_available)
        known = false;
      else
        bytes += p.used_gpu_memory;
    }
    if (!here) continue;
    usage_.touched = true;
    int index = static_cast<int>(&on_device - devices->data());
    if (std::find(gpus_.begin(), gpus_.end(), index) == gpus_.end() &&
        std::find(usage_.outside.begin(), usage_.outside.end(), index) == usage_.outside.end()) {
      usage_.outside.push_back(index);
      std::sort(usage_.outside.begin(), usage_.outside.end());
    }
    if (known) record_peak(index, bytes, on_it);
  }
}

void GpuUsageSampler::record_peak(int gpu, std::uint64_t bytes, const std::set<pid_t>& processes) {
  auto mib = static_cast<std::int64_t>((bytes + (1ULL << 20) - 1) >> 20);
  if (usage_.peak_vram_mib && mib <= *usage_.peak_vram_mib) return;
  usage_.peak_vram_mib = mib;
  auto memory = nvml_->memory(gpu);
  usage_.peak_up_front = memory &&
                         static_cast<double>(bytes) >= up_front_share * static_cast<double>(memory->total) &&
                         std::any_of(processes.begin(), processes.end(), preallocates);
}

bool preallocates(pid_t pid) {
  // The GPU runtimes of JAX (jaxlib, its CUDA/ROCm plugins) and TensorFlow, by the files mapped.
  // Read with O_CLOEXEC (read_proc_file), not std::ifstream, whose descriptor is inherited: this
  // runs on exec's sampling threads while its main thread forks the next unit's supervisor, which
  // closes only the descriptors an exec would close, so the unit got /proc/PID/maps of another.
  const std::string maps = read_proc_file(fmt::format("/proc/{}/maps", pid));
  auto mapped = [&](std::string_view name) { return maps.find(name) != std::string::npos; };
  const bool jax = mapped("/jaxlib/") || mapped("/jax_plugins/") || mapped("/jax_cuda") ||
                   mapped("/jax_rocm") || mapped("xla_extension");
  const bool tensorflow = mapped("libtensorflow_framework") || mapped("_pywrap_tensorflow");
  if (!jax && !tensorflow) return false;
  // Unless the variable that stops it is in the process's environment (pack sets both).
  const std::string environment = read_proc_file(fmt::format("/proc/{}/environ", pid));
  bool jax_lazy = false, tensorflow_lazy = false;
  for (std::string_view rest = environment; !rest.empty();) {
    const std::string_view entry = rest.substr(0, rest.find('\0'));
    rest.remove_prefix(std::min(rest.size(), entry.size() + 1));
    jax_lazy = jax_lazy || entry == "XLA_PYTHON_CLIENT_PREALLOCATE=false" ||
               entry == "XLA_PYTHON_CLIENT_PREALLOCATE=0" || entry == "XLA_PYTHON_CLIENT_ALLOCATOR=platform";
    tensorflow_lazy = tensorflow_lazy || entry == "TF_FORCE_GPU_ALLOW_GROWTH=true";
  }
  return (jax && !jax_lazy) || (tensorflow && !tensorflow_lazy);
}

std::string outside_gpus_warning(std::string_view label, const std::vector<int>& given,
                                 const std::vector<int>& outside) {
  if (outside.empty()) return {};
  auto gpus = [](const std::vector<int>& list) {
    return fmt::format("GPU{} {}", list.size() == 1 ? "" : "s", fmt::join(list, ", "));
  };
  return fmt::format(
      "{} used {}, which the plan did not give it ({}): it picks its GPU itself (CUDA_VISIBLE_DEVICES set "
      "in its own code, a device chosen through nvidia-smi), so it ran beside the tests planned there; let "
      "it take the GPUs it is given (cuda:0 is the first of them)",
      label, gpus(outside), given.empty() ? std::string("it was given none") : "it was given " + gpus(given));
}

std::string outside_gpus_file(const std::string& lock_dir) { return lock_dir + "/outside-gpus"; }

}  // namespace gpuplan
