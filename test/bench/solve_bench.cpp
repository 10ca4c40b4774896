// The planner on generated workloads and fleets: time, peak memory and quality (makespan against
// the lower bound) per policy. Each case runs in a child process so that its peak RSS is its own.
// Usage: solve_bench [--quick] [--reference] [--verify] [--policy=P] [WORDS]   (--quick: up to
// 100,000 units; --reference: also longest first with insertion up to 10,000 units; --verify:
// also time verify on each plan; --policy:
// that policy only; WORDS: only the cases whose name contains them, e.g. `solve_bench "1-GPU"`)
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "child_run.hpp"
#include "gpuplan/solve.hpp"
#include "gpuplan/verify.hpp"
#include "workloads.hpp"

using namespace gpuplan;
using namespace gpuplan::bench;

namespace {

struct Measurement {
  double seconds = 0;
  double verify_seconds = 0;
  double makespan = 0;
  double bound = 0;
  long max_rss_kib = 0;
};

/// Runs one case and policy in a child process; its peak RSS is the child's own.
Measurement measure(const Case& c, Policy policy, bool reference, bool check) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) throw std::runtime_error("pipe");
  auto run = run_child([&] {
    close(pipe_fds[0]);
    Fleet fleet = make_fleet(c.nodes, c.fleet);
    std::vector<Unit> units = make_units(c.units, c.workload, 12345);
    SolveOptions options;
    options.policy = policy;
    if (reference) options.scheduler = Scheduler::longest_first_insertion;
    // CPU time, not wall time: the development machine is shared.
    std::clock_t began = std::clock();
    Plan plan = make_plan(Classification{}, std::move(units), fleet, options);
    Measurement r;
    r.seconds = double(std::clock() - began) / CLOCKS_PER_SEC;
    r.makespan = plan.summary.makespan_s;
    r.bound = plan.summary.lower_bound_s;
    if (check) {  // after the planner's peak, which it may raise: run it apart for RSS
      std::clock_t checked = std::clock();
      if (!verify(plan, fleet).empty()) _exit(1);
      r.verify_seconds = double(std::clock() - checked) / CLOCKS_PER_SEC;
    }
    ssize_t written = write(pipe_fds[1], &r, sizeof r);  // far less than a pipe holds: it returns at once
    _exit(written == sizeof r ? 0 : 1);
  });
  close(pipe_fds[1]);
  Measurement r;
  if (read(pipe_fds[0], &r, sizeof r) != sizeof r) throw std::runtime_error("the benchmark child failed");
  close(pipe_fds[0]);
  r.max_rss_kib = run.peak_rss_kib;
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  bool quick = false;
  bool check = false;      // also time verify on each plan (its memory then counts in the peak RSS)
  bool reference = false;  // also plan longest first with insertion, the textbook reference
  const long reference_units = 10'000;  // it is slow beyond
  std::string only;
  std::optional<Policy> only_policy;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--quick") == 0)
      quick = true;
    else if (std::strcmp(argv[i], "--verify") == 0)
      check = true;
    else if (std::strcmp(argv[i], "--reference") == 0)
      reference = true;
    else if (std::strncmp(argv[i], "--policy=", 9) == 0)
      only_policy = parse_policy(argv[i] + 9);
    else
      only = argv[i];
  }
  auto cases = planner_cases(quick);

  fmt::print(
      "| case | units | nodes | policy | CPU time (s) | peak RSS (MiB) | RSS/unit (B) | makespan (s) | bound "
      "(s) | gap | vs longest-first insertion | verify (s) |\n");
  fmt::print("|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& c : cases) {
    if (c.name.find(only) == std::string::npos) continue;
    double whole_makespan = 0, exact_makespan = 0;
    for (Policy policy : {Policy::exact, Policy::whole_node, Policy::pack}) {
      if (only_policy && policy != *only_policy) continue;
      Measurement r = measure(c, policy, false, check);
      std::string versus = "";
      if (reference && c.units <= reference_units) {
        Measurement ref = measure(c, policy, true, false);
        versus = fmt::format("{:+.2f}% ({:.0f} s, {:.1f} s CPU)", 100 * (r.makespan / ref.makespan - 1),
                             ref.makespan, ref.seconds);
      }
      if (policy == Policy::exact) exact_makespan = r.makespan;
      if (policy == Policy::whole_node) whole_makespan = r.makespan;
      fmt::print("| {} | {} | {} | {} | {:.2f} | {:.0f} | {:.0f} | {:.0f} | {:.0f} | {:.2f}% | {} | {} |\n",
                 c.name, c.units, c.nodes, to_string(policy), r.seconds, r.max_rss_kib / 1024.0,
                 r.max_rss_kib * 1024.0 / double(c.units), r.makespan, r.bound,
                 100 * (r.makespan / r.bound - 1), versus,
                 check ? fmt::format("{:.2f}", r.verify_seconds) : "");
      std::fflush(stdout);
    }
    if (!only_policy)
      fmt::print("|   |   |   | exact vs whole-node | | | | {:.1f}% shorter | | |\n",
                 100 * (1 - exact_makespan / whole_makespan));
  }
  return 0;
}
