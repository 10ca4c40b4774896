#include "gpuplan/verify.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <set>

#include "gpuplan/size.hpp"
#include "gpuplan/target.hpp"
#include "util/spans.hpp"
#include "util/text.hpp"

namespace gpuplan {

std::string_view to_string(ViolationKind kind) {
  switch (kind) {
    case ViolationKind::unknown_node: return "unknown-node";
    case ViolationKind::gpu_index: return "gpu-index";
    case ViolationKind::gpu_count: return "gpu-count";
    case ViolationKind::double_booked: return "double-booked";
    case ViolationKind::requirement: return "requirement";
    case ViolationKind::exclusive: return "exclusive";
    case ViolationKind::coverage: return "coverage";
    case ViolationKind::times: return "times";
    case ViolationKind::env: return "env";
    case ViolationKind::summary: return "summary";
  }
  return "invalid";
}

namespace {

constexpr double tolerance_s = 0.0015;  ///< plans write times rounded to milliseconds

std::string seconds(double s) { return fmt::format("{:g}s", std::round(s * 1000) / 1000); }

std::string from(const std::string& source) {
  return source.empty() || source == "plan" ? "" : " (" + source + ")";
}

/// The GPUs of `node` that meet every per-GPU need of `r` (memory, at least `reserved_mib` too,
/// vendor, model, compute capability); none where the node's CUDA does not meet it.
std::vector<int> usable_gpus(const Requirement& r, const Node& node, std::int64_t reserved_mib) {
  std::vector<int> usable;
  if (!std::ranges::all_of(r.cuda, [&](const auto& c) { return c.value.satisfied_by(node.cuda); }))
    return usable;
  for (size_t g = 0; g < node.gpus.size(); ++g) {
    const Gpu& gpu = node.gpus[g];
    if (gpu.vram_mib >= std::max(reserved_mib, r.gpu_mem_mib ? r.gpu_mem_mib->value : 0) &&
        (!r.vendor || gpu.vendor == r.vendor->value) &&
        (!r.gpu_models || std::ranges::any_of(r.gpu_models->value,
                                              [&](const std::string& m) { return gpu_is_model(gpu, m); })) &&
        std::ranges::all_of(r.compute_capability,
                            [&](const auto& c) { return c.value.satisfied_by(gpu.compute_capability); }))
      usable.push_back(static_cast<int>(g));
  }
  return usable;
}

/// Whether some `size` of `gpus` (with `chosen`) are pairwise NVLink-connected on `node`.
bool has_linked_set(const Node& node, std::vector<int> gpus, std::vector<int>& chosen, int size) {
  if (static_cast<int>(chosen.size()) == size) return true;
  while (static_cast<int>(chosen.size() + gpus.size()) >= size) {
    int first = gpus.front();
    gpus.erase(gpus.begin());
    std::vector<int> linked;
    for (int g : gpus)
      if (node.nvlink[static_cast<size_t>(first)][static_cast<size_t>(g)]) linked.push_back(g);
    chosen.push_back(first);
    if (has_linked_set(node, linked, chosen, size)) return true;
    chosen.pop_back();
  }
  return false;
}

class Checker {
 public:
  Checker(const Plan& plan, const Fleet& fleet, const VerifyOptions& options)
      : plan_(plan), fleet_(fleet), options_(options) {
    for (const auto& node : fleet.nodes) nodes_[node.name] = &node;
    if (options.query)
      for (const auto& test : options.query->tests) query_[canonical_label(test.target.label)] = &test;
  }

  std::vector<Violation> run() {
    for (const auto& a : plan_.assignments) assignment(a);
    for (const auto& u : plan_.unschedulable) unschedulable(u);
    makespan();
    summary();
    sharing();
    exclusive();
    coverage();
    utilization();
    return std::move(found_);
  }

 private:
  /// A unit of the plan as `coverage()` lists them: an assignment's or an unschedulable unit's,
  /// with its record's index in that list.
  struct Listed {
    const Unit* unit;
    bool assigned;  ///< in `assignments`, else in `unschedulable`
    std::size_t index;
  };

