// gpuplan exec: runs one node's units on this machine, each on its planned GPUs, as many
// at once as the GPUs allow, in the plan's order on each GPU.
#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
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
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "cli/commands.hpp"
#include "cli/io.hpp"
#include "cli/number_options.hpp"
#include "cli/plan_input.hpp"
#include "core/utf8.hpp"
#include "gpuplan/bazelrc.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/export.hpp"
#include "gpuplan/history.hpp"
#include "gpuplan/limits.hpp"
#include "gpuplan/run.hpp"
#include "run/claims.hpp"
#include "run/dispatch.hpp"
#include "run/executor.hpp"
#include "run/gpu_usage.hpp"
#include "run/longest_first.hpp"
#include "run/os.hpp"
#include "util/shell_words.hpp"
#include "util/text.hpp"

namespace gpuplan::cli {

namespace {

/// The test filter a --command template's units run under, said as "--test_filter=X", or empty:
/// Bazel's TESTBRIDGE_TEST_ONLY or googletest's GTEST_FILTER in exec's environment (the units
/// inherit it), a `bazel test --test_filter=` or `--test_arg=--gtest_filter=` in the template,
/// `--gtest_filter=` itself, or pytest's -k in a template that runs pytest (elsewhere -k is
/// another program's flag: curl's, ssh's). The template's words are the shell's (`'--test_arg=-k
/// gemm'` is one word, as bazel test gets it, and so is `--test_filter="A B"`).
std::string command_test_filter(const std::string& command_template) {
  if (const char* filter = std::getenv("TESTBRIDGE_TEST_ONLY"); filter && *filter)
    return fmt::format("TESTBRIDGE_TEST_ONLY={}", util::excerpt(filter, 100));
  if (const char* filter = std::getenv("GTEST_FILTER"); filter && *filter && std::string_view(filter) != "*")
    return fmt::format("GTEST_FILTER={}", util::excerpt(filter, 100));
  const auto words = util::shell_words(command_template);
  const bool pytest = std::any_of(words.begin(), words.end(),
                                  [](const std::string& w) { return w.find("pytest") != std::string::npos; });
  if (auto filter = bazel_test_filter(words); !filter.empty())
    return fmt::format("the test filter {} in --command", util::excerpt(filter, 100));
  if (auto filter = test_case_filter(words, pytest); !filter.empty())
    return fmt::format("the test filter {} in --command", util::excerpt(filter, 100));
  return {};
}

/// A caller's ONEAPI_DEVICE_SELECTOR that would hide some of a unit's GPUs from SYCL and oneAPI
/// (`level_zero:0` counts among the unit's own GPUs, and shows a unit of 2 one of them) is not passed
/// to such units (inherited_by_unit): said once, with the first unit's reason and how many.
void warn_of_oneapi_selector(const std::vector<UnitRun>& runs) {
  const char* selector = std::getenv("ONEAPI_DEVICE_SELECTOR");
  if (!selector || !*selector) return;
  std::string why;
  long hidden = 0;
  for (const auto& u : runs)
    if (auto reason = oneapi_selector_hides_gpus(selector, u.assignment.gpus.size());
        !reason.empty() && hidden++ == 0)
      why = fmt::format("{} ({})", reason, u.assignment.unit.id);
  if (hidden == 0) return;
  std::cerr << fmt::format(
      "gpuplan exec: warning: ONEAPI_DEVICE_SELECTOR={} in exec's environment {}: a SYCL or oneAPI test "
      "would run on fewer GPUs than the plan gave it, or none, and may pass; it is unset for the {} unit{} "
      "it would do that to (a selector that names backends only, such as level_zero:*, is passed on)\n",
      util::excerpt(selector, 100), why, hidden, util::plural(hidden));
}

/// exec's exit code when some unit failed, timed out or did not run (as `bazel test` uses 3).
constexpr int exit_units_failed = 3;

struct ExecOptions {
  std::string plan;
  std::string node;
  std::string command;
  bool dry_run = false;
  std::string results;
  std::string junit;  ///< --junit: JUnit XML of the units that ran, written at the end
  std::string json;   ///< --json: a JSON summary of every unit and the totals, written at the end
  std::string lock_dir;
  int timeout_s = 0;   ///< --timeout: every unit's limit, like Bazel's --test_timeout; 0: by unit
  double grace_s = 5;  ///< between SIGTERM and SIGKILL, like Bazel's --local_termination_grace_seconds
  std::string claims;  ///< --claims: the directory the nodes of one run share; empty: static
  double lease_s = 60;
  bool static_only = false;             ///< --static: only this node's planned units, even with --claims
  std::string fleet;                    ///< --fleet: lets this node take units planned on other nodes
  std::vector<std::string> bazel_args;  ///< after --: options for the default bazel test
  bool warn_missing_gpus = false;       ///< --missing-gpus=warn
  std::string query;  ///< --query, passed on to run-under: bazel query output of the commit Bazel runs
  std::string rules;  ///< --rules, for --query
};

/// Before the first unit: the node's GPUs must be on this machine (missing_gpus), and be what
/// its units need (unmet_here), or units would run without their GPUs, or on GPUs or a driver
/// that cannot do what they test. Refused, exit 2, unless --missing-gpus=warn.
/// `machine`: describe_machine() of `nvml`.
void check_gpus_here(const ExecOptions& o, const std::vector<int>& node_gpus,
                     const std::vector<Assignment>& units, Nvml* nvml,
                     const std::optional<Machine>& machine) {
  auto problem = missing_gpus(node_gpus, nvml);
  if (problem.empty())
    problem = outside_allocation(node_gpus, std::getenv("CUDA_VISIBLE_DEVICES"),
                                 std::getenv("ROCR_VISIBLE_DEVICES"));
  if (problem.empty() && machine) {
    int unmet = 0;
    for (const auto& a : units)
      if (auto why = unmet_here(*a.unit.requirement, a.gpus, *machine); !why.empty() && unmet++ == 0)
        problem = fmt::format("{} {}", a.unit.id, why);
    if (unmet > 1)
      problem += fmt::format(" ({} more unit{} of this node cannot run here either)", unmet - 1,
                             unmet == 2 ? "" : "s");
  }
  if (problem.empty()) return;
  if (!o.warn_missing_gpus)
    throw InputError(Position{fmt::format("node {}", o.node)},
                     fmt::format("{}; nothing was run (--missing-gpus=warn runs the units anyway)", problem));
  auto recorded = o.results.empty() || present_gpus(node_gpus, nvml) == node_gpus
                      ? std::string()
                      : std::string(
                            "; their results records give them only those of their GPUs this machine "
                            "has (a unit given none here: no GPU, which history leaves out of its "
                            "duration)");
  std::cerr << fmt::format(
      "gpuplan exec: warning: node {}: {}; running the units anyway (--missing-gpus=warn){}\n", o.node,
      problem, recorded);
}

/// Dynamic execution: this node's units claimed before they start, and units planned
/// elsewhere (or left by a dead node) taken when this node's GPUs would sit idle.
class Sharing {
 public:
  /// `here`: this node in --fleet (nullptr without it), which dispatching needs.
  /// `machine`: this machine as NVML sees it (nullptr without NVML).
  Sharing(const ExecOptions& o, const Plan& plan, const Node* here, const Machine* machine)
      : claims_(o.claims, o.node, o.lease_s), node_name_(o.node), policy_(plan.policy) {
    belong_to_plan(claims_, o.plan, o.lease_s, "exec");
    claims_.hold_node();  // one exec a node: a second would hand out its GPUs again
    if (o.static_only) return;
    here_ = here;
    // Only units this node can ever run: take() and pending() look at no others. One the fleet
    // says this node can run but NVML says this machine cannot is left to the others.
    std::vector<int> every_gpu;
    if (here_)
      for (const auto& gpu : here_->gpus) every_gpu.push_back(gpu.index);
    int unmet = 0;
    for (const auto& a : plan.assignments) {
      if (a.node != o.node && !(here_ && gpus_here(a, *here_, every_gpu, holds_whole_node(a, policy_))))
        continue;
      auto why =
          a.node == o.node || !machine ? std::string() : unmet_here(*a.unit.requirement, every_gpu, *machine);
      if (why.empty())
        candidates_.push_back(&a);
      else if (unmet++ == 0)
        std::cerr << fmt::format(
            "gpuplan exec: warning: node {}: --fleet says this node can run units planned "
            "elsewhere that this machine cannot; it leaves them to the other nodes. {} {}\n",
            o.node, a.unit.id, why);
    }
    if (unmet > 1)
      std::cerr << fmt::format("gpuplan exec: warning: node {}: {} such units in all\n", o.node, unmet);
    // Dispatch order (run/dispatch.hpp, as `simulate` replays it): longest planned first, so
    // the units most likely to end the run start while there is time.
    std::sort(candidates_.begin(), candidates_.end(),
              [](const Assignment* x, const Assignment* y) { return dispatched_before(*x, *y); });
    for (size_t k = 0; k < candidates_.size(); ++k) {
      index_.emplace(candidates_[k]->unit.id, k);
      open(k);
    }
  }
  /// --static: this node's unit that another process holds (a dead predecessor's claim whose
  /// lease runs on, or a dynamic node that took it early) is waited for like another node's:
  /// taken over when the lease expires, else reported as it ended there.
  void wait_for(const Assignment& a) {
    auto state = state_of(a.unit.id);
    if (taken_.count(a.unit.id) || !state || *state == os::Claims::State::done) return;
    candidates_.push_back(&waited_.emplace_back(a));
    index_[candidates_.back()->unit.id] = candidates_.size() - 1;
    elsewhere_.insert(candidates_.size() - 1);
  }
  os::Claims& claims() { return claims_; }
  /// Marks a unit that ran here done. One whose mark cannot be written (EIO, a full disk) keeps its
  /// outcome here and is said: this node holds its claim and tries the mark again while exec runs
  /// (renew()). Before, exec ended mid-run (exit 2, its running units killed) and gave the claim up,
  /// so another node ran the unit again at once; or, where the link alone failed, said nothing and
  /// let the claim lapse.
  void done(const UnitRun& u) {
    const auto& unit = u.assignment.unit.id;
    auto why = claims_.done(unit, u.outcome == Outcome::passed ? 0 : std::max(u.exit_status, 1));
    if (!why.empty())
      std::cerr << fmt::format(
          "gpuplan exec: {} ran here ({}), but its done mark cannot be written: {} (tried {} times). This "
          "node holds its claim and tries again every {:g} s while exec runs\n",
          unit, describe(u), why, os::Claims::done_tries, claims_.lease_s() / 4);
  }
  /// The tick: renews this node's claims, and says each done mark written late.
  void renew() {
    for (const auto& unit : claims_.renew())
      std::cerr << fmt::format("gpuplan exec: {}: its done mark is written now\n", unit);
  }
  /// As exec ends: the done marks still not written, after a last try, each said; how many.
  int unmarked_at_end() {
    renew();
    const auto unmarked = claims_.unmarked();
    for (const auto& [unit, why] : unmarked)
      std::cerr << fmt::format(
          "gpuplan exec: error: {} ran here, but its done mark is not written: {}. Another node may run it "
          "again once the lease ({:g} s) has run out\n",
          unit, why, claims_.lease_s());
    return static_cast<int>(unmarked.size());
  }
  /// Claims `unit` for this node; false when another node holds it, and when the claim cannot be
  /// made (a full disk, a quota; a FIFO with its name): the unit is then not run here, said once,
  /// and exec goes on with the units already running (before, it ended mid-run, exit 2, and they
  /// were killed).
  bool claim(const std::string& unit) {
    try {
      return claims_.claim(unit);
    } catch (const InputError& e) {
      refused(unit, e);
      return false;
    }
  }
  /// claims().state(), or nullopt (said once) when the unit's claim is not a regular file.
  std::optional<os::Claims::State> state_of(const std::string& unit) {
    try {
      return claims_.state(unit);
    } catch (const InputError& e) {
      refused(unit, e);
      return std::nullopt;
    }
  }
  /// claims().ran(), or nullopt where the unit's done mark cannot be read (said by state_of()).
  std::optional<os::Claims::Ran> ran(const std::string& unit) const {
    try {
      return claims_.ran(unit);
    } catch (const InputError&) {
      return std::nullopt;
    }
  }
  /// A unit whose claim could not be made here (refused()): not run here, said once.
  bool unclaimable(const std::string& unit) const { return unclaimable_.count(unit) > 0; }
  void ran_here(const std::string& unit) { taken_.insert(unit); }
  /// This node's own unit already started early on other free GPUs by take(): its claim is
  /// ours, and it must not start a second time from the node's list.
  bool taken_early(const std::string& unit) const { return taken_early_.count(unit) > 0; }

