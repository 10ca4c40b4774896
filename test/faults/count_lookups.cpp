// Counts a process's lstat() calls of paths in one directory, for LD_PRELOAD: exec looks at a unit's
// claims (its done mark, its claim numbers) with lstat (src/run/claims.cpp), one file-system round
// trip each on NFS. Counted under GPUPLAN_COUNT_LOOKUPS_IN (a path prefix); as the process that loaded
// it ends, "COUNT" is appended to the file GPUPLAN_COUNT_LOOKUPS_TO (not by the processes it forks,
// nor by one that looked at nothing there: the units' shells). claims_scale_test preloads it into exec.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

std::atomic<long> counted{0};
pid_t loaded_by = ::getpid();

void count(const char* path) {
  const char* prefix = std::getenv("GPUPLAN_COUNT_LOOKUPS_IN");
  if (prefix && path && std::strncmp(path, prefix, std::strlen(prefix)) == 0) ++counted;
}

__attribute__((destructor)) void report() {
  const char* to = std::getenv("GPUPLAN_COUNT_LOOKUPS_TO");
  if (!to || counted == 0 || ::getpid() != loaded_by) return;
  char line[32];
  int n = std::snprintf(line, sizeof line, "%ld\n", counted.load());
  int fd = ::open(to, O_WRONLY | O_CREAT | O_APPEND, 0644);
  if (fd < 0) return;
  [[maybe_unused]] auto written = ::write(fd, line, static_cast<size_t>(n));
  ::close(fd);
}

}  // namespace

extern "C" int lstat(const char* path, struct stat* info) {
  using Lstat = int (*)(const char*, struct stat*);
  static const auto libc_lstat = reinterpret_cast<Lstat>(::dlsym(RTLD_NEXT, "lstat"));
  count(path);
  return libc_lstat(path, info);
}

extern "C" int lstat64(const char* path, struct stat64* info) {
  using Lstat = int (*)(const char*, struct stat64*);
  static const auto libc_lstat = reinterpret_cast<Lstat>(::dlsym(RTLD_NEXT, "lstat64"));
  count(path);
  return libc_lstat(path, info);
}