  /// A violation of the plan as a whole (`name` ""), or of a test named by its label: no record.
  void add(ViolationKind kind, const std::string& name, std::string reason) {
    found_.push_back({kind, name, std::move(reason)});
  }
  /// A violation of one of the plan's records, which it names by its JSON path.
  void add(ViolationKind kind, const Assignment& a, std::string reason) {
    found_.push_back(
        {kind, a.unit.id, std::move(reason), fmt::format("assignments[{}]", &a - plan_.assignments.data())});
  }
  void add(ViolationKind kind, const UnschedulableUnit& u, std::string reason) {
    found_.push_back({kind, u.unit.id, std::move(reason),
                      fmt::format("unschedulable[{}]", &u - plan_.unschedulable.data())});
  }
  void add(ViolationKind kind, const Listed& listed, std::string reason) {
    if (listed.assigned)
      add(kind, plan_.assignments[listed.index], std::move(reason));
    else
      add(kind, plan_.unschedulable[listed.index], std::move(reason));
  }

  /// The requirement to hold the plan to: the query's when there is one, else the plan's own copy.
  const Requirement& requirement(const Unit& unit) const {
    auto it = query_.find(canonical_label(unit.label));
    return it != query_.end() && it->second->bucket == Bucket::gpu ? it->second->requirement
                                                                   : unit.requirement;
  }

  void assignment(const Assignment& a) {
    times(a);
    env(a);
    auto it = nodes_.find(a.node);
    if (it == nodes_.end()) {
      add(ViolationKind::unknown_node, a,
          fmt::format("node \"{}\" is not in the fleet {}", a.node, fleet_.source));
      return;
    }
    const Node& node = *it->second;
    if (!indices(a, node)) return;
    for (int g : a.gpus) held_[{a.node, g}].push_back(&a);
    count(a, node);
    requirements(a, node);
  }

  void times(const Assignment& a) {
    if (a.start_s < -tolerance_s)
      add(ViolationKind::times, a, fmt::format("starts at {}, before 0", seconds(a.start_s)));
    if (a.end_s < a.start_s - tolerance_s)
      add(ViolationKind::times, a,
          fmt::format("ends at {}, before it starts at {}", seconds(a.end_s), seconds(a.start_s)));
    else if (std::abs(a.end_s - a.start_s - a.unit.duration_s) > tolerance_s)
      add(ViolationKind::times, a,
          fmt::format("runs from {} to {}, {}, but its duration_s is {}", seconds(a.start_s),
                      seconds(a.end_s), seconds(a.end_s - a.start_s), seconds(a.unit.duration_s)));
  }

  /// A unit the plan calls unschedulable that a node of the fleet can run, given the node to
  /// itself: the plan leaves out a test that could run (before, verify called it valid).
  void unschedulable(const UnschedulableUnit& u) {
    const auto& r = requirement(u.unit);
    if (r.gpus.value <= 0) return;
    // Its whole reservation: the planner places the peak within it, less a headroom the plan
    // records only under pack; judged by the whole, a unit verify says fits fits the planner too.
    const std::int64_t reserved = u.unit.vram_mib.value_or(0);
    // Once per requirement and reservation (a test's shards, the tests that share their tags):
    // each look is every GPU of the fleet.
    auto [place, first] = can_run_.try_emplace({&r, reserved});
    if (first)
      for (const auto& node : fleet_.nodes) {
        auto usable = usable_gpus(r, node, reserved);
        std::vector<int> chosen;
        if (static_cast<int>(usable.size()) < r.gpus.value ||
            (r.needs_nvlink() && r.gpus.value > 1 && !has_linked_set(node, usable, chosen, r.gpus.value)))
          continue;
        place->second =
            fmt::format("{} can run it: {} of its GPUs meet what it needs", node.name, usable.size());
        break;
      }
    if (!place->second.empty())
      add(ViolationKind::coverage, u,
          fmt::format("is listed unschedulable ({}), but {}", u.reason, place->second));
  }

