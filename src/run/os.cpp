#include "run/os.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <set>
#include <sstream>
#include <thread>

#include "gpuplan/error.hpp"
#include "gpuplan/run.hpp"

namespace gpuplan::os {

namespace {

/// strerror(error), and under bazel test (TEST_TARGET set) for a path its sandbox keeps
/// read-only (EROFS), where to let it be written.
std::string why(int error) {
  std::string text = std::strerror(error);
  if (error == EROFS && std::getenv("TEST_TARGET"))
    text +=
        " (inside bazel test's sandbox only the paths --sandbox_writable_path names can be written: pass "
        "--sandbox_writable_path=DIR for this one's directory; gpuplan exec does)";
  return text;
}

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw InputError(Position{path}, fmt::format("{}: {}", what, why(errno)));
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

// Atomics, not volatile sig_atomic_t: the handler runs on whichever thread takes the signal (a
// GPU sampling thread's), and GpuLocks::take's teller thread reads it; volatile orders nothing
// between threads. Lock-free, so a handler may touch them.
std::atomic<int> received_signal = 0;
std::atomic<pid_t> forward_pid = 0;
// run-under's order of its test's end and a stop: the child whose end a SIGCHLD told last (the
// supervisor's, sent as it reaps the test, and again as it ends), and the stop signal that came
// while the test forward_pid supervises had not ended, cut_short(). Both are set by handlers on the
// one thread that takes these signals (no thread of gpuplan's takes them), each blocking the others,
// so the order they are handled in is the order the kernel queued them: a stop already queued when
// the test ended is taken first (a lower number than SIGCHLD's).
std::atomic<pid_t> ended_child = 0;
std::atomic<int> cut_short_signal = 0;
static_assert(std::atomic<int>::is_always_lock_free && std::atomic<pid_t>::is_always_lock_free);
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
  // Before forward_stop_signals, while run-under starts its test: a stop before any child's end.
  const pid_t pid = forward_pid, ended = ended_child;
  if (cut_short_signal == 0 && (pid > 0 ? ended != pid : ended == 0)) cut_short_signal = signal;
  if (pid > 0) ::kill(pid, signal);
  wake();
}

extern "C" void on_child_signal(int, siginfo_t* info, void*) {
  // The one run-under forwards to, or any before it is known (a test that ended as it was started).
  if (const pid_t pid = forward_pid; pid == 0 || info->si_pid == pid) ended_child = info->si_pid;
  wake();
}

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

/// What a unit's supervisor needs, built before fork: after it, only async-signal-safe calls.
struct Launch {
  char* const* args;
  char* const* envp;
  std::string_view message;  ///< "gpuplan: cannot run X: ", before the reason
  const std::vector<int>& keep_fds;
  bool own_group;
  pid_t parent;
  int parent_died;  ///< the signal the supervisor gets when its parent dies (PR_SET_PDEATHSIG)
};

/// The number a /proc entry's name is (a process id, a descriptor), or -1.
long name_number(const char* name) {
  long number = 0;
  if (*name == '\0') return -1;
  for (; *name; ++name) {
    if (*name < '0' || *name > '9' || number > 1'000'000'000) return -1;
    number = number * 10 + (*name - '0');
  }
  return number;
}

/// Calls `visit(number, dir_fd)` for each entry of the directory `path` named by a number;
/// false when it cannot be read. getdents64 on a stack buffer: no allocation.
template <class Visit>
bool for_each_numbered(const char* path, Visit visit) {
  int dir = ::open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return false;
  // A linux_dirent64: u64 inode, s64 offset, u16 record length, u8 type, the name.
  constexpr std::size_t length_at = 16, name_at = 19;
  alignas(8) char buffer[4096];
  long got;
  while ((got = ::syscall(SYS_getdents64, dir, buffer, sizeof buffer)) > 0) {
    for (long at = 0; at < got;) {
      unsigned short length = 0;
      std::memcpy(&length, buffer + at + length_at, sizeof length);
      long number = name_number(buffer + at + name_at);
      if (number >= 0) visit(number, dir);
      at += length;
    }
  }
  ::close(dir);
  return true;
}

/// Closes the descriptors an exec would close, so that a supervisor holds no GPU lock but its
/// unit's (another unit's lock must go when exec closes it).
void close_exec_fds() {
  auto close_if_cloexec = [](long fd, int dir) {
    int flags = fd > 2 && fd != dir ? ::fcntl(static_cast<int>(fd), F_GETFD) : -1;
    if (flags >= 0 && (flags & FD_CLOEXEC)) ::close(static_cast<int>(fd));
  };
  if (for_each_numbered("/proc/self/fd", close_if_cloexec)) return;
  struct rlimit limit {};
  long most = ::getrlimit(RLIMIT_NOFILE, &limit) == 0 ? static_cast<long>(limit.rlim_cur) : 1024;
  for (long fd = 3; fd < std::min(most, 1L << 16); ++fd) close_if_cloexec(fd, -1);
}

/// Opens /proc/PID/FILE (`file`: "/stat") for reading; -1 when the process is gone. Builds the
/// path by hand: a supervisor forked from a process with threads may call only what is
/// async-signal-safe.
int open_proc_file(long pid, std::string_view file) {
  char path[48] = "/proc/";
  char digits[20];
  int count = 0;
  for (long rest = pid; count == 0 || rest > 0; rest /= 10)
    digits[count++] = static_cast<char>('0' + rest % 10);
  std::size_t at = 6;
  while (count > 0) path[at++] = digits[--count];
  std::memcpy(path + at, file.data(), file.size());
  path[at + file.size()] = '\0';
  return ::open(path, O_RDONLY | O_CLOEXEC);
}

/// The parent, process group and state of `pid`, from /proc/PID/stat: "pid (comm) state ppid
/// pgrp ..."; false when it is gone.
bool read_stat(long pid, long& parent, long& group, char& state) {
  int fd = open_proc_file(pid, "/stat");
  if (fd < 0) return false;
  char text[512];
  ssize_t got = ::read(fd, text, sizeof text - 1);
  ::close(fd);
  if (got <= 0) return false;
  text[got] = '\0';
  char* close = std::strrchr(text, ')');  // the command name may hold spaces and parentheses
  if (!close || close[1] != ' ' || close[2] == '\0') return false;
  state = close[2];
  char* end = nullptr;
  parent = std::strtol(close + 3, &end, 10);
  group = std::strtol(end, &end, 10);
  return true;
}

/// Whether `pid` is a Bazel server (its command line names Bazel's A-server.jar): a `bazel test`
/// that a unit ran leaves it running on purpose, for the next one.
bool is_bazel_server(long pid) {
  int fd = open_proc_file(pid, "/cmdline");
  if (fd < 0) return false;
  char text[16384];  // the jar comes after the JVM's options, within the first few KB
  ssize_t got = ::read(fd, text, sizeof text);
  ::close(fd);
  constexpr std::string_view jar = "/A-server.jar";
  for (ssize_t end = 0, start = 0; end < got; ++end) {
    if (text[end] != '\0') continue;
    if (std::string_view(text + start, static_cast<std::size_t>(end - start)).ends_with(jar)) return true;
    start = end + 1;
  }
  return false;
}

/// SIGKILLs each live process of the unit: the supervisor's children (a subreaper, it inherits
/// every orphan of the unit's tree) and, with `group`, its process group's other members; with
/// `spare_bazel`, not a Bazel server. Writes " PID (state S)" of each to `report_fd` when it is
/// not -1. Returns whether there was any.
bool kill_unit_processes(pid_t self, bool group, bool spare_bazel, int report_fd = -1) {
  bool any = false;
  for_each_numbered("/proc", [&](long pid, int) {
    long parent = 0, pgrp = 0;
    char state = 0;
    if (pid == self || !read_stat(pid, parent, pgrp, state) || state == 'Z') return;
    if ((parent == self || (group && pgrp == self)) && !(spare_bazel && is_bazel_server(pid))) {
      ::kill(static_cast<pid_t>(pid), SIGKILL);
      any = true;
      if (report_fd < 0) return;
      char digits[20];
      int count = 0;
      for (long rest = pid; count == 0 || rest > 0; rest /= 10)
        digits[count++] = static_cast<char>('0' + rest % 10);
      char text[48] = " ";
      std::size_t at = 1;
      while (count > 0) text[at++] = digits[--count];
      for (char c : std::string_view(" (state ")) text[at++] = c;
      text[at++] = state;
      text[at++] = ')';
      write_all(report_fd, std::string_view(text, at));
    }
  });
  return any;
}

/// Kills every process the unit started until none is left (orphans come to the subreaper as
/// their parents die), reaping them, for kill_wait_s at most: one stuck in the driver (D state)
/// or not ours to kill is named on stderr after `who` and left (before, the supervisor waited
/// for it for ever, and exec with it). Returns whether there was any.
bool kill_all(pid_t self, bool group, bool spare_bazel, std::string_view who) {
  auto reap = [] {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
  };
  auto found = repeat_kill_passes(
      [&] {
        bool any = kill_unit_processes(self, group, spare_bazel);
        reap();
        return any;
      },
      kill_wait_s - 1);
  reap();
  if (found == KillPasses::outlived) {
    write_all(2, who);
    write_all(2, ": the unit's processes");
    kill_unit_processes(self, group, spare_bazel, 2);
    write_all(2, " did not end on SIGKILL (in the driver, or not ours to kill); left running\n");
  }
  return found != KillPasses::none;
}

/// Whether a process of the group `self` leads, other than `self`, still runs.
bool group_alive(pid_t self) {
  bool any = false;
  for_each_numbered("/proc", [&](long pid, int) {
    long parent = 0, pgrp = 0;
    char state = 0;
    if (pid != self && read_stat(pid, parent, pgrp, state) && state != 'Z' && pgrp == self) any = true;
  });
  return any;
}

/// Ends the supervisor as its unit ended: the same exit code, or killed by the same signal.
[[noreturn]] void end_as(int wait_status) {
  if (!WIFSIGNALED(wait_status)) ::_exit(WEXITSTATUS(wait_status));
  int signal = WTERMSIG(wait_status);
  struct rlimit no_core {};
  ::setrlimit(RLIMIT_CORE, &no_core);  // a unit's core dump is the unit's; none of the supervisor
  struct sigaction action {};
  action.sa_handler = SIG_DFL;
  ::sigaction(signal, &action, nullptr);
  sigset_t only;
  sigemptyset(&only);
  sigaddset(&only, signal);
  ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
  ::kill(::getpid(), signal);
  ::_exit(128 + signal);
}

/// The supervisor, a forked child between this process and a unit: it starts the unit (in its
/// own process group when `own_group`, the supervisor leading it), passes its exit on, and
/// when its parent dies, by any signal, kills every process the unit started, wherever it went
/// (a subreaper inherits the orphans), before it ends. Signals stay blocked from spawn.
[[noreturn]] void supervise(const Launch& launch) {
  ::prctl(PR_SET_PDEATHSIG, launch.parent_died);
  if (::getppid() != launch.parent) ::_exit(127);  // the parent died before prctl
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  // Always a group of its own, out of reach of a SIGKILL to its parent's group (Bazel's end of a
  // test that outlived its timeout's SIGTERM): it lives on to kill what the unit left. run-under's
  // unit goes back to the parent's group, where Bazel's signals reach it as before.
  const pid_t parent_group = ::getpgrp();
  ::setpgid(0, 0);
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  ::sigaction(SIGCHLD, &default_action, nullptr);  // never ignored: the unit's end is waited for
  for (int fd : launch.keep_fds) ::fcntl(fd, F_SETFD, 0);
  close_exec_fds();
  const pid_t self = ::getpid();
  const std::string_view who = launch.own_group ? "gpuplan exec" : "gpuplan run-under";
  pid_t unit = ::vfork();  // nothing is copied; the supervisor waits until the unit execs
  if (unit == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != self) ::_exit(127);
    if (!launch.own_group) ::setpgid(0, parent_group);
    // SIGXFSZ too, which gpuplan ignores (main) to report a write past ulimit -f: a test gets it as
    // Bazel gives it.
    for (int signal : {SIGINT, SIGTERM, SIGCHLD, SIGXFSZ, launch.parent_died})
      ::sigaction(signal, &default_action, nullptr);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execvpe(launch.args[0], launch.args, launch.envp);
  }
  if (unit <= 0) {
    int error = errno;
    write_all(2, launch.message);
    write_all(2, std::strerror(error));
    write_all(2, "\n");
    ::_exit(127);
  }
  sigset_t events;
  sigemptyset(&events);
  for (int signal : {SIGCHLD, SIGINT, SIGTERM, launch.parent_died}) sigaddset(&events, signal);
  // exec stops a unit (Ctrl-C, its --timeout) with SIGTERM to the group, SIGKILL to its other
  // processes 5 s later: when the unit's shell ends at once, the processes it started get those
  // seconds to end too (before, they were killed as the shell ended, so a test's own clean-up,
  // or `bazel test` telling its server, never ran).
  bool stopping = false;
  int cut_short = 0;  ///< exec's SIGINT or SIGTERM that reached the group while the unit still ran
  bool unit_ended = false;
  int unit_status = 0;
  const struct timespec poll_group { 0, 50'000'000 };
  for (;;) {
    siginfo_t info{};
    int signal = unit_ended ? ::sigtimedwait(&events, &info, &poll_group) : ::sigwaitinfo(&events, &info);
    if (signal == SIGCHLD || (signal < 0 && unit_ended)) {
      int status = 0;
      pid_t pid;
      while (!unit_ended && (pid = ::waitpid(-1, &status, WNOHANG)) > 0)
        if (pid == unit) {
          unit_ended = true;
          unit_status = status;
          // run-under's test went back to Bazel's group, where Bazel's stop reaches it and run-under
          // at once, and the supervisor only through run-under: so run-under judges whether the stop
          // came while it ran (os::cut_short), by the order of its SIGCHLD and the stop. Told at once,
          // not as the supervisor ends once it has killed what the test left.
          if (!launch.own_group && ::getppid() == launch.parent) ::kill(launch.parent, SIGCHLD);
        }
      if (!unit_ended || (stopping && group_alive(self))) continue;
      // What the unit left running (a daemon that closed the lock descriptors it inherited
      // would run on GPUs handed on to the next unit) ends with it, as Bazel's sandbox ends
      // it. As a subreaper the supervisor has any such process as a child. A Bazel server
      // that an exec unit's `bazel test` started lives on, for the next unit, only where the
      // unit holds no GPU lock: the server inherits its client's descriptors (Bazel's daemonizing
      // closes only 0-2), so it held the unit's locks for its idle time (3 h by default), and the
      // next unit on those GPUs waited for it.
      pid_t left;
      while ((left = ::waitpid(-1, nullptr, WNOHANG)) > 0) {
      }
      const bool spare_bazel = launch.own_group && launch.keep_fds.empty();
      if (left == 0 && kill_all(self, false, spare_bazel, who))  // 0: some still run
        write_all(2, launch.own_group ? "gpuplan exec: the unit left processes running; they were killed "
                                        "before its GPUs were released\n"
                                      : "gpuplan run-under: the test left processes running; they were "
                                        "killed before its GPUs were released\n");
      // A unit that exec's stop reached while it ran did not pass, even where it trapped the signal and
      // exited 0 (as run-under has it): it ends as the signal ended it. Exit 0 then tells exec that the
      // unit had ended before the stop reached it. Before, both were 0 and exec gave up the claim of a
      // unit that had passed as the stop came, so another node ran it a second time.
      if (cut_short && WIFEXITED(unit_status)) ::_exit(cut_short_status(WEXITSTATUS(unit_status), cut_short));
      end_as(unit_status);
    } else if (signal == launch.parent_died && ::getppid() != launch.parent) {
      kill_all(self, launch.own_group, false, who);
      ::_exit(128 + SIGKILL);
    } else if ((signal == SIGINT || signal == SIGTERM) && launch.own_group) {
      stopping = true;  // exec's stop reached the group: its processes end, or exec kills them
      if (!unit_ended) cut_short = signal;
    } else if ((signal == SIGINT || signal == SIGTERM) && info.si_pid == launch.parent) {
      ::kill(unit, signal);  // passed on by run-under; one sent to the whole group reached the unit too
    }
  }
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

Result<int> open_regular(const std::string& path, int flags, mode_t mode) {
  int fd = ::open(path.c_str(), flags | O_NONBLOCK | O_CLOEXEC, mode);
  if (fd < 0) {
    if (errno == ELOOP && (flags & O_NOFOLLOW))
      return Problem{"it is a symbolic link (refused, never followed)"};
    if (errno == ENXIO) return Problem{"it is a FIFO, not a regular file"};  // O_WRONLY, no reader
    return Problem{why(errno)};
  }
  struct stat info {};
  std::string wrong;
  if (::fstat(fd, &info) != 0)
    wrong = std::strerror(errno);
  else if (S_ISFIFO(info.st_mode))
    wrong = "it is a FIFO, not a regular file";
  else if (!S_ISREG(info.st_mode))
    wrong = "it is not a regular file";
  if (wrong.empty() && !(flags & O_NONBLOCK) && ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
    wrong = std::strerror(errno);
  if (!wrong.empty()) {
    ::close(fd);
    return Problem{wrong};
  }
  return fd;
}

namespace {

/// The processes that hold a flock on the file of `fd`, from /proc/locks: "pid 812 (python3
/// train.py)", comma-joined; empty when none is found (another mount namespace's, say).
std::string lock_holders(int fd) {
  struct stat info {};
  if (::fstat(fd, &info) != 0) return {};
  const auto wanted = fmt::format("{:02x}:{:02x}:{}", major(info.st_dev), minor(info.st_dev), info.st_ino);
  std::ifstream locks("/proc/locks");
  std::string line, holders;
  while (std::getline(locks, line)) {
    std::istringstream fields(line);
    std::string number, kind, mode, access, pid, file;
    fields >> number >> kind;
    if (kind == "->")
      fields >> kind;  // a waiter, not a holder
    else if (fields >> mode >> access >> pid >> file && kind == "FLOCK" && file == wanted) {
      // read(2), not a stream: a holder that ends between open and read makes read fail
      // (ESRCH), which a filebuf read through istreambuf_iterator throws.
      std::string command(4096, '\0');
      int cmdline = open_proc_file(std::atol(pid.c_str()), "/cmdline");
      ssize_t got = cmdline < 0 ? -1 : ::read(cmdline, command.data(), command.size());
      if (cmdline >= 0) ::close(cmdline);
      command.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
      std::replace(command.begin(), command.end(), '\0', ' ');
      if (command.size() > 120) command = command.substr(0, 117) + "...";
      while (!command.empty() && command.back() == ' ') command.pop_back();
      holders += fmt::format("{}pid {}{}", holders.empty() ? "" : ", ", pid,
                             command.empty() ? "" : fmt::format(" ({})", command));
    }
  }
  return holders;
}

/// How long a launch waits for a GPU's lock before it says who holds it: a minute (tests set
/// GPUPLAN_LOCK_WAIT_SAY_AFTER_MS).
std::chrono::milliseconds lock_wait_told_after() {
  const char* after = std::getenv("GPUPLAN_LOCK_WAIT_SAY_AFTER_MS");
  return std::chrono::milliseconds(after ? std::atol(after) : 60'000);
}

}  // namespace

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
    auto fd = open_regular(path, O_RDONLY | O_CREAT | O_NOFOLLOW);
    if (!fd) throw InputError(Position{path}, fmt::format("cannot open the GPU lock: {}", fd.problem()));
    locks.fds_.push_back(*fd);
    int result;
    do result = ::flock(*fd, LOCK_EX | LOCK_NB);
    while (result != 0 && errno == EINTR);
    if (result == 0) continue;
    if (errno != EWOULDBLOCK) fail(path, "cannot lock the GPU");
    if (!wait || received_signal) return std::nullopt;
    // Blocked in flock as before (the GPU goes to a waiter the moment it is let go), while a
    // thread says after a minute which GPU this waits for and who holds it: a test's daemon, or
    // another job's, that kept a GPU had made the launch wait without a word until the CI job's
    // own timeout. The thread takes no signal: the stop signals stay this thread's. A stop
    // signal (caught: catch_stop_signals) ends the wait: its EINTR; and where it came just
    // before flock blocked, or went to another thread, the thread sends it here again.
    std::mutex mutex;
    std::condition_variable done;
    bool locked = false;
    sigset_t all, before;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &before);
    std::thread teller([&, gpu, lock_fd = *fd, waiter = ::pthread_self()] {
      const auto tell_at = std::chrono::steady_clock::now() + lock_wait_told_after();
      bool told = false;
      std::unique_lock lock(mutex);
      while (!done.wait_for(lock, std::chrono::milliseconds(100), [&] { return locked; })) {
        if (const int signal = received_signal) ::pthread_kill(waiter, signal);
        if (told || std::chrono::steady_clock::now() < tell_at) continue;
        told = true;
        auto holders = lock_holders(lock_fd);
        std::cerr << fmt::format(
            "gpuplan: waiting for GPU {} ({}); {}\n", gpu, path,
            holders.empty() ? "its holder is not known here" : "it is held by " + holders);
      }
    });
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
    do result = ::flock(*fd, LOCK_EX);
    while (result != 0 && errno == EINTR && !received_signal);
    const int error = errno;
    {
      std::lock_guard lock(mutex);
      locked = true;
    }
    done.notify_one();
    teller.join();
    errno = error;
    if (result != 0 && error == EINTR) return std::nullopt;  // stopped: the locks taken go
    if (result != 0) fail(path, "cannot lock the GPU");
  }
  return locks;
}

std::string default_lock_dir() { return fmt::format("/tmp/gpuplan-locks-{}", ::geteuid()); }

std::size_t check_appendable(const std::string& path, const std::vector<std::string_view>& headers) {
  auto opened = open_regular(path, O_RDWR | O_APPEND | O_CREAT, 0666);
  if (!opened)
    throw InputError(Position{path}, fmt::format("cannot write the results file: {}", opened.problem()));
  int fd = *opened;
  std::string head(4096, '\0');
  ssize_t n = ::pread(fd, head.data(), head.size(), 0);
  ::close(fd);
  if (n <= 0) return 0;
  head.resize(static_cast<std::size_t>(n));
  // Zeros where a crash or a full disk left a small file's end unwritten: history takes a file
  // with a NUL byte in its first 4 KiB for binary data and refuses it whole, so every record
  // appended after them would be lost. (Further on, history skips the line as a bad row.)
  if (auto nul = head.find('\0'); nul != std::string::npos)
    throw InputError(
        Position{path},
        fmt::format("it holds NUL bytes from byte {} on: its end was never written (a machine that "
                    "lost power or a full disk leaves zeros), and history cannot read such a file; "
                    "cut it after its last whole record, or give --results a new file",
                    nul));
  std::string first = head.substr(0, head.find('\n'));
  if (!first.empty() && first.back() == '\r') first.pop_back();
  auto line = [](std::string_view header) { return header.substr(0, header.find('\n')); };
  for (std::size_t i = 0; i < headers.size(); ++i)
    if (first == line(headers[i])) return i;
  // Begun by a newer gpuplan, whose records have columns after this one's: a node whose image is
  // older than the others' in a rollout. Its tests failed with no word of why.
  const std::string ours(line(headers.front()));
  const bool newer = first.starts_with(ours + ",");
  if (first.size() > 200) first = first.substr(0, 200) + "...";
  throw InputError(
      Position{path},
      fmt::format("its header is {:?}, not {:?}: its records have other columns than this gpuplan "
                  "writes{}",
                  first, ours,
                  newer ? " (a newer gpuplan began it, with columns after this one's): run the same "
                          "gpuplan on every node that appends to it, or give --results a new file"
                        : "; give --results a new file"));
}

void append_locked(const std::string& path, std::string_view header, std::string_view line) {
  auto opened = open_regular(path, O_RDWR | O_APPEND | O_CREAT, 0666);
  if (!opened)
    throw InputError(Position{path}, fmt::format("cannot open the results file: {}", opened.problem()));
  int fd = *opened;
  while (::flock(fd, LOCK_EX) != 0)
    if (errno != EINTR) {
      const int error = errno;
      ::close(fd);  // exec goes on after a record it could not write: no descriptor left open each time
      errno = error;
      fail(path, "cannot lock the results file");
    }
  struct stat info {};
  char last = '\n';
  const bool sized = ::fstat(fd, &info) == 0;
  bool ok = sized && (info.st_size == 0 || ::pread(fd, &last, 1, info.st_size - 1) == 1) &&
            (info.st_size > 0 || write_all(fd, header)) && (last == '\n' || write_all(fd, "\n")) &&
            write_all(fd, line);
  int error = ok ? 0 : errno != 0 ? errno : EIO;
  // Whole or not at all: a write cut short (past ulimit -f, a full disk) had left half a record,
  // read later as a bad row. Still locked, the file goes back to its size before.
  if (!ok && sized) (void)!::ftruncate(fd, info.st_size);
  // A file server (NFS) may report a write that failed (EIO, a quota) only at close: the record is
  // lost then too. Before, that close was not checked, and the record went missing without a word.
  if (::close(fd) != 0 && error == 0) error = errno;
  errno = error;
  if (error != 0) fail(path, "cannot append to the results file");
}

pid_t spawn(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
            bool own_group, const std::vector<int>& keep_fds) {
  // Everything the supervisor and the unit need is built here: after fork they only call
  // async-signal-safe functions (other threads of this process may hold locks).
  std::vector<std::string> entries;
  for (char** e = environ; *e; ++e) {
    std::string_view entry(*e);
    const auto equals = std::min(entry.find('='), entry.size());
    if (inherited_by_unit(entry.substr(0, equals), entry.substr(std::min(equals + 1, entry.size())), env))
      entries.emplace_back(entry);
  }
  for (const auto& [name, value] : env) entries.push_back(fmt::format("{}={}", name, value));
  std::vector<char*> envp, args;
  for (auto& e : entries) envp.push_back(e.data());
  envp.push_back(nullptr);
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  const std::string message = fmt::format("gpuplan: cannot run {}: ", argv.front());
  const Launch launch{args.data(), envp.data(), message, keep_fds, own_group, ::getpid(), SIGRTMIN};
  // The parent's signals are blocked across fork: none of its handlers runs in the supervisor,
  // which keeps them blocked and takes the ones it acts on with sigwaitinfo.
  // A pipe whose end of writing the supervisor closes with the other descriptors an exec would
  // close: once it reads its end, the supervisor holds no lock this process lets go of after.
  int ready[2];
  if (::pipe2(ready, O_CLOEXEC) != 0) fail(argv.front(), "cannot start");
  sigset_t all, before;
  sigfillset(&all);
  ::pthread_sigmask(SIG_SETMASK, &all, &before);
  if (!own_group) {  // run-under's test: its end and the stops before it are counted from here
    ended_child = 0;
    cut_short_signal = received_signal.load();  // passed on to the test as it starts: it is cut short
  }
  pid_t pid = ::fork();
  if (pid == 0) supervise(launch);
  const int forked = errno;
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  ::close(ready[1]);
  char byte;
  while (pid > 0 && ::read(ready[0], &byte, 1) < 0 && errno == EINTR) {
  }
  ::close(ready[0]);
  errno = forked;
  if (pid < 0)
    fail(argv.front(), forked == EAGAIN ? "cannot start (no process to be had: ulimit -u?)" : "cannot start");
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

std::string host_name() {
  char name[256] = {};
  ::gethostname(name, sizeof name - 1);
  return name;
}

SystemRunner::SystemRunner() {
  if (::pipe2(wake_pipe, O_CLOEXEC | O_NONBLOCK) != 0) fail("pipe", "cannot make the wake-up pipe");
  catch_stop_signals();  // and SIGCHLD, which wakes wait()
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

void SystemRunner::signal(int id, int signal) {
  long parent = 0, pgrp = 0;
  char state = 0;
  if (signal != SIGKILL || !read_stat(id, parent, pgrp, state) || state == 'Z' || pgrp != id)
    return signal_group(id, signal);
  // While the unit's supervisor lives (it leads the group), every process of the group but it:
  // the supervisor lives on to kill, as the unit ends, what left the group (setsid), which a
  // SIGKILL to the whole group would leave running. Again while a pass finds a process a fork made
  // during the last.
  std::set<long> killed;
  for (bool found = true; found;) {
    found = false;
    for_each_numbered("/proc", [&](long pid, int) {
      if (pid != id && read_stat(pid, parent, pgrp, state) && state != 'Z' && pgrp == id &&
          killed.insert(pid).second) {
        ::kill(static_cast<pid_t>(pid), SIGKILL);
        found = true;
      }
    });
  }
}

void SystemRunner::kill_outright(int id) {
  // Its supervisor waits for the group it leads to end; what outlived the SIGKILL keeps it alive.
  std::string left;
  for_each_numbered("/proc", [&](long pid, int) {
    long parent = 0, pgrp = 0;
    char state = 0;
    if (pid != id && read_stat(pid, parent, pgrp, state) && state != 'Z' && pgrp == id)
      left += fmt::format("{}{} (state {})", left.empty() ? "" : ", ", pid, state);
  });
  signal_group(id, SIGKILL);
  std::cerr << fmt::format(
      "gpuplan exec: warning: the unit (process group {}) still ran {} s after its SIGKILL{}; killed its "
      "supervisor too, and what the unit left (setsid) may still run\n",
      id, kill_wait_s,
      left.empty() ? "" : fmt::format(": process {} did not end (in the driver, or not ours to kill)", left));
}

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
  // Each handler blocks the others' signals: one that came later is never handled first, nested in it.
  struct sigaction action {};
  sigemptyset(&action.sa_mask);
  for (int signal : {SIGINT, SIGTERM, SIGCHLD}) sigaddset(&action.sa_mask, signal);
  action.sa_handler = on_stop_signal;  // no SA_RESTART: a stop ends a wait for a GPU's lock
  ::sigaction(SIGINT, &action, nullptr);
  ::sigaction(SIGTERM, &action, nullptr);
  action.sa_sigaction = on_child_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART | SA_NOCLDSTOP;
  ::sigaction(SIGCHLD, &action, nullptr);
}

void forward_stop_signals(pid_t pid) {
  sigset_t stops, before;
  sigemptyset(&stops);
  for (int signal : {SIGINT, SIGTERM, SIGCHLD}) sigaddset(&stops, signal);
  ::pthread_sigmask(SIG_BLOCK, &stops, &before);  // passed on once, by the handler or here
  forward_pid = pid;
  if (const int signal = received_signal; signal != 0) ::kill(pid, signal);
  ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

int cut_short() { return cut_short_signal; }

int stop_signal() { return received_signal; }

}  // namespace gpuplan::os
