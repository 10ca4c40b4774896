#pragma once
// The operating-system side of running a plan: GPU lock files, child processes, signals.
// Kept small so that every decision (which unit, which GPUs, what environment) stays in
// the value-in, value-out functions of gpuplan/run.hpp.
#include <sys/types.h>
#include <time.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuplan/result.hpp"
#include "run/executor.hpp"

namespace gpuplan::os {

/// Exclusive flocks on DIR/gpu-N.lock, one a GPU, held until destroyed and every process that
/// inherited them ended (the kernel drops them then, also after SIGKILL). The lock files are
/// never deleted, never opened through a symbolic link, and must be regular files; DIR must be
/// a real directory (not a link) owned by this user or root that not everyone may write to,
/// so another user can neither redirect nor pre-create them.
class GpuLocks {
 public:
  GpuLocks() = default;
  GpuLocks(GpuLocks&& other) noexcept;
  GpuLocks& operator=(GpuLocks&& other) noexcept;
  ~GpuLocks();

  /// Takes the locks of `gpus` in ascending index order, so two processes never wait for
  /// each other in a circle. `wait`: block until all are free; otherwise give up (holding
  /// nothing) as soon as one is taken. Creates `dir` if needed; throws InputError when it cannot.
  /// A wait ends, holding nothing (nullopt), when SIGINT or SIGTERM comes after
  /// catch_stop_signals(): what waited gives up what it holds (a claim) and ends.
  static std::optional<GpuLocks> take(const std::string& dir, std::vector<int> gpus, bool wait);

  /// The lock files' descriptors: a child that inherits them keeps the GPUs locked while it runs.
  const std::vector<int>& fds() const { return fds_; }

 private:
  std::vector<int> fds_;
};

/// Opens `path` with open(2)'s `flags` (and `mode` when they create it) and requires a regular
/// file, without ever blocking on a FIFO or a device where one should be: O_NONBLOCK while it
/// opens, cleared after. The descriptor (close-on-exec), or why not (a symbolic link under
/// O_NOFOLLOW, a FIFO, a directory, the system's reason).
Result<int> open_regular(const std::string& path, int flags, mode_t mode = 0644);

/// The default lock directory: /tmp/gpuplan-locks-UID (UID: this user's id).
std::string default_lock_dir();

/// Throws InputError when `path` cannot be appended to, or holds records under a header other
/// than one of `headers` (another program's columns: history would skip every record appended
/// under them); checked before the first unit runs, so a bad --results file stops nothing
/// half-way. Creates the file, empty, if missing. Returns the index of the file's header in
/// `headers`, 0 for an empty file.
std::size_t check_appendable(const std::string& path, const std::vector<std::string_view>& headers);

/// Appends `line` to `path` under an exclusive flock, writing `header` first when the file
/// is empty and a newline first when its last line has none (an editor's or a killed
/// writer's), so several processes can append to one results file. Throws InputError.
void append_locked(const std::string& path, std::string_view header, std::string_view line);

/// Starts `argv` (looked up on PATH) with `env` added to this process's environment, under a
/// supervisor: the returned process, a fork of this one that waits for the command and ends as
/// it ended (its exit code, or killed by its signal). When this process dies, even by SIGKILL,
/// the supervisor kills the command and every process it started, also those that left its
/// process group or were orphaned (a subreaper, it inherits them). `own_group`: supervisor and
/// command in a new process group led by the returned process, so signal_group() reaches
/// everything the command starts; otherwise the supervisor passes on the SIGINT and SIGTERM
/// this process sends it. `keep_fds` stay open in the command; the supervisor holds no other
/// descriptor an exec would close.
pid_t spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
            bool own_group, const std::vector<int>& keep_fds = {});

/// The ProcessRunner of `exec`: `/bin/sh -c` children (spawn()) in process groups of their own
/// that die with this process, with all they started; wait() sleeps in poll() on a pipe written by the
/// SIGCHLD, SIGINT and SIGTERM handlers, so a child's end wakes it at once. One per process.
class SystemRunner : public ProcessRunner {
 public:
  SystemRunner();
  ~SystemRunner() override;
  int start(const std::string& command, const std::map<std::string, std::string>& env,
            const std::vector<int>& keep_fds) override;
  void signal(int id, int signal) override;
  void kill_outright(int id) override;
  std::vector<ProcessExit> wait(double until) override;
  double now() override;
  int stop_signal() override;
};

/// Sends `signal` to the process group led by `pid`.
void signal_group(pid_t pid, int signal);

/// An exit status as a shell reports it: the exit code, or 128 + the signal.
int exit_status(int wait_status);

/// Seconds since 1970, with sub-second precision.
double now_epoch_s();

/// This machine's host name (gethostname), as run-under's default node and a claim's holder.
std::string host_name();

/// Makes SIGINT and SIGTERM set a flag (read by stop_signal()) instead of ending this process, and
/// notes each child's end that a SIGCHLD tells (for cut_short()).
void catch_stop_signals();

/// From now on also passes SIGINT and SIGTERM on to `pid`, and passes on one that came already.
/// `pid`: the supervisor of run-under's test (spawn, not `own_group`).
void forward_stop_signals(pid_t pid);

/// The first SIGINT or SIGTERM that came before run-under's test (the last spawn() not `own_group`) had
/// ended, by the SIGCHLD its supervisor, forward_stop_signals()' `pid`, sends as it reaps it: while it
/// ran, or before it started (passed on to it as it starts); 0 when none did. A stop that came after it ended
/// by itself cut nothing short: the test ended as it ended. Exact where no other thread takes these signals
/// (gpuplan's threads block them): a stop queued before the test ended is handled first.
int cut_short();

/// How a unit that the stop signal `cut_short` reached while it ran (0: none did) ended, by its exit
/// code: one that exited 0 anyway (it trapped the signal) did not pass, and ends 128 + the signal.
/// exec's supervisor and run-under apply it alike.
constexpr int cut_short_status(int exit_code, int cut_short) {
  return cut_short != 0 && exit_code == 0 ? 128 + cut_short : exit_code;
}

/// The SIGINT or SIGTERM received since catch_stop_signals(), or 0.
int stop_signal();

/// How repeat_kill_passes ended: no pass found a process, the last found none, or some were
/// still found when its time ran out.
enum class KillPasses { none, ended, outlived };

/// Calls `pass` (one SIGKILL pass over a unit's processes: whether it found any) every 10 ms
/// until one finds none, or `within_s` seconds have passed. Async-signal-safe (a supervisor
/// forked from a process with threads calls it) when `pass` is.
template <class Pass>
KillPasses repeat_kill_passes(Pass&& pass, double within_s) {
  struct timespec start {
  }, now{};
  ::clock_gettime(CLOCK_MONOTONIC, &start);
  bool any = false;
  while (pass()) {
    any = true;
    ::clock_gettime(CLOCK_MONOTONIC, &now);
    if (static_cast<double>(now.tv_sec - start.tv_sec) +
            1e-9 * static_cast<double>(now.tv_nsec - start.tv_nsec) >=
        within_s)
      return KillPasses::outlived;
    const struct timespec pause { 0, 10'000'000 };
    ::nanosleep(&pause, nullptr);
  }
  return any ? KillPasses::ended : KillPasses::none;
}

}  // namespace gpuplan::os