  /// The summary's counts are the plan's (its GPU tests, given the query), and its bound is no
  /// more than its makespan: scripts read them (before, only makespan_s was checked).
  void summary() {
    const auto& s = plan_.summary;
    std::set<std::string_view> gpu_tests;
    for (const auto& a : plan_.assignments) gpu_tests.insert(a.unit.label);
    for (const auto& u : plan_.unschedulable) gpu_tests.insert(u.unit.label);
    // The test counts are the classification's, which only the query shows.
    const long listed_gpu_tests = options_.query ? static_cast<long>(gpu_tests.size()) : s.gpu_tests;
    const std::pair<const char*, std::pair<long, long>> counts[] = {
        {"scheduled_units", {s.scheduled_units, static_cast<long>(plan_.assignments.size())}},
        {"unschedulable_units", {s.unschedulable_units, static_cast<long>(plan_.unschedulable.size())}},
        {"gpu_units",
         {s.gpu_units, static_cast<long>(plan_.assignments.size() + plan_.unschedulable.size())}},
        {"gpu_tests", {s.gpu_tests, listed_gpu_tests}},
        {"cpu_tests", {s.cpu_tests, static_cast<long>(plan_.cpu_tests.size())}},
        {"skipped_tests", {s.skipped_tests, static_cast<long>(plan_.skipped_tests.size())}},
        {"tests", {s.tests, s.cpu_tests + s.gpu_tests + s.skipped_tests}}};
    for (const auto& [name, said_and_counted] : counts)
      if (said_and_counted.first != said_and_counted.second)
        add(ViolationKind::summary, "",
            fmt::format("the summary's {} is {} but the plan has {}", name, said_and_counted.first,
                        said_and_counted.second));
    if (s.lower_bound_s > s.makespan_s + tolerance_s)
      add(ViolationKind::summary, "",
          fmt::format("the summary's lower_bound_s is {}, more than its makespan_s {}: no plan ends before "
                      "its lower bound",
                      seconds(s.lower_bound_s), seconds(s.makespan_s)));
  }

  /// The summary's gpu_utilization: the GPU-seconds in which some unit runs on a GPU, over the
  /// fleet's GPUs × the makespan, as the planner counts it; a summary that gives none (0, as a
  /// hand-written plan leaves it) is not checked. Before, any figure passed, and show printed it.
  /// Checked last, and only when nothing else is wrong: a unit moved, dropped or given another
  /// GPU changes the figure too, one mistake.
  void utilization() {
    const auto& s = plan_.summary;
    double fleet_gpus = 0;
    for (const auto& node : fleet_.nodes) fleet_gpus += static_cast<double>(node.gpus.size());
    if (!found_.empty()) return;
    if (s.gpu_utilization > 0 && s.makespan_s > 0 && fleet_gpus > 0) {
      // Every unit's GPUs, also on a node the fleet lacks (reported as such, not twice).
      std::map<std::pair<std::string_view, int>, std::vector<std::pair<double, double>>> spans;
      for (const auto& a : plan_.assignments)
        for (int g : a.gpus) spans[{a.node.str(), g}].emplace_back(a.start_s, a.end_s);
      double busy = 0;
      for (const auto& [gpu, of_gpu] : spans) busy += util::covered(of_gpu);
      const double computed = busy / (fleet_gpus * s.makespan_s);
      if (std::abs(computed - s.gpu_utilization) > 0.0001)
        add(ViolationKind::summary, "",
            fmt::format("the summary's gpu_utilization is {:g} but its units keep {:.4f} of the fleet's GPU "
                        "time busy (busy GPU-seconds / ({:g} GPUs × makespan); a plan made for another fleet "
                        "has another figure)",
                        s.gpu_utilization, computed, fleet_gpus));
    }
  }

  void makespan() {
    double last = 0;
    for (const auto& a : plan_.assignments) last = std::max(last, a.end_s);
    if (std::abs(plan_.summary.makespan_s - last) > tolerance_s)
      add(ViolationKind::times, "",
          fmt::format("the summary's makespan_s is {} but the last unit ends at {}",
                      seconds(plan_.summary.makespan_s), seconds(last)));
  }

