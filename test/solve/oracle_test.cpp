// A second oracle beside verify: on tiny instances, the optimum by brute force, and every
// policy's plan between its lower bound and that optimum's worst case:
// lower_bound <= optimum <= makespan.
#include <bit>
#include <catch2/catch.hpp>
#include <random>

#include "gpuplan/verify.hpp"
#include "solve/planning.hpp"

using namespace gpuplan;
using namespace gpuplan::testing;

namespace {

/// One way a unit may run: a node and GPUs, whether it has the node to itself or shares GPUs.
struct Option {
  size_t node = 0;
  std::vector<int> gpus;
  bool alone = false;
  bool shared = false;
};

struct Placed {
  const Option* option;
  double start, end;
  std::int64_t mib;
};

/// Every schedule the rules allow (the same rules verify holds a plan to), searched exhaustively:
/// some optimal schedule is active (no unit can start earlier without moving another), and every
/// active schedule places each unit at its earliest feasible start, given the units that start
/// before it, for some order of the units and some choice of their GPUs.
class BruteForce {
 public:
  BruteForce(const std::vector<Unit>& units, const Fleet& fleet, Policy policy, const Rules& rules)
      : units_(units), fleet_(fleet), rules_(rules) {
    for (const Unit& u : units) options_.push_back(options_of(u, policy));
  }

  /// How many units no node can run.
  size_t unrunnable() const {
    return static_cast<size_t>(
        std::count_if(options_.begin(), options_.end(), [](auto& o) { return o.empty(); }));
  }

  /// The optimal makespan, or `ceiling` when no schedule is shorter.
  double optimum(double ceiling) {
    best_ = ceiling;
    left_.assign(units_.size(), true);
    for (size_t u = 0; u < units_.size(); ++u)
      if (options_[u].empty()) left_[u] = false;
    search(0);
    return best_;
  }

 private:
  std::vector<Option> options_of(const Unit& u, Policy policy) const {
    std::vector<Option> out;
    const Requirement& r = u.requirement;
    bool alone = r.is_exclusive() || (policy == Policy::whole_node && r.gpus.value > 1);
    bool shared = policy == Policy::pack && r.gpus.value == 1 && !r.is_exclusive() && u.vram_mib;
    for (size_t n = 0; n < fleet_.nodes.size(); ++n) {
      const Node& node = fleet_.nodes[n];
      bool cuda_ok =
          std::all_of(r.cuda.begin(), r.cuda.end(), [&](auto& c) { return c.value.satisfied_by(node.cuda); });
      if (!cuda_ok) continue;
      int gpus = static_cast<int>(node.gpus.size());
      for (unsigned mask = 0; mask < (1u << gpus); ++mask) {
        if (std::popcount(mask) != r.gpus.value) continue;
        std::vector<int> set;
        for (int g = 0; g < gpus; ++g)
          if (mask >> g & 1) set.push_back(g);
        bool fits = std::all_of(set.begin(), set.end(), [&](int g) {
          return node.gpus[static_cast<size_t>(g)].vram_mib >=
                 std::max(u.vram_mib.value_or(0), r.gpu_mem_mib ? r.gpu_mem_mib->value : 0);
        });
        if (fits && (!r.needs_nvlink() || node.connected(set))) out.push_back({n, set, alone, shared});
      }
    }
    return out;
  }

  std::int64_t usable(const Option& o) const {
    const Gpu& gpu = fleet_.nodes[o.node].gpus[static_cast<size_t>(o.gpus.front())];
    return static_cast<std::int64_t>(double(gpu.vram_mib) * (1 - rules_.vram_headroom));
  }

