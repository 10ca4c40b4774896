#include "run/os.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>

using namespace gpuplan;

namespace {
/// A scratch directory of this process's own: CTest runs each test case as a process of its own,
/// two at once, and a second copy of the suite (another checkout's) may run beside it.
std::string scratch_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / fmt::format("gpuplan-os-test-{}-{}", name, ::getpid());
  std::filesystem::remove_all(dir);
  return dir.string();
}

/// Waits up to 60 s (a loaded CI machine) for `path` to exist; whether it does.
bool appears(const std::string& path) {
  for (int tries = 0; tries < 6000 && !std::filesystem::exists(path); ++tries) ::usleep(10'000);
  return std::filesystem::exists(path);
}

std::string contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}
}  // namespace

TEST_CASE("a GPU held by one lock holder cannot be taken by another until released") {
  auto dir = scratch_dir("locks");
  {
    auto first = os::GpuLocks::take(dir, {2, 0}, true);
    REQUIRE(first);
    REQUIRE_FALSE(os::GpuLocks::take(dir, {1, 2}, false));
    REQUIRE(os::GpuLocks::take(dir, {1, 3}, false));  // other GPUs are free
  }
  REQUIRE(os::GpuLocks::take(dir, {0, 1, 2}, false));
  std::filesystem::remove_all(dir);
}