  void env(const Assignment& a) {
    const bool shares = shares_gpu(a.unit, plan_.policy);
    std::map<std::string, std::string> planned;
    const auto& env = a.env ? *a.env : (planned = planned_env(a, shares));  // a plan made here: its own
    for (const auto& [name, value] : env) {
      if (name == "CUDA_VISIBLE_DEVICES" || name == "TEST_TOTAL_SHARDS" || name == "TEST_SHARD_INDEX")
        continue;
      if (name == "TF_FORCE_GPU_ALLOW_GROWTH" || name == "XLA_PYTHON_CLIENT_PREALLOCATE") {
        if (!shares)
          add(ViolationKind::env, a,
              fmt::format("env sets {}, but the unit does not share its GPU (only a pack plan's single-GPU, "
                          "non-exclusive "
                          "units with a known VRAM need do)",
                          name));
        continue;
      }
      add(ViolationKind::env, a,
          fmt::format("env sets {}, which executors never apply (a plan may set only CUDA_VISIBLE_DEVICES, "
                      "TEST_TOTAL_SHARDS, TEST_SHARD_INDEX and, on a unit sharing its GPU, "
                      "TF_FORCE_GPU_ALLOW_GROWTH and XLA_PYTHON_CLIENT_PREALLOCATE)",
                      name));
    }
    auto expect = [&](const std::string& name, const std::string& value) {
      auto it = env.find(name);
      if (it == env.end())
        add(ViolationKind::env, a, fmt::format("env has no {}; it should be \"{}\"", name, value));
      else if (it->second != value)
        add(ViolationKind::env, a, fmt::format("{} is \"{}\" but should be \"{}\"", name, it->second, value));
    };
    expect("CUDA_VISIBLE_DEVICES", fmt::format("{}", fmt::join(a.gpus, ",")));
    if (shares) {  // else two TensorFlow or JAX tests on one GPU: the second finds its memory taken
      expect("TF_FORCE_GPU_ALLOW_GROWTH", "true");
      expect("XLA_PYTHON_CLIENT_PREALLOCATE", "false");
    }
    if (!a.unit.shard_index) {
      for (const char* name : {"TEST_SHARD_INDEX", "TEST_TOTAL_SHARDS"})
        if (env.count(name)) add(ViolationKind::env, a, fmt::format("sets {} but is not a shard", name));
      return;
    }
    if (*a.unit.shard_index < 0 || *a.unit.shard_index >= a.unit.shard_count)
      add(ViolationKind::env, a,
          fmt::format("shard_index {} is outside 0..{}", *a.unit.shard_index, a.unit.shard_count - 1));
    expect("TEST_SHARD_INDEX", std::to_string(*a.unit.shard_index));
    expect("TEST_TOTAL_SHARDS", std::to_string(a.unit.shard_count));
  }

  bool indices(const Assignment& a, const Node& node) {
    if (a.gpus.empty()) {
      add(ViolationKind::gpu_index, a, fmt::format("is placed on {} without any GPU", node.name));
      return false;
    }
    bool ok = true;
    std::set<int> seen;
    for (int g : a.gpus) {
      if (g < 0 || g >= static_cast<int>(node.gpus.size())) {
        add(ViolationKind::gpu_index, a,
            fmt::format("GPU {} does not exist on {} (it has GPUs 0-{})", g, node.name,
                        node.gpus.size() - 1));
        ok = false;
      } else if (!seen.insert(g).second) {
        add(ViolationKind::gpu_index, a, fmt::format("lists GPU {} twice", g));
        ok = false;
      }
    }
    return ok;
  }

  void count(const Assignment& a, const Node& node) {
    const auto& r = requirement(a.unit);
    int need = r.gpus.value, have = static_cast<int>(a.gpus.size()), all = static_cast<int>(node.gpus.size());
    if (r.takes_every_node_gpu()) {  // the node's GPUs that meet its constraints, all of them
      const auto usable = usable_gpus(r, node, 0);
      if (a.gpus != usable)
        add(ViolationKind::gpu_count, a,
            fmt::format(
                "holds GPU{} {} but is given every GPU of {} that it may use ({}): it holds the node and "
                "gives no GPU count{}",
                util::plural(a.gpus.size()), fmt::join(a.gpus, ","), node.name, fmt::join(usable, ","),
                from(r.every_node_gpu->source)));
      return;
    }
    if (have < need) {
      add(ViolationKind::gpu_count, a,
          fmt::format("holds {} GPU{} but needs {}{}", have, util::plural(have), need, from(r.gpus.source)));
    } else if (have > need && !(has_node_to_itself(a.unit) && have == all)) {
      add(ViolationKind::gpu_count, a,
          fmt::format("holds {} GPUs but asks for {}; the {} policy gives exactly what is asked", have, need,
                      to_string(plan_.policy)));
    }
  }

