// A claims directory whose file server fails, for LD_PRELOAD: while the file GPUPLAN_FAIL_DONE_MARKS
// names exists, link() of a name ending in ".done" (a unit's done mark, src/run/claims.cpp) fails
// with EIO, as an NFS client answers when its server's disk fails; removing the file heals it.
// Every other link(), and every other call, is libc's. claims_eio_test preloads it into exec.
#include <dlfcn.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

extern "C" int link(const char* from, const char* to) {
  using Link = int (*)(const char*, const char*);
  static const auto libc_link = reinterpret_cast<Link>(::dlsym(RTLD_NEXT, "link"));
  const char* failing_while = std::getenv("GPUPLAN_FAIL_DONE_MARKS");
  const std::size_t length = std::strlen(to);
  if (failing_while && length >= 5 && std::strcmp(to + length - 5, ".done") == 0 &&
      ::access(failing_while, F_OK) == 0) {
    errno = EIO;
    return -1;
  }
  return libc_link(from, to);
}