  /// The first unit in dispatch order not run yet that fits on `free` GPUs here, claimed for
  /// this node.
  /// Looks only at the units still open here, a unit needing more GPUs than are free not at all:
  /// before, each call went through every candidate from the first one another node held (in
  /// dispatch order, the longest: held for most of the run), those known taken too, and a node
  /// running 150,000 short units looked at units already run once a unit.
  std::optional<Assignment> take(const std::vector<int>& free, int node_gpus) {
    for (auto it = open_.begin(); it != open_.end();) {
      const size_t k = *it;
      const Assignment& a = *candidates_[k];
      if (taken_.count(a.unit.id)) {  // admitted from the node's list
        it = open_.erase(it);
        continue;
      }
      if (needs_[k] > static_cast<int>(free.size())) {
        ++it;
        continue;
      }
      auto gpus = gpus_for(a, free, node_gpus);
      if (!gpus) {
        ++it;
        continue;
      }
      auto state = state_of(a.unit.id);
      if (!state) {
        ++it;
        continue;
      }
      if (*state == os::Claims::State::done) taken_.insert(a.unit.id);
      if ((*state != os::Claims::State::free && *state != os::Claims::State::expired) || !claim(a.unit.id)) {
        if (*state != os::Claims::State::done) elsewhere_.insert(k);  // pending() looks again
        it = open_.erase(it);
        continue;
      }
      open_.erase(it);
      taken_.insert(a.unit.id);
      if (a.node == node_name_) taken_early_.insert(a.unit.id);
      Assignment here = a;
      here.node = node_name_;
      here.gpus = *gpus;
      return here;
    }
    return std::nullopt;
  }

  /// A unit take() gave that cannot start now after all: its claim ends, to be taken again.
  void give_up(const std::string& unit) {
    claims_.abandon(unit);
    taken_.erase(unit);
    if (auto k = index_.find(unit); k != index_.end()) open(k->second);
    taken_early_.erase(unit);
  }

  /// Units this node could take that another node holds and has not finished. Looks at those take()
  /// found held (an idle node's take() has looked at every open one), in dispatch order, up to the
  /// first still held: before, every candidate not run here, those free too (two file-system calls
  /// each), so a node whose units no other node held looked at them all once a unit it ran.
  bool pending() {
    for (auto it = elsewhere_.begin(); it != elsewhere_.end();) {
      const Assignment& a = *candidates_[*it];
      if (taken_.count(a.unit.id)) {
        it = elsewhere_.erase(it);
        continue;
      }
      auto state = state_of(a.unit.id);
      if (!state) {
        ++it;
        continue;
      }
      if (*state == os::Claims::State::held) return true;
      if (*state == os::Claims::State::done)
        taken_.insert(a.unit.id);
      else
        open(*it);  // free or expired: take() may try it again
      it = elsewhere_.erase(it);
      if (*state == os::Claims::State::expired) return true;
    }
    return false;
  }

 private:
  /// Says once per unit why its claim could not be made: take() and pending() try a free unit again
  /// on every pass (a full disk may have room later), and before, each pass said it again.
  void refused(const std::string& unit, const InputError& e) {
    if (unclaimable_.insert(unit).second)
      std::cerr << fmt::format("gpuplan exec: {} not run here: {}\n", unit, e.what());
  }

  /// Makes candidate `k` one take() looks at.
  void open(size_t k) {
    if (needs_.size() <= k) needs_.resize(k + 1, 0);
    needs_[k] = gpus_needed(*candidates_[k]);
    open_.insert(k);
  }

  /// The fewest free GPUs a unit can start on here (a unit that holds the node: every one).
  int gpus_needed(const Assignment& a) const {
    if (!here_) return static_cast<int>(a.gpus.size());
    if (holds_whole_node(a, policy_)) return static_cast<int>(here_->gpus.size());
    const auto& r = *a.unit.requirement;  // as gpus_here() counts them
    return r.takes_every_node_gpu() ? r.gpus.value : std::max(static_cast<int>(a.gpus.size()), r.gpus.value);
  }

  std::optional<std::vector<int>> gpus_for(const Assignment& a, const std::vector<int>& free,
                                           int node_gpus) const {
    if (here_) return gpus_here(a, *here_, free, holds_whole_node(a, policy_));
    // Without the fleet only this node's own units come back (a dead node's takeover of them):
    // on their planned GPUs.
    bool all_free = std::all_of(a.gpus.begin(), a.gpus.end(),
                                [&](int g) { return std::find(free.begin(), free.end(), g) != free.end(); });
    if (!all_free || (a.unit.requirement->is_exclusive() && static_cast<int>(free.size()) < node_gpus))
      return std::nullopt;
    return a.gpus;
  }