  void requirements(const Assignment& a, const Node& node) {
    const auto& r = requirement(a.unit);
    auto failing = [&](auto&& bad) {
      std::vector<int> gpus;
      for (int g : a.gpus)
        if (bad(node.gpus[static_cast<size_t>(g)])) gpus.push_back(g);
      return gpus;
    };
    auto on = [&](const std::vector<int>& gpus) {
      const auto& gpu = node.gpus[static_cast<size_t>(gpus.front())];
      return fmt::format("GPU{} {} of {} ({}, {})", util::plural(gpus.size()), fmt::join(gpus, ","),
                         node.name, gpu.model, format_mib(gpu.vram_mib));
    };
    if (r.gpu_mem_mib) {
      auto bad = failing([&](const Gpu& gpu) { return gpu.vram_mib < r.gpu_mem_mib->value; });
      if (!bad.empty())
        add(ViolationKind::requirement, a,
            fmt::format("needs {} on each GPU{} but {} has less", format_mib(r.gpu_mem_mib->value),
                        from(r.gpu_mem_mib->source), on(bad)));
    }
    if (a.unit.vram_mib) {
      auto bad = failing([&](const Gpu& gpu) { return gpu.vram_mib < *a.unit.vram_mib; });
      if (!bad.empty())
        add(ViolationKind::requirement, a,
            fmt::format("reserves {} per GPU but {} has less", format_mib(*a.unit.vram_mib), on(bad)));
    }
    for (const auto& c : r.cuda)
      if (!c.value.satisfied_by(node.cuda))
        add(ViolationKind::requirement, a,
            fmt::format("needs CUDA {}{} but {} has CUDA {}", c.value.str(), from(c.source), node.name,
                        node.cuda.str()));
    for (const auto& c : r.compute_capability) {
      auto bad = failing([&](const Gpu& gpu) { return !c.value.satisfied_by(gpu.compute_capability); });
      if (!bad.empty())
        add(ViolationKind::requirement, a,
            fmt::format("needs compute capability {}{} but {} has {}", c.value.str(), from(c.source), on(bad),
                        node.gpus[static_cast<size_t>(bad.front())].compute_capability.str()));
    }
    if (r.gpu_models) {
      auto bad = failing([&](const Gpu& gpu) {
        return std::ranges::none_of(r.gpu_models->value,
                                    [&](const std::string& wanted) { return gpu_is_model(gpu, wanted); });
      });
      if (!bad.empty())
        add(ViolationKind::requirement, a,
            fmt::format("needs GPU model {}{} but {} is another model", fmt::join(r.gpu_models->value, "|"),
                        from(r.gpu_models->source), on(bad)));
    }
    if (r.vendor) {
      auto bad = failing([&](const Gpu& gpu) { return gpu.vendor != r.vendor->value; });
      if (!bad.empty())
        add(ViolationKind::requirement, a,
            fmt::format("needs an {} GPU{} but {} is {}", vendor_display(r.vendor->value),
                        from(r.vendor->source), on(bad),
                        vendor_display(node.gpus[static_cast<size_t>(bad.front())].vendor)));
    }
    if (r.needs_nvlink() && !node.connected(a.gpus))
      add(ViolationKind::requirement, a,
          fmt::format("needs NVLink between its GPUs{} but GPUs {} of {} are not all NVLink-connected",
                      from(r.nvlink->source), fmt::join(a.gpus, ","), node.name));
  }