  bool fits(const Option& o, double start, double end, std::int64_t mib) const {
    std::vector<double> moments{start};
    for (const Placed& p : placed_) {
      if (p.option->node != o.node || p.start >= end || start >= p.end) continue;
      if (p.option->alone || o.alone) return false;
      bool common = std::any_of(o.gpus.begin(), o.gpus.end(), [&](int g) {
        return std::find(p.option->gpus.begin(), p.option->gpus.end(), g) != p.option->gpus.end();
      });
      if (!common) continue;
      if (!p.option->shared || !o.shared) return false;
      if (p.start > start) moments.push_back(p.start);
    }
    if (!o.shared) return true;
    for (double at : moments) {  // the memory in use only rises where a unit starts
      std::int64_t used = mib;
      int running = 1;
      for (const Placed& p : placed_)
        if (p.option->node == o.node && p.option->shared && p.option->gpus == o.gpus && p.start <= at &&
            at < p.end)
          used += p.mib, ++running;
      if (used > usable(o) || running > rules_.max_tests_per_gpu) return false;
    }
    return true;
  }

  void search(double makespan) {
    bool any = false;
    for (size_t u = 0; u < units_.size(); ++u) {
      if (!left_[u]) continue;
      any = true;
      left_[u] = false;
      double d = units_[u].duration_s;
      std::int64_t mib = units_[u].vram_mib.value_or(0);
      for (const Option& o : options_[u]) {
        std::vector<double> starts{0};
        for (const Placed& p : placed_) starts.push_back(p.end);
        std::sort(starts.begin(), starts.end());
        for (double start : starts) {
          if (std::max(makespan, start + d) >= best_) break;
          if (!fits(o, start, start + d, mib)) continue;
          placed_.push_back({&o, start, start + d, mib});
          search(std::max(makespan, start + d));
          placed_.pop_back();
          break;
        }
      }
      left_[u] = true;
    }
    if (!any) best_ = std::min(best_, makespan);
  }

  const std::vector<Unit>& units_;
  const Fleet& fleet_;
  const Rules& rules_;
  std::vector<std::vector<Option>> options_;
  std::vector<bool> left_;
  std::vector<Placed> placed_;
  double best_ = 0;
};

}  // namespace

TEST_CASE(
    "on tiny instances every policy's plan lies between its lower bound and the optimum found by brute "
    "force") {
  std::mt19937 random(20261130);
  int instances = 0, optimal = 0;
  for (int round = 0; round < 200; ++round) {
    int a_gpus = std::vector<int>{2, 4}[random() % 2], b_gpus = std::vector<int>{1, 2, 4}[random() % 3];
    auto fleet =
        fleet_of({{"a", 1, a_gpus, random() % 2 ? "pairs" : "nvswitch", "h100", 81920, "9.0", "12.4"},
                  {"b", 1, b_gpus, "pcie", "l4", 24576, "8.9", "12.2"}});
    std::vector<Unit> units;
    int count = 2 + static_cast<int>(random() % 3);
    for (int i = 0; i < count; ++i) {
      int gpus = std::vector<int>{1, 1, 1, 2, 2, 4}[random() % 6];
      Unit u = unit(fmt::format("//t:{}", i), double(1 + random() % 9) * 10, gpus);
      if (gpus > 1 && random() % 2) with_nvlink(u);
      if (random() % 6 == 0) with_exclusive(u);
      if (random() % 6 == 0) with_cuda(u, ">=12.4");
      if (random() % 2) u.vram_mib = 1024 * std::vector<int>{2, 8, 10, 20, 30}[random() % 5];
      units.push_back(u);
    }
    for (Policy policy : {Policy::exact, Policy::whole_node, Policy::pack}) {
      Rules rules;
      rules.max_tests_per_gpu = 1 + static_cast<int>(random() % 4);
      auto plan = plan_of(units, fleet, policy, rules);
      BruteForce brute(units, fleet, policy, rules);
      INFO("round " << round << ", " << to_string(policy));
      REQUIRE(plan.unschedulable.size() == brute.unrunnable());
      CHECK(verify(plan, fleet, VerifyOptions{nullptr, rules}).empty());
      double best = brute.optimum(plan.summary.makespan_s + 1);
      CHECK(plan.summary.lower_bound_s <= best + 1e-9);
      CHECK(best <= plan.summary.makespan_s + 1e-9);
      ++instances;
      if (plan.summary.makespan_s <= best + 1e-9) ++optimal;
    }
  }
  // The planner is a heuristic: not always optimal, but on tiny cases it mostly is.
  CHECK(optimal * 10 >= instances * 8);
}
