#pragma once
// Placing units on the fleet so that they finish as early as possible (SPEC section 5).
#include <memory>
#include <vector>

#include "gpuplan/classify.hpp"
#include "gpuplan/fleet.hpp"
#include "gpuplan/plan.hpp"
#include "gpuplan/rules.hpp"

namespace gpuplan {

/// How a schedule is searched for: the planner's own way, or a textbook reference that the
/// benchmark and the tests hold it against.
enum class Scheduler {
  best,                     ///< several orders and GPU choices, the best kept (the planner)
  longest_first_insertion,  ///< longest first, each unit in the earliest idle gap that fits it
};

struct SolveOptions {
  Policy policy = Policy::exact;
  double time_limit_s = 0;  ///< extra time the solver may spend improving a first plan; 0: none
  Rules rules;              ///< pack knobs (headroom, max tests per GPU, slowdown)
  Scheduler scheduler = Scheduler::best;
};

/// The whole plan: the buckets from `tests`, `units` placed on `fleet`, the summary with
/// makespan, lower bound and utilisation. Deterministic: the same inputs in any order
/// give the same plan (without a time limit; with one, a faster machine may find a better plan).
/// `units` are moved into the plan: pass them with std::move when they are not needed after.
Plan make_plan(const Classification& tests, std::vector<Unit> units, const Fleet& fleet,
               const SolveOptions& options);

/// What make_plan would give the same units with other durations, for many sets of durations
/// (simulate plans each run's real durations in hindsight): what the units need of the fleet is
/// worked out once, and no plan is built, only its makespan and lower bound.
class Replanner {
 public:
  Replanner(std::vector<Unit> units, const Fleet& fleet, const SolveOptions& options);
  Replanner(const Replanner&) = delete;
  Replanner& operator=(const Replanner&) = delete;
  ~Replanner();

  struct Result {
    double makespan_s = 0;     ///< PlanSummary::makespan_s of make_plan's plan
    double lower_bound_s = 0;  ///< PlanSummary::lower_bound_s
  };
  /// `durations`: a duration per unit, in the order the units were given.
  Result plan(const std::vector<double>& durations);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace gpuplan
