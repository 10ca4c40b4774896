// A process that cannot start another, for LD_PRELOAD: the Nth fork() of the process that loaded it
// (GPUPLAN_FORK_FAILS_AT=N) fails with EAGAIN, as at `ulimit -u` for a user who is not root (root is
// not held to that limit, and CI runs as root). Every other call is libc's. limits_test preloads it
// into exec, whose units' supervisors it forks: a sanitizer build cannot be run short of descriptors
// (`ulimit -n`) to get there, since its own checks need them.
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

namespace {
std::atomic<long> forks{0};
pid_t loaded_by = ::getpid();
}  // namespace

extern "C" pid_t fork() {
  using Fork = pid_t (*)();
  static const auto libc_fork = reinterpret_cast<Fork>(::dlsym(RTLD_NEXT, "fork"));
  const char* at = std::getenv("GPUPLAN_FORK_FAILS_AT");
  if (at && ::getpid() == loaded_by && ++forks == std::atol(at)) {
    errno = EAGAIN;
    return -1;
  }
  return libc_fork();
}