  os::Claims claims_;
  std::string node_name_;
  Policy policy_;
  const Node* here_ = nullptr;
  /// In dispatch order: the plan's own (a copy of each, 380 bytes a unit, made exec's peak RSS
  /// 142–159 MiB rather than 87–98 MiB for a plan of 147,000 units every node may run), and waited_'s.
  std::vector<const Assignment*> candidates_;
  std::deque<Assignment> waited_;                       ///< --static: this node's units wait_for() was given
  std::unordered_map<std::string_view, size_t> index_;  ///< unit id → its place in candidates_
  std::vector<int> needs_;                              ///< by candidate: gpus_needed()
  /// Candidates take() looks at, in dispatch order: neither taken_ nor elsewhere_.
  std::set<size_t> open_;
  std::unordered_set<std::string> taken_;  ///< run, running or done here, or known done
  std::set<std::string> taken_early_;      ///< this node's own units that take() started
  /// Held by another node when take() last looked (candidates, in dispatch order): it skips them (a
  /// scan of the claims per free GPU would cost a file-system call per unit run anywhere) until
  /// pending() sees the claim expire or end.
  std::set<size_t> elsewhere_;
  std::set<std::string> unclaimable_;  ///< units whose claim could not be made here: said once
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

/// How a record says the unit ended: a timed-out or stopped unit's time is a lower bound.
RunEnd run_end(Outcome outcome) {
  return outcome == Outcome::timed_out ? RunEnd::timed_out
         : outcome == Outcome::stopped ? RunEnd::stopped
                                       : RunEnd::exited;
}

void print_dry_run(const std::vector<UnitRun>& runs) {
  for (const auto& u : runs) {
    const auto& a = u.assignment;
    std::string env;
    for (const auto& [name, value] : command_env(a, u.shares_gpu))
      env += fmt::format(" {}={}", name, shell_quote(value));
    std::cout << fmt::format("# {} on GPUs {}, planned at {} s, timeout {} s\nenv{} /bin/sh -c {}\n",
                             a.unit.id, gpu_list(a.gpus), a.start_s, u.timeout_s, env,
                             shell_quote(u.command));
  }
}

/// The table of units and how each ended, and a line of totals; `totals` false for the one
/// `bazel test`, whose line says how it ended.
void print_table(const std::vector<UnitRun>& runs, bool totals = true) {
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
  if (!totals) return;
  std::string summary;
  for (const auto& [what, count] : counts)
    summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", count, what);
  std::cout << fmt::format("{} unit{}: {}\n", runs.size(), runs.size() == 1 ? "" : "s", summary);
}

/// Removes what an earlier run left at `path`, an output exec could not write now: a CI job that
/// uploads it would otherwise report that run's results as this one's. Only a regular file
/// goes (never standard output, a device or a folder); one that cannot be removed is named.
void drop_stale(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code error;
  if (path.empty() || path == "-" || !fs::is_regular_file(path, error)) return;
  if (fs::remove(path, error))
    std::cerr << fmt::format(
        "gpuplan exec: {} was an earlier run's; removed, as it could not be written now\n", path);
  else
    std::cerr << fmt::format(
        "gpuplan exec: warning: {} is an earlier run's, and could neither be written nor removed ({}): it is "
        "not this run's report\n",
        path, error.message());
}

/// The size of a file, 0 where there is none yet.
std::uintmax_t size_of(const std::string& path) {
  std::error_code error;
  auto size = std::filesystem::file_size(path, error);
  return error ? 0 : size;
}

/// The warnings of units on GPUs they were not given (outside_gpus_warning) that run-under
/// noted for `node` past `offset` of `file`, repeated where exec's output shows them.
void repeat_outside_gpus(const std::string& file, std::uintmax_t offset, const std::string& node) {
  std::ifstream in(file, std::ios::binary);
  if (!in.seekg(static_cast<std::streamoff>(offset))) return;
  for (std::string line; std::getline(in, line);) {
    auto tab = line.find('\t');
    if (tab != std::string::npos && line.substr(0, tab) == node)
      std::cerr << fmt::format("gpuplan exec: warning: {}\n", line.substr(tab + 1));
  }
}

/// The records run-under appended to `results` past `offset` for `node`, checked as exec checks
/// its own units' (untouched_gpus_warning). A file that cannot be read back is left unchecked:
/// the check only advises.
void warn_if_untouched(const std::string& results, std::uintmax_t offset, const std::string& node) {
  std::ifstream in(results, std::ios::binary);
  if (!in.seekg(static_cast<std::streamoff>(offset))) return;
  std::string appended(std::istreambuf_iterator<char>(in), {});
  try {
    // A file that was empty gets its header with the first record.
    auto records =
        parse_results_csv(offset == 0 ? appended : std::string(results_header()) + appended, results);
    std::erase_if(records, [&](const RunRecord& r) { return r.node != node; });
    if (auto untouched = untouched_gpus_warning(records); !untouched.empty())
      std::cerr << fmt::format("gpuplan exec: warning: {}\n", untouched);
  } catch (const InputError&) {
  }
}

/// Where the default bazel test's launches lock GPUs, absolute.
std::string lock_dir_of(const ExecOptions& o) {
  return std::filesystem::absolute(o.lock_dir.empty() ? os::default_lock_dir() : o.lock_dir)
      .lexically_normal()
      .string();
}

/// DIR/node, the name the default bazel test's launches read, held for one exec: a shared flock
/// on DIR/node.lock while exec runs, taken exclusive to write the name. Another exec of another
/// node sharing DIR (two nodes of a plan tried on one machine, both with the default lock
/// directory) is refused: it would rename the node under the first exec's tests, which would then
/// run as the second's. An exec of the same node (another checkout's CI job) shares it.
class HeldNodeName {
 public:
  HeldNodeName(const std::string& dir, const std::string& node) {
    const std::string lock = dir + "/node.lock";
    auto opened = os::open_regular(lock, O_RDWR | O_CREAT | O_NOFOLLOW, 0644);
    if (!opened) throw InputError(Position{lock}, fmt::format("cannot open it: {}", opened.problem()));
    fd_ = *opened;
    try {
      hold(dir, node);
    } catch (...) {  // a constructor that throws runs no destructor
      ::close(fd_);
      throw;
    }
  }
  HeldNodeName(const HeldNodeName&) = delete;
  HeldNodeName& operator=(const HeldNodeName&) = delete;
  ~HeldNodeName() { ::close(fd_); }

 private:
  bool take(int how) const {
    int result;
    do result = ::flock(fd_, how);
    while (result != 0 && errno == EINTR);
    return result == 0;
  }

  void hold(const std::string& dir, const std::string& node) const {
    const std::string file = dir + "/node";
    for (bool first = true;; first = false) {
      if (take(LOCK_EX | LOCK_NB)) {  // no exec uses the directory now: the name is ours to write
        write_output(file, node + "\n");
        if (!take(LOCK_SH)) break;
        return;
      }
      if (!take(LOCK_SH)) break;  // waits for a writer's name
      std::ifstream in(file);
      std::string held;
      std::getline(in, held);
      if (held == node) return;
      if (!first)
        throw InputError(
            Position{"--lock-dir"},
            fmt::format("another gpuplan exec, of node {}, runs its tests with the lock directory {} "
                        "now, whose launches read their node's name from {}: two nodes cannot share "
                        "it. Give each node its own --lock-dir",
                        held, dir, file));
      // The one who wrote it may have ended between the two flocks: look again, once.
      ::flock(fd_, LOCK_UN);
    }
    throw InputError(Position{dir + "/node.lock"}, "cannot lock it");
  }

