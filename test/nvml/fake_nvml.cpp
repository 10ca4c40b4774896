// A stand-in for libnvidia-ml.so.1 with the few calls gpuplan makes, for machines without a GPU.
// GPUPLAN_FAKE_NVML_GPUS: how many GPUs it reports (default 8). GPUPLAN_FAKE_NVML_PROCESSES: a
// file of lines "GPU PID MIB", read again at every call, so a test can say which of its
// processes hold how much memory on which GPU, and change it while they run. A PID of 0 is
// memory NVML cannot attribute (a process in a PID namespace the driver does not see): it
// counts in the GPU's memory in use but is in no process list.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

struct ProcessInfo {
  unsigned int pid;
  unsigned long long used_gpu_memory;
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

unsigned int gpu_count() {
  const char* text = std::getenv("GPUPLAN_FAKE_NVML_GPUS");
  return text ? static_cast<unsigned int>(std::atoi(text)) : 8;
}

}  // namespace

extern "C" {

int nvmlInit_v2() { return 0; }
int nvmlShutdown() { return 0; }

int nvmlDeviceGetCount_v2(unsigned int* count) {
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
  unsigned long gpu = reinterpret_cast<unsigned long>(device) - 1;
  unsigned int found = 0;
  const char* path = std::getenv("GPUPLAN_FAKE_NVML_PROCESSES");
  std::ifstream in(path ? path : "");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    unsigned long on = 0;
    unsigned int pid = 0;
    long long mib = 0;
    if (!(fields >> on >> pid >> mib) || on != gpu || pid == 0) continue;
    if (found < *count)
      infos[found] = {pid, mib < 0 ? ~0ULL : static_cast<unsigned long long>(mib) << 20, 0, 0};
    ++found;
  }
  bool fits = found <= *count;
  *count = found;
  return fits ? 0 : 7;  // NVML_ERROR_INSUFFICIENT_SIZE
}

struct MemoryInfo {
  unsigned long long total, free, used;
};

int nvmlDeviceGetMemoryInfo(void* device, void* out) {
  auto* info = static_cast<MemoryInfo*>(out);
  unsigned long gpu = reinterpret_cast<unsigned long>(device) - 1;
  unsigned long long used = 0;
  const char* path = std::getenv("GPUPLAN_FAKE_NVML_PROCESSES");
  std::ifstream in(path ? path : "");
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    unsigned long on = 0;
    unsigned int pid = 0;
    long long mib = 0;
    if ((fields >> on >> pid >> mib) && on == gpu && mib > 0)
      used += static_cast<unsigned long long>(mib) << 20;
  }
  *info = {80ULL << 30, (80ULL << 30) - used, used};
  return 0;
}
}
