// Dynamic execution at a monorepo's size: one `gpuplan exec --claims --fleet` node of a 150,000-unit
// plan, each unit `--command true`, in four states of the claims directory as it starts: every unit
// done (exec's fixed cost: it looks at each done mark once); no unit started yet, the node alone (as
// every node at a run's start, or with the others' nodes not started), stopped after `fresh` units;
// every unit done but the `left` last ones planned on the node's pool (a run's tail); and the same
// with the `held` longest held by another node meanwhile. Usage: claims_bench PLAN FLEET [--left=1000]
// [--held=8] [--fresh=100] [--node=h100-0] [--runs=N] [--gpuplan=PATH]; PLAN and FLEET as
// `commands_bench --sizes=150000 --only='plan (xml, 1,000' --dir=DIR` leaves them (DIR/plan.json,
// DIR/fleet-1000.yaml); the node is one of the fleet's.
//
// The directory is written as the other nodes would leave it, in the layout of src/run/claims.hpp:
// DIR/H.done (H: the unit id's FNV-1a) and, for a held unit, a claim DIR/H.0 of another node, renewed
// until this node has run its units and then marked done. Each row: wall (until the last unit
// passed), CPU (the exec's and its units'), peak RSS, and the exec process's file-system calls
// (strace -c -e trace=%file, not its units' shells), and those two a unit run; the peak RSS is the
// exec's VmHWM, read every 20 ms while it runs. Before the fix they
// grew with the plan: each unit ended looked at every candidate not run here again.
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "util/text.hpp"

