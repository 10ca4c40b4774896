// A stand-in for libnvidia-ml.so.1 with the few calls gpuplan makes, for machines without a GPU.
// GPUPLAN_FAKE_NVML_GPUS: how many GPUs it reports (default 8). GPUPLAN_FAKE_NVML_PROCESSES: a
// file of lines "GPU PID MIB", read again at every call, so a test can say which of its
// processes hold how much memory on which GPU, and change it while they run. A PID of 0 is
// memory NVML cannot attribute (a process in a PID namespace the driver does not see): it
// counts in the GPU's memory in use but is in no process list. GPUPLAN_FAKE_NVML_CUDA ("12.4",
// the driver's CUDA version), GPUPLAN_FAKE_NVML_CC ("8.0", every GPU's compute capability) and
// GPUPLAN_FAKE_NVML_NAME (every GPU's name): unset, NVML does not know (NVML_ERROR_NOT_SUPPORTED).
// GPUPLAN_FAKE_NVML_MIG ("1,3"): the GPUs in MIG mode; the others are not.
// GPUPLAN_FAKE_NVML_MEM_GIB ("24"): every GPU's memory in all (default 80).
// gpuplan_fake_nvml_count_calls(), not NVML's: how often the GPUs were counted, which
// GpuUsageSampler does first in each sample; a test that changes the processes file waits on it
// for a sample taken after the change, not for a fixed time a loaded machine may outlast.
// GPUPLAN_FAKE_NVML_COUNTS (a file): gets a byte at each count, for a unit under exec or run-under
// to wait on the same way (`sampled` in test/integration/lib.sh).
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct ProcessInfo {
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

std::atomic<unsigned long> count_calls{0};

unsigned int gpu_count() {
  const char* text = std::getenv("GPUPLAN_FAKE_NVML_GPUS");
  return text ? static_cast<unsigned int>(std::atoi(text)) : 8;
}

struct MemoryInfo {
  unsigned long long total, free, used;
};

/// One line of the processes file.
struct Entry {
  unsigned int pid;
  long long mib;
};

/// The lines of the processes file for the GPU behind `device`, read afresh.
std::vector<Entry> entries_on(void* device) {
  unsigned long gpu = reinterpret_cast<unsigned long>(device) - 1;
  const char* path = std::getenv("GPUPLAN_FAKE_NVML_PROCESSES");
  std::ifstream in(path ? path : "");
  std::vector<Entry> entries;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    unsigned long on = 0;
    Entry e{};
    if ((fields >> on >> e.pid >> e.mib) && on == gpu) entries.push_back(e);
  }
  return entries;
}

}  // namespace

extern "C" {

int nvmlInit_v2() { return 0; }
int nvmlShutdown() { return 0; }

unsigned long gpuplan_fake_nvml_count_calls() { return count_calls.load(); }

int nvmlDeviceGetCount_v2(unsigned int* count) {
  count_calls.fetch_add(1);
  if (const char* counts = std::getenv("GPUPLAN_FAKE_NVML_COUNTS"))
    if (FILE* file = std::fopen(counts, "a")) {
      std::fputc('.', file);
      std::fclose(file);
    }
  *count = gpu_count();
  return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned int index, void** device) {
  if (index >= gpu_count()) return 2;  // NVML_ERROR_INVALID_ARGUMENT
  *device = reinterpret_cast<void*>(static_cast<unsigned long>(index) + 1);
  return 0;
}

int nvmlDeviceGetComputeRunningProcesses_v3(void* device, unsigned int* count, void* out) {
  auto* infos = static_cast<ProcessInfo*>(out);
  unsigned int found = 0;
  for (const auto& e : entries_on(device)) {
    if (e.pid == 0) continue;
    if (found < *count)
      infos[found] = {e.pid, e.mib < 0 ? ~0ULL : static_cast<unsigned long long>(e.mib) << 20, 0, 0};
    ++found;
  }
  bool fits = found <= *count;
  *count = found;
  return fits ? 0 : 7;  // NVML_ERROR_INSUFFICIENT_SIZE
}

int nvmlSystemGetCudaDriverVersion_v2(int* version) {
  const char* text = std::getenv("GPUPLAN_FAKE_NVML_CUDA");
  if (!text) return 3;  // NVML_ERROR_NOT_SUPPORTED
  int major = 0, minor = 0;
  std::sscanf(text, "%d.%d", &major, &minor);
  *version = major * 1000 + minor * 10;  // 12.4 is 12040
  return 0;
}

int nvmlDeviceGetCudaComputeCapability(void*, int* major, int* minor) {
  const char* text = std::getenv("GPUPLAN_FAKE_NVML_CC");
  if (!text) return 3;
  return std::sscanf(text, "%d.%d", major, minor) == 2 ? 0 : 3;
}

int nvmlDeviceGetMigMode(void* device, unsigned int* current, unsigned int* pending) {
  const char* text = std::getenv("GPUPLAN_FAKE_NVML_MIG");
  std::string index = std::to_string(reinterpret_cast<unsigned long>(device) - 1);
  std::istringstream list(text ? text : "");
  *current = *pending = 0;
  for (std::string item; std::getline(list, item, ',');)
    if (item == index) *current = *pending = 1;
  return 0;
}

int nvmlDeviceGetName(void*, char* name, unsigned int length) {
  const char* text = std::getenv("GPUPLAN_FAKE_NVML_NAME");
  if (!text) return 3;
  std::snprintf(name, length, "%s", text);
  return 0;
}

int nvmlDeviceGetMemoryInfo(void* device, void* out) {
  unsigned long long used = 0;
  for (const auto& e : entries_on(device))
    if (e.mib > 0) used += static_cast<unsigned long long>(e.mib) << 20;
  const char* gib = std::getenv("GPUPLAN_FAKE_NVML_MEM_GIB");
  const unsigned long long total = (gib ? std::strtoull(gib, nullptr, 10) : 80ULL) << 30;
  *static_cast<MemoryInfo*>(out) = {total, total - used, used};
  return 0;
}
}
