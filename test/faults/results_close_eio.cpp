// A results file on a file server that reports a failed write only as the file is closed, as an
// NFS client does (EIO, or EDQUOT past a quota), for LD_PRELOAD: close() of a descriptor of the
// file GPUPLAN_FAIL_CLOSE_OF names closes it, then fails with EIO. Every other close() is libc's.
// results_eio_test preloads it into exec and run-under.
#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

extern "C" int close(int fd) {
  using Close = int (*)(int);
  static const auto libc_close = reinterpret_cast<Close>(::dlsym(RTLD_NEXT, "close"));
  const char* failing = std::getenv("GPUPLAN_FAIL_CLOSE_OF");
  char link[32], target[4096];
  bool named = false;
  if (failing && *failing && fd >= 0) {
    std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = ::readlink(link, target, sizeof target - 1);
    if (n > 0) {
      target[n] = '\0';
      named = std::strcmp(target, failing) == 0;
    }
  }
  int result = libc_close(fd);
  if (result != 0 || !named) return result;
  errno = EIO;
  return -1;
}