TEST_CASE("appending to a results file writes the header once") {
  auto dir = scratch_dir("results");
  std::filesystem::create_directories(dir);
  auto path = dir + "/results.csv";
  os::append_locked(path, "h\n", "a\n");
  os::append_locked(path, "h\n", "b\n");
  REQUIRE(contents(path) == "h\na\nb\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("a record appended to a results file whose last line has no newline starts a line of its own") {
  auto dir = scratch_dir("results-newline");
  std::filesystem::create_directories(dir);
  auto path = dir + "/results.csv";
  std::ofstream(path) << "h\na";
  os::append_locked(path, "h\n", "b\n");
  REQUIRE(contents(path) == "h\na\nb\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("a results file under another header is refused before anything runs, naming both headers") {
  auto dir = scratch_dir("results-header");
  std::filesystem::create_directories(dir);
  auto path = dir + "/results.csv";
  std::ofstream(path) << "label,shard,seconds,peak_vram_mib\n//a:b,,5,100\n";
  REQUIRE_THROWS_WITH(os::check_appendable(path, {"label,shard,seconds,peak_vram_mib,node\n"}),
                      Catch::StartsWith(path + ": its header is \"label,shard,seconds,peak_vram_mib\", not "
                                               "\"label,shard,seconds,peak_vram_mib,node\""));
  // A newer gpuplan's, with columns after this one's (a node whose image is older in a rollout).
  std::ofstream(path) << "label,shard,seconds,peak_vram_mib,node,filtered\n";
  REQUIRE_THROWS_WITH(
      os::check_appendable(path, {"label,shard,seconds,peak_vram_mib,node\n"}),
      Catch::EndsWith("than this gpuplan writes (a newer gpuplan began it, with columns after "
                      "this one's): run the same gpuplan on every node that appends to it, or "
                      "give --results a new file"));
  std::ofstream(path) << "label,shard,seconds,peak_vram_mib,node\r\n";
  REQUIRE_NOTHROW(os::check_appendable(path, {"label,shard,seconds,peak_vram_mib,node\n"}));
  std::ofstream(path)
      << "label,shard,seconds,peak_vram_mib,node";  // the header alone, cut short of its newline
  REQUIRE_NOTHROW(os::check_appendable(path, {"label,shard,seconds,peak_vram_mib,node\n"}));
  std::ofstream(path).close();
  REQUIRE_NOTHROW(os::check_appendable(path, {"label,shard,seconds,peak_vram_mib,node\n"}));
  // Zeros where a crash or a full disk left the end unwritten: history refuses such a file whole,
  // so the records appended after them were lost; it is refused before anything runs.
  std::ofstream(path) << "label,shard,seconds,peak_vram_mib,node\n//a:b,,5,100,n\n" << std::string(50, '\0');
  REQUIRE_THROWS_WITH(os::check_appendable(path, {"label,shard,seconds,peak_vram_mib,node\n"}),
                      Catch::StartsWith(path + ": it holds NUL bytes from byte 54 on"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a GPU lock file that is a symbolic link is refused, not followed") {
  auto dir = scratch_dir("symlink");
  std::filesystem::create_directories(dir);
  std::filesystem::create_symlink(dir + "/elsewhere", dir + "/gpu-0.lock");
  REQUIRE_THROWS_WITH(os::GpuLocks::take(dir, {0}, false), Catch::Contains("symbolic link"));
  REQUIRE_FALSE(std::filesystem::exists(dir + "/elsewhere"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a lock directory every user may write to is refused") {
  auto dir = scratch_dir("world");
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::all);
  REQUIRE_THROWS_WITH(os::GpuLocks::take(dir, {0}, false), Catch::Contains("writable by every user"));
  auto link = scratch_dir("link");
  std::filesystem::create_directory_symlink(dir, link);
  REQUIRE_THROWS_WITH(os::GpuLocks::take(link, {0}, false), Catch::Contains("is a symbolic link"));
  std::filesystem::remove_all(dir);
  std::filesystem::remove(link);
}

TEST_CASE("the default lock directory is this user's own") {
  REQUIRE(os::default_lock_dir() == "/tmp/gpuplan-locks-" + std::to_string(::geteuid()));
}

TEST_CASE("a unit's process keeps its GPUs locked after exec let go, until it ends") {
  auto dir = scratch_dir("inherit");
  os::SystemRunner runner;
  int id = 0;
  {
    auto locks = os::GpuLocks::take(dir, {0}, false);
    REQUIRE(locks);
    // Until told to end: a unit of a fixed time could end before the lock is tried (a loaded machine).
    id = runner.start(
        fmt::format("i=0; until [ -e {}/end ] || [ $i = 6000 ]; do sleep 0.01; i=$((i + 1)); done", dir), {},
        locks->fds());
  }
  REQUIRE_FALSE(os::GpuLocks::take(dir, {0}, false));
  std::ofstream(dir + "/end");
  std::vector<ProcessExit> exits;
  while (exits.empty()) exits = runner.wait(runner.now() + 5);
  REQUIRE(exits.front().id == id);
  REQUIRE(os::GpuLocks::take(dir, {0}, false));
  std::filesystem::remove_all(dir);
}

TEST_CASE("the system runner gives a unit its environment and reports its exit status") {
  os::SystemRunner runner;
  int id = runner.start("test \"$GPUPLAN_TEST_X\" = 'a b' && exit 3", {{"GPUPLAN_TEST_X", "a b"}}, {});
  std::vector<ProcessExit> exits;
  while (exits.empty()) exits = runner.wait(runner.now() + 5);
  REQUIRE(exits.front().id == id);
  REQUIRE(exits.front().exit_status == 3);
}

TEST_CASE("a results file that cannot be written is found before anything runs") {
  REQUIRE_THROWS_WITH(os::check_appendable("/nonexistent-dir/results.csv", {"h\n"}),
                      Catch::Contains("results file"));
}

namespace {
/// The processes named in `file`, one a line, once it has `count` lines (within 60 s: a loaded
/// CI machine, under ASan).
std::vector<pid_t> wait_for_pids(const std::string& file, std::size_t count) {
  std::vector<pid_t> pids;
  for (int tries = 0; tries < 6000 && pids.size() < count; ++tries) {
    ::usleep(10'000);
    pids.clear();
    std::ifstream in(file);
    for (pid_t pid; in >> pid;) pids.push_back(pid);
  }
  return pids;
}

/// Whether `pid` is gone (or a zombie) within 30 s: the supervisor's kill under a loaded CI
/// machine once took over 5 s (run_under_test.sh). Returns as soon as it is.
bool ends(pid_t pid) {
  for (int tries = 0; tries < 3000; ++tries) {
    // read(2), not a stream: a process that ends between open and read makes read fail with
    // ESRCH, which libstdc++'s filebuf throws as an exception (a flaky failure seen in CI).
    std::string text(512, '\0');
    int fd = ::open(("/proc/" + std::to_string(pid) + "/stat").c_str(), O_RDONLY | O_CLOEXEC);
    ssize_t got = fd < 0 ? -1 : ::read(fd, text.data(), text.size());
    if (fd >= 0) ::close(fd);
    text.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
    auto close = text.rfind(')');
    if (close == std::string::npos || text.compare(close, 3, ") Z") == 0) return true;
    ::usleep(10'000);
  }
  return false;
}

/// Forks a stand-in for exec (or run-under) that starts `command` as `start` does and waits,
/// kills it with SIGKILL once the command has written `count` process ids to its file, and
/// returns those processes: each must end with it.
std::vector<pid_t> processes_left_by_a_killed_parent(const std::function<void(const std::string&)>& start,
                                                     const std::string& name, std::size_t count) {
  auto dir = scratch_dir(name);
  std::filesystem::create_directories(dir);
  auto file = dir + "/pids";
  pid_t parent = ::fork();
  if (parent == 0) {
    start(file);
    for (;;) ::pause();
  }
  auto pids = wait_for_pids(file, count);
  ::kill(parent, SIGKILL);
  ::waitpid(parent, nullptr, 0);
  std::vector<pid_t> left;
  for (pid_t pid : pids)
    if (!ends(pid)) left.push_back(pid);
  for (pid_t pid : left) ::kill(pid, SIGKILL);  // only those still running: an ended one's PID may be reused
  std::filesystem::remove_all(dir);
  REQUIRE(pids.size() == count);
  return left;
}

/// A unit that starts a child in its process group and one in a session of its own, writes
/// their process ids and its own, and waits.
std::string unit_with_children(const std::string& file) {
  return fmt::format("sleep 30 & echo $! >>{0}; setsid sleep 30 & echo $! >>{0}; echo $$ >>{0}; wait", file);
}
}  // namespace

TEST_CASE("every process of a unit dies when exec is killed with SIGKILL, also those outside its group") {
  auto left = processes_left_by_a_killed_parent(
      [](const std::string& file) {
        auto* runner = new os::SystemRunner;  // lives until the stand-in is killed
        runner->start(unit_with_children(file), {}, {});
      },
      "exec-killed", 3);
  REQUIRE(left.empty());
}

TEST_CASE("every process of a test dies when run-under is killed with SIGKILL") {
  auto left = processes_left_by_a_killed_parent(
      [](const std::string& file) {
        os::spawn({"/bin/sh", "-c", unit_with_children(file)}, {}, false);
      },
      "run-under-killed", 3);
  REQUIRE(left.empty());
}

TEST_CASE("a unit's end passes through its supervisor: the exit code, or the signal that killed it") {
  os::SystemRunner runner;
  auto status_of = [&runner](const std::string& command) {
    int id = runner.start(command, {}, {});
    std::vector<ProcessExit> exits;
    while (exits.empty()) exits = runner.wait(runner.now() + 5);
    REQUIRE(exits.front().id == id);
    return exits.front().exit_status;
  };
  REQUIRE(status_of("exit 7") == 7);
  REQUIRE(status_of("kill -TERM $$") == 143);
  REQUIRE(status_of("kill -KILL $$") == 137);
  REQUIRE(status_of("no-such-command-gpuplan 2>/dev/null") == 127);
}

TEST_CASE("an exec unit that exec's stop reached and that exits 0 anyway ends as the signal ended it") {
  // exec tells by the exit status whether a unit ended by itself as the stop came (0: passed, marked
  // done) or was cut short by it (stopped, its claim given up): a unit that traps SIGTERM and exits 0
  // was cut short, as run-under has it (before, its supervisor passed the 0 on).
  auto dir = scratch_dir("trap-zero");
  std::filesystem::create_directories(dir);
  os::SystemRunner runner;
  int id = runner.start(fmt::format("trap 'exit 0' TERM; : >{}/trapped; sleep 30 & wait", dir), {}, {});
  REQUIRE(appears(dir + "/trapped"));
  runner.signal(id, SIGTERM);  // to its group, as exec's stop sends it
  std::vector<ProcessExit> exits;
  while (exits.empty()) exits = runner.wait(runner.now() + 5);
  REQUIRE(exits.front().id == id);
  REQUIRE(exits.front().exit_status == 128 + SIGTERM);
  std::filesystem::remove_all(dir);
}

TEST_CASE("run-under's SIGTERM reaches the test through its supervisor") {
  // Once the test has set its trap: a SIGTERM before it (a fixed 0.2 s wait on a loaded machine)
  // killed the shell, exit 143.
  auto dir = scratch_dir("sigterm");
  std::filesystem::create_directories(dir);
  pid_t pid = os::spawn(
      {"/bin/sh", "-c", fmt::format("trap 'exit 5' TERM; : >{}/trapped; sleep 30 & wait", dir)}, {}, false);
  REQUIRE(appears(dir + "/trapped"));
  ::kill(pid, SIGTERM);
  int status = 0;
  ::waitpid(pid, &status, 0);
  REQUIRE(os::exit_status(status) == 5);
  std::filesystem::remove_all(dir);
}

TEST_CASE("run-under: a stop that comes once its test has ended cut nothing short; one while it runs did") {
  // Bazel's SIGTERM reaches run-under and its test at once; one that lands as the test exits by itself
  // made run-under call a test that had passed stopped (143), and under --claims give it up to run again.
  // Each case in a child process of its own, leading its own process group: the stop's flags are the
  // process's, and the test's SIGTERM to its group (as Bazel sends it) reaches only the two of them.
  auto ended = [](const std::string& script, bool stop_after) {
    pid_t child = ::fork();
    if (child == 0) {
      ::setpgid(0, 0);
      os::catch_stop_signals();
      pid_t supervisor = os::spawn({"/bin/sh", "-c", script}, {}, false);
      os::forward_stop_signals(supervisor);
      int status = 0;
      while (::waitpid(supervisor, &status, 0) < 0 && errno == EINTR) {
      }
      if (stop_after) ::raise(SIGTERM);
      if (os::stop_signal() != SIGTERM) ::_exit(99);
      ::_exit(os::cut_short_status(os::exit_status(status), os::cut_short()));
    }
    int status = 0;
    ::waitpid(child, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  REQUIRE(ended("exit 0", true) == 0);  // ended by itself before the stop: passed
  REQUIRE(ended("exit 3", true) == 3);
  REQUIRE(ended("trap 'exit 0' TERM; kill -TERM 0; sleep 5", false) == 143);  // trapped it: cut short
  REQUIRE(ended("kill -TERM 0; sleep 5", false) == 143);
}

TEST_CASE("a unit's supervisor holds no other unit's GPU lock") {
  auto dir = scratch_dir("other-lock");
  os::SystemRunner runner;
  auto other = os::GpuLocks::take(dir, {1}, false);
  REQUIRE(other);
  int id = runner.start("sleep 1", {}, {});
  other.reset();
  REQUIRE(os::GpuLocks::take(dir, {1}, false));
  std::vector<ProcessExit> exits;
  while (exits.empty()) exits = runner.wait(runner.now() + 5);
  REQUIRE(exits.front().id == id);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a FIFO where a regular file should be is refused at once, never waited on") {
  auto dir = scratch_dir("fifo");
  std::filesystem::create_directories(dir);
  REQUIRE(::mkfifo((dir + "/gpu-0.lock").c_str(), 0600) == 0);
  REQUIRE_THROWS_WITH(os::GpuLocks::take(dir, {0}, true), Catch::Contains("FIFO"));
  auto for_reading = os::open_regular(dir + "/gpu-0.lock", O_RDONLY);
  REQUIRE_FALSE(for_reading);
  REQUIRE_THAT(for_reading.problem(), Catch::Contains("FIFO"));
  REQUIRE_THROWS_WITH(os::check_appendable(dir + "/gpu-0.lock", {"label\n"}), Catch::Contains("FIFO"));
  auto regular = os::open_regular(dir + "/file", O_WRONLY | O_CREAT);
  REQUIRE(regular);
  REQUIRE((::fcntl(*regular, F_GETFL) & O_NONBLOCK) == 0);
  ::close(*regular);
  std::filesystem::remove_all(dir);
}

TEST_CASE(
    "a supervisor's kill passes end when none is found, or after their time when one outlives SIGKILL") {
  int passes = 0;
  REQUIRE(os::repeat_kill_passes([&] { return ++passes < 1; }, 1) == os::KillPasses::none);
  passes = 0;
  REQUIRE(os::repeat_kill_passes([&] { return ++passes < 4; }, 10) == os::KillPasses::ended);
  REQUIRE(passes == 4);
  // A process stuck in the driver (D state) is found by every pass: before, the supervisor
  // waited for it for ever, and exec with it.
  // Half a second: with 0.05 s a loaded machine that paused this process for as long after the
  // first pass ended it after one.
  passes = 0;
  REQUIRE(os::repeat_kill_passes([&] { return ++passes > 0; }, 0.5) == os::KillPasses::outlived);
  REQUIRE(passes >= 2);
}
