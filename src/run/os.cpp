#include "run/os.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
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
int wake_pipe[2] = {-1, -1};  ///< written by the signal handlers, read by SystemRunner::wait

void wake() {
  if (wake_pipe[1] >= 0) {
    int saved = errno;
    char byte = 0;
    [[maybe_unused]] auto n = ::write(wake_pipe[1], &byte, 1);
    errno = saved;
  }
}

extern "C" void on_stop_signal(int signal) {
  received_signal = signal;
  if (forward_pid > 0) ::kill(forward_pid, signal);
  wake();
}

extern "C" void on_child_signal(int) { wake(); }

/// Refuses a lock directory another user could change: a link, not a directory, owned by
/// someone else than this user or root, or writable by everyone.
void check_lock_dir(const std::string& dir) {
  struct stat info {};
  if (::lstat(dir.c_str(), &info) != 0) fail(dir, "cannot read the lock directory");
  std::string wrong;
  if (S_ISLNK(info.st_mode))
    wrong = "is a symbolic link";
  else if (!S_ISDIR(info.st_mode))
    wrong = "is not a directory";
  else if (info.st_uid != ::geteuid() && info.st_uid != 0)
    wrong = fmt::format("belongs to user id {}, not to this user or root", info.st_uid);
  else if (info.st_mode & S_IWOTH)
    wrong = "is writable by every user";
  if (!wrong.empty())
    throw InputError(Position{dir}, fmt::format("the GPU lock directory {}: another user could redirect or "
                                                "take the locks (use a directory of your own, --lock-dir)",
                                                wrong));
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
  check_lock_dir(dir);
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  GpuLocks locks;
  for (int gpu : gpus) {
    auto path = fmt::format("{}/gpu-{}.lock", dir, gpu);
    int fd = ::open(path.c_str(), O_RDONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0) fail(path, "cannot open the GPU lock (a symbolic link is refused)");
    locks.fds_.push_back(fd);
    struct stat info {};
    if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode))
      throw InputError(Position{path}, "the GPU lock is not a regular file");
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

std::string default_lock_dir() { return fmt::format("/tmp/gpuplan-locks-{}", ::geteuid()); }

void check_appendable(const std::string& path, std::string_view header) {
  int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) fail(path, "cannot write the results file");
  std::string head(4096, '\0');
  ssize_t n = ::pread(fd, head.data(), head.size(), 0);
  ::close(fd);
  if (n <= 0) return;
  head.resize(static_cast<std::size_t>(n));
  std::string first = head.substr(0, head.find('\n'));
  if (!first.empty() && first.back() == '\r') first.pop_back();
  std::string_view expected = header.substr(0, header.find('\n'));
  if (first == expected) return;
  if (first.size() > 200) first = first.substr(0, 200) + "...";
  throw InputError(Position{path}, fmt::format("its header is {:?}, not {:?}: its records have other columns "
                                               "than this gpuplan writes; give --results a new file",
                                               first, expected));
}

void append_locked(const std::string& path, std::string_view header, std::string_view line) {
  int fd = ::open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) fail(path, "cannot open the results file");
  while (::flock(fd, LOCK_EX) != 0)
    if (errno != EINTR) fail(path, "cannot lock the results file");
  struct stat info {};
  char last = '\n';
  bool ok = ::fstat(fd, &info) == 0 && (info.st_size == 0 || ::pread(fd, &last, 1, info.st_size - 1) == 1) &&
            (info.st_size > 0 || write_all(fd, header)) && (last == '\n' || write_all(fd, "\n")) &&
            write_all(fd, line);
  ::close(fd);
  if (!ok) fail(path, "cannot append to the results file");
}

pid_t spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
            bool own_group, const std::vector<int>& keep_fds) {
  // Everything the child needs is built here: after fork it only calls async-signal-safe functions.
  std::vector<std::string> entries;
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    if (!env.count(std::string(entry.substr(0, entry.find('='))))) entries.emplace_back(entry);
  }
  for (const auto& [name, value] : env) entries.push_back(fmt::format("{}={}", name, value));
  std::vector<char*> envp, args;
  for (auto& e : entries) envp.push_back(e.data());
  envp.push_back(nullptr);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string message = fmt::format("gpuplan: cannot run {}: ", argv.front());
  const pid_t parent = ::getpid();
  // vfork, not fork: the child shares the parent's memory until it execs, so nothing is copied
  // (fork copied the page tables of a dynamically linked gpuplan: a `run-under` launch of
  // `true`, forty in a row, took 17.3 ms with fork and 14.2 ms with vfork on these machines).
  // The parent's signals are blocked meanwhile, so that none of its handlers runs in the child,
  // which sets its own dispositions and mask.
  sigset_t all, before;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &before);
  pid_t pid = ::vfork();
  if (pid < 0) {
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    fail(argv.front(), "cannot start");
  }
  if (pid == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
    if (own_group) ::setpgid(0, 0);
    struct sigaction action {};
    action.sa_handler = SIG_DFL;
    for (int signal : {SIGINT, SIGTERM, SIGCHLD}) ::sigaction(signal, &action, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    for (int fd : keep_fds) ::fcntl(fd, F_SETFD, 0);
    ::execvpe(args[0], args.data(), envp.data());
    int error = errno;
    write_all(2, message);
    write_all(2, std::strerror(error));
    write_all(2, "\n");
    ::_exit(127);
  }
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
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

SystemRunner::SystemRunner() {
  if (::pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) fail("pipe", "cannot make the wake-up pipe");
  catch_stop_signals();
  struct sigaction action {};
  action.sa_handler = on_child_signal;
  action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGCHLD, &action, nullptr);
}

SystemRunner::~SystemRunner() {
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  ::sigaction(SIGCHLD, &action, nullptr);
  for (int& fd : wake_pipe) {
    ::close(fd);
    fd = -1;
  }
}

int SystemRunner::start(const std::string& command, const std::map<std::string, std::string>& env,
                        const std::vector<int>& keep_fds) {
  return spawn({"/bin/sh", "-c", command}, env, true, keep_fds);
}

void SystemRunner::signal(int id, int signal) { signal_group(id, signal); }

std::vector<ProcessExit> SystemRunner::wait(double until) {
  auto reap = [] {
    std::vector<ProcessExit> exits;
    int status = 0;
    pid_t pid;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) exits.push_back({pid, exit_status(status)});
    return exits;
  };
  auto exits = reap();
  if (!exits.empty() || stop_signal()) return exits;
  double left_ms = (until - now()) * 1000;
  int timeout = left_ms > 3.6e6 ? 3600000 : std::max(0, static_cast<int>(std::ceil(left_ms)));
  struct pollfd wake_fd {
    wake_pipe[0], POLLIN, 0
  };
  ::poll(&wake_fd, 1, timeout);
  char drain[64];
  while (::read(wake_pipe[0], drain, sizeof drain) > 0) {
  }
  return reap();
}

double SystemRunner::now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

int SystemRunner::stop_signal() { return received_signal; }

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
