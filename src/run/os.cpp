#include "run/os.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "gpuplan/error.hpp"

namespace gpuplan::os {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw InputError(Position{path}, fmt::format("{}: {}", what, std::strerror(errno)));
}

bool write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    data.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

volatile sig_atomic_t received_signal = 0;
volatile pid_t forward_pid = 0;

extern "C" void on_stop_signal(int signal) {
  received_signal = signal;
  if (forward_pid > 0) ::kill(forward_pid, signal);
}

}  // namespace

GpuLocks::GpuLocks(GpuLocks&& other) noexcept : fds_(std::move(other.fds_)) { other.fds_.clear(); }

GpuLocks& GpuLocks::operator=(GpuLocks&& other) noexcept {
  std::swap(fds_, other.fds_);
  return *this;
}

GpuLocks::~GpuLocks() {
  for (int fd : fds_) ::close(fd);
}

std::optional<GpuLocks> GpuLocks::take(const std::string& dir, std::vector<int> gpus, bool wait) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw InputError(Position{dir}, fmt::format("cannot create the lock directory: {}", ec.message()));
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  GpuLocks locks;
  for (int gpu : gpus) {
    auto path = fmt::format("{}/gpu-{}.lock", dir, gpu);
    int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) fail(path, "cannot open the GPU lock");
    locks.fds_.push_back(fd);
    int result;
    do result = ::flock(fd, LOCK_EX | (wait ? 0 : LOCK_NB));
    while (result != 0 && errno == EINTR && wait);
    if (result != 0) {
      if (!wait && errno == EWOULDBLOCK) return std::nullopt;
      fail(path, "cannot lock the GPU");
    }
  }
  return locks;
}

void append_locked(const std::string& path, std::string_view header, std::string_view line) {
  int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) fail(path, "cannot open the results file");
  while (::flock(fd, LOCK_EX) != 0)
    if (errno != EINTR) fail(path, "cannot lock the results file");
  struct stat info {};
  bool ok = ::fstat(fd, &info) == 0 && (info.st_size > 0 || write_all(fd, header)) && write_all(fd, line);
  ::close(fd);
  if (!ok) fail(path, "cannot append to the results file");
}

pid_t spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
            bool own_group) {
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = ::fork();
  if (pid < 0) fail(argv.front(), "cannot start");
  if (pid == 0) {
    if (own_group) ::setpgid(0, 0);
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    ::sigaction(SIGINT, &action, nullptr);
    ::sigaction(SIGTERM, &action, nullptr);
    for (const auto& [name, value] : env) ::setenv(name.c_str(), value.c_str(), 1);
    ::execvp(args[0], args.data());
    std::string message = fmt::format("gpuplan: cannot run {}: {}\n", argv.front(), std::strerror(errno));
    write_all(2, message);
    ::_exit(127);
  }
  if (own_group) ::setpgid(pid, pid);
  return pid;
}

void signal_group(pid_t pid, int signal) { ::kill(-pid, signal); }

int exit_status(int wait_status) {
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return WEXITSTATUS(wait_status);
}

double now_epoch_s() {
  using namespace std::chrono;
  return duration<double>(system_clock::now().time_since_epoch()).count();
}

void catch_stop_signals() {
  struct sigaction action {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
}

void forward_stop_signals(pid_t pid) {
  forward_pid = pid;
  if (received_signal != 0) ::kill(pid, received_signal);
}

int stop_signal() { return received_signal; }

}  // namespace gpuplan::os
