// gpuplan exec: runs one node's units on this machine, each on its planned GPUs, as many
// at once as the GPUs allow, in the plan's order on each GPU.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>
#include <set>
#include <thread>

#include "cli/commands.hpp"
#include "cli/io.hpp"
#include "cli/plan_input.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/export.hpp"
#include "gpuplan/run.hpp"
#include "run/os.hpp"

namespace gpuplan::cli {

namespace {

/// exec's exit code when some unit failed, timed out or did not run (as `bazel test` uses 3).
constexpr int exit_units_failed = 3;

struct ExecOptions {
  std::string plan;
  std::string node;
  std::string command;
  bool dry_run = false;
  std::string results;
  std::string junit;  ///< --junit: JUnit XML of the units that ran, written at the end
  std::string lock_dir;
  int timeout_s = 0;   ///< --timeout: every unit's limit, like Bazel's --test_timeout; 0: by unit
  double grace_s = 5;  ///< between SIGTERM and SIGKILL, like Bazel's --local_termination_grace_seconds
};

enum class Outcome { not_run, running, passed, failed, timed_out, stopped };

struct UnitRun {
  Assignment assignment;
  std::string command;
  int timeout_s = 0;
  Outcome outcome = Outcome::not_run;
  pid_t pid = 0;
  double start = 0;
  double seconds = 0;
  int exit_status = 0;
  double terminated_at = 0;  ///< when SIGTERM went to its process group; 0: not yet
};

std::string_view outcome_name(Outcome outcome) {
  switch (outcome) {
    case Outcome::not_run: return "not run";
    case Outcome::running: return "running";
    case Outcome::passed: return "passed";
    case Outcome::failed: return "failed";
    case Outcome::timed_out: return "timed out";
    case Outcome::stopped: return "stopped";
  }
  return "";
}

std::string describe(const UnitRun& u) {
  if (u.outcome == Outcome::failed) return fmt::format("failed (exit {})", u.exit_status);
  if (u.outcome == Outcome::timed_out) return fmt::format("timed out ({} s)", u.timeout_s);
  return std::string(outcome_name(u.outcome));
}

/// This process's hold on the GPU lock files: one flock a GPU, however many units share it.
class HeldGpus {
 public:
  explicit HeldGpus(std::string dir) : dir_(std::move(dir)) {}
  bool take(const std::vector<int>& gpus) {
    if (dir_.empty()) return true;
    std::vector<int> missing;
    for (int gpu : gpus)
      if (!held_.count(gpu)) missing.push_back(gpu);
    if (!missing.empty()) {
      auto locks = os::GpuLocks::take(dir_, missing, false);
      if (!locks) return false;
      auto shared = std::make_shared<os::GpuLocks>(std::move(*locks));
      for (int gpu : missing) held_[gpu] = {0, shared};
    }
    for (int gpu : gpus) ++held_[gpu].first;
    return true;
  }
  void give_back(const std::vector<int>& gpus) {
    if (dir_.empty()) return;
    for (int gpu : gpus)
      if (--held_[gpu].first == 0) held_.erase(gpu);
  }

