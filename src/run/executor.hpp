#pragma once
// `exec`'s scheduling loop: starting a node's units, timeouts, SIGTERM, grace, SIGKILL and
// outcomes, over a ProcessRunner so the rules are tested with a fake one (as ninja's
// CommandRunner). The loop sleeps until a child ends, a stop signal comes or a deadline passes.
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuplan/run.hpp"

namespace gpuplan {

/// A started process that ended.
struct ProcessExit {
  int id = 0;
  int exit_status = 0;  ///< the exit code, or 128 + the signal that ended it
};

/// What the loop asks of the operating system.
class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  /// Starts `/bin/sh -c command` in a process group of its own with `env` added to the
  /// environment and `keep_fds` left open in it; returns its id.
  virtual int start(const std::string& command, const std::map<std::string, std::string>& env,
                    const std::vector<int>& keep_fds) = 0;
  /// Sends `signal` to the process group of `id`. SIGKILL may spare the process that leads it
  /// (SystemRunner's supervisor, which kills what the unit left as it ends).
  virtual void signal(int id, int signal) = 0;
  /// SIGKILLs every process of `id`'s group, the one that leads it too, and says on stderr which
  /// outlived the SIGKILL before: the last resort when a unit did not end on it.
  virtual void kill_outright(int id) = 0;
  /// Sleeps until a started process ends, a stop signal comes or now() reaches `until`;
  /// returns the processes that ended (possibly none).
  virtual std::vector<ProcessExit> wait(double until) = 0;
  /// Seconds on a clock that never goes back.
  virtual double now() = 0;
  /// The SIGINT or SIGTERM this process received, or 0.
  virtual int stop_signal() = 0;
};

enum class Outcome { not_run, running, passed, failed, timed_out, stopped, elsewhere };
std::string_view to_string(Outcome outcome);  ///< "passed", "timed out", "ran elsewhere", ...

/// One unit as the loop runs it.
struct UnitRun {
  Assignment assignment;  ///< its GPUs here (for a unit taken from another node, chosen here)
  std::string command;
  double timeout_s = 0;
  Outcome outcome = Outcome::not_run;
  int id = 0;  ///< the runner's process id while it runs
  double start = 0;
  double seconds = 0;
  int exit_status = 0;
  double terminated_at = -1;  ///< when SIGTERM went to it; -1: not yet
  bool holds_node = false;    ///< runs alone on the node
  bool shares_gpu = false;    ///< may share its GPU (a pack plan's): planned_env says so
  bool planned_here = true;   ///< false: taken from another node by dynamic execution
};

/// "failed (exit 7)", "timed out (300 s)", "passed".
std::string describe(const UnitRun& run);

/// What may stop a ready unit from starting now.
enum class Admission { start, later, elsewhere };

/// The loop's hooks for what lies outside one process: GPU locks shared with `run-under`,
/// claims shared with other nodes, progress lines, results records. Each may be empty.
struct ExecHooks {
  /// Before a unit starts: `later` when a lock is taken elsewhere (asked again after
  /// retry_s), `elsewhere` when another node runs it. Fills `keep_fds` with descriptors the
  /// unit's processes inherit (its GPU locks: they stay held while any of them runs).
  std::function<Admission(const UnitRun&, std::vector<int>& keep_fds)> admit;
  std::function<void(const UnitRun&)> starting;  ///< just before its process starts (the record's start)
  std::function<void(const UnitRun&)> started;
  std::function<void(const UnitRun&)> ended;  ///< after its locks and claims are given back
  std::function<void(const UnitRun&)> release;
  /// When GPUs `free` have no unit of this node's list left to run: a unit to run on some of
  /// them (assignment.gpus set, planned_here said), already admitted, `keep_fds` filled as
  /// admit fills them; nullopt when there is none. (Dispatching, the list is empty and every
  /// unit comes from here.)
  std::function<std::optional<UnitRun>(const std::vector<int>& free, std::vector<int>& keep_fds)>
      take_foreign;
  /// True while units this node could take are held by other nodes and not done: an idle
  /// node keeps asking take_foreign every retry_s, to retry them when a dead node's lease expires.
  /// Asked on every pass of the loop while nothing runs here, else at most once a retry_s.
  std::function<bool()> pending_elsewhere;
  /// Called at least every tick_s while units run (claims' lease renewal).
  std::function<void()> tick;
  double tick_s = 0;
  double retry_s = 0.2;
};

/// Runs `runs` (a node's units in plan order, `schedule` made from them) until all have
/// ended or a stop signal came; appends the units take_foreign gave. A unit past its timeout
/// gets SIGTERM, and SIGKILL `grace_s` later, and is killed outright (kill_outright) when it
/// still runs `kill_wait_s` after that; a stop signal sends SIGTERM to all and starts no more.
/// Every ended unit's process group gets SIGKILL (what it left behind). An exception from a hook
/// goes on only once every running unit has been killed (SIGKILL) and has ended (or still ran
/// 2 × kill_wait_s later), so that nothing the caller gives up as it unwinds (claims, GPU locks)
/// is given up while a unit still runs.
void execute(std::vector<UnitRun>& runs, ExecSchedule& schedule, const std::vector<int>& node_gpus,
             ProcessRunner& runner, const ExecHooks& hooks, double grace_s);

/// How long a unit may run on after its SIGKILL before it is killed outright: its supervisor
/// waits for its processes to end, and one stuck in the driver (D state) or not ours to kill
/// never does (before, exec then waited for it for ever, past --timeout and Ctrl-C).
inline constexpr double kill_wait_s = 3;

}  // namespace gpuplan