namespace {

namespace fs = std::filesystem;

struct Unit {
  std::string id, node;
  double start = 0, end = 0;
};

/// The claims directory's name for a unit's files (src/run/claims.cpp's hashed()).
std::string hashed(const std::string& id) { return fmt::format("{:016x}", gpuplan::util::fnv1a(id)); }

/// One exec's cost, measured from outside.
struct Cost {
  double wall = 0, cpu = 0;
  long peak_rss_kib = 0;
  long passed = 0;
  long file_calls = -1;  ///< -1: strace not run
};

/// The units the exec's progress lines say passed (its table at the end says it again).
long count_passed(const fs::path& path) {
  std::ifstream in(path);
  long n = 0;
  for (std::string line; std::getline(in, line);)
    if (line.starts_with("[") && line.find(" passed ") != std::string::npos) ++n;
  return n;
}

long strace_total(const fs::path& path) {
  std::ifstream in(path);
  long total = -1;
  for (std::string line; std::getline(in, line);)
    if (line.find("total") != std::string::npos) {
      std::istringstream words(line);
      std::vector<std::string> w;
      for (std::string x; words >> x;) w.push_back(x);
      if (w.size() >= 3) total = std::atol(w[w.size() - (w.size() >= 5 ? 3 : 2)].c_str());
    }
  return total;
}

/// What the other nodes left in the claims directory as this node starts, and when it is stopped.
struct Scenario {
  std::string name;
  std::vector<std::string> done, held;  ///< marked done; claimed by another node, renewed until `left` ran
  long left = 0;                        ///< the units it runs here (then ends, or is stopped)
  bool stop = false;                    ///< SIGINT once `left` units passed (the rest of a fresh run left)
};

/// VmHWM of process `pid` once it runs the program `name` (before its exec it is a copy of this
/// benchmark); 0 before, or once it has ended.
long exec_peak_rss_kib(pid_t pid, const std::string& name) {
  std::ifstream status(fmt::format("/proc/{}/status", pid));
  std::string line;
  bool running_it = false;
  while (std::getline(status, line)) {
    if (line.starts_with("Name:")) running_it = line.substr(line.find_first_not_of(" \t", 5)) == name;
    if (running_it && line.starts_with("VmHWM:")) return std::atol(line.c_str() + 6);
  }
  return 0;
}

/// The process strace started (its one child), or `child` itself.
pid_t traced(pid_t child) {
  std::ifstream in(fmt::format("/proc/{0}/task/{0}/children", child));
  pid_t pid = 0;
  return in >> pid ? pid : child;
}

/// Lays out `dir` as the other nodes left it, runs the exec, and ends the held claims (or the exec)
/// once it ran `left` units.
Cost run_exec(const std::string& gpuplan, const fs::path& plan, const fs::path& fleet,
              const std::string& node, const fs::path& dir, const Scenario& scenario, bool strace) {
  const long left = scenario.left;
  fs::remove_all(dir);
  fs::create_directories(dir / "claims");
  fs::create_directories(dir / "locks");
  const fs::path claims = dir / "claims";
  {
    // Links of a few files (ext4 allows 65,000 a file): writing 150,000 files takes longer.
    fs::path mark;
    for (size_t i = 0; i < scenario.done.size(); ++i) {
      if (i % 60'000 == 0)
        std::ofstream(mark = claims / fmt::format(".bench-done-{}", i)) << "other-node 1 0\n";
      fs::create_hard_link(mark, claims / (hashed(scenario.done[i]) + ".done"));
    }
    for (const auto& id : scenario.held) std::ofstream(claims / (hashed(id) + ".0")) << "other-node 1\n";
  }
  const fs::path out = dir / "out.txt", trace = dir / "strace.txt";
  std::vector<std::string> args;
  if (strace) args = {"strace", "-c", "-e", "trace=%file", "-o", trace.string()};
  for (std::string a :
       {gpuplan, std::string("exec"), plan.string(), std::string("--node"), node, std::string("--claims"),
        claims.string(), std::string("--fleet"), fleet.string(), std::string("--lock-dir"),
        (dir / "locks").string(), std::string("--lease"), std::string("10"),
        std::string("--missing-gpus=warn"), std::string("--command"), std::string("true")})
    args.push_back(a);
  const auto start = std::chrono::steady_clock::now();
  pid_t child = fork();
  if (child == 0) {
    int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(fd, 1);
    int null = ::open("/dev/null", O_WRONLY);
    ::dup2(null, 2);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  Cost cost;
  bool ended_others = false;
  int status = 0;
  rusage usage{};
  // The exec's peak RSS, read as it runs: wait4's ru_maxrss would be this benchmark's own, which the
  // child had until it exec'd (the plan parsed whole, 470 MiB at 150,000 units).
  const std::string name = fs::path(gpuplan).filename().string().substr(0, 15);  // as /proc shows it
  while (wait4(child, &status, WNOHANG, &usage) != child) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (!strace) cost.peak_rss_kib = std::max(cost.peak_rss_kib, exec_peak_rss_kib(child, name));
    if (ended_others) continue;
    for (const auto& id : scenario.held)
      ::utimensat(AT_FDCWD, (claims / (hashed(id) + ".0")).c_str(), nullptr, 0);
    if (count_passed(out) < left) continue;
    cost.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    for (const auto& id : scenario.held)  // the other node ends its units
      std::ofstream(claims / (hashed(id) + ".done")) << "other-node 1 0\n";
    if (scenario.stop) ::kill(strace ? traced(child) : child, SIGINT);
    ended_others = true;
  }
  if (!ended_others)
    cost.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto seconds = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  cost.cpu = seconds(usage.ru_utime) + seconds(usage.ru_stime);
  cost.passed = count_passed(out);
  if (strace) cost.file_calls = strace_total(trace);
  return cost;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    fmt::print(
        stderr,
        "usage: claims_bench PLAN FLEET [--left=1000] [--held=8] [--fresh=100] [--node=h100-0] [--runs=N]\n");
    return 2;
  }
  const fs::path plan = argv[1], fleet = argv[2];
  long left = 1000, held_count = 8, fresh = 100;
  int runs = 1;
  std::string node = "h100-0", gpuplan = GPUPLAN_BINARY;
  for (int i = 3; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg.starts_with("--left=")) left = std::atol(argv[i] + 7);
    if (arg.starts_with("--held=")) held_count = std::atol(argv[i] + 7);
    if (arg.starts_with("--fresh=")) fresh = std::atol(argv[i] + 8);
    if (arg.starts_with("--node=")) node = std::string(arg.substr(7));
    if (arg.starts_with("--runs=")) runs = std::max(1, std::atoi(argv[i] + 7));
    if (arg.starts_with("--gpuplan=")) gpuplan = std::string(arg.substr(10));
  }
  std::vector<Unit> units;
  try {
    std::ifstream in(plan);
    auto json = nlohmann::json::parse(in);
    for (const auto& a : json.at("assignments"))
      units.push_back({a.at("unit").get<std::string>(), a.at("node").get<std::string>(),
                       a.at("start_s").get<double>(), a.at("end_s").get<double>()});
  } catch (const nlohmann::json::exception& e) {  // a missing or cut-off plan: said, not an abort
    fmt::print(stderr, "claims_bench: {}: not a plan: {}\n", plan.string(), e.what());
    return 2;
  }
  // The units left to run: the last `left` planned on the node's pool (its name less the number),
  // which the node can surely run; held: the longest others of the pool, first in dispatch order.
  const std::string pool = node.substr(0, node.rfind('-') + 1);
  std::vector<size_t> same;
  for (size_t i = 0; i < units.size(); ++i)
    if (units[i].node.starts_with(pool)) same.push_back(i);
  std::set<size_t> open(same.end() - std::min<long>(left, static_cast<long>(same.size())), same.end());
  std::vector<size_t> by_length(same.begin(), same.end() - static_cast<long>(open.size()));
  std::stable_sort(by_length.begin(), by_length.end(), [&](size_t x, size_t y) {
    return units[x].end - units[x].start > units[y].end - units[y].start;
  });
  std::set<size_t> held_set(
      by_length.begin(), by_length.begin() + std::min<long>(held_count, static_cast<long>(by_length.size())));
  std::vector<Scenario> scenarios(4);
  scenarios[0].name = "nothing left (exec's fixed cost)";
  scenarios[1].name = fmt::format("none started yet, this node alone (stopped after {} units)", fresh);
  scenarios[1].stop = true;
  scenarios[1].left = fresh;
  scenarios[0].left = scenarios[2].left = scenarios[3].left = static_cast<long>(open.size());
  scenarios[2].name = "all done but the last";
  scenarios[3].name = fmt::format("all done but the last, {} of the longest held", held_set.size());
  for (size_t i = 0; i < units.size(); ++i) {
    scenarios[0].done.push_back(units[i].id);
    if (open.count(i)) continue;
    scenarios[2].done.push_back(units[i].id);
    (held_set.count(i) ? scenarios[3].held : scenarios[3].done).push_back(units[i].id);
  }
  const fs::path dir = fs::temp_directory_path() / fmt::format("gpuplan-claims-bench-{}", getpid());
  fmt::print(
      "claims_bench: {}, {} units; one exec of node {} (--command true, --lease 10), {} runs each (the "
      "median CPU's), file calls by strace -c -e trace=%file of the exec process alone\n\n",
      plan.string(), units.size(), node, runs);
  fmt::print(
      "| plan units | the other nodes, as the node starts | units run here | wall s | CPU s | CPU ms a unit "
      "| peak "
      "RSS MiB | file calls | a unit |\n");
  fmt::print("|---:|---|---:|---:|---:|---:|---:|---:|---:|\n");
  const bool strace = std::system("strace -V >/dev/null 2>&1") == 0;
  std::pair<double, long> fixed{0, 0};  ///< the first row's CPU and file calls
  for (const auto& scenario : scenarios) {
    std::vector<Cost> costs;
    for (int r = 0; r < runs; ++r)
      costs.push_back(run_exec(gpuplan, plan, fleet, node, dir, scenario, false));
    std::sort(costs.begin(), costs.end(), [](const Cost& x, const Cost& y) { return x.cpu < y.cpu; });
    Cost c = costs[costs.size() / 2];
    const long calls = strace ? run_exec(gpuplan, plan, fleet, node, dir, scenario, true).file_calls : -1;
    // The tail rows' exec looks at every unit's done mark once as it starts, as the first row's does:
    // a unit's share is what it adds to that.
    if (&scenario == &scenarios[0]) fixed = {c.cpu, calls};
    const bool tail = &scenario != &scenarios[0] && !scenario.stop;
    const double per = static_cast<double>(c.passed);
    const double cpu_ms = (c.cpu - (tail ? fixed.first : 0)) * 1000 / per;
    const double calls_per = static_cast<double>(calls - (tail ? fixed.second : 0)) / per;
    fmt::print("| {} | {} | {} | {:.2f} | {:.2f} | {} | {:.0f} | {} | {} |\n", units.size(), scenario.name,
               c.passed, c.wall, c.cpu, c.passed > 0 ? fmt::format("{:.2f}", cpu_ms) : "",
               static_cast<double>(c.peak_rss_kib) / 1024,
               calls < 0 ? std::string("(no strace)") : std::to_string(calls),
               calls < 0 || c.passed == 0 ? std::string("") : fmt::format("{:.1f}", calls_per));
    std::fflush(stdout);
  }
  fmt::print(
      "\n* at the tail, beyond the first row's (the exec's start, which looks at every done mark once)\n");
  fs::remove_all(dir);
  return 0;
}
