// exec's loop over a ProcessRunner: which unit starts when, and how each one ends.
#include "run/executor.hpp"

#include <fmt/format.h>
#include <signal.h>

#include <algorithm>
#include <iostream>
#include <limits>
#include <set>

#include "gpuplan/error.hpp"

namespace gpuplan {

std::string_view to_string(Outcome outcome) {
  switch (outcome) {
    case Outcome::not_run: return "not run";
    case Outcome::running: return "running";
    case Outcome::passed: return "passed";
    case Outcome::failed: return "failed";
    case Outcome::timed_out: return "timed out";
    case Outcome::stopped: return "stopped";
    case Outcome::elsewhere: return "ran elsewhere";
  }
  return "";
}

std::string describe(const UnitRun& u) {
  if (u.outcome == Outcome::failed) return fmt::format("failed (exit {})", u.exit_status);
  if (u.outcome == Outcome::timed_out) return fmt::format("timed out ({} s)", u.timeout_s);
  return std::string(to_string(u.outcome));
}

namespace {

class Loop {
 public:
  Loop(std::vector<UnitRun>& runs, ExecSchedule& schedule, const std::vector<int>& node_gpus,
       ProcessRunner& runner, const ExecHooks& hooks, double grace_s)
      : runs_(runs),
        schedule_(schedule),
        node_gpus_(node_gpus),
        runner_(runner),
        hooks_(hooks),
        grace_s_(grace_s),
        planned_(runs.size()) {
    for (const auto& u : runs_)
      for (int gpu : held(u)) ++own_left_[gpu];
  }

  void run() {
    try {
      loop();
    } catch (...) {
      end_running();
      throw;
    }
  }

 private:
  void loop() {
    double last_tick = runner_.now();
    while (true) {
      const int stop = runner_.stop_signal();
      bool refused = false;
      if (!stop) {
        refused = start_ready();
        start_foreign();
      }
      const double now = runner_.now();
      // Asked on every pass only while nothing runs here (whether to end or wait); while units run,
      // once a retry_s: each ask looks at other nodes' claims, and a pass per unit ended made it
      // cost a look per unit run.
      if (stop || !hooks_.pending_elsewhere) {
        pending_ = false;
      } else if (running_ == 0 || now - pending_asked_ >= hooks_.retry_s) {
        pending_ = hooks_.pending_elsewhere();
        pending_asked_ = now;
      }
      const bool waiting_elsewhere = pending_;
      if (running_ == 0 && !refused && !waiting_elsewhere && (stop || schedule_.ready().empty())) break;
      enforce_deadlines(now, stop);
      if (hooks_.tick && now - last_tick >= hooks_.tick_s) {
        hooks_.tick();
        last_tick = now;
      }
      double until = deadline(now);
      if (refused) until = std::min(until, now + hooks_.retry_s);
      if (waiting_elsewhere) until = std::min(until, std::max(now, pending_asked_ + hooks_.retry_s));
      if (hooks_.tick && running_ > 0) until = std::min(until, last_tick + hooks_.tick_s);
      for (const auto& exit : runner_.wait(until)) ended(exit);
    }
  }

  /// An exception (a hook's: a claim, a record) ends the run: every running unit gets SIGKILL and
  /// is waited for (killed outright when it still runs kill_wait_s later) before it goes on, so
  /// that what the caller gives up as it unwinds (exec's claims, its GPU locks) outlives the
  /// units. Before, exec gave up the claims of units that ran on until its supervisors killed them
  /// as it ended, and another node could start such a unit meanwhile. No hook is called.
  void end_running() noexcept {
    try {
      for (const auto& [id, i] : by_id_) runner_.signal(id, SIGKILL);
      const double start = runner_.now();
      for (bool outright = false; !by_id_.empty();) {
        const double now = runner_.now();
        if (!outright && now - start >= kill_wait_s) {
          for (const auto& [id, i] : by_id_) runner_.kill_outright(id);
          outright = true;
        }
        if (outright && now - start >= 2 * kill_wait_s) return;  // said by the supervisor; not for ever
        for (const auto& exit : runner_.wait(start + (outright ? 2 : 1) * kill_wait_s)) by_id_.erase(exit.id);
      }
    } catch (...) {  // the first exception is the one that goes on
    }
  }

  std::vector<int> held(const UnitRun& u) const { return u.holds_node ? node_gpus_ : u.assignment.gpus; }

  /// Starts every ready unit that is admitted, and those that a start or a skip makes ready
  /// (a pack plan's units that share a GPU start together); true when one had to wait for a lock.
  bool start_ready() {
    std::set<size_t> refused;  // asked once a call: a lock taken elsewhere stays taken meanwhile
    for (bool again = true; again;) {
      again = false;
      for (size_t i : schedule_.ready()) {
        if (refused.count(i)) continue;
        auto& u = runs_[i];
        std::vector<int> fds;
        auto admission = hooks_.admit ? hooks_.admit(u, fds) : Admission::start;
        if (admission == Admission::later) {
          refused.insert(i);
          continue;
        }
        again = true;
        for (int gpu : held(u)) --own_left_[gpu];
        if (admission == Admission::elsewhere) {
          u.outcome = Outcome::elsewhere;
          schedule_.skipped(i);
          if (hooks_.ended) hooks_.ended(u);
          continue;
        }
        if (launch(i, fds))
          schedule_.started(i);
        else
          schedule_.skipped(i);
      }
    }
    return !refused.empty();
  }

