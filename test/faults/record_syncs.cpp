// Records a process's renames and syncs, for LD_PRELOAD: each rename(), fsync(), fdatasync() and
// syncfs() appends a line to the file GPUPLAN_RECORD_SYNCS_TO as it returns ("rename TARGET",
// "fsync PATH" with the path the descriptor was opened as, read from /proc/self/fd), so that a test
// can tell whether an output's directory was synced after its file was renamed into it (cli/io.cpp).
// Every call is libc's. durable_outputs_test preloads it into gpuplan.
#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

void record(const char* what, const char* path) {
  const char* to = std::getenv("GPUPLAN_RECORD_SYNCS_TO");
  if (!to || !path) return;
  char line[4200];
  int n = std::snprintf(line, sizeof line, "%s %s\n", what, path);
  if (n <= 0 || static_cast<std::size_t>(n) >= sizeof line) return;
  int fd = ::open(to, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0) return;
  [[maybe_unused]] auto written = ::write(fd, line, static_cast<std::size_t>(n));
  ::close(fd);
}

void record_fd(const char* what, int fd) {
  char link[64], path[4096];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  ssize_t n = ::readlink(link, path, sizeof path - 1);
  if (n < 0) return;
  path[n] = '\0';
  record(what, path);
}

template <typename F>
F libc(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" int rename(const char* from, const char* to) {
  static const auto libc_rename = libc<int (*)(const char*, const char*)>("rename");
  int result = libc_rename(from, to);
  if (result == 0) record("rename", to);
  return result;
}

extern "C" int fsync(int fd) {
  static const auto libc_fsync = libc<int (*)(int)>("fsync");
  int result = libc_fsync(fd);
  if (result == 0) record_fd("fsync", fd);
  return result;
}

extern "C" int fdatasync(int fd) {
  static const auto libc_fdatasync = libc<int (*)(int)>("fdatasync");
  int result = libc_fdatasync(fd);
  if (result == 0) record_fd("fsync", fd);
  return result;
}

extern "C" int syncfs(int fd) {
  static const auto libc_syncfs = libc<int (*)(int)>("syncfs");
  int result = libc_syncfs(fd);
  if (result == 0) record_fd("syncfs", fd);
  return result;
}