  /// Two units on one GPU at once: never allowed, except single-GPU units with a known
  /// VRAM need under `pack`, within the VRAM left after headroom and the tests-per-GPU limit.
  /// A sweep by start time keeps the units still running, so a GPU's n units cost n log n.
  void sharing() {
    std::set<std::pair<const Assignment*, const Assignment*>> reported;
    for (auto& [where, units] : held_) {
      const auto& [node_name, g] = where;
      const Gpu& gpu = nodes_.at(node_name)->gpus[static_cast<size_t>(g)];
      std::stable_sort(units.begin(), units.end(),
                       [](const Assignment* x, const Assignment* y) { return x->start_s < y->start_s; });
      std::vector<const Assignment*> active;  // started earlier, in start order
      for (const Assignment* unit : units) {
        const Assignment& a = *unit;
        // Within the rounding tolerance an end meets a start; two units starting together overlap
        // however short they are (two 1 ms units, which a 0 s history run plans, at once).
        std::erase_if(active, [&](const Assignment* b) {
          return b->end_s <= a.start_s + tolerance_s && b->start_s != a.start_s;
        });
        // Also a unit planned to last 0 s: exec would start it beside the others.
        std::vector<const Assignment*> running{&a};
        running.insert(running.end(), active.begin(), active.end());
        active.push_back(&a);
        for (size_t k = 1; k < running.size(); ++k) {
          const Assignment& other = *running[k];
          bool allowed = shares_gpu(a.unit, plan_.policy) && shares_gpu(other.unit, plan_.policy);
          if (allowed || !reported.insert({&a, &other}).second) continue;
          std::string why =
              plan_.policy != Policy::pack ? ""
              : !shares_gpu(a.unit, plan_.policy)
                  ? "; under pack only single-GPU, non-exclusive units with a known VRAM need share a GPU"
                  : fmt::format(
                        "; {} cannot share (it uses several GPUs, is exclusive or has no known VRAM need)",
                        other.unit.id);
          add(ViolationKind::double_booked, a,
              fmt::format("GPU {} of {} is also held by {} from {} to {}{}", g, node_name, other.unit.id,
                          seconds(other.start_s), seconds(other.end_s), why));
        }
        if (plan_.policy != Policy::pack || running.size() < 2) continue;
        if (static_cast<int>(running.size()) > options_.rules.max_tests_per_gpu)
          add(ViolationKind::double_booked, a,
              fmt::format("GPU {} of {} runs {} units at once from {} (at most {} under pack)", g, node_name,
                          running.size(), seconds(a.start_s), options_.rules.max_tests_per_gpu));
        // Each the more of what the plan reserves and what the query's gpu-mem asks (a plan that
        // wrote a smaller vram_mib than its test's gpu-mem had its over-full GPU called valid).
        std::int64_t vram = 0;
        for (const auto* u : running) {
          const auto& r = requirement(u->unit);
          vram += std::max(u->unit.vram_mib.value_or(0), r.gpu_mem_mib ? r.gpu_mem_mib->value : 0);
        }
        auto limit =
            static_cast<std::int64_t>(static_cast<double>(gpu.vram_mib) * (1 - options_.rules.vram_headroom));
        if (vram > limit)
          add(ViolationKind::double_booked, a,
              fmt::format("GPU {} of {} holds {} units needing {} from {}, over the {} pack allows ({} less "
                          "{:g}% headroom)",
                          g, node_name, running.size(), format_mib(vram), seconds(a.start_s),
                          format_mib(limit), format_mib(gpu.vram_mib), options_.rules.vram_headroom * 100));
      }
    }
  }

  /// A gpu-exclusive unit, or a multi-GPU unit under whole-node: nothing else on its node meanwhile.
  bool has_node_to_itself(const Unit& unit) const {
    const auto& r = requirement(unit);
    return r.is_exclusive() || (plan_.policy == Policy::whole_node && r.gpus.value > 1);
  }