  int fd_ = -1;
};

/// Without --lock-dir nothing keeps two execs of one node apart on this machine: each would run
/// every unit, two on a GPU at once (a job requeued, or a pod replaced, while its predecessor still
/// ends its units; a CI job started twice; two runs' execs, each with its own claims directory). An
/// exclusive flock on LOCK_DIR/exec-H.lock (H: a hash of the node's name) held while exec runs, the
/// file holding "PID HOST", refuses the second, naming the first. Before, both ran. (--claims holds
/// the node in its own directory only; --lock-dir hands each GPU to one unit at a time; the default
/// bazel test's run-under locks each test's GPUs.)
class OnlyExecOfNode {
 public:
  OnlyExecOfNode(const std::string& dir, const std::string& node) {
    const std::string lock = fmt::format("{}/exec-{:016x}.lock", dir, util::fnv1a(node));
    auto opened = os::open_regular(lock, O_RDWR | O_CREAT | O_NOFOLLOW, 0644);
    if (!opened) throw InputError(Position{lock}, fmt::format("cannot open it: {}", opened.problem()));
    fd_ = *opened;
    int result;
    do result = ::flock(fd_, LOCK_EX | LOCK_NB);
    while (result != 0 && errno == EINTR);
    if (result == 0) {
      const auto text = fmt::format("{} {}\n", ::getpid(), os::host_name());
      // The lock is what counts; the words only name the holder to a second exec.
      [[maybe_unused]] const bool said =
          ::ftruncate(fd_, 0) == 0 &&
          ::pwrite(fd_, text.data(), text.size(), 0) == static_cast<ssize_t>(text.size());
      return;
    }
    const int error = errno;
    std::string holder;  // the holder may not have written its words yet: a moment
    for (int tries = 0; tries < 20 && holder.empty(); ++tries) {
      if (tries > 0) ::usleep(20'000);
      char buffer[256] = {};
      auto n = ::pread(fd_, buffer, sizeof buffer - 1, 0);
      std::istringstream words(std::string(buffer, n > 0 ? static_cast<std::size_t>(n) : 0));
      std::string pid, host;
      if (words >> pid >> host) holder = fmt::format("process {} on host {}", pid, host);
    }
    ::close(fd_);
    if (error != EWOULDBLOCK)
      throw InputError(Position{lock}, fmt::format("cannot lock it: {}", std::strerror(error)));
    throw InputError(
        Position{lock},
        fmt::format("node {} is already run on this machine by another gpuplan exec ({}, which holds this "
                    "lock): without --lock-dir nothing keeps two execs of one node apart (a claims directory "
                    "only its own run's), and each would run every unit, two on a GPU at once. Wait for it "
                    "to end (a requeued job or "
                    "a replaced pod whose predecessor still ends its units: start this one again once it "
                    "has), or stop it; to run the node's units beside it on purpose (another checkout's "
                    "job), give both the same --lock-dir, which hands each GPU to one unit at a time",
                    node, holder.empty() ? "a process that has not said which yet" : holder));
  }
  OnlyExecOfNode(const OnlyExecOfNode&) = delete;
  OnlyExecOfNode& operator=(const OnlyExecOfNode&) = delete;
  /// The words go before the lock: a second exec that finds the lock taken by a later exec, which
  /// has not written its own yet, waits for them rather than naming this one, ended.
  ~OnlyExecOfNode() {
    [[maybe_unused]] const bool cleared = ::ftruncate(fd_, 0) == 0;
    ::close(fd_);
  }

 private:
  int fd_ = -1;
};

/// The workspace `bazel test` finds from the current directory (the nearest with a MODULE.bazel,
/// REPO.bazel, WORKSPACE or WORKSPACE.bazel), and the rc files it reads there, in order:
/// Debian's /etc/bazel/bazelrc, /etc/bazel.bazelrc, the workspace's .bazelrc, ~/.bazelrc.
struct BazelSetting {
  std::string workspace;  ///< the current directory where none is found
  std::vector<std::string> rc_files;
  bool found = false;  ///< whether the current directory is in a workspace
};
BazelSetting bazel_setting() {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  BazelSetting setting{cwd.string(), {}};
  for (fs::path dir = cwd; !dir.empty(); dir = dir.parent_path()) {
    auto marked = [&](const char* name) { return fs::is_regular_file(dir / name, ec); };
    if (marked("MODULE.bazel") || marked("REPO.bazel") || marked("WORKSPACE") || marked("WORKSPACE.bazel")) {
      setting.workspace = dir.string();
      setting.found = true;
      break;
    }
    if (dir == dir.root_path()) break;
  }
  setting.rc_files = {"/etc/bazel/bazelrc", "/etc/bazel.bazelrc", setting.workspace + "/.bazelrc"};
  if (const char* home = std::getenv("HOME"); home && *home)
    setting.rc_files.push_back(std::string(home) + "/.bazelrc");
  return setting;
}

/// What tells a file Bazel wrote in this run from one an earlier run left: nullopt when there is none.
std::optional<std::tuple<ino_t, std::int64_t, std::int64_t, off_t>> file_stamp(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return std::nullopt;
  return std::tuple(info.st_ino, info.st_mtim.tv_sec, info.st_mtim.tv_nsec, info.st_size);
}

/// exec --junit under the default bazel test: each unit as Bazel's build events say it ended
/// (read from `build_events`, removed after when exec named it).
void write_bazel_junit(const ExecOptions& o, const std::vector<Assignment>& units,
                       const std::string& build_events, const UnitRun& bazel, bool ours, bool written) {
  BepOutcomes events;
  std::ifstream in;
  if (written) in.open(build_events);  // not an earlier run's, left where Bazel stopped before writing
  std::string no_result;
  if (in.is_open()) {
    events = read_bep_outcomes(in);
    no_result = bazel.outcome == Outcome::passed
                    ? fmt::format("Bazel's build events ({}) hold no result for it, though bazel test passed",
                                  build_events)
                    : fmt::format(
                          "Bazel reported no result for it: it did not build, or bazel test ({}) ended "
                          "before it ran; Bazel's output says why",
                          describe(bazel));
  } else {  // every unit would be a failure of a file no one wrote: said once, here
    no_result = fmt::format(
        "Bazel's build events ({}) were not written in this run, or could not be read: how "
        "it ended is not known here",
        build_events);
    std::cerr << fmt::format("gpuplan exec: warning: {}; --junit says so of each unit\n", no_result);
  }
  std::error_code ignored;
  if (ours) std::filesystem::remove(build_events, ignored);
  write_output(o.junit, junit_xml(bazel_junit_cases(units, events, o.node, no_result)));
}

/// The default: one `bazel test` of the node's labels, run-under handing each test its GPUs.
int run_bazel(const ExecOptions& o, const Plan& plan, const std::vector<Assignment>& units, bool& started) {
  namespace fs = std::filesystem;
  if (!o.claims.empty())
    throw InputError(Position{"--claims"},
                     "dynamic execution needs --command: one bazel test per node cannot "
                     "hand its units to other nodes");
  if (o.plan == "-")
    throw InputError(Position{"<stdin>"}, "the default bazel test command needs a plan file");
  warn_split_tests(plan, o.node, o.plan);
  // Bazel keeps the last --run_under, exec's: a .bazelrc's (a sanitizer, a GPU setup) was dropped.
  const auto setting = bazel_setting();
  // What Bazel will refuse in the rc files, with its line, which Bazel's own error does not name.
  const auto refusals = rc_refusals(setting.rc_files, setting.workspace, o.bazel_args);
  for (const auto& refusal : refusals)
    std::cerr << fmt::format(
        "gpuplan exec: warning: {}: Bazel refuses this, and bazel test will stop before it runs a test\n",
        refusal);
  if (auto rc = rc_option(setting.rc_files, setting.workspace, o.bazel_args, "run_under");
      rc && !rc->value.empty() && !is_gpuplan_run_under(rc->value))
    std::cerr << fmt::format(
        "gpuplan exec: warning: {}:{}: {} gives bazel test --run_under={}, and exec's default command "
        "gives its own after it (gpuplan run-under, which gives each test its GPUs): Bazel keeps the "
        "last, so {} does not run. To run the tests under it, give --command (each unit gets its GPUs "
        "in CUDA_VISIBLE_DEVICES)\n",
        rc->file, rc->line, rc->config.empty() ? "it" : "--config=" + rc->config, shell_quote(rc->value),
        shell_quote(rc->value));
  BazelRun run;
  std::error_code ec;
  run.gpuplan = fs::read_symlink("/proc/self/exe", ec).string();
  if (ec) run.gpuplan = "gpuplan";
  run.plan = fs::absolute(o.plan).lexically_normal().string();
  run.lock_dir = lock_dir_of(o);
  run.node_file = run.lock_dir + "/node";
  if (!o.results.empty()) run.results = fs::absolute(o.results).lexically_normal().string();
  // --junit is of what Bazel says of each test (cached, a flaky test's retry, one run-under
  // refused), from its build events: the team's file where their options name one, else exec's.
  std::string build_events;
  if (!o.junit.empty()) {
    // The team's, from a .bazelrc or after --, kept: Bazel writes a relative one in the
    // workspace's directory, wherever below it exec runs.
    if (auto given = rc_option(setting.rc_files, setting.workspace, o.bazel_args, "build_event_json_file");
        given && !given->value.empty())
      build_events = given->value.front() == '/' ? given->value : setting.workspace + "/" + given->value;
    else  // named apart from another exec's of the lock directory, in another PID namespace too
      run.build_events = build_events =
          fmt::format("{}/build-events-{}-{}.json", run.lock_dir, getpid(),
                      std::chrono::system_clock::now().time_since_epoch() / std::chrono::nanoseconds(1));
  }
  if (!o.fleet.empty()) run.fleet = fs::absolute(o.fleet).lexically_normal().string();
  if (!o.query.empty()) run.query = fs::absolute(o.query).lexically_normal().string();
  if (!o.rules.empty()) run.rules = fs::absolute(o.rules).lexically_normal().string();
  run.warn_missing_gpus = o.warn_missing_gpus;
  run.jobs = std::max(1, planned_gpu_count(plan, o.node));
  // Bazel gives each test, and so its run-under, Bazel's test environment, not exec's: the NVML
  // library exec checked this machine's GPUs with (GPUPLAN_NVML_LIBRARY) did not reach run-under,
  // which then sampled no test (no peak_vram_mib, no gpu_touched) and checked none against NVML,
  // or, where /dev shows no GPU device, refused every one ("this machine shows no GPU"), after
  // exec had found the GPUs. First: a --test_env of the team's after -- still wins.
  if (const char* nvml = std::getenv("GPUPLAN_NVML_LIBRARY"); nvml && *nvml)
    run.bazel_args.push_back("--test_env=GPUPLAN_NVML_LIBRARY");
  // --timeout is each test's limit, as Bazel's --test_timeout (first: an option after -- wins);
  // as the one unit's, it killed the whole bazel test after S seconds.
  if (o.timeout_s > 0) run.bazel_args.push_back(fmt::format("--test_timeout={}", o.timeout_s));
  run.bazel_args.insert(run.bazel_args.end(), o.bazel_args.begin(), o.bazel_args.end());
  UnitRun u;
  u.assignment.unit.id = fmt::format("bazel test ({} unit{})", units.size(), util::plural(units.size()));
  const auto fleet_node = read_fleet_node(o.fleet, o.node);  // checked here, read by each run-under
  u.assignment.gpus = run_node_gpus(plan, o.node, fleet_node ? &*fleet_node : nullptr, o.fleet);
  auto node_command = bazel_node_command(units, run);
  const auto& target_file = node_command.target_file;
  u.command = std::move(node_command.command);
  u.timeout_s = 7 * 24 * 3600;  // Bazel times each test out
  if (o.dry_run) {
    std::cout << fmt::format("# the {} unit{} of {}, one bazel test; {} holds \"{}\"{}\n{}\n", units.size(),
                             util::plural(units.size()), o.node, run.node_file, o.node,
                             target_file.empty() ? "" : fmt::format(", {} the labels", target_file),
                             u.command);
    return exit_ok;
  }
  auto nvml = open_nvml();
  check_gpus_here(o, u.assignment.gpus, units, nvml.get(), describe_machine(nvml.get()));
  os::GpuLocks::take(run.lock_dir, {}, false);                      // creates and checks the lock directory
  const HeldNodeName node_name(run.lock_dir, std::string(o.node));  // held until exec ends
  if (!target_file.empty()) write_output(target_file, node_command.target_file_text);
  if (run.results) check_results_file(*run.results);
  check_writable(o.junit);
  std::error_code size_error;
  const auto records_before = run.results ? fs::file_size(*run.results, size_error) : 0;
  const auto events_before = file_stamp(build_events);
  const auto outside_before = size_of(outside_gpus_file(run.lock_dir));
  os::SystemRunner runner;
  std::vector<UnitRun> runs{u};
  ExecSchedule schedule({u.assignment});
  ExecHooks hooks;
  hooks.started = [&](const UnitRun& r) {
    std::cout << fmt::format("[start] {}\n", r.command) << std::flush;
  };
  started = true;
  execute(runs, schedule, u.assignment.gpus, runner, hooks, o.grace_s);
  if (!target_file.empty()) {  // read by Bazel at its start; one a run would leave behind forever
    std::error_code ignored;
    fs::remove(target_file, ignored);
  }
  if (run.results && !size_error) warn_if_untouched(*run.results, records_before, o.node);
  repeat_outside_gpus(outside_gpus_file(run.lock_dir), outside_before, o.node);
  print_table(runs, false);
  const auto& bazel = runs.front();
  std::cout << fmt::format("bazel test of {} unit{}: {}\n", units.size(), units.size() == 1 ? "" : "s",
                           describe(bazel));
  bool junit_lost = false;  // said, and never hides how the tests ended (below)
  try {
    const auto events_after = file_stamp(build_events);
    if (!o.junit.empty())
      write_bazel_junit(o, units, build_events, bazel, run.build_events.has_value(),
                        events_after && events_after != events_before);
  } catch (const InputError& e) {
    std::cerr << fmt::format("gpuplan exec: {}\n", e.what());
    drop_stale(o.junit);
    junit_lost = true;
  }
  if (int stop = runner.stop_signal()) return 128 + stop;
  // Bazel's own exit for bad options; Bazel 4 ends on an import it cannot read with 37, before
  // any test (which exec took for failed tests).
  if (bazel.outcome == Outcome::failed &&
      (bazel.exit_status == 2 || (bazel.exit_status == 37 && !refusals.empty()))) {
    std::cerr << fmt::format(
        "gpuplan exec: bazel test refused its options (exit {}; Bazel said why above); no test "
        "ran. Check the options after -- and any rc file line warned of above{}\n",
        bazel.exit_status,
        // Bazel runs only inside a workspace, found from where exec runs: a Kubernetes Job's
        // container starts in its image's working directory.
        setting.found ? ""
                      : fmt::format(", and that exec runs in the Bazel workspace: {} has no MODULE.bazel, "
                                    "REPO.bazel, WORKSPACE or WORKSPACE.bazel in it or above it (in a "
                                    "Kubernetes Job, the image's working directory)",
                                    setting.workspace));
    return exit_bad_input;
  }
  return bazel.outcome != Outcome::passed ? exit_units_failed : junit_lost ? exit_bad_input : exit_ok;
}

/// Under --claims: each unit once, as it really ended. A unit this node skipped while another
/// node held it is the run here when this node took it over later (or had started it early),
/// `ran elsewhere` (its node in `ran_on`) when another node finished it, and `not run` when none
/// did. Dispatching, `own` (this node's planned units) adds those it did not run.
void resolve_elsewhere(std::vector<UnitRun>& runs, std::vector<UnitRun>& own, const Sharing& sharing,
                       std::map<std::string, os::Claims::Ran>& ran_on) {
  auto ran_here = [](const UnitRun& u) {
    return u.outcome != Outcome::elsewhere && u.outcome != Outcome::not_run;
  };
  std::set<std::string> started;
  for (const auto& u : runs)
    if (ran_here(u)) started.insert(u.assignment.unit.id);
  for (auto& u : own)
    if (!started.count(u.assignment.unit.id)) {
      u.outcome = Outcome::elsewhere;
      runs.push_back(std::move(u));
    }
  std::erase_if(runs, [&](const UnitRun& u) { return !ran_here(u) && started.count(u.assignment.unit.id); });
  for (auto& u : runs)
    if (u.outcome == Outcome::elsewhere) {
      if (auto ran = sharing.ran(u.assignment.unit.id))
        ran_on[u.assignment.unit.id] = *ran;
      else
        u.outcome = Outcome::not_run;
    }
}

/// Says which units another node ran and failed (this node's exit is 3 for them too: its planned
/// units did not all pass, and the node that ran one may have died before it said so), and
/// warns of this node's units that this node had marked done before this exec started: an
/// earlier run's claims directory (whose units did not run now; before: "ran elsewhere", exit 0)
/// or an earlier try of this node. Returns how many failed.
long say_what_ran_elsewhere(const ExecOptions& o, const std::map<std::string, os::Claims::Ran>& ran_on,
                            double started_s) {
  long failed = 0, earlier = 0;
  std::string first_earlier;
  for (const auto& [unit, ran] : ran_on) {
    if (ran.exit_status != 0) {
      ++failed;
      std::cerr << fmt::format("gpuplan exec: {} ran on {} and failed (exit {})\n", unit, ran.node,
                               ran.exit_status);
    }
    if (ran.node == o.node && ran.finished_s > 0 && ran.finished_s < started_s && earlier++ == 0)
      first_earlier = unit;
  }
  if (earlier > 0)
    std::cerr << fmt::format(
        "gpuplan exec: warning: {} unit{} of {} had been marked done in {} by {} before this exec started "
        "(the "
        "first: {}), so {} not run now: the directory holds an earlier run's claims, or this is a retry of "
        "{}; give each run a directory of its own (--claims DIR/$RUN_ID)\n",
        earlier, util::plural(earlier), o.node, o.claims, o.node, first_earlier,
        earlier == 1 ? "it was" : "they were", o.node);
  return failed;
}

/// `--json`: what exec did, per unit (where, when, how long, how it ended) and in total.
/// Times are seconds; start_s counts from exec's start, start_epoch_s is the Unix time.
/// `filtered`: the units ran under a test filter (command_test_filter), only some of their cases.
std::string exec_summary(const ExecOptions& o, const Plan& plan, const std::vector<UnitRun>& runs,
                         const std::map<std::string, os::Claims::Ran>& ran_on,
                         const std::map<std::string, double>& start_epochs, double begin_epoch, double wall_s,
                         int stop_signal, bool filtered, const std::string& refused = {}) {
  auto key = [](Outcome outcome) {
    std::string name(to_string(outcome));
    std::replace(name.begin(), name.end(), ' ', '_');
    return name;
  };
  nlohmann::ordered_json units = nlohmann::ordered_json::array();
  std::map<std::string, int> totals;
  for (auto outcome : {Outcome::passed, Outcome::failed, Outcome::timed_out, Outcome::stopped,
                       Outcome::not_run, Outcome::elsewhere})
    totals[key(outcome)] = 0;
  std::map<std::string, std::string> taken_from;  // unit id → its planned node, for those taken here
  for (const auto& u : runs)
    if (!u.planned_here) taken_from[u.assignment.unit.id];
  for (const auto& a : plan.assignments)
    if (auto it = taken_from.find(a.unit.id); it != taken_from.end()) it->second = a.node.str();
  double busy_s = 0;
  for (const auto& u : runs) {
    const auto& a = u.assignment;
    nlohmann::ordered_json j;
    j["unit"] = a.unit.id;
    j["label"] = a.unit.label;
    auto elsewhere = ran_on.find(a.unit.id);
    j["node"] = elsewhere == ran_on.end() ? o.node : elsewhere->second.node;
    j["planned_node"] = u.planned_here ? a.node.str() : taken_from[a.unit.id];  // `a` says where it ran
    j["gpus"] = a.gpus;
    j["planned_start_s"] = a.start_s;
    j["planned_duration_s"] = a.end_s - a.start_s;
    auto started = start_epochs.find(a.unit.id);
    bool ran =
        started != start_epochs.end() && u.outcome != Outcome::not_run && u.outcome != Outcome::elsewhere;
    j["start_s"] = ran ? nlohmann::ordered_json(started->second - begin_epoch) : nlohmann::ordered_json();
    j["start_epoch_s"] = ran ? nlohmann::ordered_json(started->second) : nlohmann::ordered_json();
    j["duration_s"] = ran ? nlohmann::ordered_json(u.seconds) : nlohmann::ordered_json();
    j["outcome"] = key(u.outcome);
    j["exit_status"] = ran ? nlohmann::ordered_json(u.exit_status) : nlohmann::ordered_json();
    j["filtered"] = ran ? nlohmann::ordered_json(filtered) : nlohmann::ordered_json();
    if (ran) busy_s += u.seconds * static_cast<double>(a.gpus.size());
    ++totals[key(u.outcome)];
    units.push_back(std::move(j));
  }
  nlohmann::ordered_json out;
  out["plan"] = o.plan;
  out["node"] = o.node;
  out["start_epoch_s"] = begin_epoch;
  out["wall_s"] = wall_s;
  out["gpu_busy_s"] = busy_s;
  out["stopped_by_signal"] = stop_signal ? nlohmann::ordered_json(stop_signal) : nlohmann::ordered_json();
  out["refused"] = refused.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(refused);
  nlohmann::ordered_json counts;
  counts["units"] = runs.size();
  for (const auto& [name, count] : totals) counts[name] = count;
  out["totals"] = std::move(counts);
  out["units"] = std::move(units);
  return out.dump(2) + "\n";
}

/// exec's work; `plan` and `planned` (the node's units, in plan order) are set as soon as they are
/// read, and `started` before the first unit (or bazel test) starts, for run_exec's report of
/// an exec that ends early.
int exec_node(const ExecOptions& o, Plan& plan, std::vector<Assignment>& planned, bool& started) {
  // Bad usage, refused before anything else: the file it names is never written (run_exec), where
  // before a refusal for another reason (a --node with no units) wrote it as the summary of a run.
  if (o.command.empty() && !o.json.empty())
    throw InputError(Position{"--json"},
                     "the summary is of units exec runs itself (--command); with the default bazel "
                     "test, Bazel runs them: its --build_event_json_file, or --results, says how each ended");
  check_bazel_args(o.bazel_args, !o.command.empty());
  if (!o.command.empty() && (!o.query.empty() || !o.rules.empty()))
    throw InputError(
        Position{o.query.empty() ? "--rules" : "--query"},
        "--query and --rules are passed on to the default bazel test's run-under; with --command, "
        "check the plan against the query first: gpuplan verify PLAN --fleet FLEET QUERY");
  // Each test's run-under reads them: a file that cannot be read would fail every test as Bazel
  // runs it, and standard input is read once. Before, exec started Bazel with such a --query.
  for (const auto& [option, path] : {std::pair{"--query", &o.query}, std::pair{"--rules", &o.rules}}) {
    if (path->empty()) continue;
    if (*path == "-")
      throw InputError(Position{option},
                       "each test's run-under reads it, so it must be a file, not standard input");
    open_input(*path);
  }
  // The default bazel test launches run-under once per test: the plan's index, in the lock
  // directory where the plan's folder takes none, spares each launch reading the whole plan.
  const bool by_bazel = o.command.empty() && o.plan != "-" && !o.dry_run;
  const std::string lock_dir = lock_dir_of(o);
  if (by_bazel) os::GpuLocks::take(lock_dir, {}, false);  // creates and checks the lock directory
  plan = by_bazel ? read_plan_indexed(o.plan, lock_dir) : read_plan(o.plan);
  auto units = node_assignments(plan, o.node);
  if (units.empty()) {
    std::set<std::string> nodes;
    for (const auto& a : plan.assignments) nodes.insert(a.node);
    throw InputError(Position{o.plan == "-" ? std::string("<stdin>") : o.plan},
                     fmt::format("no units are planned on node \"{}\" (the plan's nodes: {})", o.node,
                                 fmt::join(nodes, ", ")));
  }
  // A broken plan never runs a unit on no GPU, on one GPU twice, or twice.
  planned = units;
  at_plan_lines([&] {
    check_planned_once(plan, o.plan);
    for (std::size_t i = 0; i < plan.assignments.size(); ++i)
      if (plan.assignments[i].node == o.node) check_launchable(plan.assignments[i], o.plan, i);
  });
  if (o.command.empty()) return run_bazel(o, plan, units, started);
  if (auto runtime = container_without_unit_gpus(o.command))
    std::cerr << fmt::format(
        "gpuplan exec: warning: --command starts a container ({0} run) but hands it none of the unit's "
        "GPUs: a container does not inherit CUDA_VISIBLE_DEVICES, and with --gpus all each test sees every "
        "GPU of the node and uses the first. Give it {{gpus}}: {0} run --gpus '\"device={{gpus}}\"' "
        "(NVIDIA's container toolkit), or -e CUDA_VISIBLE_DEVICES\n",
        *runtime);
  if (auto runtime = container_without_sharing_env(o.command);
      runtime &&
      std::ranges::any_of(units, [&](const Assignment& a) { return shares_gpu(a.unit, plan.policy); }))
    std::cerr << fmt::format(
        "gpuplan exec: warning: units of this pack plan share GPUs, and --command starts a container ({} "
        "run) that does not inherit TF_FORCE_GPU_ALLOW_GROWTH=true and XLA_PYTHON_CLIENT_PREALLOCATE=false: "
        "TensorFlow or JAX in it would take most of the shared GPU's memory at start, and its neighbour find "
        "none. Pass -e TF_FORCE_GPU_ALLOW_GROWTH -e XLA_PYTHON_CLIENT_PREALLOCATE\n",
        *runtime);
  // Dynamic execution starts this node's units longest planned first (as `simulate` replays
  // it): the schedule gets their times placed again, the runs keep the planned ones.
  // With the fleet, dynamic execution dispatches (run/dispatch.hpp): this node's list stays
  // empty and every unit it runs, its own too, is the first in dispatch order that fits its
  // free GPUs. Without it, this node runs its own units longest planned first.
  const bool dispatching = !o.claims.empty() && !o.static_only && !o.fleet.empty();
  std::vector<Assignment> scheduled = units;
  if (!o.claims.empty() && !o.static_only && !dispatching) {
    std::vector<Assignment> again = units, by_length, placed;
    for (size_t k : longest_first(again, plan.policy)) {
      by_length.push_back(units[k]);
      placed.push_back(again[k]);
    }
    units = std::move(by_length);
    scheduled = std::move(placed);
  }
  std::vector<UnitRun> runs;
  runs.reserve(units.size());
  for (const auto& a : units) {
    UnitRun u;
    u.assignment = a;
    u.command = expand_command(o.command, a);
    u.timeout_s = o.timeout_s > 0 ? o.timeout_s : timeout_seconds(a.unit);
    u.holds_node = holds_whole_node(a, plan.policy);
    u.shares_gpu = shares_gpu(a.unit, plan.policy);
    runs.push_back(std::move(u));
  }
  if (o.dry_run) {
    print_dry_run(runs);
    return exit_ok;
  }
  const auto columns = o.results.empty() ? ResultsColumns::thirteen : check_results_file(o.results);
  if (columns == ResultsColumns::nine)
    std::cerr << fmt::format("gpuplan exec: note: {}\n", results_columns_note(o.results));
  const std::string filter = command_test_filter(o.command);
  if (!filter.empty() && !o.results.empty())
    std::cerr << fmt::format(
        "gpuplan exec: note: the units run under {}: {}, and history leaves their time out of their tests'\n",
        filter,
        columns >= ResultsColumns::twelve
            ? std::string("their results records are marked filtered")
            : fmt::format("they get no results record ({} has no filtered column to mark them: begun by an "
                          "earlier gpuplan)",
                          o.results));
  check_writable(o.junit);
  check_writable(o.json);
  warn_of_oneapi_selector(runs);

  std::vector<UnitRun> own;  ///< dispatching: this node's planned units, reported at the end
  if (dispatching) {
    own = std::move(runs);
    runs.clear();
    scheduled.clear();
  }
  // --fleet: this node's GPUs, and what dispatching may run here
  const std::optional<Node> fleet_node = read_fleet_node(o.fleet, o.node);
  const Node* here = fleet_node ? &*fleet_node : nullptr;
  const auto node_gpus = run_node_gpus(plan, o.node, here, o.fleet);
  // GPU memory per running unit, through NVML where there is one, for the results records and
  // the check that some unit touched a GPU.
  auto nvml = open_nvml();
  const auto machine = describe_machine(nvml.get());
  check_gpus_here(o, node_gpus, units, nvml.get(), machine);
  std::optional<OnlyExecOfNode> only_exec;  // held until exec ends
  if (o.lock_dir.empty()) {
    const auto dir = lock_dir_of(o);
    os::GpuLocks::take(dir, {}, false);  // creates and checks the lock directory
    only_exec.emplace(dir, o.node);
  }
  os::SystemRunner runner;
  ExecSchedule schedule(scheduled, plan.policy);
  HeldGpus held(o.lock_dir);
  const double begin = runner.now();
  const double begin_epoch = os::now_epoch_s();
  auto progress = [&](const UnitRun& u, const std::string& what) {
    std::cout << fmt::format("[{:7.1f}s] {:<16} {}  gpus {}\n", runner.now() - begin, what,
                             u.assignment.unit.id, gpu_list(u.assignment.gpus))
              << std::flush;
  };
  int record_errors = 0;
  ExecHooks hooks;
  std::optional<Sharing> sharing;
  if (!o.claims.empty()) sharing.emplace(o, plan, here, machine ? &*machine : nullptr);
  hooks.admit = [&](const UnitRun& u, std::vector<int>& fds) {
    if (sharing) {
      if (sharing->taken_early(u.assignment.unit.id)) return Admission::elsewhere;
      if (!sharing->claim(u.assignment.unit.id)) {
        if (o.static_only) sharing->wait_for(u.assignment);
        return Admission::elsewhere;
      }
      sharing->ran_here(u.assignment.unit.id);
    }
    return held.take(u.holds_node ? node_gpus : u.assignment.gpus, fds) ? Admission::start : Admission::later;
  };
  if (sharing) {
    hooks.take_foreign = [&](const std::vector<int>& free, std::vector<int>& fds) -> std::optional<UnitRun> {
      auto a = sharing->take(free, static_cast<int>(node_gpus.size()));
      if (!a) return std::nullopt;
      const bool holds = holds_whole_node(*a, plan.policy);
      if (!held.take(holds ? node_gpus : a->gpus, fds)) {  // a run-under outside holds a GPU: later
        sharing->give_up(a->unit.id);
        return std::nullopt;
      }
      UnitRun u;
      u.planned_here = sharing->taken_early(a->unit.id);
      u.assignment = *a;
      u.command = expand_command(o.command, *a);
      u.timeout_s = o.timeout_s > 0 ? o.timeout_s : timeout_seconds(a->unit);
      u.holds_node = holds_whole_node(*a, plan.policy);
      u.shares_gpu = shares_gpu(a->unit, plan.policy);
      return u;
    };
    hooks.pending_elsewhere = [&] { return sharing->pending(); };
  }
  if (sharing) {
    hooks.tick = [&] { sharing->renew(); };
    hooks.tick_s = sharing->claims().lease_s() / 4;
    hooks.retry_s = std::max(0.2, sharing->claims().lease_s() / 8);
  }
  hooks.release = [&](const UnitRun& u) { held.give_back(u.holds_node ? node_gpus : u.assignment.gpus); };
  std::map<std::string, double> start_epochs;  ///< by unit id: when it started, for its record
  std::vector<RunRecord> ran_here;
  std::map<std::string, std::unique_ptr<GpuUsageSampler>> samplers;  ///< by unit id
  hooks.starting = [&](const UnitRun& u) { start_epochs[u.assignment.unit.id] = os::now_epoch_s(); };
  hooks.started = [&](const UnitRun& u) {
    if (nvml)
      (samplers[u.assignment.unit.id] = std::make_unique<GpuUsageSampler>(nvml))
          ->start(u.id, u.holds_node ? node_gpus : u.assignment.gpus, u.shares_gpu);
    progress(u, "start");
  };
  hooks.ended = [&](const UnitRun& u) {
    if (sharing && u.outcome == Outcome::stopped) sharing->claims().abandon(u.assignment.unit.id);
    if (sharing && u.outcome != Outcome::stopped && u.outcome != Outcome::elsewhere) sharing->done(u);
    if (u.outcome != Outcome::elsewhere)
      progress(u, describe(u));
    else if (!sharing->taken_early(u.assignment.unit.id))  // not started here: held, or ran, by another
      progress(u, sharing->ran(u.assignment.unit.id)           ? "ran elsewhere"
                  : sharing->unclaimable(u.assignment.unit.id) ? "not run here"
                                                               : "held elsewhere");
    GpuUsage usage;
    if (auto sampler = samplers.find(u.assignment.unit.id); sampler != samplers.end()) {
      usage = sampler->second->stop();
      samplers.erase(sampler);
    }
    if (u.outcome == Outcome::elsewhere) return;
    if (auto outside = outside_gpus_warning(u.assignment.unit.id,
                                            u.holds_node ? node_gpus : u.assignment.gpus, usage.outside);
        !outside.empty())
      std::cerr << fmt::format("gpuplan exec: warning: {}\n", outside);
    // Under --missing-gpus=warn, only the GPUs this machine has (run-under's reason): a unit given
    // only absent ones ran with none, and history leaves a GPU test's such runs out of its duration.
    // What it asked for is what the plan gave it: beside the GPUs it had, a run short of some.
    ran_here.push_back({u.assignment.unit.label, u.assignment.unit.shard_index, u.seconds, o.node,
                        o.warn_missing_gpus ? present_gpus(u.assignment.gpus, nvml.get()) : u.assignment.gpus,
                        start_epochs[u.assignment.unit.id], u.exit_status, usage.peak_vram_mib,
                        usage.measured ? std::optional<bool>(usage.touched) : std::nullopt,
                        run_end(u.outcome), usage.peak_up_front, u.assignment.unit.shard_count,
                        !filter.empty(), static_cast<int>(u.assignment.gpus.size())});
    if (o.results.empty() || (!filter.empty() && columns < ResultsColumns::twelve)) return;
    try {
      os::append_locked(o.results, results_header(), to_csv(ran_here.back(), columns));
    } catch (const InputError& e) {  // the other units still run; exec fails at the end
      ++record_errors;
      std::cerr << fmt::format("gpuplan exec: {}\n", e.what());
    }
  };
  started = true;
  execute(runs, schedule, node_gpus, runner, hooks, o.grace_s);
  if (auto untouched = untouched_gpus_warning(ran_here); !untouched.empty())
    std::cerr << fmt::format("gpuplan exec: warning: {}\n", untouched);
  const int unmarked = sharing ? sharing->unmarked_at_end() : 0;
  std::map<std::string, os::Claims::Ran> ran_on;  ///< units another node ran: who, how it ended
  if (sharing) resolve_elsewhere(runs, own, *sharing, ran_on);
  print_table(runs);
  const long failed_elsewhere =
      sharing ? say_what_ran_elsewhere(o, ran_on, sharing->claims().started_s()) : 0;
  // The outputs written at the end, each tried even when another fails: a failure is said,
  // and never hides how the units ended (below). A SIGINT or SIGTERM waits while they are written,
  // and one that comes now, every unit ended, stops nothing: the report and the exit status say how
  // the units ended. Before, one that came during a write removed the file being written (the
  // output layer's clean-up for a process that dies at the signal), exec went on and said
  // "cannot write: No such file or directory", and a stopped run's --json was lost to a second SIGTERM.
  sigset_t stops, unblocked;
  sigemptyset(&stops);
  sigaddset(&stops, SIGINT);
  sigaddset(&stops, SIGTERM);
  ::pthread_sigmask(SIG_BLOCK, &stops, &unblocked);
  const int stop_signal = runner.stop_signal();
  std::vector<std::string> unwritten;
  auto write_at_end = [&](const std::string& path, const auto& content) {
    if (path.empty()) return;
    try {
      write_output(path, content());
    } catch (const InputError& e) {
      std::cerr << fmt::format("gpuplan exec: {}\n", e.what());
      drop_stale(path);
      unwritten.push_back(path);
    }
  };
  write_at_end(o.junit, [&] {
    // A unit that did not run is a failure there, as under the default bazel test (before, it was
    // left out: after a SIGTERM, a report of the 2 units that ran, and none of the 8 that did not).
    std::vector<RunRecord> ran;
    std::vector<Assignment> not_run;
    for (const auto& u : runs)
      if (u.outcome == Outcome::not_run)
        not_run.push_back(u.assignment);
      else if (u.outcome != Outcome::running && u.outcome != Outcome::elsewhere)
        ran.push_back({u.assignment.unit.label, u.assignment.unit.shard_index, u.seconds, o.node,
                       u.assignment.gpus, start_epochs[u.assignment.unit.id], u.exit_status, std::nullopt,
                       std::nullopt, run_end(u.outcome), false, u.assignment.unit.shard_count,
                       !filter.empty(), static_cast<int>(u.assignment.gpus.size())});
    return results_junit(
        ran, not_run, o.node,
        stop_signal ? fmt::format("not run: exec was stopped (signal {}) before it started", stop_signal)
        : o.claims.empty() ? std::string("not run")
                           : std::string("not run: no node ran it to the end (--claims)"));
  });
  write_at_end(o.json, [&] {
    return exec_summary(o, plan, runs, ran_on, start_epochs, begin_epoch, runner.now() - begin, stop_signal,
                        !filter.empty());
  });
  ::pthread_sigmask(SIG_SETMASK, &unblocked, nullptr);
  bool all_passed = failed_elsewhere == 0 && std::all_of(runs.begin(), runs.end(), [](const UnitRun& u) {
                      return u.outcome == Outcome::passed || u.outcome == Outcome::elsewhere;
                    });
  int status = stop_signal                         ? 128 + stop_signal
               : !all_passed                       ? exit_units_failed
               : record_errors > 0 || unmarked > 0 ? exit_internal
               : !unwritten.empty()                ? exit_bad_input
                                                   : exit_ok;
  // The last line says what was lost, also when every unit passed: the table's "4 passed" had
  // been the last word of a run that exits 1 for records a full disk kept out.
  if (record_errors > 0 || unmarked > 0 || !unwritten.empty()) {
    std::vector<std::string> lost = unwritten;
    if (unmarked > 0)
      lost.insert(lost.begin(),
                  fmt::format("{} done mark{} in {}", unmarked, util::plural(unmarked), o.claims));
    if (record_errors > 0)
      lost.insert(lost.begin(),
                  fmt::format("{} results record{}", record_errors, util::plural(record_errors)));
    std::cerr << fmt::format("gpuplan exec: {}, and not written: {}; exit {}\n",
                             status > 128                  ? "stopped by a signal"
                             : status == exit_units_failed ? "some units did not pass"
                                                           : "every unit passed",
                             fmt::join(lost, ", "), status);
  }
  return status;
}

/// An exec that ends early (a refusal, exit 2, or an internal error) still writes its --junit
/// and --json (with --command: the default bazel test refuses --json first) where it can, every unit of the
/// node not run with the reason, so that a CI job uploading them never reports an earlier run's files, nor no
/// file at all, as this one's. Before the node's units are known (an unreadable plan, a node with no units),
/// the JUnit has one failed case, `gpuplan exec`, saying why. One that cannot be written is removed.
void report_early_exit(const ExecOptions& o, const Plan& plan, const std::vector<Assignment>& planned,
                       bool started, const std::exception& error) {
  const bool input = dynamic_cast<const InputError*>(&error) != nullptr;
  // A message quotes what a user gave (a plan's bytes, a path): the reports carry only UTF-8.
  const std::string what = escape_invalid_utf8(error.what());
  const std::string why = fmt::format("{} {}",
                                      input ? "exec refused to run the node's units:"
                                            : "exec failed before it ran the node's units: internal error:",
                                      what);
  auto write = [&](const std::string& path, const auto& content) {
    if (path.empty()) return;
    try {
      if (started) throw InputError(Position{path}, "not written: exec ended after units had started");
      write_output(path, content());
    } catch (const std::exception& e) {  // never in place of the error being reported
      if (std::string_view(e.what()) != error.what())
        std::cerr << fmt::format("gpuplan exec: {}\n", e.what());
      drop_stale(path);
    }
  };
  write(o.junit, [&] {
    if (!planned.empty()) return results_junit({}, planned, o.node, "not run: " + why);
    return junit_xml({JunitCase{.label = "gpuplan exec",
                                .node = o.node,
                                .failure_type = "no-result",
                                .failure_message = "no unit of the node was run: " + why}});
  });
  if (o.command.empty()) return;  // --json is refused with the default bazel test (exec_node)
  write(o.json, [&] {
    std::vector<UnitRun> runs(planned.size());
    for (size_t k = 0; k < planned.size(); ++k) runs[k].assignment = planned[k];
    return exec_summary(o, plan, runs, {}, {}, os::now_epoch_s(), 0, 0, false,
                        fmt::format("{}{}", input ? "" : "internal error: ", what));
  });
}

int run_exec(const ExecOptions& o) {
  Plan plan;
  std::vector<Assignment> planned;
  bool started = false;
  try {
    return exec_node(o, plan, planned, started);
  } catch (const std::exception& e) {
    if (!o.dry_run) report_early_exit(o, plan, planned, started, e);
    throw;
  }
}

}  // namespace

void add_missing_gpus_option(CLI::App& command, bool& warn, const char* help) {
  command
      .add_option_function<std::string>(
          "--missing-gpus", [&warn](const std::string& value) { warn = value == "warn"; },
          help ? help
               : "when this machine lacks a GPU the plan gives the node's units (NVML counts fewer; no GPU "
                 "device at all), or NVML says its GPUs or driver fail a unit's compute capability, CUDA or "
                 "vendor: refuse to run them (default) or warn and run them")
      ->check(CLI::IsMember({"fail", "warn"}));
}

void add_exec_command(CLI::App& app, int& status) {
  auto options = std::make_shared<ExecOptions>();
  auto* command =
      app.add_subcommand("exec", "Run one node's units of a plan on this machine, on their planned GPUs");
  command->add_option("plan", options->plan, "the plan (JSON)")->required();
  command->add_option("--node", options->node, "the node whose units to run")->required();
  command->add_option("--command", options->command,
                      "command template; {label} {unit} {gpus} {shard_index} {shard_count} are "
                      "replaced, shell-quoted (default: one bazel test of the node's labels with a fixed "
                      "--run_under of gpuplan run-under)");
  command
      ->add_option("--timeout", options->timeout_s,
                   "seconds every unit may run (default: by its timeout attribute or size, as Bazel)")
      ->transform(whole_number(1, static_cast<std::uint64_t>(max_duration_s)));
  command->add_flag("--dry-run", options->dry_run, "print what would run, in plan order, and run nothing");
  command->add_option("--results", options->results, "append one results record (CSV) a unit to this file");
  command->add_option("--claims", options->claims,
                      "a directory every node of the run sees (the plan's shared file system): units are "
                      "claimed there so each runs exactly once, and idle GPUs take units planned elsewhere");
  command
      ->add_option(
          "--lease", options->lease_s,
          "seconds after which a silent node's claims are taken over (it renews them 4 times a lease)")
      ->check(lease_seconds())
      ->capture_default_str();
  command->add_flag(
      "--static", options->static_only,
      "run exactly this node's planned units (still claimed with --claims, never taken from others)");
  command->add_option("--fleet", options->fleet,
                      "the fleet YAML: with --claims, this node dispatches: wherever its GPUs are free it "
                      "starts the longest planned unit not yet claimed that it can run there, planned here "
                      "or elsewhere, each requirement checked against this node");
  command->add_option("--junit", options->junit,
                      "write JUnit XML of the units that ran to this file at the end");
  command->add_option(
      "--json", options->json,
      "write a JSON summary to this file at the end: per unit its node, GPUs, start, duration, "
      "outcome and exit status; the totals by outcome");
  command->add_option("--lock-dir", options->lock_dir,
                      "also take the per-GPU lock files run-under uses, to share the GPUs with it");
  add_missing_gpus_option(*command, options->warn_missing_gpus);
  command->add_option("--query", options->query,
                      "bazel query output of the commit Bazel runs, passed on to the default bazel test's "
                      "run-under: a test whose tags ask for more GPUs than the plan gives it is refused");
  command->add_option("--rules", options->rules, "rules file for --query");
  command->add_option(
      "bazel-options", options->bazel_args,
      "after --: options for the default bazel test, before gpuplan's own (-- --config=cuda)");
  command->callback([options, &status] { status = run_exec(*options); });
}

}  // namespace gpuplan::cli