 private:
  std::string dir_;
  std::map<int, std::pair<int, std::shared_ptr<os::GpuLocks>>> held_;
};

void print_dry_run(const std::vector<UnitRun>& runs) {
  for (const auto& u : runs) {
    const auto& a = u.assignment;
    std::string env;
    for (const auto& [name, value] : unit_environment(a))
      env += fmt::format(" {}={}", name, shell_quote(value));
    std::cout << fmt::format("# {} on GPUs {}, planned at {} s, timeout {} s\nenv{} /bin/sh -c {}\n",
                             a.unit.id, gpu_list(a.gpus), a.start_s, u.timeout_s, env,
                             shell_quote(u.command));
  }
}

void print_table(const std::vector<UnitRun>& runs) {
  size_t width = 4;
  for (const auto& u : runs) width = std::max(width, u.assignment.unit.id.size());
  std::cout << fmt::format("\n{:<{}}  {:<8}  {:>9}  {}\n", "unit", width, "gpus", "seconds", "status");
  std::map<std::string, int> counts;
  for (const auto& u : runs) {
    bool ran = u.outcome != Outcome::not_run;
    std::cout << fmt::format("{:<{}}  {:<8}  {:>9}  {}\n", u.assignment.unit.id, width,
                             gpu_list(u.assignment.gpus), ran ? fmt::format("{:.1f}", u.seconds) : "-",
                             describe(u));
    ++counts[std::string(outcome_name(u.outcome))];
  }
  std::string summary;
  for (const auto& [what, count] : counts)
    summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", count, what);
  std::cout << fmt::format("{} units: {}\n", runs.size(), summary);
}

int run_exec(const ExecOptions& o) {
  auto plan = read_plan(o.plan);
  auto units = node_assignments(plan, o.node);
  if (units.empty()) {
    std::set<std::string> nodes;
    for (const auto& a : plan.assignments) nodes.insert(a.node);
    throw InputError(Position{o.plan == "-" ? std::string("<stdin>") : o.plan},
                     fmt::format("no units are planned on node \"{}\" (the plan's nodes: {})", o.node,
                                 fmt::join(nodes, ", ")));
  }
  std::vector<UnitRun> runs;
  runs.reserve(units.size());
  for (const auto& a : units)
    runs.push_back({a, o.command.empty() ? default_command(a) : expand_command(o.command, a),
                    o.timeout_s > 0 ? o.timeout_s : timeout_seconds(a.unit)});
  if (o.dry_run) {
    print_dry_run(runs);
    return exit_ok;
  }

  os::catch_stop_signals();
  ExecSchedule schedule(units);
  HeldGpus held(o.lock_dir);
  const double begin = os::now_epoch_s();
  auto progress = [&](const UnitRun& u, const std::string& what) {
    std::cout << fmt::format("[{:7.1f}s] {:<16} {}  gpus {}\n", os::now_epoch_s() - begin, what,
                             u.assignment.unit.id, gpu_list(u.assignment.gpus))
              << std::flush;
  };
  int running = 0;
  while (true) {
    const int stop = os::stop_signal();
    if (!stop) {
      for (size_t i : schedule.ready()) {
        auto& u = runs[i];
        if (!held.take(u.assignment.gpus)) continue;
        u.start = os::now_epoch_s();
        u.pid = os::spawn({"/bin/sh", "-c", u.command}, unit_environment(u.assignment), true);
        u.outcome = Outcome::running;
        schedule.started(i);
        ++running;
        progress(u, "start");
      }
    }
    if (running == 0 && (stop || schedule.all_started())) break;

    int wait_status = 0;
    pid_t pid;
    while ((pid = ::waitpid(-1, &wait_status, WNOHANG)) > 0) {
      for (size_t i = 0; i < runs.size(); ++i) {
        auto& u = runs[i];
        if (u.pid != pid || u.outcome != Outcome::running) continue;
        u.seconds = os::now_epoch_s() - u.start;
        u.exit_status = os::exit_status(wait_status);
        bool timed_out = u.terminated_at > 0 && !stop;
        u.outcome = timed_out                     ? Outcome::timed_out
                    : stop && u.terminated_at > 0 ? Outcome::stopped
                    : u.exit_status == 0          ? Outcome::passed
                                                  : Outcome::failed;
        os::signal_group(u.pid, SIGKILL);  // whatever the unit left behind in its group
        schedule.finished(i);
        held.give_back(u.assignment.gpus);
        --running;
        progress(u, describe(u));
        if (!o.results.empty())
          os::append_locked(o.results, results_header(),
                            to_csv({u.assignment.unit.label, u.assignment.unit.shard_index, u.seconds, o.node,
                                    u.assignment.gpus, u.start, u.exit_status}));
      }
    }
    const double now = os::now_epoch_s();
    for (auto& u : runs) {
      if (u.outcome != Outcome::running) continue;
      if (u.terminated_at == 0 && (stop || now - u.start > u.timeout_s)) {
        os::signal_group(u.pid, SIGTERM);
        u.terminated_at = now;
      } else if (u.terminated_at > 0 && now - u.terminated_at > o.grace_s) {
        os::signal_group(u.pid, SIGKILL);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  print_table(runs);
  if (!o.junit.empty()) {
    std::vector<RunRecord> ran;
    for (const auto& u : runs)
      if (u.outcome != Outcome::not_run && u.outcome != Outcome::running)
        ran.push_back({u.assignment.unit.label, u.assignment.unit.shard_index, u.seconds, o.node,
                       u.assignment.gpus, u.start, u.exit_status});
    write_output(o.junit, results_junit(ran));
  }
  if (int stop = os::stop_signal()) return 128 + stop;
  bool all_passed =
      std::all_of(runs.begin(), runs.end(), [](const UnitRun& u) { return u.outcome == Outcome::passed; });
  return all_passed ? exit_ok : exit_units_failed;
}

}  // namespace

void add_exec_command(CLI::App& app, int& status) {
  auto options = std::make_shared<ExecOptions>();
  auto* command =
      app.add_subcommand("exec", "Run one node's units of a plan on this machine, on their planned GPUs");
  command->add_option("plan", options->plan, "the plan (JSON)")->required();
  command->add_option("--node", options->node, "the node whose units to run")->required();
  command->add_option("--command", options->command,
                      "command template; {label} {unit} {gpus} {shard_index} {shard_count} are "
                      "replaced, shell-quoted (default: bazel test of the label)");
  command
      ->add_option("--timeout", options->timeout_s,
                   "seconds every unit may run (default: by its timeout attribute or size, as Bazel)")
      ->check(CLI::PositiveNumber);
  command->add_flag("--dry-run", options->dry_run, "print what would run, in plan order, and run nothing");
  command->add_option("--results", options->results, "append one results record (CSV) a unit to this file");
  command->add_option("--junit", options->junit,
                      "write JUnit XML of the units that ran to this file at the end");
  command->add_option("--lock-dir", options->lock_dir,
                      "also take the per-GPU lock files run-under uses, to share the GPUs with it");
  command->callback([options, &status] { status = run_exec(*options); });
}

}  // namespace gpuplan::cli