  /// GPUs with no unit of this node's list left to run take units planned elsewhere (or, when
  /// dispatching, any unit).
  void start_foreign() {
    if (!hooks_.take_foreign) return;
    while (true) {
      std::vector<int> free;
      if (holders_running_ == 0)
        for (int gpu : node_gpus_)
          if (own_left_[gpu] == 0 && busy_[gpu] == 0) free.push_back(gpu);
      if (free.empty()) return;
      std::vector<int> fds;
      auto unit = hooks_.take_foreign(free, fds);
      if (!unit) return;
      runs_.push_back(std::move(*unit));
      launch(runs_.size() - 1, fds);
    }
  }

  /// Starts unit `i`'s process; false when it could not start, the unit then ended as failed.
  bool launch(size_t i, const std::vector<int>& fds) {
    auto& u = runs_[i];
    if (hooks_.starting) hooks_.starting(u);
    u.start = runner_.now();
    try {
      u.id = runner_.start(u.command, command_env(u.assignment, u.shares_gpu), fds);
    } catch (const InputError& e) {
      // No process or descriptor to be had (fork's EAGAIN at ulimit -u, EMFILE at ulimit -n): the
      // unit failed, as a command the shell cannot find does (127), and the others still run.
      // Before, exec ended there, exit 2, the units running killed and none recorded.
      std::cerr << fmt::format("gpuplan exec: {}: not started: {}\n", u.assignment.unit.id, e.what());
      u.exit_status = 127;
      u.outcome = Outcome::failed;
      if (hooks_.release) hooks_.release(u);
      if (hooks_.ended) hooks_.ended(u);
      return false;
    }
    u.outcome = Outcome::running;
    by_id_[u.id] = i;
    for (int gpu : held(u)) ++busy_[gpu];
    if (u.holds_node) ++holders_running_;
    ++running_;
    if (hooks_.started) hooks_.started(u);
    return true;
  }

  void ended(const ProcessExit& exit) {
    auto it = by_id_.find(exit.id);
    if (it == by_id_.end()) return;
    size_t i = it->second;
    by_id_.erase(it);
    auto& u = runs_[i];
    const bool stop = runner_.stop_signal() != 0;
    u.seconds = runner_.now() - u.start;
    u.exit_status = exit.exit_status;
    const bool terminated = u.terminated_at >= 0;
    // Exit 0 after a stop's SIGTERM: the unit had ended by itself as the stop came (its supervisor
    // ends a unit the SIGTERM reached while it ran as the signal did, 143, however it exited). It
    // passed, and is marked done: before, it was stopped, its claim given up, and it ran again on
    // another node.
    u.outcome = terminated && !stop                        ? Outcome::timed_out
                : terminated && stop && u.exit_status != 0 ? Outcome::stopped
                : u.exit_status == 0                       ? Outcome::passed
                                                           : Outcome::failed;
    runner_.signal(u.id, SIGKILL);  // whatever the unit left behind in its group
    killed_.erase(i);
    killed_outright_.erase(i);
    for (int gpu : held(u)) --busy_[gpu];
    if (u.holds_node) --holders_running_;
    --running_;
    if (i < planned_) schedule_.finished(i);
    if (hooks_.release) hooks_.release(u);
    if (hooks_.ended) hooks_.ended(u);
  }

  void enforce_deadlines(double now, bool stop) {
    for (const auto& [id, i] : by_id_) {
      auto& u = runs_[i];
      if (u.terminated_at < 0 && (stop || now - u.start >= u.timeout_s)) {
        runner_.signal(u.id, SIGTERM);
        u.terminated_at = now;
      } else if (u.terminated_at >= 0 && now - u.terminated_at >= grace_s_ && killed_.insert(i).second) {
        runner_.signal(u.id, SIGKILL);
      } else if (killed_.count(i) && now - u.terminated_at >= grace_s_ + kill_wait_s &&
                 killed_outright_.insert(i).second) {
        runner_.kill_outright(u.id);
      }
    }
  }

  /// The next time a running unit needs a signal; infinity when none does.
  double deadline(double now) const {
    double until = std::numeric_limits<double>::infinity();
    for (const auto& [id, i] : by_id_) {
      const auto& u = runs_[i];
      if (u.terminated_at < 0)
        until = std::min(until, u.start + u.timeout_s);
      else if (!killed_.count(i))
        until = std::min(until, u.terminated_at + grace_s_);
      else if (!killed_outright_.count(i))
        until = std::min(until, u.terminated_at + grace_s_ + kill_wait_s);
    }
    return std::max(until, now);
  }

  std::vector<UnitRun>& runs_;
  ExecSchedule& schedule_;
  const std::vector<int>& node_gpus_;
  ProcessRunner& runner_;
  const ExecHooks& hooks_;
  const double grace_s_;
  const size_t planned_;
  std::map<int, int> own_left_;       ///< per GPU: units of this node not yet started that hold it
  std::map<int, int> busy_;           ///< per GPU: units running on it
  std::map<int, size_t> by_id_;       ///< running units by process id
  std::set<size_t> killed_;           ///< terminated units that got SIGKILL too
  std::set<size_t> killed_outright_;  ///< killed units that still ran kill_wait_s later
  int holders_running_ = 0;
  int running_ = 0;
  bool pending_ = false;                                             ///< pending_elsewhere's last answer
  double pending_asked_ = -std::numeric_limits<double>::infinity();  ///< when it was asked
};

}  // namespace

void execute(std::vector<UnitRun>& runs, ExecSchedule& schedule, const std::vector<int>& node_gpus,
             ProcessRunner& runner, const ExecHooks& hooks, double grace_s) {
  Loop(runs, schedule, node_gpus, runner, hooks, grace_s).run();
}

}  // namespace gpuplan