  /// Per node, units by start: the units overlapping a node-holding one start before it ends,
  /// and those starting before it are found by walking back only while some earlier one ends
  /// after it starts (a running maximum of ends), so a valid plan costs n log n.
  void exclusive() {
    std::map<std::string_view, std::vector<const Assignment*>> by_node;
    for (const auto& a : plan_.assignments)
      if (nodes_.count(a.node)) by_node[a.node].push_back(&a);
    std::map<const Assignment*, std::pair<const std::vector<const Assignment*>*, size_t>> place;
    std::map<std::string_view, std::vector<double>> ended_by;  // per node: the latest end before each
    for (auto& [name, units] : by_node) {
      std::stable_sort(units.begin(), units.end(),
                       [](const Assignment* x, const Assignment* y) { return x->start_s < y->start_s; });
      auto& ends = ended_by[name];
      ends.assign(units.size() + 1, -std::numeric_limits<double>::infinity());
      for (size_t i = 0; i < units.size(); ++i) {
        ends[i + 1] = std::max(ends[i], units[i]->end_s);
        if (has_node_to_itself(units[i]->unit)) place[units[i]] = {&units, i};
      }
    }
    for (const auto& e : plan_.assignments) {  // in plan order, as the report lists them
      auto it = place.find(&e);
      if (it == place.end()) continue;
      const auto& units = *it->second.first;
      const auto& ends = ended_by[e.node];
      size_t i = it->second.second;
      std::vector<const Assignment*> overlapping;
      for (size_t j = i; j > 0 && (ends[j] > e.start_s + tolerance_s || units[j - 1]->start_s == e.start_s);
           --j)
        if (overlaps(*units[j - 1], e)) overlapping.push_back(units[j - 1]);
      for (size_t j = i + 1;
           j < units.size() && (units[j]->start_s < e.end_s - tolerance_s || units[j]->start_s == e.start_s);
           ++j)
        if (overlaps(*units[j], e)) overlapping.push_back(units[j]);
      std::sort(overlapping.begin(), overlapping.end());  // plan order: they are one vector's items
      const char* why = requirement(e.unit).is_exclusive() ? "gpu-exclusive" : "whole-node policy";
      for (const Assignment* other : overlapping)
        add(ViolationKind::exclusive, *other,
            fmt::format("runs on {} from {} to {} while {} has the whole node ({}) from {} to {}", e.node,
                        seconds(other->start_s), seconds(other->end_s), e.unit.id, why, seconds(e.start_s),
                        seconds(e.end_s)));
    }
  }

  static bool overlaps(const Assignment& a, const Assignment& b) {
    return (a.start_s < b.end_s - tolerance_s && b.start_s < a.end_s - tolerance_s) || a.start_s == b.start_s;
  }

