// gpuplan exec: runs one node's units on this machine, each on its planned GPUs, as many
// at once as the GPUs allow, in the plan's order on each GPU.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <iostream>
#include <memory>
#include <set>

#include "cli/commands.hpp"
#include "cli/io.hpp"
#include "cli/plan_input.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/run.hpp"
#include "run/executor.hpp"
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
  std::string lock_dir;
  int timeout_s = 0;   ///< --timeout: every unit's limit, like Bazel's --test_timeout; 0: by unit
  double grace_s = 5;  ///< between SIGTERM and SIGKILL, like Bazel's --local_termination_grace_seconds
};

/// This process's hold on the GPU lock files: one flock a GPU, however many units share it.
class HeldGpus {
 public:
  explicit HeldGpus(std::string dir) : dir_(std::move(dir)) {}
  /// Takes the GPUs' locks (shared with the units already holding them here) and adds
  /// their descriptors to `fds`; false when another process holds one.
  bool take(const std::vector<int>& gpus, std::vector<int>& fds) {
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
    for (int gpu : gpus) {
      auto& [count, locks] = held_[gpu];
      ++count;
      fds.insert(fds.end(), locks->fds().begin(), locks->fds().end());
    }
    std::sort(fds.begin(), fds.end());
    fds.erase(std::unique(fds.begin(), fds.end()), fds.end());
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
    ++counts[std::string(to_string(u.outcome))];
  }
  std::string summary;
  for (const auto& [what, count] : counts)
    summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", count, what);
  std::cout << fmt::format("{} units: {}\n", runs.size(), summary);
}

/// The GPUs of the node as far as the plan knows: 0 .. the highest index planned on it.
std::vector<int> node_gpu_list(const Plan& plan, const std::string& node) {
  std::vector<int> gpus(static_cast<size_t>(planned_gpu_count(plan, node)));
  for (size_t i = 0; i < gpus.size(); ++i) gpus[i] = static_cast<int>(i);
  return gpus;
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
  for (const auto& a : units) {
    UnitRun u;
    u.assignment = a;
    u.command = o.command.empty() ? default_command(a) : expand_command(o.command, a);
    u.timeout_s = o.timeout_s > 0 ? o.timeout_s : timeout_seconds(a.unit);
    u.holds_node = holds_whole_node(a, plan.policy);
    runs.push_back(std::move(u));
  }
  if (o.dry_run) {
    print_dry_run(runs);
    return exit_ok;
  }
  if (!o.results.empty()) os::check_appendable(o.results);

  os::SystemRunner runner;
  ExecSchedule schedule(units, plan.policy);
  const auto node_gpus = node_gpu_list(plan, o.node);
  HeldGpus held(o.lock_dir);
  const double begin = runner.now();
  auto progress = [&](const UnitRun& u, const std::string& what) {
    std::cout << fmt::format("[{:7.1f}s] {:<16} {}  gpus {}\n", runner.now() - begin, what,
                             u.assignment.unit.id, gpu_list(u.assignment.gpus))
              << std::flush;
  };
  int record_errors = 0;
  ExecHooks hooks;
  hooks.admit = [&](const UnitRun& u, std::vector<int>& fds) {
    return held.take(u.holds_node ? node_gpus : u.assignment.gpus, fds) ? Admission::start : Admission::later;
  };
  hooks.release = [&](const UnitRun& u) { held.give_back(u.holds_node ? node_gpus : u.assignment.gpus); };
  hooks.started = [&](const UnitRun& u) { progress(u, "start"); };
  hooks.ended = [&](const UnitRun& u) {
    progress(u, describe(u));
    if (o.results.empty() || u.outcome == Outcome::elsewhere) return;
    const double start_epoch = os::now_epoch_s() - (runner.now() - u.start);
    try {
      os::append_locked(o.results, results_header(),
                        to_csv({u.assignment.unit.label, u.assignment.unit.shard_index, u.seconds, o.node,
                                u.assignment.gpus, start_epoch, u.exit_status}));
    } catch (const InputError& e) {  // the other units still run; exec fails at the end
      ++record_errors;
      std::cerr << fmt::format("gpuplan exec: {}\n", e.what());
    }
  };
  execute(runs, schedule, node_gpus, runner, hooks, o.grace_s);
  print_table(runs);
  if (int stop = runner.stop_signal()) return 128 + stop;
  if (record_errors > 0) return exit_internal;
  bool all_passed = std::all_of(runs.begin(), runs.end(), [](const UnitRun& u) {
    return u.outcome == Outcome::passed || u.outcome == Outcome::elsewhere;
  });
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
  command->add_option("--lock-dir", options->lock_dir,
                      "also take the per-GPU lock files run-under uses, to share the GPUs with it");
  command->callback([options, &status] { status = run_exec(*options); });
}

}  // namespace gpuplan::cli
