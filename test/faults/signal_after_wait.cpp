// A stop signal that comes just after a test has ended by itself, for LD_PRELOAD: the first
// waitpid(PID, ..., 0) that reaps a process (run-under's wait for its test's supervisor; a
// supervisor's own waits are for any child, WNOHANG) raises SIGTERM in the caller as it returns, as
// Bazel's timeout, a Ctrl-C, a Slurm time limit or a pod eviction sent to the test's process group
// lands when the test has already exited. It says so on stderr, so a test can tell that it came.
// run_under_stop_race_test preloads it into run-under (GPUPLAN_SIGNAL_AFTER_WAIT=1). Every other
// call is libc's.
#include <dlfcn.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

extern "C" pid_t waitpid(pid_t pid, int* status, int options) {
  using Waitpid = pid_t (*)(pid_t, int*, int);
  static const auto libc_waitpid = reinterpret_cast<Waitpid>(::dlsym(RTLD_NEXT, "waitpid"));
  static bool raised = false;
  const pid_t reaped = libc_waitpid(pid, status, options);
  const char* wanted = std::getenv("GPUPLAN_SIGNAL_AFTER_WAIT");
  if (!raised && wanted && *wanted == '1' && pid > 0 && options == 0 && reaped == pid) {
    raised = true;
    const int saved = errno;
    static const char said[] = "signal_after_wait: SIGTERM after the wait\n";
    [[maybe_unused]] auto n = ::write(2, said, sizeof said - 1);
    ::raise(SIGTERM);
    errno = saved;
  }
  return reaped;
}
