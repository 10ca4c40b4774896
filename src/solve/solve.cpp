// make_plan: buckets, units grouped by what they need, the schedule, its bound and summary.
#include "gpuplan/solve.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "solve/bound.hpp"
#include "solve/eligibility.hpp"
#include "solve/insertion.hpp"
#include "solve/schedule.hpp"
#include "util/rounding.hpp"

namespace gpuplan {

namespace {

using namespace solve;

/// The least memory each of the unit's GPUs must have: what it asks for, or more where it
/// measured more (a peak may exceed a gpu-mem tag, or stand without one): the measured peak
/// under its reservation (the reservation less the headroom added to the peak). A test that
/// peaked at 72,000 MiB on an 80 GB GPU runs there alone, although 72,000 MiB and 15% is more
/// than it has; where it would share its GPU, its whole reservation must fit (shape_for).
std::int64_t memory_need(const Unit& unit, double headroom) {
  const Requirement& r = unit.requirement;
  const std::int64_t asked = r.gpu_mem_mib ? r.gpu_mem_mib->value : 0;
  if (!unit.vram_mib) return asked;
  return std::max(asked, static_cast<std::int64_t>(double(*unit.vram_mib) / (1 + headroom) + 1e-6));
}

/// What the unit needs of a node: its requirement, with memory_need as its gpu_mem_mib.
Requirement placing_requirement(const Unit& unit, std::int64_t need) {
  Requirement r = unit.requirement;
  if (need > (r.gpu_mem_mib ? r.gpu_mem_mib->value : 0))
    r.gpu_mem_mib = Sourced<std::int64_t>{need, std::string(measured_memory_source)};
  return r;
}

/// Units with equal keys are placed by the same rules. Written over `key`, which the caller
/// reuses from unit to unit: no allocation a unit.
void demand_key(const Unit& unit, bool share, std::int64_t need, std::string& key) {
  const Requirement& r = unit.requirement;
  key.clear();
  auto out = std::back_inserter(key);
  fmt::format_to(out, "{}|{}|{}|{}|{}", r.gpus.value, need, r.needs_nvlink(), r.is_exclusive(),
                 share ? *unit.vram_mib : -1);
  for (const auto& c : r.cuda) fmt::format_to(out, "|c{}", c.value.str());
  for (const auto& c : r.compute_capability) fmt::format_to(out, "|k{}", c.value.str());
  if (r.gpu_models)
    for (const auto& m : r.gpu_models->value) fmt::format_to(out, "|m{}", m);
  if (r.vendor) fmt::format_to(out, "|v{}", r.vendor->value);
}

/// Past this many memory sizes among the units that share GPUs, each is scheduled at its size
/// rounded up (shape_memory_mib). A size is a shape of its own, whose earliest start the list
/// scheduler keeps on every node and updates after each placement: measured peaks, each unit's
/// own, made nearly a shape a unit, and `plan --policy pack --history` at 150,000 tests ran for
/// minutes without end (11 s now, 22,501 sizes in some 80 shapes).
constexpr std::size_t exact_memory_sizes = 64;

/// A reservation rounded up to a sixteenth of its power of two: at most 6.25% more (1,000 to
/// 1,024 MiB, 30,000 to 30,720), some 16 sizes a doubling.
std::int64_t shape_memory_mib(std::int64_t mib) {
  if (mib <= 16) return mib;
  const std::int64_t step = std::int64_t{1} << (std::bit_width(static_cast<std::uint64_t>(mib)) - 5);
  return (mib + step - 1) / step * step;
}

std::int64_t usable_mib(const Gpu& gpu, const Rules& rules) {
  return shareable_mib(gpu, rules.vram_headroom);
}

Shape shape_for(const Unit& unit, const Requirement& r, bool share, bool round_memory, int type_index,
                const NodeType& type, const Node& node, const SolveOptions& options) {
  Shape shape;
  shape.type = type_index;
  shape.gpus = r.gpus.value;
  shape.nvlink = r.needs_nvlink() && shape.gpus > 1;  // one GPU is connected to itself
  shape.eligible = eligible_gpus(r, node);
  // A unit that reserves more than any GPU of this node type can share has its GPU to itself here.
  std::int64_t most_usable = 0;
  for (GpuMask m = shape.eligible; m && share; m &= m - 1)
    most_usable =
        std::max(most_usable, usable_mib(node.gpus[static_cast<size_t>(std::countr_zero(m))], options.rules));
  if (r.is_exclusive() || (options.policy == Policy::whole_node && r.gpus.value > 1))
    shape.occupancy = Occupancy::whole_node;
  else if (share && *unit.vram_mib <= most_usable)
    shape.occupancy = Occupancy::shared;
  for (GpuMask m = shape.eligible; m; m &= m - 1) {
    int gpu = std::countr_zero(m);
    if ((shape.eligible & ~bit(gpu) & ~type.links[static_cast<size_t>(gpu)]) != 0) shape.complete = false;
  }
  if (shape.gpus > 1 && !shape.complete) {
    if (auto islands = islands_of(type.links, shape.eligible)) {
      for (GpuMask island : *islands)
        if (count(island) >= shape.gpus) shape.islands.push_back(island);
    } else {
      shape.cliques = cliques_of(type.links, shape.eligible, shape.gpus, 4096);
    }
  }
  if (shape.occupancy == Occupancy::shared) {
    // Memory in whole MiB, as verify counts it: the GPU's memory less the headroom, rounded down.
    // Rounded, it still fits where it did: at most the most a GPU of the type can share.
    shape.memory_mib =
        round_memory ? std::min(shape_memory_mib(*unit.vram_mib), most_usable) : *unit.vram_mib;
    // A size rounded up to M was more than 16/17 of it (its step is a sixteenth of its power of two).
    shape.least_memory_mib = round_memory ? shape.memory_mib * 16 / 17 : shape.memory_mib;
    shape.usable_mib.assign(static_cast<size_t>(type.gpus), 0);
    for (GpuMask m = shape.eligible; m; m &= m - 1) {
      int gpu = std::countr_zero(m);
      shape.usable_mib[static_cast<size_t>(gpu)] =
          usable_mib(node.gpus[static_cast<size_t>(gpu)], options.rules);
    }
  }
  return shape;
}

/// GPU-seconds in which a GPU runs at least one unit (units sharing a GPU count once).
/// Assignments come by node, then start.
double busy_gpu_seconds(const Plan& plan) {
  double busy = 0;
  // Per GPU index, the spans of the node at hand (kept from node to node: no allocation a node).
  std::vector<std::vector<std::pair<double, double>>> by_gpu;
  for (size_t first = 0; first < plan.assignments.size();) {
    size_t last = first;
    for (auto& spans : by_gpu) spans.clear();
    for (; last < plan.assignments.size() && plan.assignments[last].node == plan.assignments[first].node;
         ++last)
      for (int gpu : plan.assignments[last].gpus) {
        if (static_cast<size_t>(gpu) >= by_gpu.size()) by_gpu.resize(static_cast<size_t>(gpu) + 1);
        by_gpu[static_cast<size_t>(gpu)].push_back(
            {plan.assignments[last].start_s, plan.assignments[last].end_s});
      }
    for (auto& spans : by_gpu) {
      double covered_until = 0;
      for (auto [start, end] : spans) {  // sorted by start
        busy += std::max(0.0, end - std::max(start, covered_until));
        covered_until = std::max(covered_until, end);
      }
    }
    first = last;
  }
  return busy;
}

/// Reorders `items` in place so that items[i] becomes what was at items[order[i]]; `order`
/// must be a permutation of the indices and is used up. In place, because the items are a
/// million assignments that should not exist twice.
template <class T>
void permute(std::vector<T>& items, std::vector<size_t>& order) {
  for (size_t start = 0; start < items.size(); ++start) {
    if (order[start] == start) continue;
    T held = std::move(items[start]);
    size_t to = start;
    for (size_t from = order[start]; from != start; from = order[from]) {
      items[to] = std::move(items[from]);
      order[to] = to;
      to = from;
    }
    items[to] = std::move(held);
    order[to] = to;
  }
}

/// The plan's CPU and skipped lists (by label) and the test counts of its summary.
void list_buckets(const Classification& tests, Plan& plan) {
  PlanSummary& summary = plan.summary;
  summary.tests = static_cast<long>(tests.tests.size());
  for (const auto& t : tests.tests) {
    if (t.bucket == Bucket::gpu) ++summary.gpu_tests;
    if (t.bucket == Bucket::cpu) plan.cpu_tests.push_back({t.target.label, t.reason});
    if (t.bucket == Bucket::skipped) plan.skipped_tests.push_back({t.target.label, t.reason});
  }
  auto by_label = [](const ListedTest& a, const ListedTest& b) { return a.label < b.label; };
  std::stable_sort(plan.cpu_tests.begin(), plan.cpu_tests.end(), by_label);
  std::stable_sort(plan.skipped_tests.begin(), plan.skipped_tests.end(), by_label);
  summary.cpu_tests = static_cast<long>(plan.cpu_tests.size());
  summary.skipped_tests = static_cast<long>(plan.skipped_tests.size());
}

/// Positions of `all` in unit-id order, whatever the order they came in: ties in the schedule
/// fall the same way.
std::vector<size_t> id_order(const std::vector<Assignment>& all) {
  std::vector<size_t> by_id(all.size());
  std::iota(by_id.begin(), by_id.end(), 0);
  auto id_before = [&](size_t a, size_t b) { return all[a].unit.id < all[b].unit.id; };
  if (!std::is_sorted(by_id.begin(), by_id.end(), id_before))
    std::stable_sort(by_id.begin(), by_id.end(), id_before);
  return by_id;
}

/// Each unit's demand (an index into the problem's demand_shapes), and per demand why no node
/// can run it (empty when some can).
struct Demands {
  std::vector<int> of_unit;
  std::vector<std::string> unschedulable_reasons;
  std::vector<std::string> memory_passed_over;  ///< memory_passed_over() of each schedulable demand
};

/// Units that need the same are placed by the same rules: works out each demand's shapes once
/// per node type, into `problem`. Durations become what is planned: slowed down when shared,
/// in whole milliseconds.
Demands add_demands(std::vector<Assignment>& all, const std::vector<size_t>& by_id, const Fleet& fleet,
                    const FleetIndex& index, const SolveOptions& options, double slowdown,
                    solve::Problem& problem) {
  Demands demands;
  demands.of_unit.resize(all.size());
  std::unordered_map<std::string, int> demand_of_key;
  // Units share their requirement with the tests that declare the same tags: a unit whose
  // requirement and memory were seen has that unit's demand, without a key to format (that was
  // 2% of `plan` at 1M units, a CUDA version's text allocated each time).
  struct Seen {
    const Requirement* requirement;
    std::optional<std::int64_t> vram_mib;
    bool operator==(const Seen&) const = default;
  };
  struct SeenHash {
    std::size_t operator()(const Seen& seen) const {
      return std::hash<const void*>{}(seen.requirement) ^
             std::hash<std::int64_t>{}(seen.vram_mib.value_or(-1));
    }
  };
  std::unordered_map<Seen, int, SeenHash> demand_of_seen;
  std::string key;
  std::unordered_set<std::int64_t> sizes;
  for (const auto& a : all)
    if (shares_gpu(a.unit, options.policy) && sizes.size() <= exact_memory_sizes)
      sizes.insert(*a.unit.vram_mib);
  const bool round_memory = sizes.size() > exact_memory_sizes;
  for (size_t u : by_id) {
    Unit& unit = all[u].unit;
    bool share = shares_gpu(unit, options.policy);
    if (share) unit.duration_s *= slowdown;
    unit.duration_s = util::json_seconds(unit.duration_s);
    auto [seen, first_seen] = demand_of_seen.try_emplace(Seen{&*unit.requirement, unit.vram_mib}, 0);
    if (!first_seen) {
      demands.of_unit[u] = seen->second;
      continue;
    }
    const std::int64_t need = memory_need(unit, options.rules.vram_headroom);
    demand_key(unit, share, need, key);
    auto it = demand_of_key.find(key);
    bool added = it == demand_of_key.end();
    if (added) it = demand_of_key.emplace(key, static_cast<int>(problem.demand_shapes.size())).first;
    demands.of_unit[u] = seen->second = it->second;
    if (!added) continue;
    Requirement placing = placing_requirement(unit, need);
    std::vector<int> shapes;
    for (size_t t = 0; t < index.types.size() && placing.gpus.value > 0; ++t) {
      const NodeType& type = index.types[t];
      const Node& node = fleet.nodes[static_cast<size_t>(type.nodes.front())];
      if (!can_run(placing, node, type.links)) continue;
      Shape shape = shape_for(unit, placing, share, round_memory, static_cast<int>(t), type, node, options);
      auto same = std::find(problem.shapes.begin(), problem.shapes.end(), shape);
      shapes.push_back(static_cast<int>(same - problem.shapes.begin()));
      if (same == problem.shapes.end()) problem.shapes.push_back(std::move(shape));
    }
    problem.demand_shapes.push_back(std::move(shapes));
    bool schedulable = !problem.demand_shapes.back().empty();
    demands.unschedulable_reasons.push_back(schedulable ? std::string()
                                            : placing.gpus.value > 0
                                                ? unschedulable_reason(placing, fleet, index)
                                                : "asks for no GPU");
    demands.memory_passed_over.push_back(schedulable ? memory_passed_over(placing, fleet, index)
                                                     : std::string());
  }
  return demands;
}

/// The unit that goes to each place of the plan's assignments: by node (in fleet order), then
/// start, then first GPU, then unit id (job order); the unschedulable ones' husks last.
std::vector<size_t> placement_order(const Schedule& schedule, const std::vector<size_t>& scheduled,
                                    const std::vector<size_t>& unscheduled) {
  struct Keyed {
    int node;
    double start;
    int first_gpu;
    size_t job;
    bool operator<(const Keyed& o) const {
      return std::tie(node, start, first_gpu, job) < std::tie(o.node, o.start, o.first_gpu, o.job);
    }
  };
  std::vector<Keyed> keyed(scheduled.size());
  for (size_t j = 0; j < scheduled.size(); ++j) {
    const Placement& placed = schedule.placements[j];
    keyed[j] = {placed.node, placed.start, std::countr_zero(placed.gpus), j};
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<size_t> order;
  order.reserve(scheduled.size() + unscheduled.size());
  for (const Keyed& k : keyed) order.push_back(scheduled[k.job]);
  order.insert(order.end(), unscheduled.begin(), unscheduled.end());
  return order;
}

/// Where and when the assignment runs (its env is planned_env's: nothing to store).
void place(Assignment& a, const Placement& placed, const Fleet& fleet) {
  const Node& node = fleet.nodes[static_cast<size_t>(placed.node)];
  a.node = node.name;
  // It holds the node: every GPU of it that it may use (placed.gpus are among them).
  const GpuMask gpus = a.unit.requirement->takes_every_node_gpu()
                           ? placed.gpus | eligible_gpus(a.unit.requirement, node)
                           : placed.gpus;
  for (GpuMask m = gpus; m; m &= m - 1) a.gpus.push_back(std::countr_zero(m));
  // A unit with GPUs to itself holds them whole, and no more than that: its reservation (a
  // measured peak plus headroom) may be more than the GPUs it was placed on have.
  for (int gpu : a.gpus)
    if (a.unit.vram_mib)
      a.unit.vram_mib = std::min(*a.unit.vram_mib, node.gpus[static_cast<size_t>(gpu)].vram_mib);
  // Durations are whole milliseconds, so starts are too but for the sums' rounding error:
  // round the start once and derive the end, so that the plan's end_s = start_s + duration_s.
  a.start_s = util::json_seconds(placed.start);
  a.end_s = a.start_s + a.unit.duration_s;
}

}  // namespace

Plan make_plan(const Classification& tests, std::vector<Unit> units, const Fleet& fleet,
               const SolveOptions& options) {
  Plan plan;
  plan.policy = options.policy;
  plan.fleet = fleet.source;
  plan.diagnostics = tests.diagnostics;
  PlanSummary& summary = plan.summary;
  list_buckets(tests, plan);
  summary.pack_slowdown = options.policy == Policy::pack ? options.rules.pack_slowdown : 1.0;
  if (options.policy == Policy::pack) {
    summary.vram_headroom = options.rules.vram_headroom;
    summary.max_tests_per_gpu = options.rules.max_tests_per_gpu;
  }

  // Each unit becomes an assignment before the scheduler's state exists, so that a million
  // units are never held twice; the unschedulable ones move out again below.
  std::vector<Assignment> all;
  all.reserve(units.size());
  for (Unit& unit : units) all.emplace_back().unit = std::move(unit);
  std::vector<Unit>().swap(units);
  summary.gpu_units = static_cast<long>(all.size());
  std::vector<size_t> by_id = id_order(all);

  FleetIndex index = index_fleet(fleet);
  solve::Problem problem;
  problem.fleet = &index;
  problem.max_sharing = options.policy == Policy::pack ? std::max(1, options.rules.max_tests_per_gpu) : 1;
  Demands demands = add_demands(all, by_id, fleet, index, options, summary.pack_slowdown, problem);

  std::vector<size_t> scheduled;  // job → unit
  std::vector<size_t> unscheduled;
  std::set<std::string> memory_warned;  // the tests warned of GPUs their gpu-mem passes over
  for (size_t u : by_id) {
    auto d = static_cast<size_t>(demands.of_unit[u]);
    if (problem.demand_shapes[d].empty()) {
      plan.unschedulable.push_back({std::move(all[u].unit), demands.unschedulable_reasons[d]});
      unscheduled.push_back(u);
      continue;
    }
    scheduled.push_back(u);
    problem.jobs.push_back({demands.of_unit[u], all[u].unit.duration_s});
    const Unit& unit = all[u].unit;
    if (!demands.memory_passed_over[d].empty() && memory_warned.insert(unit.label).second)
      plan.diagnostics.push_back(Diagnostic{Severity::warning, unit.label,
                                            unit.requirement->gpu_mem_mib->source,
                                            demands.memory_passed_over[d]});
  }
  summary.lower_bound_s = lower_bound(problem);
  Schedule schedule = options.scheduler == Scheduler::longest_first_insertion
                          ? insertion_schedule(problem, longest_first(problem))
                          : best_schedule(problem, options.time_limit_s, summary.lower_bound_s);

  std::vector<size_t> order = placement_order(schedule, scheduled, unscheduled);
  for (size_t j = 0; j < scheduled.size(); ++j) {
    Assignment& a = all[scheduled[j]];
    place(a, schedule.placements[j], fleet);
    summary.makespan_s = std::max(summary.makespan_s, a.end_s);
  }
  permute(all, order);
  all.erase(all.begin() + static_cast<std::ptrdiff_t>(scheduled.size()), all.end());
  plan.assignments = std::move(all);

  double gpus_in_fleet = 0;
  for (const auto& node : fleet.nodes) gpus_in_fleet += double(node.gpus.size());
  summary.scheduled_units = static_cast<long>(plan.assignments.size());
  summary.unschedulable_units = static_cast<long>(plan.unschedulable.size());
  summary.gpu_utilization = summary.makespan_s > 0 && gpus_in_fleet > 0
                                ? busy_gpu_seconds(plan) / (gpus_in_fleet * summary.makespan_s)
                                : 0;
  return plan;
}

struct Replanner::State {
  FleetIndex index;
  solve::Problem problem;
  std::vector<size_t> unit_of_job;
  std::vector<bool> shares;  ///< per unit: whether it shares its GPU, and so is slowed down
  double slowdown = 1;
  SolveOptions options;
};

Replanner::Replanner(std::vector<Unit> units, const Fleet& fleet, const SolveOptions& options)
    : state_(std::make_unique<State>()) {
  State& s = *state_;
  s.options = options;
  s.slowdown = options.policy == Policy::pack ? options.rules.pack_slowdown : 1.0;
  std::vector<Assignment> all;
  all.reserve(units.size());
  for (Unit& unit : units) {
    s.shares.push_back(shares_gpu(unit, options.policy));
    all.emplace_back().unit = std::move(unit);
  }
  std::vector<size_t> by_id = id_order(all);
  s.index = index_fleet(fleet);
  s.problem.fleet = &s.index;
  s.problem.max_sharing = options.policy == Policy::pack ? std::max(1, options.rules.max_tests_per_gpu) : 1;
  Demands demands = add_demands(all, by_id, fleet, s.index, options, s.slowdown, s.problem);
  // The jobs make_plan schedules, in its order: the units some node can run, by unit id.
  for (size_t u : by_id) {
    if (s.problem.demand_shapes[static_cast<size_t>(demands.of_unit[u])].empty()) continue;
    s.unit_of_job.push_back(u);
    s.problem.jobs.push_back({demands.of_unit[u], 0});
  }
}

Replanner::~Replanner() = default;

Replanner::Result Replanner::plan(const std::vector<double>& durations) {
  State& s = *state_;
  // As add_demands makes them: slowed down when shared, in whole milliseconds.
  for (size_t j = 0; j < s.problem.jobs.size(); ++j) {
    size_t u = s.unit_of_job[j];
    s.problem.jobs[j].duration = util::json_seconds(s.shares[u] ? durations[u] * s.slowdown : durations[u]);
  }
  Result result;
  result.lower_bound_s = lower_bound(s.problem);
  Schedule schedule = s.options.scheduler == Scheduler::longest_first_insertion
                          ? insertion_schedule(s.problem, longest_first(s.problem))
                          : best_schedule(s.problem, s.options.time_limit_s, result.lower_bound_s);
  // As place() ends each assignment: its start to the millisecond, then its duration.
  for (size_t j = 0; j < s.problem.jobs.size(); ++j)
    result.makespan_s = std::max(
        result.makespan_s, util::json_seconds(schedule.placements[j].start) + s.problem.jobs[j].duration);
  return result;
}

}  // namespace gpuplan
