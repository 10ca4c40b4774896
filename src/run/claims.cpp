#include "run/claims.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <sstream>
#include <thread>
#include <tuple>
#include <vector>

#include "gpuplan/error.hpp"
#include "run/os.hpp"
#include "util/text.hpp"

namespace gpuplan::os {

namespace {

double mtime(const struct stat& info) {
  return static_cast<double>(info.st_mtim.tv_sec) + static_cast<double>(info.st_mtim.tv_nsec) * 1e-9;
}

/// FNV-1a: a unit id as a file name of 16 hex digits, whatever characters the label has.
std::string hashed(const std::string& unit) { return fmt::format("{:016x}", util::fnv1a(unit)); }

void touch(const std::string& path, double seconds_ago = 0) {
  if (seconds_ago <= 0) {
    ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);
    return;
  }
  struct timespec times[2] = {{0, UTIME_OMIT}, {1, 0}};  // the epoch: older than any lease
  ::utimensat(AT_FDCWD, path.c_str(), times, 0);
}

/// The words of the claims file `path`; nullopt when there is none. Throws InputError when
/// something else than a regular file has its name (a FIFO there would stop the node).
std::optional<std::string> read_claim_file(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0 && errno == ENOENT) return std::nullopt;
  auto fd = open_regular(path, O_RDONLY | O_NOFOLLOW);
  if (!fd) throw InputError(Position{path}, fmt::format("cannot read the claim: {}", fd.problem()));
  std::string text;
  char buffer[256];
  for (ssize_t n; (n = ::read(*fd, buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(*fd);
  return text;
}

/// Opens a file of this node's own in the claims directory for writing; throws InputError.
int open_own(const std::string& dir, const std::string& path, int flags) {
  auto fd = open_regular(path, O_WRONLY | O_CREAT | O_NOFOLLOW | flags);
  if (!fd)
    throw InputError(Position{dir},
                     fmt::format("cannot write in the claims directory: {}: {}", path, fd.problem()));
  return *fd;
}

/// This process's PID namespace ("pid:[4026531836]"): a PID means a process only inside it.
std::string pid_namespace() {
  char target[64] = {};
  auto n = ::readlink("/proc/self/ns/pid", target, sizeof target - 1);
  return n > 0 ? std::string(target, static_cast<std::size_t>(n)) : "unknown";
}

/// Throws InputError when `info` (lstat's, of `path`, a claim or a done mark) is not a regular
/// file: gpuplan makes none other in a claims directory, so someone else put it there. Before, a
/// FIFO that had a claim's name was judged by its time as a live claim: the unit waited a lease,
/// said only "held elsewhere", or was not run at all, without a word naming it.
void require_regular(const std::string& path, const struct stat& info) {
  if (S_ISREG(info.st_mode)) return;
  throw InputError(Position{path},
                   fmt::format("{} has the name of a unit's claim, where gpuplan makes only regular files: "
                               "someone else made it. Remove it; the unit is not run by this node meanwhile",
                               S_ISFIFO(info.st_mode)  ? "a FIFO"
                               : S_ISDIR(info.st_mode) ? "a directory"
                               : S_ISLNK(info.st_mode) ? "a symbolic link"
                                                       : "a file that is not a regular file"));
}

/// Throws InputError when `error`, link_new()'s, is other than 0 or EEXIST (a name another process
/// linked first): the file server failed (EIO), and no number after it would do better. Before,
/// such a link was taken for a race lost: a claim for another node's, and a node's launch count or
/// hold linked number after number, for ever.
void require_linked(int error, const std::string& dir, const std::string& target) {
  if (error == 0 || error == EEXIST) return;
  throw InputError(Position{dir},
                   fmt::format("cannot write in the claims directory: {}: {}", target, std::strerror(error)));
}

/// The highest N for which `base`.N exists; -1 when none does.
int highest(const std::string& base) {
  int n = -1;
  struct stat info {};
  while (::lstat(fmt::format("{}.{}", base, n + 1).c_str(), &info) == 0) ++n;
  return n;
}

}  // namespace

Claims::Claims(std::string dir, std::string node, double lease_s)
    : dir_(std::move(dir)), node_(std::move(node)), lease_s_(lease_s) {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec)
    throw InputError(Position{dir_}, fmt::format("cannot create the claims directory: {}", ec.message()));
  started_s_ = fs_now();
}

Claims::~Claims() {
  // A claim still held as this process ends is of a unit that did not run to its end here (exec
  // stopped while the unit waited for a GPU another process locks): given up, for another node to
  // run it now. Before, it stayed held until the lease ran out.
  // A unit that ran here but whose done mark could not be written keeps its claim as last renewed:
  // given up, another node would run it again at once.
  for (const auto& [unit, claim] : held_)
    if (!unmarked_.count(unit)) touch(claim, 1);
  if (!node_hold_.empty()) touch(node_hold_, 1);  // given up: the next exec of this node may start
  ::unlink(fmt::format("{}/.clock-{}-{}", dir_, node_, ::getpid()).c_str());
}

std::string Claims::path(const std::string& unit, const std::string& suffix) const {
  return fmt::format("{}/{}.{}", dir_, hashed(unit), suffix);
}

int Claims::current(const std::string& unit) const { return highest(dir_ + "/" + hashed(unit)); }

double Claims::fs_now() {
  auto clock = fmt::format("{}/.clock-{}-{}", dir_, node_, ::getpid());
  ::close(open_own(dir_, clock, 0));
  touch(clock);
  struct stat info {};
  ::stat(clock.c_str(), &info);
  return mtime(info);
}

int Claims::link_new(const std::string& target, const std::string& text) {
  // A name no other process has: run-unders in Bazel's sandboxes have PID namespaces of their own,
  // and two of one node with one PID wrote each other's file (a done mark's exit status).
  std::string mine = fmt::format("{}/.tmp-{}-XXXXXX", dir_, node_);
  // O_CLOEXEC: a process another thread starts meanwhile must not inherit it.
  int fd = ::mkostemp(mine.data(), O_CLOEXEC);
  if (fd < 0)
    throw InputError(Position{dir_},
                     fmt::format("cannot write in the claims directory: {}: {}", mine, std::strerror(errno)));
  // Linked only whole: a claim file cut short by a full disk or a quota would say nothing.
  bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  if (::close(fd) != 0 || !written) {
    auto why = std::strerror(errno);
    ::unlink(mine.c_str());
    throw InputError(Position{dir_}, fmt::format("cannot write in the claims directory: {}: {}", mine, why));
  }
  int error = ::link(mine.c_str(), target.c_str()) == 0 ? 0 : errno;
  struct stat info {};
  if (error != 0 && ::stat(mine.c_str(), &info) == 0 && info.st_nlink == 2) error = 0;  // NFS: a retried link
  ::unlink(mine.c_str());
  return error;
}

std::optional<double> Claims::belong_to(const std::string& stamp, const std::string& plan) {
  const auto record = dir_ + "/plan.stamp";
  const auto text = fmt::format("{}\n{}\n{}\n", stamp, plan, lease_s_);
  auto read = read_claim_file(record);  // every launch of run-under asks: a read, mostly
  if (!read) {
    int error = link_new(record, text);
    if (error == 0) return std::nullopt;
    require_linked(error, dir_, record);
  }
  auto recorded = read ? *read : read_claim_file(record).value_or("");
  std::vector<std::string_view> lines;  // stamp, plan, lease (none before the lease was recorded)
  for (std::string_view rest = recorded; !rest.empty() && lines.size() < 3;) {
    lines.push_back(rest.substr(0, rest.find('\n')));
    rest.remove_prefix(std::min(rest.size(), lines.back().size() + 1));
  }
  lines.resize(3);
  auto [recorded_stamp, recorded_plan, recorded_lease] = std::tuple(lines[0], lines[1], lines[2]);
  if (recorded_stamp == stamp) {
    // A node judging with a shorter lease than another renews with took that node's live units.
    double lease = std::strtod(std::string(recorded_lease).c_str(), nullptr);
    if (!(lease >= 10 && lease <= 365 * 86400) || lease == lease_s_) return std::nullopt;  // --lease's range
    lease_s_ = lease;
    return lease;
  }
  throw InputError(
      Position{dir_},
      fmt::format("this claims directory holds the claims of another plan ({}, {}; this run's plan: {}, {}): "
                  "its units marked done there would not run now. Give each run a directory of its own "
                  "(--claims DIR/$RUN_ID), or remove this one",
                  util::excerpt(recorded_plan, 200), util::excerpt(recorded_stamp, 100), plan, stamp));
}

Claims::State Claims::state(const std::string& unit) {
  int ignored = -1;
  return judge(unit, ignored);
}

Claims::State Claims::judge(const std::string& unit, int& n) {
  struct stat info {};
  if (const auto done = path(unit, "done"); ::lstat(done.c_str(), &info) == 0) {
    require_regular(done, info);
    return State::done;
  }
  n = current(unit);
  if (n < 0) return State::free;
  auto claim = path(unit, std::to_string(n));
  if (auto it = held_.find(unit); it != held_.end() && it->second == claim) return State::ours;
  if (::lstat(claim.c_str(), &info) != 0) return State::free;
  require_regular(claim, info);
  return fs_now() - mtime(info) > lease_s_ ? State::expired : State::held;
}

bool Claims::claim(const std::string& unit) {
  int n = -1;
  auto s = judge(unit, n);
  if (s == State::ours) return true;
  if (s != State::free && s != State::expired) return false;
  // The number after the claim judged free or expired, never after one linked since: another
  // node that took the unit meanwhile holds that very number, so the link fails here. (Counting
  // again would link past its fresh claim, and both nodes would run the unit.)
  auto target = path(unit, std::to_string(n + 1));
  int error = link_new(target, fmt::format("{} {}\n", node_, ::getpid()));
  require_linked(error, dir_, target);
  if (error != 0) return false;
  struct stat info {};
  if (::lstat(path(unit, "done").c_str(), &info) == 0) return false;  // it ended while this node looked
  held_[unit] = target;
  return true;
}

std::vector<std::string> Claims::renew() {
  for (const auto& [unit, claim] : held_) touch(claim);
  if (!node_hold_.empty()) touch(node_hold_);
  std::vector<std::string> marked;
  for (auto it = unmarked_.begin(); it != unmarked_.end();) {
    auto why = mark_done(it->first, it->second.first);
    if (!why.empty()) {
      it->second.second = std::move(why);
      ++it;
      continue;
    }
    marked.push_back(it->first);
    held_.erase(it->first);
    it = unmarked_.erase(it);
  }
  return marked;
}

std::string Claims::mark_done(const std::string& unit, const std::string& text) {
  const auto mark = path(unit, "done");
  int error = 0;
  try {
    error = link_new(mark, text);
  } catch (const InputError& e) {
    // A full disk or quota: the claim this node holds has its space already. Rewritten in place
    // (a few bytes more, in its block) and linked as the done mark, which takes no new space.
    auto held = held_.find(unit);
    if (held == held_.end()) return e.what();
    int fd = ::open(held->second.c_str(), O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    bool rewritten =
        fd >= 0 && ::pwrite(fd, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size());
    if (fd >= 0 && ::close(fd) != 0) rewritten = false;
    if (!rewritten) return e.what();
    error = ::link(held->second.c_str(), mark.c_str()) == 0 ? 0 : errno;
  }
  // EEXIST: the mark is there already (a node that took the unit over after a lease ran out ended it too).
  if (error == 0 || error == EEXIST) return {};
  return fmt::format("{}: cannot write the done mark {}: {}", dir_, mark, std::strerror(error));
}

std::string Claims::done(const std::string& unit, int exit_status) {
  const auto text = fmt::format("{} {} {}\n", node_, ::getpid(), exit_status);
  // Tried again at once: a file server's EIO may be a moment's. Before, a link that failed was not
  // noticed (the unit's claim went unrenewed, and another node ran it again once the lease ran out),
  // and a mark that could not be written at all ended exec mid-run and gave the claim up at once.
  std::string why;
  for (int attempt = 0; attempt < done_tries; ++attempt) {
    if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(100 * attempt));
    why = mark_done(unit, text);
    if (why.empty()) {
      held_.erase(unit);
      unmarked_.erase(unit);
      return {};
    }
  }
  if (held_.count(unit)) unmarked_[unit] = {text, why};
  return why;
}

std::vector<std::pair<std::string, std::string>> Claims::unmarked() const {
  std::vector<std::pair<std::string, std::string>> units;
  for (const auto& [unit, mark] : unmarked_) units.emplace_back(unit, mark.second);
  return units;
}

std::optional<Claims::Ran> Claims::ran(const std::string& unit) const {
  auto text = read_claim_file(path(unit, "done"));
  if (!text) return std::nullopt;
  std::istringstream in(*text);
  Ran ran;
  long pid = 0;
  in >> ran.node >> pid >> ran.exit_status;
  struct stat info {};
  if (::lstat(path(unit, "done").c_str(), &info) == 0) ran.finished_s = mtime(info);
  return ran;
}

std::string Claims::holder(const std::string& unit) const {
  int n = current(unit);
  if (n < 0) return {};
  std::istringstream in(read_claim_file(path(unit, std::to_string(n))).value_or(""));
  std::string node;
  in >> node;
  return node;
}

void Claims::hold_node() {
  const auto base = fmt::format("{}/node-{}", dir_, hashed(node_));
  const auto host = host_name();
  const auto pids = pid_namespace();
  while (true) {
    int n = highest(base);
    if (n >= 0) {
      auto current = fmt::format("{}.{}", base, n);
      struct stat info {};
      std::string holder_node, holder_host, holder_pids;
      long holder_pid = 0;
      if (auto text = read_claim_file(current))
        std::istringstream(*text) >> holder_node >> holder_host >> holder_pid >> holder_pids;
      // Gone only where its PID means the same process: a container of the host's network (one
      // host name) has PIDs of its own, and a live exec there looked gone.
      // (No namespace: a hold gpuplan wrote before it wrote them, taken as this one's, as then.)
      const bool gone = holder_host == host && (holder_pids == pids || holder_pids.empty()) &&
                        holder_pid > 0 && ::kill(static_cast<pid_t>(holder_pid), 0) != 0 && errno == ESRCH;
      if (::lstat(current.c_str(), &info) == 0 && fs_now() - mtime(info) <= lease_s_ && !gone)
        throw InputError(
            Position{dir_},
            fmt::format(
                "node {} is already live in this claims directory: process {} on host {} holds it "
                "({}, renewed 4 times a lease). Two execs of one node would run two units on one GPU; "
                "a hold is taken over once it is older than the lease ({} s)",
                node_, holder_pid, holder_host, current, lease_s_));
    }
    auto next = fmt::format("{}.{}", base, n + 1);
    int error = link_new(next, fmt::format("{} {} {} {}\n", node_, host, ::getpid(), pids));
    require_linked(error, dir_, next);
    if (error == 0) {
      node_hold_ = next;
      return;
    }
  }
}

std::string Claims::launch_base(const std::string& unit) const {
  return fmt::format("{}/launch-{}", dir_, hashed(node_ + '\n' + unit));
}

int Claims::launches(const std::string& unit) const { return highest(launch_base(unit)) + 1; }

void Claims::launched(const std::string& unit) {
  auto base = launch_base(unit);
  for (int n = highest(base) + 1;; ++n) {
    const auto next = fmt::format("{}.{}", base, n);
    int error = link_new(next, node_ + '\n');
    require_linked(error, dir_, next);
    if (error == 0) return;
  }
}

void Claims::abandon(const std::string& unit) {
  if (auto it = held_.find(unit); it != held_.end()) {
    touch(it->second, 1);
    held_.erase(it);
  }
}

}  // namespace gpuplan::os
