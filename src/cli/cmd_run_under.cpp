// gpuplan run-under: the wrapper for `bazel test --run_under=...`. Bazel keeps its caching,
// sharding and test environment; this finds the test's planned GPUs, waits for them through
// per-GPU lock files, and runs the test with CUDA_VISIBLE_DEVICES set.
#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <string_view>
#include <thread>

#include "cli/commands.hpp"
#include "cli/io.hpp"
#include "cli/number_options.hpp"
#include "cli/plan_input.hpp"
#include "cli/query_input.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/export.hpp"
#include "gpuplan/fleet.hpp"
#include "gpuplan/history.hpp"
#include "gpuplan/ingest.hpp"
#include "gpuplan/limits.hpp"
#include "gpuplan/run.hpp"
#include "gpuplan/size.hpp"
#include "gpuplan/target.hpp"
#include "run/claims.hpp"
#include "run/dispatch.hpp"
#include "run/gpu_usage.hpp"
#include "run/os.hpp"
#include "solve/eligibility.hpp"
#include "util/text.hpp"

namespace gpuplan::cli {

namespace {

struct RunUnderOptions {
  std::string plan;
  std::string node;
  std::string node_file;  ///< --node-file: a file holding the node's name
  std::string lock_dir = os::default_lock_dir();
  bool warn_unplanned = false;     ///< --unplanned=warn: run a refused test with no GPU visible
  bool warn_missing_gpus = false;  ///< --missing-gpus=warn: run a test whose GPUs this machine lacks
  std::string results;
  std::string junit;  ///< --junit: JUnit XML of every record in --results, rewritten after each test
  std::string query;
  std::string rules;
  std::string claims;  ///< --claims: the directory the nodes of one run share (dynamic execution)
  double lease_s = 60;
  std::string fleet;  ///< --fleet: with --claims, this node may run tests planned on others
  std::vector<std::string> command;
  double launched_s = 0;  ///< when run-under started (epoch s): Bazel's TEST_TIMEOUT counts from then
};

/// Rewrites `junit` from every record in `results`, holding the results file's lock while it
/// reads and writes: the launches Bazel runs at once each rewrite it after their own record,
/// one at a time, so the last rewrite holds every record appended before it.
void rewrite_junit(const std::string& results, const std::string& junit) {
  int fd = ::open(results.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(Position{results}, "cannot read the results file back for --junit");
  while (::flock(fd, LOCK_EX) != 0)
    if (errno != EINTR) {
      ::close(fd);
      throw InputError(Position{results}, "cannot lock the results file");
    }
  std::string text;
  char buffer[1 << 16];
  for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ::close(fd);
      throw InputError(Position{results}, "cannot read the results file back for --junit");
    }
    text.append(buffer, static_cast<size_t>(n));
  }
  try {
    write_output(junit, results_junit(parse_results_csv(text, results)));
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);  // drops the lock
}

/// The node's name from `--node-file` (its first line, without the spaces, tabs or CR of an
/// editor or a Windows checkout around it: a name has none), else the host name.
std::string node_name(const std::string& node_file) {
  if (node_file.empty()) return os::host_name();
  auto input = open_input(node_file);
  std::string line;
  std::getline(input.in(), line);
  constexpr std::string_view space = " \t\r\v\f";
  auto first = line.find_first_not_of(space);
  if (first == std::string::npos)
    throw InputError(Position{node_file, 1}, "expected the node's name on the first line");
  return line.substr(first, line.find_last_not_of(space) - first + 1);
}

/// What a test outside the plan asks for by its tags in `--query` output.
struct UnplannedNeed {
  int gpus = 0;
  bool whole_node = false;        ///< gpu-exclusive: it runs alone on the node, as a planned one would
  bool every_gpu = false;         ///< and is given every GPU of it (Requirement::takes_every_node_gpu)
  SharedRequirement requirement;  ///< all its tags ask for (memory, CUDA, model, ...)
  double vram_headroom = 0;       ///< the rules file's, for a plan that does not say its own
};

/// nullopt when the query does not have the test either. An XML or streamed_jsonproto query is
/// read, where it can be, as its test's rule alone (rule_alone): a launch of a 100,000-test query
/// read all of it.
std::optional<UnplannedNeed> unplanned_need(const RunUnderOptions& o, const std::string& label,
                                            Policy policy) {
  QueryOptions query;
  query.targets.path = o.query;
  query.rules = o.rules;
  const Rules rules = read_rules(query);
  auto need_of = [&](const QueryOptions& read) -> std::optional<UnplannedNeed> {
    for (const auto& test : read_and_classify(read, rules).tests) {
      if (label_identity(test.target.label) != label_identity(label)) continue;
      if (test.bucket != Bucket::gpu) return UnplannedNeed{};
      const Requirement& r = *test.requirement;
      return UnplannedNeed{r.gpus.value,
                           r.is_exclusive() || (policy == Policy::whole_node && r.gpus.value > 1),
                           r.takes_every_node_gpu(), test.requirement, rules.vram_headroom};
    }
    return std::nullopt;
  };
  // Not under classify_by_deps, whose answer needs the whole graph; from a regular file only, which
  // the full read can read again (not standard input or a FIFO).
  std::error_code ec;
  if (!rules.classify_by_deps && o.query != "-" && std::filesystem::is_regular_file(o.query, ec)) {
    auto input = open_input(o.query);
    QueryOptions one = query;
    one.targets.text = rule_alone(read_all(input), label);
    if (one.targets.text)
      if (auto need = need_of(one)) return need;
  }
  return need_of(query);
}

/// Why the GPUs the plan gives `asked` on `node` (the fleet's) cannot meet what it asks of them,
/// checked as `exec --claims --fleet` checks a node for a unit planned elsewhere (gpus_here: every
/// requirement, memory as the planner reserves it, NVLink among them), said as the planner says it
/// of a node ("needs 40GiB per GPU; node ci-l4-01 has GPUs of 22.5GiB"), of those GPUs alone.
/// Empty when they meet it.
std::string unmet_on_fleet_node(const Assignment& asked, const Node& node) {
  if (gpus_here(asked, node, asked.gpus)) return {};
  Fleet planned;
  Node& only = planned.nodes.emplace_back();
  only.name = node.name;
  only.cuda = node.cuda;
  std::vector<size_t> at;  // the planned GPUs' places in node.gpus
  for (int gpu : asked.gpus)
    for (size_t i = 0; i < node.gpus.size(); ++i)
      if (node.gpus[i].index == gpu) at.push_back(i);
  for (size_t i : at) {
    only.gpus.push_back(node.gpus[i]);
    auto& row = only.nvlink.emplace_back();
    for (size_t j : at)
      row.push_back(i < node.nvlink.size() && j < node.nvlink[i].size() && node.nvlink[i][j]);
  }
  Requirement r = placing_requirement(asked.unit);
  r.gpus.value = std::max(r.gpus.value, static_cast<int>(asked.gpus.size()));  // CUDA shows it them all
  r.every_node_gpu.reset();
  return solve::unschedulable_reason(r, planned, solve::index_fleet(planned));
}

/// Why `pack` would not share the GPU the plan has `asked` share, on `node` (the fleet's): what
/// it now reserves (its gpu-mem, or the plan's reservation when more) is more than `headroom`
/// leaves of the GPU, and the planner gives such a unit its GPU to itself. Empty when it fits.
std::string unshared_by_pack(const Assignment& asked, const Node& node, double headroom) {
  const auto& asks = asked.unit.requirement->gpu_mem_mib;
  const std::int64_t reserves = std::max(asked.unit.vram_mib.value_or(0), asks ? asks->value : 0);
  for (int index : asked.gpus)
    for (const Gpu& gpu : node.gpus)
      if (gpu.index == index && reserves > solve::shareable_mib(gpu, headroom))
        return fmt::format(
            "reserves {} on GPU {}, more than pack shares of its {} (less the headroom of {:g}%): "
            "the planner gives it the GPU to itself, and the plan has it share the GPU with other tests",
            format_mib(reserves), index, format_mib(gpu.vram_mib), headroom * 100);
  return {};
}

/// The needs of its GPUs that `asked` has beyond what the plan gives `a` (its requirement, and its
/// reservation, which its GPUs hold): the needs the plan cannot say this node meets. Leaves out
/// those NVML checked (`by_nvml`: CUDA, compute capability, vendor, memory) or the fleet's node did
/// (`by_fleet`: all), but for more memory on a GPU it shares under pack (`shared`): the others on it
/// are not in what a launch reads of the plan.
std::vector<std::string> beyond_plan(const Requirement& asked, const Assignment& a, bool by_nvml,
                                     bool by_fleet, bool shared) {
  by_nvml = by_nvml || by_fleet;
  const Requirement& planned = *a.unit.requirement;
  auto new_constraint = [](const auto& wanted, const auto& had) {
    return std::any_of(wanted.begin(), wanted.end(), [&](const auto& c) {
      return std::none_of(had.begin(), had.end(), [&](const auto& h) { return h.value == c.value; });
    });
  };
  auto spoken = [](const std::vector<Sourced<VersionConstraint>>& constraints) {
    std::vector<std::string> parts;
    for (const auto& c : constraints) parts.push_back(describe(c.value));
    return fmt::format("{}", fmt::join(parts, " and "));
  };
  std::vector<std::string> beyond;
  const std::int64_t held =
      std::max(planned.gpu_mem_mib ? planned.gpu_mem_mib->value : 0, a.unit.vram_mib.value_or(0));
  if ((!by_nvml || shared) && asked.gpu_mem_mib && asked.gpu_mem_mib->value > held)
    beyond.push_back(format_mib(asked.gpu_mem_mib->value) +
                     (shared ? " per GPU beside the tests it shares it with" : " per GPU"));
  if (!by_nvml && new_constraint(asked.cuda, planned.cuda)) beyond.push_back("CUDA " + spoken(asked.cuda));
  if (!by_nvml && new_constraint(asked.compute_capability, planned.compute_capability))
    beyond.push_back("compute capability " + spoken(asked.compute_capability));
  if (by_fleet) return beyond;
  if (asked.gpu_models &&
      (!planned.gpu_models || std::any_of(planned.gpu_models->value.begin(), planned.gpu_models->value.end(),
                                          [&](const std::string& m) {
                                            return std::find(asked.gpu_models->value.begin(),
                                                             asked.gpu_models->value.end(),
                                                             m) == asked.gpu_models->value.end();
                                          })))
    beyond.push_back(fmt::format("GPU model {}", fmt::join(asked.gpu_models->value, "|")));
  if (!by_nvml && asked.vendor && (!planned.vendor || planned.vendor->value != asked.vendor->value))
    beyond.push_back(vendor_display(asked.vendor->value) + " GPUs");
  if (asked.needs_nvlink() && !planned.needs_nvlink() && a.gpus.size() > 1) beyond.emplace_back("NVLink");
  return beyond;
}

/// What `--query`, made at the commit Bazel runs, says of a test the plan has on this node or among
/// its CPU tests that the plan did not: `grew` when its tags now ask for more GPUs than the plan
/// gives it, for the whole node where the plan shares it, for GPUs where the plan has it a CPU
/// test, or for more than its planned GPUs have (memory, CUDA, model, compute capability, NVLink:
/// by the fleet's node, or NVML) (run as planned, a test that skips its multi-GPU or GPU paths, or
/// those its device is too small or too old for, would pass); else for fewer GPUs, or for more of
/// its GPUs than the plan can tell they have (without --fleet, and NVML does not say).
struct ChangedSincePlan {
  bool grew = false;
  std::string what;
  int asks = 0;  ///< the GPUs its tags give it on this node, where it grew
};

/// nullopt when the query agrees with the plan, or does not have the test.
/// `node_gpus`: the node's, as run_node_gpus gives them; `fleet_node`: the node's, with --fleet;
/// `plan_headroom`: the plan's vram_headroom (a pack plan's), else the rules file's is taken.
std::optional<ChangedSincePlan> changed_since_plan(const RunUnderOptions& o, const TestPlacement& placement,
                                                   const std::string& label, Policy policy,
                                                   const std::vector<int>& node_gpus, const Node* fleet_node,
                                                   std::optional<double> plan_headroom) {
  auto need = unplanned_need(o, label, policy);
  if (!need) return std::nullopt;
  auto gpus = [](int n) {
    return n == 0 ? std::string("no GPU") : fmt::format("{} GPU{}", n, util::plural(n));
  };
  if (placement.kind == TestPlacement::Kind::cpu) {
    if (need->gpus == 0) return std::nullopt;
    return ChangedSincePlan{true,
                            fmt::format("the plan has {} among its CPU tests, and {} gives it {} by its tags",
                                        label, o.query, gpus(need->gpus)),
                            need->gpus};
  }
  const Assignment& a = *placement.assignment;
  const int planned = static_cast<int>(a.gpus.size());
  const bool holds = holds_whole_node(a, policy);
  auto given = fmt::format("the plan gives {} {} ({})", label, gpus(planned), gpu_list(a.gpus));
  if (need->gpus > planned)
    return ChangedSincePlan{
        true, fmt::format("{}, and {} asks for {} by its tags", given, o.query, gpus(need->gpus)),
        need->gpus};
  // An exclusive test with no GPU count (Bazel runs it alone with every GPU of the machine), planned
  // with fewer: by a gpuplan of before every_node_gpu, or with a GPU count it has lost since.
  if (need->every_gpu && !a.unit.requirement->takes_every_node_gpu() &&
      planned < static_cast<int>(node_gpus.size()))
    return ChangedSincePlan{true,
                            fmt::format("{}, and {} gives it every GPU of the node it holds ({}) by its tags",
                                        given, o.query, gpus(static_cast<int>(node_gpus.size()))),
                            static_cast<int>(node_gpus.size())};
  if (need->whole_node && !holds)
    return ChangedSincePlan{
        true,
        fmt::format("{} beside other tests, and {} has it hold the whole node by its tags", given, o.query),
        planned};
  if (need->gpus == 0)  // a CPU test now: it asks nothing of its GPUs
    return holds ? std::nullopt
                 : std::optional<ChangedSincePlan>(ChangedSincePlan{
                       false, fmt::format("{}, and {} asks for {} by its tags", given, o.query, gpus(0))});
  // What it asks of its GPUs: by the fleet's node where --fleet names it, and by NVML where this
  // machine has it (the planned GPUs as they are).
  Assignment asked = a;
  asked.unit.requirement = need->requirement;
  auto asks = fmt::format("{}, and {} asks for {} by its tags", given, o.query, describe(*need->requirement));
  const bool shared = shares_gpu(a.unit, policy);
  // Only what it asks of its GPUs beyond what the plan gave it is checked: the planner placed the
  // rest, and a launch of a test whose tags have not changed opens neither the fleet's node nor NVML.
  if (!beyond_plan(*need->requirement, a, false, false, shared).empty()) {
    if (fleet_node)
      for (auto unmet :
           {unmet_on_fleet_node(asked, *fleet_node),
            shared ? unshared_by_pack(asked, *fleet_node, plan_headroom.value_or(need->vram_headroom))
                   : std::string()})
        if (!unmet.empty()) return ChangedSincePlan{true, fmt::format("{}: it {}", asks, unmet), planned};
    auto nvml = open_nvml();
    const auto machine = describe_machine(nvml.get());
    if (machine)
      if (auto unmet = unmet_here(*need->requirement, a.gpus, *machine, ""); !unmet.empty())
        return ChangedSincePlan{true, fmt::format("{}: it {}", asks, unmet), planned};
    if (auto beyond = beyond_plan(*need->requirement, a, machine.has_value(), fleet_node != nullptr, shared);
        !beyond.empty())
      return ChangedSincePlan{
          false, fmt::format("{}; the plan cannot tell whether its GPU{} {} of {} meet{} {}{}", asks,
                             util::plural(a.gpus.size()), gpu_list(a.gpus), a.node.str(),
                             a.gpus.size() == 1 ? "s" : "", fmt::join(beyond, ", "),
                             fleet_node ? "" : " (--fleet with the plan's fleet checks it)")};
  }
  if (need->gpus < planned && !holds)
    return ChangedSincePlan{
        false, fmt::format("{}, and {} asks for {} by its tags", given, o.query, gpus(need->gpus))};
  return std::nullopt;
}

/// Any `count` free GPUs of the node, lowest first. Never waits while holding a lock, so it
/// cannot deadlock with the planned tests that take theirs in index order.
std::pair<std::vector<int>, std::vector<os::GpuLocks>> take_any(const std::string& dir, int count,
                                                                int node_gpus) {
  while (true) {
    std::vector<int> gpus;
    std::vector<os::GpuLocks> locks;
    for (int gpu = 0; gpu < node_gpus && static_cast<int>(gpus.size()) < count; ++gpu) {
      if (auto lock = os::GpuLocks::take(dir, {gpu}, false)) {
        gpus.push_back(gpu);
        locks.push_back(std::move(*lock));
      }
    }
    if (static_cast<int>(gpus.size()) == count) return {gpus, std::move(locks)};
    locks.clear();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

/// Why this machine cannot run `assignment` on its GPUs: they are missing, outside the launcher's
/// allocation, or short of what the unit needs (by NVML); empty when it can.
std::string why_not_here(const Assignment& assignment, Nvml* nvml);

/// Refuses `assignment` for what this machine cannot give it (`missing`, of why_not_here): exit 2.
int refuse_here(const RunUnderOptions& o, const Assignment& assignment, const std::string& missing);

/// `shares`: the unit shares its GPU (shares_gpu), and gets the variables that say so. `asked`:
/// the GPUs the test asks for (RunRecord::gpus_asked), for its results record. `ended`, when given,
/// gets how the test ended (stopped: by a stop that is not Bazel's timeout).
int run_test(const RunUnderOptions& o, const Assignment& assignment, bool shares,
             std::vector<os::GpuLocks> held, std::optional<int> asked, RunEnd* ended = nullptr);

/// `a` as one launch of Bazel's runs it. Bazel runs a test in all its shards, each launch one;
/// where the plan has the test as one unit (unsharded then, or --shards=whole), or not at all,
/// each launch keeps Bazel's shard, and its claim is that shard's. Before, run-under dropped
/// Bazel's TEST_SHARD_INDEX and gave TEST_TOTAL_SHARDS=1, so each shard of a whole unit ran
/// every case, and googletest failed a CPU test's shards past the first (index >= total).
Assignment as_launched(Assignment a, std::optional<int> shard, std::optional<int> bazel_shards) {
  if (a.unit.shard_index || !shard || !bazel_shards) return a;
  a.unit.shard_index = shard;
  a.unit.shard_count = *bazel_shards;
  a.unit.id = fmt::format("{}#shard-{}-of-{}", a.unit.id, *shard, *bazel_shards);
  return a;
}

/// A test missing from the plan, with the GPUs its tags in --query ask for, free ones of the node.
int run_unplanned(const RunUnderOptions& o, const std::string& node, const std::vector<int>& gpus_here,
                  const std::string& target, std::optional<int> shard, std::optional<int> bazel_shards,
                  UnplannedNeed need) {
  int node_gpus = static_cast<int>(gpus_here.size());
  int wanted = need.gpus;
  if (wanted > node_gpus)
    throw InputError(Position{o.plan}, fmt::format("{} needs {} GPUs, and the plan knows of {} on {}", target,
                                                   wanted, node_gpus, node));
  Assignment assignment;
  assignment.unit.label = assignment.unit.id = target;
  assignment.node = node;
  assignment = as_launched(std::move(assignment), shard, bazel_shards);
  std::vector<os::GpuLocks> held;
  if (need.whole_node) {
    // Every GPU's lock, taken as a planned test that holds the node takes them (in index order,
    // waiting), and the first GPUs it needs.
    if (auto locks = os::GpuLocks::take(o.lock_dir, gpus_here, true)) held.push_back(std::move(*locks));
    assignment.gpus.assign(gpus_here.begin(), need.every_gpu ? gpus_here.end() : gpus_here.begin() + wanted);
  } else {
    std::tie(assignment.gpus, held) = take_any(o.lock_dir, wanted, node_gpus);
  }
  std::cerr << fmt::format(
      "gpuplan run-under: {} is not planned on {}; running it with {}\n", target, node,
      wanted == 0 ? std::string("no GPUs (CUDA_VISIBLE_DEVICES=\"\")")
      : need.whole_node
          ? fmt::format("GPUs {} found by its tags, alone on the node", gpu_list(assignment.gpus))
          : fmt::format("free GPUs {} found by its tags", gpu_list(assignment.gpus)));
  return run_test(o, assignment, false, std::move(held), static_cast<int>(assignment.gpus.size()));
}

/// Renews this process's claims every quarter lease while it lives (the test runs). Its thread
/// takes no signal: a stop signal must reach the thread that waits for the GPUs' locks.
class LeaseRenewal {
 public:
  explicit LeaseRenewal(os::Claims& claims) {
    sigset_t all, before;
    sigfillset(&all);
    ::pthread_sigmask(SIG_SETMASK, &all, &before);
    thread_ = std::thread([this, &claims, lease_s = claims.lease_s()] {
      std::unique_lock lock(mutex_);
      while (!stop_.wait_for(lock, std::chrono::duration<double>(lease_s / 4), [this] { return done_; }))
        claims.renew();
    });
    ::pthread_sigmask(SIG_SETMASK, &before, nullptr);
  }
  ~LeaseRenewal() {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
    }
    stop_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mutex_;
  std::condition_variable stop_;
  bool done_ = false;
  std::thread thread_;
};

/// The plan's assignment of the test (or shard) on any node; nullopt when it has none.
std::optional<Assignment> planned_anywhere(const Plan& plan, const std::string& node,
                                           const std::string& label, std::optional<int> shard) {
  LabelMatch named(plan, label);
  if (!named.ambiguous().empty()) return std::nullopt;
  std::optional<Assignment> found;
  for (const auto& a : plan.assignments) {
    if (!named(a.unit.label) || (a.unit.shard_index && a.unit.shard_index != shard)) continue;
    if (a.node == node) return a;
    if (!found) found = a;
  }
  return found;
}

/// A test planned on another node that dynamic execution may take here, with --query's tags (the
/// commit Bazel runs): as on its own node (changed_since_plan), tags that ask for more GPUs than
/// planned, or for the whole node where the plan shares it, are said (the test is refused); else
/// `planned` asks of this node's GPUs what the tags ask (memory, CUDA, model, ...), of as many as
/// planned, so that the dispatcher's check of this node is of them. Empty when it may be taken.
std::string take_as_queried(const RunUnderOptions& o, Assignment& planned, const std::string& label,
                            Policy policy) {
  auto need = unplanned_need(o, label, policy);
  if (!need || need->gpus == 0) return {};
  const int count = static_cast<int>(planned.gpus.size());
  auto given =
      fmt::format("the plan gives {} {} GPU{} on {}", label, count, util::plural(count), planned.node);
  if (need->gpus > count)
    return fmt::format("{}, and {} asks for {} GPU{} by its tags", given, o.query, need->gpus,
                       util::plural(need->gpus));
  if ((need->whole_node && !holds_whole_node(planned, policy)) ||
      (need->every_gpu && !planned.unit.requirement->takes_every_node_gpu()))
    return fmt::format("{} beside other tests, and {} has it hold the whole node by its tags", given,
                       o.query);
  Requirement asked = *need->requirement;
  asked.gpus.value = count;
  planned.unit.requirement = asked;
  return {};
}

/// This node's GPUs that no other process holds now, each one's lock kept.
std::pair<std::vector<int>, std::vector<os::GpuLocks>> free_gpus(const std::string& dir,
                                                                 const std::vector<int>& node_gpus) {
  std::vector<int> gpus;
  std::vector<os::GpuLocks> locks;
  for (int gpu : node_gpus)
    if (auto lock = os::GpuLocks::take(dir, {gpu}, false)) {
      gpus.push_back(gpu);
      locks.push_back(std::move(*lock));
    }
  return {gpus, std::move(locks)};
}

/// Ends this node's claim on `id` as its run ended. A run stopped by SIGINT or SIGTERM other than
/// Bazel's timeout (Ctrl-C, a Slurm time limit, a pod evicted) gives its claim up at once, for
/// another node to run the test (before, it was marked done with 143, and every other node
/// ended the test as failed, unrun); any other end, Bazel's timeout too, marks it done. A done mark
/// that cannot be written (EIO) is said, and the test ends here as it ran: its claim stays as last
/// renewed, and another node runs it again only once the lease has run out (before, nothing was said
/// where the link alone failed, and where the mark's file could not be written run-under ended with
/// exit 2 however the test had ended: one that passed failed in Bazel).
void settle(os::Claims& claims, const std::string& id, int status, RunEnd ended) {
  if (ended == RunEnd::stopped) {
    claims.abandon(id);
    return;
  }
  if (auto why = claims.done(id, status); !why.empty())
    std::cerr << fmt::format(
        "gpuplan run-under: error: {} ran here (exit {}), but its done mark is not written: {}. Another node "
        "may run it again once the lease ({:g} s) has run out\n",
        id, status, why, claims.lease_s());
}

/// Dynamic execution under Bazel (--claims): the test runs on the node that claims it first.
/// Planned here: claimed, then run as planned. Planned elsewhere: run here when --fleet says
/// this node meets every requirement and enough eligible GPUs are free now; while they are
/// not, waits for them or for another node to claim it. Held or done by another node: waits
/// for it to end and exits as it did there (a node that died is taken over once its lease
/// expires). A test planned elsewhere that this node can never take is refused.
/// Returns nullopt when it is refused. `id` is what is claimed: this launch's run and attempt.
std::optional<int> run_claimed(const RunUnderOptions& o, const Plan& plan, const std::string& node,
                               const std::optional<Node>& fleet_node, const std::vector<int>& node_gpus,
                               const Assignment& planned, os::Claims& claims, const std::string& id) {
  const bool here = planned.node == node;
  const auto poll = std::chrono::duration<double>(std::clamp(claims.lease_s() / 8, 0.05, 5.0));
  bool told_waiting = false, told_busy = false;
  // SIGINT or SIGTERM caught from here on: a launch stopped while its test waits for its GPUs,
  // its claim made, gives the claim up (before, the stop killed it with the claim in place, and
  // no node could run the test until the lease ran out); one stopped before it claimed ends.
  os::catch_stop_signals();
  while (true) {
    if (int stop = os::stop_signal()) return 128 + stop;
    auto state = claims.state(id);
    if (state == os::Claims::State::done) {
      auto ran = claims.ran(id);
      int status = ran ? ran->exit_status : 0;
      std::cerr << fmt::format("gpuplan run-under: {} ran on node {} (exit {}); not again on {}\n", id,
                               ran ? ran->node : "?", status, node);
      return status;
    }
    const bool free = state == os::Claims::State::free || state == os::Claims::State::expired;
    if (free && here) {
      // What this machine cannot give it (a GPU lost, or in MIG mode) refuses it before it is
      // claimed: left free, a node with --fleet takes it (before, it was claimed, refused and
      // marked done, and every other node failed it too, unrun).
      if (!o.warn_missing_gpus)
        if (auto why = why_not_here(planned, open_nvml().get()); !why.empty())
          return refuse_here(o, planned, why);
      if (!claims.claim(id)) continue;
      Assignment assignment = planned;
      auto gpus = holds_whole_node(assignment, plan.policy) ? node_gpus : assignment.gpus;
      RunEnd ended = RunEnd::exited;
      int status = 0;
      {
        // Renewed while it waits for its GPUs too: the test planned before it on them may run
        // longer than the lease (before, another node then took the test over, and both ran it).
        LeaseRenewal renewing(claims);
        std::vector<os::GpuLocks> held;
        if (auto locks = os::GpuLocks::take(o.lock_dir, gpus, true)) held.push_back(std::move(*locks));
        if (int stop = os::stop_signal()) {  // stopped while it waited: it never ran here
          std::cerr << fmt::format(
              "gpuplan run-under: {} was stopped (signal {}) while it waited for GPUs {}; it did not run, "
              "and its claim is given up for another node\n",
              id, stop, gpu_list(gpus));
          ended = RunEnd::stopped;
          status = 128 + stop;
        } else {
          status = run_test(o, assignment, shares_gpu(assignment.unit, plan.policy), std::move(held),
                            static_cast<int>(assignment.gpus.size()), &ended);
        }
      }
      settle(claims, id, status, ended);
      return status;
    }
    if (free) {  // planned elsewhere, nobody holds it: run it here if this node can, now
      // What this machine cannot give it on `gpus`, known before it is claimed (claimed and
      // refused here, it was marked done, and the node it was planned on failed it too, unrun)
      // and before waiting for GPUs that could not run it.
      auto cannot_take = [&](const std::vector<int>& gpus) {
        Assignment here = planned;
        here.gpus = gpus;
        auto why = why_not_here(here, open_nvml().get());
        if (!why.empty())
          std::cerr << fmt::format("gpuplan run-under: {} is planned on {}; {} cannot take it: {}\n", id,
                                   planned.node, node, why);
        return !why.empty();
      };
      // A unit that holds the node starts when every GPU is free, and keeps every lock, but
      // sees the GPUs it is given, as on its own node (before, every GPU of this node: a 2-GPU
      // gpu-exclusive test saw 8 where it was taken over, and 2 on its own node).
      const bool holds = holds_whole_node(planned, plan.policy);
      auto ideal = fleet_node ? gpus_here(planned, *fleet_node, node_gpus, holds) : std::nullopt;
      if (!ideal) return std::nullopt;  // never here
      auto [gpus, locks] = free_gpus(o.lock_dir, node_gpus);
      auto chosen = gpus_here(planned, *fleet_node, gpus, holds);
      if (!chosen) {  // this node's own tests hold the GPUs it needs: they end, or its node runs it
        locks.clear();
        if (!told_busy && cannot_take(*ideal)) return std::nullopt;
        if (!told_busy)
          std::cerr << fmt::format(
              "gpuplan run-under: {} is planned on {}; {} has not the GPUs it needs free now: waiting for "
              "them, or for {} to run it\n",
              id, planned.node, node, planned.node);
        told_busy = true;
        std::this_thread::sleep_for(poll);
        continue;
      }
      if (cannot_take(*chosen)) return std::nullopt;
      Assignment assignment = planned;
      assignment.node = node;
      assignment.gpus = *chosen;
      if (!claims.claim(id)) continue;
      std::vector<os::GpuLocks> held;
      for (size_t i = 0; i < gpus.size(); ++i)
        if (holds || std::find(chosen->begin(), chosen->end(), gpus[i]) != chosen->end())
          held.push_back(std::move(locks[i]));
      locks.clear();
      std::cerr << fmt::format(
          "gpuplan run-under: {} is planned on {}; {} takes it (dynamic execution), GPUs {}\n", id,
          planned.node, node, gpu_list(*chosen));
      RunEnd ended = RunEnd::exited;
      int status = 0;
      {
        LeaseRenewal renewing(claims);
        status = run_test(o, assignment, shares_gpu(assignment.unit, plan.policy), std::move(held),
                          static_cast<int>(assignment.gpus.size()), &ended);
      }
      settle(claims, id, status, ended);
      return status;
    }
    if (!told_waiting) {
      std::cerr << fmt::format("gpuplan run-under: {} is running on node {}; waiting for it to end\n", id,
                               claims.holder(id));
      told_waiting = true;
    }
    std::this_thread::sleep_for(poll);
  }
}

/// TEST_SHARD_INDEX or TEST_TOTAL_SHARDS as Bazel sets them; nullopt when unset.
std::optional<int> shard_variable(const char* name, long least) {
  const char* text = std::getenv(name);
  if (!text || !*text) return std::nullopt;
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < least || value > max_shard_count)
    throw InputError(Position{name}, fmt::format("\"{}\" is not a shard {}", util::excerpt(text),
                                                 least == 0 ? "index" : "count"));
  return static_cast<int>(value);
}

/// How the test ended: stopped by a signal (`stop`; 0: none stopped it) within 5 s of Bazel's test
/// timeout (TEST_TIMEOUT, which Bazel sets, and whose SIGTERM ends run-under) is a timeout, as Bazel
/// reports it; another stop (Ctrl-C) is `stopped`. History reads both as a lower bound. Bazel's clock starts
/// when it launches run-under, `launched` (epoch s), not when the test starts: the wait for GPU locks counts
/// (before, a test that waited 8 s for its GPU and got Bazel's SIGTERM at a 12 s TEST_TIMEOUT was judged
/// stopped, its claim was given up, and another node ran it again).
RunEnd how_it_ended(double launched, int stop) {
  if (stop == 0) return RunEnd::exited;
  const double seconds = os::now_epoch_s() - launched;
  const char* timeout = std::getenv("TEST_TIMEOUT");
  char* end = nullptr;
  const double limit = timeout && *timeout ? std::strtod(timeout, &end) : 0;
  return limit > 0 && *end == '\0' && seconds + 5 >= limit ? RunEnd::timed_out : RunEnd::stopped;
}

/// How many shards the plan splits `label` into, a unit each; nullopt when it does not have the
/// test or runs it as one unit (unsharded, or --shards=whole), which runs however Bazel shards it.
std::optional<int> planned_shard_count(const Plan& plan, const std::string& label) {
  LabelMatch named(plan, label);
  std::optional<int> planned;
  for (const auto& a : plan.assignments)
    if (named(a.unit.label) && a.unit.shard_index) planned = a.unit.shard_count;
  for (const auto& u : plan.unschedulable)
    if (named(u.unit.label) && u.unit.shard_index) planned = u.unit.shard_count;
  return planned;
}

/// Why the plan's shards of `label` are not Bazel's (TEST_TOTAL_SHARDS).
std::string shard_mismatch(const std::string& label, int planned, int bazel_shards) {
  auto shards = [](int n) { return n == 1 ? std::string("unsharded") : fmt::format("in {} shards", n); };
  return fmt::format(
      "the plan has {} {}, and Bazel runs it {} ({}): its shard_count changed after the plan was made{}; "
      "make the plan again",
      label, shards(planned), shards(bazel_shards),
      shard_variable("TEST_TOTAL_SHARDS", 1) ? "TEST_TOTAL_SHARDS" : "no TEST_TOTAL_SHARDS",
      bazel_shards == 1 ? ", or bazel test runs with --test_sharding_strategy=disabled" : "");
}

/// run_claimed for one launch of Bazel's. Each run of --runs_per_test (TEST_RANDOM_SEED, Bazel's
/// run number) and each attempt of a flaky test is a unit of its own, run once across the nodes:
/// the first launch of a test on a node claims its unit id, the node's retry after it ended
/// "ID#attempt-2", and so on. So a retry runs the test again (or, on a node whose first attempt
/// another node ran, ends as that node's retry did), never repeats the failure it retries.
std::optional<int> run_launch(const RunUnderOptions& o, const Plan& plan, const std::string& node,
                              const std::optional<Node>& fleet_node, const std::vector<int>& node_gpus,
                              const Assignment& planned) {
  os::Claims claims(o.claims, node, o.lease_s);
  belong_to_plan(claims, o.plan, o.lease_s, "run-under");
  std::string run = planned.unit.id;
  if (const char* seed = std::getenv("TEST_RANDOM_SEED"); seed && *seed && std::string_view(seed) != "1")
    run += fmt::format("#run-{}", util::excerpt(seed, 20));
  const int attempt = claims.launches(run) + 1;
  auto id = attempt == 1 ? run : fmt::format("{}#attempt-{}", run, attempt);
  auto status = run_claimed(o, plan, node, fleet_node, node_gpus, planned, claims, id);
  if (status) claims.launched(run);
  return status;
}

/// run-under never creates its lock or claims directory, nor its results or JUnit file: inside Bazel's
/// sandbox, /tmp may be the test's own (Bazel 7's default --incompatible_sandbox_hermetic_tmp,
/// --sandbox_tmpfs_path=/tmp), and what it made there would be this test's alone: tests would
/// share GPUs, each node run every unit, or the records vanish with the sandbox. `what`: the
/// path's role, `harm`: what that would do, `create`: the command that makes it.
void require_shared_path(const std::string& path, std::string_view what, std::string_view harm,
                         std::string_view create) {
  struct stat info {};
  if (::stat(path.c_str(), &info) == 0 || errno != ENOENT) return;  // its users check the rest
  throw InputError(
      Position{path},
      fmt::format("the {} does not exist in this test's view of the file system, and run-under does not "
                  "create it: in Bazel's sandbox /tmp can be the test's own (Bazel 7's hermetic /tmp, "
                  "--sandbox_tmpfs_path=/tmp), where {}. Create it before bazel test ({} {}) and pass "
                  "--sandbox_writable_path={}; gpuplan exec does both",
                  what, harm, create, path, path));
}

/// A launch stopped while its test waited for the locks of `gpus`: the test never started. Said in
/// the test's log; before, the stop signal ended run-under without a word, and under Bazel's test
/// timeout the log of a test queued behind another on its GPU read as a test that ran too long.
int stopped_waiting(const RunUnderOptions& o, std::string_view target, const std::vector<int>& gpus,
                    int stop) {
  std::cerr << fmt::format(
      "gpuplan run-under: {} did not run: it was stopped (signal {}) while it waited for GPUs {} (their "
      "locks in {} were held: by the test before it on them, or a process that kept them){}\n",
      target, stop, gpu_list(gpus), o.lock_dir,
      how_it_ended(o.launched_s, stop) == RunEnd::timed_out
          ? "; Bazel's test timeout ran out in that wait, so its TIMEOUT is the wait's, not the test's: keep "
            "--local_test_jobs at the node's GPU count, or give the test a timeout that covers the wait"
          : "");
  return 128 + stop;
}

int run_under(const RunUnderOptions& o) {
  const char* target = std::getenv("TEST_TARGET");
  if (!target || !*target)
    throw InputError(Position{"TEST_TARGET"},
                     "not set: run-under runs as `bazel test --run_under=\"gpuplan run-under --plan ...\"`");
  const std::optional<int> shard = shard_variable("TEST_SHARD_INDEX", 0);
  // Bazel sets both or neither; TEST_SHARD_INDEX alone (by hand) says nothing of the count.
  std::optional<int> bazel_shards = shard_variable("TEST_TOTAL_SHARDS", 1);
  if (!bazel_shards && !shard) bazel_shards = 1;
  if (!o.results.empty())
    require_shared_path(o.results, "results file",
                        "its record would be lost with the sandbox, and the next plan would lack this run",
                        "touch");
  if (!o.junit.empty())
    require_shared_path(o.junit, "JUnit file",
                        "the report rewritten after this test would be lost with the sandbox", "touch");
  if (!o.results.empty() && check_results_file(o.results) == ResultsColumns::nine)
    std::cerr << fmt::format("gpuplan run-under: note: {}\n", results_columns_note(o.results));
  check_writable(o.junit);
  auto node = o.node.empty() ? node_name(o.node_file) : o.node;
  // Through PLAN.index, or the lock directory's where the plan's folder takes none: what this
  // launch needs, in a few small reads.
  auto plan = read_plan_for_launch(o.plan, node, target, o.lock_dir);
  // --fleet: this node's GPUs, and whether it can take a test
  const std::optional<Node> fleet_node = read_fleet_node(o.fleet, node);
  // A unit that holds the whole node holds every GPU of it, those the plan leaves idle too.
  const auto node_gpus = run_node_gpus(plan, node, fleet_node ? &*fleet_node : nullptr, o.fleet);
  auto placement = place_test(plan, node, target, shard);
  // A broken plan never runs a unit on no GPU, on one GPU twice, or twice: exec's checks, of this
  // test's units (all of them are in a slice read through the index: with the whole plan read, a
  // fault of another test's would refuse only the launches that read it whole), refused at the
  // unit's line in the plan file.
  Plan mine;
  const LabelMatch named(plan, target);
  for (const auto& a : plan.assignments)
    if (named(a.unit.label)) mine.assignments.push_back(a);
  at_slice_lines(mine, o.plan, [&] {
    check_planned_once(mine, o.plan);
    if (!placement.assignment) return;
    const auto& a = *placement.assignment;
    auto it = std::find_if(mine.assignments.begin(), mine.assignments.end(),
                           [&](const Assignment& b) { return b.node == a.node && b.unit.id == a.unit.id; });
    check_launchable(
        a, o.plan,
        it == mine.assignments.end()
            ? std::nullopt
            : std::optional<std::size_t>(static_cast<std::size_t>(it - mine.assignments.begin())));
  });
  using Kind = TestPlacement::Kind;
  if (placement.kind != Kind::cpu) {
    require_shared_path(o.lock_dir, "GPU lock directory",
                        "each test would lock GPUs of its own and tests would share GPUs",
                        "install -d -m 0700");
    if (!o.claims.empty())
      require_shared_path(o.claims, "claims directory",
                          "each test would claim its unit alone and every node would run it",
                          "install -d -m 0700");
  }
  // A unit of the whole test that Bazel runs in another number of shards: each shard runs on its
  // GPUs (as_launched), and the plan's time for it is of another count, said in the test's log.
  if (const auto& a = placement.assignment;
      a && !a->unit.shard_index && bazel_shards && *bazel_shards > 1 && *bazel_shards != a->unit.shard_count)
    std::cerr << fmt::format(
        "gpuplan run-under: warning: {}; until then each of Bazel's shards runs on the test's planned GPUs, "
        "one after another\n",
        shard_mismatch(target, a->unit.shard_count, *bazel_shards));
  bool fewer_shards = false;  // than planned: no node may run the plan's shards for Bazel's
  if (auto planned = bazel_shards ? planned_shard_count(plan, target) : std::nullopt;
      planned && *planned != *bazel_shards && placement.kind != Kind::cpu) {
    auto mismatch = shard_mismatch(target, *planned, *bazel_shards);
    // A shard the plan does not have; or fewer shards than planned, whose planned shards past
    // Bazel's count would never run, nor their part of the test's cases (Bazel said PASSED).
    fewer_shards = *planned > *bazel_shards;
    if ((placement.kind == Kind::unknown && o.query.empty()) || fewer_shards)
      placement = {Kind::refused, std::nullopt, mismatch};
    else  // more shards than planned, or sharded since: each planned shard's cases still run
      std::cerr << fmt::format("gpuplan run-under: warning: {}\n", mismatch);
  }
  // --query of the commit Bazel runs: a test whose tags ask for more than the plan, made at an
  // earlier commit, gives it is refused, as a changed shard_count is.
  // What changed since the plan (`grew`: asks for more than it gives): refused (the exit status), or
  // a warning and run as planned.
  auto changed = [&](const std::string& change, bool grew) -> std::optional<int> {
    auto what = fmt::format("{}: the test changed after the plan was made; make the plan again (plan {})",
                            change, o.plan);
    if (grew && !o.warn_unplanned) {
      std::cerr << fmt::format(
          "gpuplan run-under: refusing to run {} on node {}: {}. A GPU test never runs short of the GPUs "
          "it asks for; --unplanned=warn runs it as planned instead.\n",
          target, node, what);
      return exit_bad_input;
    }
    std::cerr << fmt::format("gpuplan run-under: warning: {}; it runs as planned\n", what);
    return std::nullopt;
  };
  std::optional<int> asks_more;  // than planned, by --query's tags: what its results record says it asked
  if (!o.query.empty() && (placement.kind == Kind::planned || placement.kind == Kind::cpu))
    if (auto change = changed_since_plan(o, placement, target, plan.policy, node_gpus,
                                         fleet_node ? &*fleet_node : nullptr, plan.summary.vram_headroom)) {
      if (change->grew) asks_more = change->asks;
      if (auto refused = changed(change->what, change->grew)) return *refused;
    }
  if (!o.claims.empty() && !fewer_shards &&
      (placement.kind == Kind::planned || placement.kind == Kind::refused)) {
    if (auto planned = planned_anywhere(plan, node, target, shard)) {
      // Planned on another node: the query's tags, checked there on its own node, are checked here.
      if (auto grew = placement.kind == Kind::refused && !o.query.empty()
                          ? take_as_queried(o, *planned, target, plan.policy)
                          : std::string();
          !grew.empty())
        if (auto refused = changed(grew, true)) return *refused;
      if (auto status =
              run_launch(o, plan, node, fleet_node, node_gpus, as_launched(*planned, shard, bazel_shards)))
        return *status;
      placement.reason += o.fleet.empty()
                              ? "; without --fleet, dynamic execution takes no test planned elsewhere"
                              : "; dynamic execution cannot take it here (this node does not meet its "
                                "requirements, or this machine lacks what it needs, as said above)";
    }
  }
  if (placement.kind == Kind::unknown && !o.query.empty()) {
    if (auto need = unplanned_need(o, target, plan.policy))
      return run_unplanned(o, node, node_gpus, target, shard, bazel_shards, *need);
    placement = {Kind::refused, std::nullopt, fmt::format("it is neither in the plan nor in {}", o.query)};
  } else if (placement.kind == Kind::unknown) {
    placement = {Kind::refused, std::nullopt,
                 "it is not in the plan (--query QUERY places tests missing from it by their tags)"};
  }
  Assignment assignment;
  assignment.unit.label = assignment.unit.id = target;
  assignment.node = node;
  assignment = as_launched(std::move(assignment), shard, bazel_shards);
  std::vector<os::GpuLocks> held;
  // A CPU test asks for none; what a refused one asks for is not known.
  std::optional<int> asked = placement.kind == Kind::refused ? std::nullopt : std::optional<int>(0);
  if (placement.kind == Kind::refused) {
    auto what = fmt::format("{} on node {}: {} (plan {})", target, node, placement.reason, o.plan);
    if (o.node.empty() && o.node_file.empty() &&
        std::none_of(plan.assignments.begin(), plan.assignments.end(),
                     [&](const Assignment& a) { return a.node == node; }))
      what +=
          "; the node is this machine's host name, as neither --node nor --node-file came before the command";
    if (!o.warn_unplanned) {
      std::cerr << fmt::format(
          "gpuplan run-under: refusing to run {}. A GPU test never runs without its GPUs; "
          "--unplanned=warn runs it with no GPU visible instead.\n",
          what);
      return exit_bad_input;
    }
    std::cerr << fmt::format("gpuplan run-under: warning: {}; running it with no GPU visible\n", what);
  } else if (placement.kind == Kind::planned) {
    assignment = as_launched(*placement.assignment, shard, bazel_shards);
    asked = std::max(static_cast<int>(assignment.gpus.size()), asks_more.value_or(0));
    // Alone on the node: every GPU's lock.
    auto gpus = holds_whole_node(assignment, plan.policy) ? node_gpus : assignment.gpus;
    os::catch_stop_signals();  // Bazel's timeout may come in the wait: the test's log then says so
    if (auto locks = os::GpuLocks::take(o.lock_dir, gpus, true))
      held.push_back(std::move(*locks));
    else if (int stop = os::stop_signal())
      return stopped_waiting(o, target, gpus, stop);
  }
  if (placement.kind == Kind::cpu && asks_more) asked = asks_more;
  return run_test(o, assignment, shares_gpu(assignment.unit, plan.policy), std::move(held), asked);
}

std::string why_not_here(const Assignment& assignment, Nvml* nvml) {
  auto missing = missing_gpus(assignment.gpus, nvml);
  if (missing.empty()) {
    missing = outside_allocation(assignment.gpus, std::getenv("CUDA_VISIBLE_DEVICES"),
                                 std::getenv("ROCR_VISIBLE_DEVICES"));
    // Bazel gives a test none of its caller's environment but what --test_env names.
    if (!missing.empty())
      missing +=
          ". Under bazel test, CUDA_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES reach a test only through "
          "--test_env (a .bazelrc's test --test_env=CUDA_VISIBLE_DEVICES passes on the caller's) or the test "
          "rule's env attribute: drop it, run-under gives each test its GPUs";
  }
  // unmet_here's sentence has no subject ("is given GPU 3, which is in MIG mode"): the test is it.
  if (auto machine = describe_machine(nvml); missing.empty() && machine)
    if (auto unmet = unmet_here(*assignment.unit.requirement, assignment.gpus, *machine); !unmet.empty())
      missing = "it " + unmet;
  return missing;
}

int refuse_here(const RunUnderOptions& o, const Assignment& assignment, const std::string& missing) {
  std::cerr << fmt::format(
      "gpuplan run-under: refusing to run {} on node {}: {} (plan {}). --missing-gpus=warn runs it anyway.\n",
      assignment.unit.label, std::string(assignment.node), missing, o.plan);
  return exit_bad_input;
}

/// Whether `program` (a path, or a name looked up in PATH as exec does) is a compiled one: its
/// first bytes are ELF's. One that cannot be read is not known to be.
bool is_elf(const std::string& program) {
  std::vector<std::string> candidates{program};
  if (program.find('/') == std::string::npos)
    if (const char* path = std::getenv("PATH"))
      for (std::string_view rest = path; !rest.empty();) {
        const auto colon = std::min(rest.find(':'), rest.size());
        candidates.push_back(fmt::format("{}/{}", colon == 0 ? "." : rest.substr(0, colon), program));
        rest.remove_prefix(std::min(colon + 1, rest.size()));
      }
  for (const auto& candidate : candidates) {
    auto opened = os::open_regular(candidate, O_RDONLY);  // never waits on a FIFO
    if (!opened) continue;
    constexpr std::string_view elf_magic = "\177ELF";
    char head[4] = {};
    const bool elf =
        ::pread(*opened, head, sizeof head, 0) == sizeof head && std::string_view(head, 4) == elf_magic;
    ::close(*opened);
    return elf;
  }
  return false;
}

/// The test filter this run is under, said as "--test_filter=X", or empty: a part of the test ran,
/// and its time as the test's taught history that a 2 s test takes 5 ms. Bazel's --test_filter
/// reaches the test as TESTBRIDGE_TEST_ONLY; googletest reads GTEST_FILTER too, and the test's
/// arguments (a --test_arg) may hold --gtest_filter= or pytest's -k. A -k is pytest's only where the
/// test is a script (a py_test's stub, an sh_test that runs pytest) or names pytest among its
/// arguments (python3 -m pytest): a compiled test's -k is an option of its own.
std::string test_filter(const std::vector<std::string>& command) {
  if (const char* filter = std::getenv("TESTBRIDGE_TEST_ONLY"); filter && *filter)
    return fmt::format("--test_filter={}", util::excerpt(filter, 100));
  if (const char* filter = std::getenv("GTEST_FILTER"); filter && *filter && std::string_view(filter) != "*")
    return fmt::format("GTEST_FILTER={}", util::excerpt(filter, 100));
  const std::vector<std::string> args(command.empty() ? command.end() : command.begin() + 1, command.end());
  const bool pytest = command.empty() || !is_elf(command.front()) ||
                      std::any_of(args.begin(), args.end(),
                                  [](const std::string& a) { return a.find("pytest") != std::string::npos; });
  if (auto filter = test_case_filter(args, pytest); !filter.empty())
    return fmt::format("a test-case filter in its arguments ({})", util::excerpt(filter, 100));
  return {};
}

/// Under bazel coverage (or --collect_code_coverage: Bazel's COVERAGE_DIR) the test ran
/// instrumented, collecting coverage, slower than it runs in bazel test: said as "ran under ...",
/// else empty.
std::string untimed_run() {
  if (const char* coverage = std::getenv("COVERAGE_DIR"); coverage && *coverage)
    return "ran under bazel coverage (COVERAGE_DIR), instrumented and slower than under bazel test";
  return {};
}

int run_test(const RunUnderOptions& o, const Assignment& assignment, bool shares,
             std::vector<os::GpuLocks> held, std::optional<int> asked, RunEnd* ended) {
  const auto& target = assignment.unit.label;
  const auto& shard = assignment.unit.shard_index;
  const auto& node = assignment.node;
  auto nvml = assignment.gpus.empty() && o.results.empty() ? nullptr : open_nvml();
  // The GPUs the results record gives it: under --missing-gpus=warn only those of its planned GPUs
  // this machine has, since CUDA leaves the others out. One given only absent GPUs ran with none,
  // and its empty gpus keeps it out of the test's duration (history's given_no_gpu); before, the
  // record listed the planned GPUs and history took its time, its GPU work skipped, as the test's.
  auto recorded_gpus = assignment.gpus;
  if (auto missing = why_not_here(assignment, nvml.get()); !missing.empty()) {
    if (!o.warn_missing_gpus) return refuse_here(o, assignment, missing);
    recorded_gpus = present_gpus(assignment.gpus, nvml.get());
    auto named = [](const std::vector<int>& gpus) {
      return fmt::format("GPU{} {}", gpus.size() == 1 ? "" : "s", gpu_list(gpus));
    };
    auto recorded =
        o.results.empty() || recorded_gpus == assignment.gpus ? std::string()
        : recorded_gpus.empty()
            ? fmt::format(
                  "; its results record gives it no GPU (planned {}: none is here), so "
                  "history leaves this run out of its duration",
                  named(assignment.gpus))
            : fmt::format("; its results record gives it {} (planned {}: only {} here)", named(recorded_gpus),
                          named(assignment.gpus), recorded_gpus.size() == 1 ? "that one is" : "those are");
    std::cerr << fmt::format(
        "gpuplan run-under: warning: {} on node {}: {} (plan {}); running it anyway "
        "(--missing-gpus=warn){}\n",
        target, std::string(node), missing, o.plan, recorded);
  }
  std::vector<int> fds;
  for (const auto& locks : held) fds.insert(fds.end(), locks.fds().begin(), locks.fds().end());
  os::catch_stop_signals();
  // Bazel's timeout may come as the GPUs were handed over: a test stopped before it started is
  // not started (before, one ran on its GPUs after Bazel had called it timed out).
  // Given up either way, for another node to run it: it never ran here.
  if (os::stop_signal() != 0) {
    if (ended) *ended = RunEnd::stopped;
    return 128 + os::stop_signal();
  }
  // Not passed on where it would hide some of the test's GPUs (inherited_by_unit): said here.
  if (const char* selector = std::getenv("ONEAPI_DEVICE_SELECTOR"); selector && *selector)
    if (auto why = oneapi_selector_hides_gpus(selector, assignment.gpus.size()); !why.empty())
      std::cerr << fmt::format(
          "gpuplan run-under: warning: {}: ONEAPI_DEVICE_SELECTOR={} {}: a SYCL or oneAPI test would run on "
          "fewer GPUs than the plan gave it, or none, and may pass; it is unset for this test (a "
          "selector that names backends only, such as level_zero:*, is passed on)\n",
          target, util::excerpt(selector, 100), why);
  double start = os::now_epoch_s();
  // Bazel times the test from its launch of run-under, so the time its test.xml and build events
  // give holds the wait for these GPUs (another test on them): said in the test's log, where
  // history finds it and takes it out. A shorter wait is within Bazel's whole seconds.
  constexpr double said_from_s = 0.5;
  if (o.launched_s > 0 && start - o.launched_s >= said_from_s)
    std::cerr << launch_wait_line(LaunchWait{start - o.launched_s,
                                             static_cast<std::int64_t>(std::llround(o.launched_s * 1000))},
                                  target, gpu_list(assignment.gpus))
              << '\n';
  pid_t child = os::spawn(o.command, command_env(assignment, shares), false, fds);
  os::forward_stop_signals(child);
  GpuUsageSampler sampler(nvml);  // a GPU test's always, to catch one on GPUs it was not given
  sampler.start(child, assignment.gpus);
  int wait_status = 0;
  while (::waitpid(child, &wait_status, 0) < 0 && errno == EINTR) {
  }
  const double seconds = os::now_epoch_s() - start;  // before the GPUs go: the record's span holds them
  GpuUsage usage = sampler.stop();
  held.clear();
  if (auto outside = outside_gpus_warning(target, assignment.gpus, usage.outside); !outside.empty()) {
    std::cerr << fmt::format("gpuplan run-under: warning: {}\n", outside);
    try {  // for exec, which says it where the CI log shows it: a test's log is seldom read
      os::append_locked(outside_gpus_file(o.lock_dir), "", fmt::format("{}\t{}\n", node, outside));
    } catch (const InputError&) {
      std::cerr << fmt::format("gpuplan run-under: cannot note that in {}\n", outside_gpus_file(o.lock_dir));
    }
  }
  // A test cut short did not pass, even one that trapped the signal and exited 0. A stop that came
  // once the test had ended by itself (Bazel's SIGTERM to the group, a Slurm time limit, as it exited)
  // cut nothing short: the test ended as it did, its record says so, and its claim is marked done.
  // Before, any stop by now made a test that passed 143 and stopped, its claim given up, and another
  // node ran it a second time. Judged once: a stop as the record is written changes nothing.
  const int cut_short = os::cut_short();
  const int status = os::cut_short_status(os::exit_status(wait_status), cut_short);
  const RunEnd end = how_it_ended(o.launched_s, cut_short);
  if (ended) *ended = end;
  // A filtered run is recorded, marked, where the file has the column (history leaves it out of the
  // test's duration and history show marks it); an older file could not mark it, so it gets none.
  const auto filter = test_filter(o.command);
  const auto columns = o.results.empty() ? ResultsColumns::thirteen : check_results_file(o.results);
  if (auto untimed = untimed_run(); !o.results.empty() && !untimed.empty()) {
    std::cerr << fmt::format("gpuplan run-under: {} {}: no results record (its time is not the test's)\n",
                             target, untimed);
  } else if (!o.results.empty() && !filter.empty() && columns < ResultsColumns::twelve) {
    std::cerr << fmt::format(
        "gpuplan run-under: {} ran under {}: no results record (its time is not the test's, and {} has no "
        "filtered column to mark it: begun by an earlier gpuplan)\n",
        target, filter, o.results);
  } else if (!o.results.empty()) {
    if (!filter.empty())
      std::cerr << fmt::format(
          "gpuplan run-under: {} ran under {}: its results record is marked filtered, and history leaves "
          "its time out of the test's\n",
          target, filter);
    RunRecord record{canonical_label(target),
                     shard,
                     seconds,
                     std::string(node),
                     recorded_gpus,
                     start,
                     status,
                     usage.peak_vram_mib,
                     usage.measured ? std::optional<bool>(usage.touched) : std::nullopt,
                     end,
                     usage.peak_up_front,
                     assignment.unit.shard_count,
                     !filter.empty(),
                     asked};
    try {
      os::append_locked(o.results, results_header(), to_csv(record, columns));
      if (!o.junit.empty()) rewrite_junit(o.results, o.junit);
    } catch (const InputError& e) {  // said, and a failed test still fails with its own code
      std::cerr << fmt::format("gpuplan run-under: {}; the test exited {}\n", e.what(), status);
      return status != 0 ? status : exit_bad_input;
    }
  }
  return status;
}

}  // namespace

void add_run_under_command(CLI::App& app, int& status) {
  auto options = std::make_shared<RunUnderOptions>();
  auto* command = app.add_subcommand(
      "run-under",
      "Run one Bazel test on its planned GPUs: bazel test --run_under=\"gpuplan run-under --plan P\"");
  command->add_option("--plan", options->plan, "the plan (JSON)")->required();
  command->add_option("--node", options->node,
                      "this machine's node in the plan (default: --node-file's, else the host name)");
  command->add_option(
      "--node-file", options->node_file,
      "a file whose first line is this machine's node (keeps --run_under the same on every node)");
  command->add_option("--lock-dir", options->lock_dir, "where the per-GPU lock files are (it must exist)")
      ->capture_default_str();
  auto* results =
      command->add_option("--results", options->results, "append a results record (CSV) to this file");
  command
      ->add_option("--junit", options->junit,
                   "after each test, rewrite this JUnit XML file from every record in --results (one "
                   "testcase a test, with node, GPUs and time)")
      ->needs(results);
  command->add_option(
      "--query", options->query,
      "bazel query output of the commit Bazel runs: a test missing from the plan gets GPUs by "
      "its tags, and one whose tags ask for more than the plan gives it, or than its planned GPUs have (by "
      "--fleet's node, or NVML), is refused");
  command->add_option("--rules", options->rules, "rules file for --query");
  command
      ->add_option_function<std::string>(
          "--unplanned", [options](const std::string& value) { options->warn_unplanned = value == "warn"; },
          "a test the plan gives no GPUs on this node (other node, unschedulable, skipped, missing, node "
          "not in the plan): fail it (default) or warn and run it with no GPU visible")
      ->check(CLI::IsMember({"fail", "warn"}));
  add_missing_gpus_option(*command, options->warn_missing_gpus);
  command->add_option("--claims", options->claims,
                      "dynamic execution: a directory every node's run-under sees; each test runs once, "
                      "on the node that claims it first (see exec --claims)");
  command
      ->add_option("--lease", options->lease_s,
                   "seconds after which a silent node's claim is taken over (renewed 4 times a lease)")
      ->check(lease_seconds())
      ->capture_default_str();
  command->add_option("--fleet", options->fleet,
                      "with --claims: this node may run a test planned on another node when it meets every "
                      "requirement and enough of its GPUs are free; with --query: a planned test's GPUs are "
                      "checked against what its tags now ask of them");
  command->prefix_command();
  command->footer("Everything after the options (or after --) is the test command; Bazel adds it.");
  command->callback([options, command, &status] {
    options->launched_s = os::now_epoch_s();
    for (auto& argument : command->remaining()) options->command.push_back(argument);
    if (options->command.empty()) throw CLI::ValidationError("run-under", "no test command: Bazel adds it");
    status = run_under(*options);
  });
}

}  // namespace gpuplan::cli
