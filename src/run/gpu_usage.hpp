#pragma once
// How much GPU memory a unit's processes hold, sampled through NVML loaded at run time
// (dlopen), so that gpuplan runs unchanged where there is no NVIDIA driver.
#include <sys/types.h>

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "gpuplan/history.hpp"
#include "gpuplan/requirements.hpp"
#include "gpuplan/version.hpp"

namespace gpuplan {

/// What a unit did with the GPUs while it ran.
struct GpuUsage {
  bool measured = false;  ///< NVML loaded and answered at least once; otherwise nothing is known
  /// Some process of the unit was on some GPU at some sample; where NVML lists no process of
  /// this PID namespace (some VMs and containers), the memory in use of the unit's GPUs rose
  /// above what it was when the unit started, and that rise is the peak.
  bool touched = false;
  /// The most memory the unit's processes held on one GPU at one sample (MiB, rounded up);
  /// empty when not measured, or when NVML lists the processes without their memory.
  std::optional<std::int64_t> peak_vram_mib;
  /// The peak is memory a framework took up front, not what the unit needs: up_front_share or
  /// more of its GPU, held by processes with JAX's or TensorFlow's GPU runtime loaded and
  /// nothing in their environment to stop it taking memory up front (preallocates()).
  bool peak_up_front = false;
  /// The GPUs (NVML indices) a process of the unit was on although the unit was not given them:
  /// it chose its GPU itself (CUDA_VISIBLE_DEVICES set in its own code, a device picked through
  /// nvidia-smi) and ran beside the units planned there. Sorted.
  std::vector<int> outside;
};

/// The warning for a unit that was on GPUs it was not given (GpuUsage::outside); empty when it
/// was on none. `label`: the test (and shard), `given`: its GPUs.
std::string outside_gpus_warning(std::string_view label, const std::vector<int>& given,
                                 const std::vector<int>& outside);
/// Where run-under notes such warnings for `exec`, which repeats those of its run: in the GPU
/// lock directory, which Bazel's sandbox shares. Each line "NODE<TAB>WARNING".
std::string outside_gpus_file(const std::string& lock_dir);

/// Whether process `pid` has JAX's or TensorFlow's GPU runtime loaded (/proc/PID/maps) without
/// the variable in its environment that stops that framework taking GPU memory up front.
bool preallocates(pid_t pid);

/// NVML, opened once: GPUPLAN_NVML_LIBRARY names the library when set (tests point it at a
/// stand-in), else libnvidia-ml.so.1. Null when it cannot be loaded or initialised.
class Nvml;
std::shared_ptr<Nvml> open_nvml();

/// What NVML says of one GPU of this machine; empty where it cannot say.
struct MachineGpu {
  std::string name;  ///< "NVIDIA A100-SXM4-80GB"
  std::optional<Version> compute_capability;
  /// In MIG mode: CUDA shows a process one MIG instance at most, whatever it is given.
  bool mig = false;
  /// Its memory in all (NVML's total, MiB); nullopt when NVML cannot say.
  std::optional<std::int64_t> memory_mib;
};

/// What NVML says of this machine: the highest CUDA version its driver supports, and its GPUs
/// by NVML index.
struct Machine {
  std::optional<Version> cuda;
  std::vector<MachineGpu> gpus;
};

/// What a requirement NVML finds unmet does where the fleet said the node meets it.
inline constexpr std::string_view fleet_wrong_about_machine =
    "the fleet the plan was made from is wrong about this machine, and a test that skips what its GPU or "
    "driver lacks (JAX and TensorFlow fall back to the CPU without a working CUDA) would pass. Describe "
    "the node again (gpuplan fleet import) and plan again";

/// This machine as NVML sees it; nullopt without NVML.
std::optional<Machine> describe_machine(Nvml* nvml);

/// Why a unit with `requirement`, given `gpus`, cannot run as planned on `machine`: one of the
/// GPUs is in MIG mode, the driver's CUDA version or a GPU's compute capability fails a
/// constraint, a GPU's memory is clearly less than its gpu_mem_mib (below 90% of it: an
/// 80 GB GPU's NVML total of 81,559 MiB holds a gpu-mem:80GiB, as the GPU is sold), or it needs
/// another vendor's GPUs than NVIDIA's, which NVML counts. Empty when nothing NVML knows says so.
/// `harm`, after a colon, ends the sentence: by default what the fleet being wrong does; empty, none.
std::string unmet_here(const Requirement& requirement, const std::vector<int>& gpus, const Machine& machine,
                       std::string_view harm = fleet_wrong_about_machine);

/// Why a unit given `gpus` (indices as CUDA_VISIBLE_DEVICES counts them) would find no GPU on this
/// machine; empty when nothing says so. Where NVML answers, the GPUs it counts; where it does not
/// (no NVIDIA driver), a machine with no GPU device file of any vendor under `dev` has none.
std::string missing_gpus(const std::vector<int>& gpus, Nvml* nvml, const std::string& dev = "/dev");

/// The GPUs of `gpus` this machine has, as missing_gpus reads it: those NVML counts; where NVML
/// does not answer, all of them when `dev` has a GPU device file of any vendor, else none. A unit
/// run on the others (--missing-gpus=warn) was not given them: CUDA leaves them out.
std::vector<int> present_gpus(const std::vector<int>& gpus, Nvml* nvml, const std::string& dev = "/dev");

/// Why units given `gpus` would run outside the GPUs the launcher gave this process: the caller's
/// CUDA_VISIBLE_DEVICES (`cuda_visible`; a Slurm job's, which exec and run-under replace by the
/// plan's indices) lacks one of them or names GPUs otherwise than by index (UUIDs, MIG
/// instances, Slurm's NoDevFiles); or its ROCR_VISIBLE_DEVICES (kept, and HIP counts the plan's
/// indices within it) is not the GPUs 0, 1, ... up to the highest planned. Empty when neither is
/// set (or set empty) or nothing is wrong.
std::string outside_allocation(const std::vector<int>& gpus, const char* cuda_visible,
                               const char* rocr_visible);

/// Samples the GPU memory of one process tree (the root, every descendant and every process of
/// the root's process group) every `interval_s` on a thread of its own, from start() to stop().
/// Where NVML lists no process on the unit's GPUs, or only PIDs of another PID namespace (a
/// container's, whose driver reports the host's), but their memory in use rises by more than a
/// CUDA context's smallest share, the rise is the unit's; on a GPU it shares with units running
/// beside it (`pack`) nothing can be told, and the unit is left unmeasured.
class GpuUsageSampler {
 public:
  explicit GpuUsageSampler(std::shared_ptr<Nvml> nvml, double interval_s = 0.2);
  ~GpuUsageSampler();
  GpuUsageSampler(const GpuUsageSampler&) = delete;
  GpuUsageSampler& operator=(const GpuUsageSampler&) = delete;