  void coverage() {
    std::map<std::string, int> times_listed;
    std::map<std::string, std::vector<Listed>> by_label;
    std::vector<Listed> units;
    for (std::size_t i = 0; i < plan_.assignments.size(); ++i)
      units.push_back({&plan_.assignments[i].unit, true, i});
    for (std::size_t i = 0; i < plan_.unschedulable.size(); ++i)
      units.push_back({&plan_.unschedulable[i].unit, false, i});
    // A unit's id is its label and shard, and no two units are one test's same shard: a copy of a
    // shard under another id ran the shard twice, and verify said the query's tests were there once.
    for (const auto& listed : units) {
      const Unit* u = listed.unit;
      if (++times_listed[u->id] == 2)
        add(ViolationKind::coverage, listed, "is listed more than once (in assignments or unschedulable)");
      by_label[canonical_label(u->label)].push_back(listed);
      // No Bazel label holds one; a newline makes two lines of exec's target pattern file.
      if (auto control =
              std::find_if(u->label.begin(), u->label.end(),
                           [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
          control != u->label.end())
        add(ViolationKind::coverage, listed,
            fmt::format(
                "has a label with the control character 0x{:02x} (byte {}), which no Bazel label holds",
                static_cast<unsigned char>(*control), control - u->label.begin() + 1));
      const std::string expected =
          u->shard_index ? fmt::format("{}#shard-{}-of-{}", u->label, *u->shard_index, u->shard_count)
                         : u->label;
      if (u->id != expected)
        add(ViolationKind::coverage, listed,
            fmt::format("is not the id of its label and shard ({}), which launchers report it by", expected));
    }
    for (const auto& [label, listed] : by_label) {
      if (listed.size() < 2) continue;
      auto by_index = listed;  // by shard, each shard's units in plan order
      std::stable_sort(by_index.begin(), by_index.end(), [](const Listed& a, const Listed& b) {
        return a.unit->shard_index < b.unit->shard_index;
      });
      for (std::size_t k = 1; k < by_index.size(); ++k)
        if (by_index[k].unit->shard_index == by_index[k - 1].unit->shard_index &&
            by_index[k].unit->id != by_index[k - 1].unit->id)
          add(ViolationKind::coverage, by_index[k],
              fmt::format("runs the same {} as {}", by_index[k].unit->shard_index ? "shard" : "test",
                          by_index[k - 1].unit->id));
    }
    if (!options_.query) {  // the plan's own shard counts (before, only the query's were checked)
      for (const auto& [label, listed] : by_label) shards(listed.front().unit->label, listed, std::nullopt);
      return;
    }
    for (const auto& [label, listed] : by_label) {
      auto it = query_.find(label);
      if (it == query_.end())
        add(ViolationKind::coverage, listed.front(), "is not a test of the query");
      else if (it->second->bucket != Bucket::gpu)
        add(ViolationKind::coverage, listed.front(),
            fmt::format("is {} in the query ({}), not a GPU test",
                        it->second->bucket == Bucket::cpu ? "a CPU test" : "skipped", it->second->reason));
    }
    for (const auto& [label, test] : query_) {
      if (test->bucket != Bucket::gpu) continue;
      auto it = by_label.find(label);
      if (it == by_label.end()) {
        add(ViolationKind::coverage, test->target.label, "is a GPU test of the query but is not in the plan");
        continue;
      }
      shards(test->target.label, it->second, std::max(1, test->target.shard_count));
    }
  }

  /// A GPU test is in the plan once as a whole, or once per shard: `query_count` shards, or
  /// without a query as many as its first shard's shard_count says (a plan that dropped a shard,
  /// or mixed shards of two counts, was valid without the query before).
  void shards(const std::string& label, const std::vector<Listed>& units, std::optional<int> query_count) {
    bool whole = std::any_of(units.begin(), units.end(),
                             [](const Listed& listed) { return !listed.unit->shard_index; });
    bool sharded = std::any_of(units.begin(), units.end(),
                               [](const Listed& listed) { return listed.unit->shard_index; });
    if (whole) {
      // A whole test listed twice is reported above, as listed more than once or run twice.
      if (sharded) add(ViolationKind::coverage, label, "is in the plan both as a whole test and as shards");
      return;
    }
    const int count = query_count.value_or(std::max(1, units.front().unit->shard_count));
    std::set<int> seen;
    for (const auto& listed : units) {
      const Unit* u = listed.unit;
      if (u->shard_count != count)
        add(ViolationKind::coverage, listed,
            query_count ? fmt::format("has shard_count {} but the query gives the test {} shard{}",
                                      u->shard_count, count, util::plural(count))
                        : fmt::format("has shard_count {} but {} gives the test {} shard{}", u->shard_count,
                                      units.front().unit->id, count, util::plural(count)));
      seen.insert(*u->shard_index);
    }
    std::vector<int> missing;
    for (int i = 0; i < count; ++i)
      if (!seen.count(i)) missing.push_back(i);
    if (!missing.empty())
      add(ViolationKind::coverage, label,
          fmt::format("shard{} {} of {} {} missing from the plan", util::plural(missing.size()),
                      fmt::join(missing, ", "), count, missing.size() == 1 ? "is" : "are"));
  }

  const Plan& plan_;
  const Fleet& fleet_;
  const VerifyOptions& options_;
  std::map<std::string, const Node*> nodes_;
  std::map<std::string, const ClassifiedTest*> query_;  ///< by canonical label
  std::map<std::pair<std::string, int>, std::vector<const Assignment*>> held_;
  /// By requirement and reservation: a node that can run such a unit, in words, or "".
  std::map<std::pair<const Requirement*, std::int64_t>, std::string> can_run_;  ///< (node, GPU) → units
  std::vector<Violation> found_;
};

}  // namespace

std::vector<Violation> verify(const Plan& plan, const Fleet& fleet, const VerifyOptions& options) {
  return Checker(plan, fleet, options).run();
}

}  // namespace gpuplan
