#pragma once
// The operating-system side of running a plan: GPU lock files, child processes, signals.
// Kept small so that every decision (which unit, which GPUs, what environment) stays in
// the value-in, value-out functions of gpuplan/run.hpp.
#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpuplan::os {

/// Exclusive flocks on DIR/gpu-N.lock, one a GPU, held until destroyed (or the process dies,
/// also by SIGKILL: the kernel drops them). The lock files are never deleted.
class GpuLocks {
 public:
  GpuLocks() = default;
  GpuLocks(GpuLocks&& other) noexcept;
  GpuLocks& operator=(GpuLocks&& other) noexcept;
  ~GpuLocks();

  /// Takes the locks of `gpus` in ascending index order, so two processes never wait for
  /// each other in a circle. `wait`: block until all are free; otherwise give up (holding
  /// nothing) as soon as one is taken. Creates `dir` if needed; throws InputError when it cannot.
  static std::optional<GpuLocks> take(const std::string& dir, std::vector<int> gpus, bool wait);

 private:
  std::vector<int> fds_;
};

/// Appends `line` to `path` under an exclusive flock, writing `header` first when the file
/// is empty, so several processes can append to one results file. Throws InputError.
void append_locked(const std::string& path, std::string_view header, std::string_view line);

/// Starts `argv` (looked up on PATH) with `env` added to this process's environment.
/// `own_group`: in a new process group, so stop_group() reaches everything it starts.
pid_t spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
            bool own_group);

/// Sends `signal` to the process group led by `pid`.
void signal_group(pid_t pid, int signal);

/// An exit status as a shell reports it: the exit code, or 128 + the signal.
int exit_status(int wait_status);

/// Seconds since 1970, with sub-second precision.
double now_epoch_s();

/// Makes SIGINT and SIGTERM set a flag (read by stop_signal()) instead of ending this process.
void catch_stop_signals();

/// From now on also passes SIGINT and SIGTERM on to `pid`, and passes on one that came already.
void forward_stop_signals(pid_t pid);

/// The SIGINT or SIGTERM received since catch_stop_signals(), or 0.
int stop_signal();

}  // namespace gpuplan::os