  /// `gpus`: the NVML indices the unit was given (its CUDA_VISIBLE_DEVICES), for the fallback;
  /// `shared`: other units may run on them at the same time.
  void start(pid_t root, std::vector<int> gpus = {}, bool shared = false);
  /// Takes one last sample and returns what was seen. The tree may be gone by then.
  GpuUsage stop();

 private:
  void sample();
  /// A sample of `bytes` on NVML's GPU `gpu`, held by `processes`: the peak when it is the most
  /// yet. Under mutex_.
  void record_peak(int gpu, std::uint64_t bytes, const std::set<pid_t>& processes);
  std::shared_ptr<Nvml> nvml_;
  double interval_s_;
  pid_t root_ = 0;
  std::vector<int> gpus_;
  std::vector<std::uint64_t> baseline_;  ///< bytes in use on each of gpus_ at start()
  bool shared_ = false;
  bool unattributed_ = false;  ///< a shared GPU's use that no PID told: under mutex_
  bool running_ = false;       ///< under wake_mutex_
  std::mutex wake_mutex_;
  std::condition_variable wake_;  ///< stop() ends the sampling thread's wait
  std::thread thread_;
  std::mutex mutex_;
  GpuUsage usage_;
  std::size_t device_count_ = 0;  ///< the GPUs NVML lists on this machine, under mutex_
};

}  // namespace gpuplan
