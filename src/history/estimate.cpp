// From samples to planned durations: a percentile of each unit's recent attempts, the median
// of its size class for a test without history, then the caller's fallback (the size defaults).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <memory>
#include <set>
#include <tuple>

#include "gpuplan/history.hpp"
#include "gpuplan/target.hpp"

namespace gpuplan {

namespace {

/// Linear interpolation between the closest ranks, as numpy's default does.
double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  auto low = static_cast<std::size_t>(std::floor(rank));
  auto high = static_cast<std::size_t>(std::ceil(rank));
  return values[low] + (values[high] - values[low]) * (rank - static_cast<double>(low));
}

constexpr std::string_view timeout_source = "history-timeout";

/// Adds a shard's estimate to the whole test's: the times add up, the memory is the largest.
void add_shard(Estimate& sum, const Estimate& shard) {
  sum.seconds += shard.seconds;
  auto most = [](std::optional<std::int64_t>& into, const std::optional<std::int64_t>& value) {
    if (value) into = std::max(into.value_or(0), *value);
  };
  most(sum.peak_vram_mib, shard.peak_vram_mib);
  most(sum.least_vram_mib, shard.least_vram_mib);
}

/// The whole test's time from its `count` shards: the `measured` shards' own (`measured_seconds`
/// in all), a shard never measured (its result cached) about what they took each, and a shard that
/// only timed out at least its lower bound (`timed_out`), and at least that much too. Before, a
/// timed-out shard's lower bound was scaled up with the measured shards' time as if measured (a
/// shard of 100 s beside one that timed out at 300 s made a whole test of 800 s), or left out (200 s,
/// below the 300 s a shard alone is known to take).
double whole_seconds(double measured_seconds, int measured, const std::vector<double>& timed_out, int count) {
  if (timed_out.empty()) return measured_seconds * count / measured;
  const double each = measured_seconds / measured;
  double total = measured_seconds + each * (count - measured - static_cast<int>(timed_out.size()));
  for (double at_least : timed_out) total += std::max(at_least, each);
  return total;
}

/// One of `count` shards of a test whose runs were of the whole test (from before it was
/// sharded): an even share of the whole test's time. A guess (its shards need not take alike),
/// its source ends in "-whole-resharded", which the plan warns of as it does resharding.
/// Before, it was planned so without a word, --strict too. A lower bound stays one, unmarked.
Estimate split_whole(Estimate whole, int count) {
  whole.seconds /= std::max(count, 1);
  if (whole.source != timeout_source) whole.source += whole_resharded_suffix;
  return whole;
}

/// A unit's own estimate; a sharded unit may use its test's whole-test history and the other
/// way round, when the test was (un)sharded since.
std::optional<Estimate> lookup(const std::map<SampleKey, Estimate>& own, const std::string& label,
                               std::optional<int> shard, int shard_count) {
  if (auto it = own.find(SampleKey{label, shard}); it != own.end()) return it->second;
  if (shard) {
    auto whole = own.find(SampleKey{label, std::nullopt});
    if (whole == own.end()) return std::nullopt;
    return split_whole(whole->second, shard_count);
  }
  std::optional<Estimate> sum;
  int highest = -1, measured = 0;
  double measured_seconds = 0;
  std::vector<double> timed_out;
  for (auto it = own.lower_bound(SampleKey{label, 0}); it != own.end() && it->first.label == label; ++it) {
    highest = std::max(highest, it->first.shard.value_or(0));
    if (it->second.source != timeout_source) {
      ++measured;
      measured_seconds += it->second.seconds;
    } else {
      timed_out.push_back(it->second.seconds);
    }
    if (!sum) {
      sum = it->second;
      continue;
    }
    if (it->second.source != timeout_source) sum->source = it->second.source;
    add_shard(*sum, it->second);
  }
  // Shards never measured (their results cached, or run by none of these builds) took about what
  // the measured ones did: the sum alone made one re-run shard of four the whole test's time.
  const int count = std::max(shard_count, highest + 1);
  if (sum && measured > 0 && (measured < count || !timed_out.empty()) && sum->source != timeout_source)
    sum->seconds = whole_seconds(measured_seconds, measured, timed_out, count);
  return sum;
}

/// The whole test's time from its runs in `count` shards: the sum of the measured shards'
/// estimates, scaled up to all `count` (whole_seconds: a shard whose result was cached took
/// about what the others did, one that only timed out at least that and its lower bound; without
/// `lower_bounds` about what the others did too: the time of a shard like the measured ones, for
/// one never measured, which a timed-out sibling's lower bound says nothing of). Empty when no
/// shard was measured.
std::optional<Estimate> whole_from_shards(const std::map<SampleKey, Estimate>& own, const std::string& label,
                                          int count, bool lower_bounds = true) {
  std::optional<Estimate> sum;
  int measured = 0;
  std::vector<double> timed_out;
  for (int shard = 0; shard < count; ++shard) {
    auto it = own.find(SampleKey{label, shard});
    if (lower_bounds && it != own.end() && it->second.source == timeout_source)
      timed_out.push_back(it->second.seconds);
    if (it == own.end() || it->second.source == timeout_source) continue;
    ++measured;
    if (!sum) {
      sum = it->second;
      continue;
    }
    add_shard(*sum, it->second);
  }
  if (sum) sum->seconds = whole_seconds(sum->seconds, measured, timed_out, count);
  return sum;
}

/// The estimate of one unit of a test measured in `then` shards that now has `now` (1: the
/// whole test): the whole test's time (whole_from_shards) split over the new shards. Its source
/// ends in "-resharded", which the plan warns of. Before, each old shard's time was a new
/// shard's: 4 shards of 100 s became 2 of 100 s.
std::optional<Estimate> resharded(const std::map<SampleKey, Estimate>& own, const std::string& label,
                                  int then, int now) {
  auto sum = whole_from_shards(own, label, then);
  if (!sum) return std::nullopt;
  sum->seconds /= now;
  sum->source += "-resharded";
  return sum;
}

}  // namespace

namespace {

/// Samples that started in the same millisecond (the runs of --runs_per_test that Bazel starts
/// together, a CSV whose start has whole seconds) by what they measured, so that which of them is
/// the newest, and so in the window, is not the order of the input's rows or events (which runs
/// that finish together, or nodes that append to one results file, write in any order).
void oldest_first(std::vector<Sample>& samples) {
  auto key = [](const Sample& s) {
    return std::tie(*s.start_ms, s.seconds, s.timed_out, s.failed, s.filtered, s.peak_vram_mib,
                    s.peak_up_front, s.gpu_touched, s.given_no_gpu, s.gpus_given, s.gpus_asked, s.node);
  };
  if (std::all_of(samples.begin(), samples.end(), [](const Sample& s) { return s.start_ms.has_value(); }))
    std::stable_sort(samples.begin(), samples.end(),
                     [&](const Sample& a, const Sample& b) { return key(a) < key(b); });
}

}  // namespace

std::vector<Sample> recent_samples(std::vector<Sample> samples, int window) {
  oldest_first(samples);
  if (window > 0 && samples.size() > static_cast<std::size_t>(window))
    samples.erase(samples.begin(), samples.end() - window);
  return samples;
}

std::vector<Sample> window_samples(std::vector<Sample> samples, int window) {
  oldest_first(samples);
  const auto size = static_cast<std::ptrdiff_t>(samples.size());
  if (window <= 0 || size <= window) return samples;
  const auto recent = samples.end() - window;
  auto measured = std::count_if(recent, samples.end(), [](const Sample& s) { return s.measured_memory(); });
  // The older samples kept, newest first: those that measured memory, while the window has room.
  std::vector<Sample> older;
  for (auto it = recent; it != samples.begin() && measured < window;) {
    --it;
    if (!it->measured_memory()) continue;
    older.push_back(std::move(*it));
    ++measured;
  }
  std::vector<Sample> kept(std::make_move_iterator(older.rbegin()), std::make_move_iterator(older.rend()));
  kept.insert(kept.end(), std::make_move_iterator(recent), std::make_move_iterator(samples.end()));
  return kept;
}

std::optional<std::int64_t> up_front_peak(const History& history, const std::string& label, int window) {
  std::optional<std::int64_t> up_front;
  for (auto it = history.samples.lower_bound(SampleKey{label, std::nullopt});
       it != history.samples.end() && it->first.label == label; ++it)
    for (const auto& sample : window_samples(it->second, window)) {
      if (!sample.peak_vram_mib || *sample.peak_vram_mib == 0) continue;
      if (!sample.peak_up_front) return std::nullopt;
      up_front = std::max(up_front.value_or(0), *sample.peak_vram_mib);
    }
  return up_front;
}

std::optional<Estimate> estimate_from_samples(const std::vector<Sample>& samples, const Rules& rules) {
  // The durations of the last `history_window` samples; the memory of the newest that many that
  // measured it, which window_samples keeps before them.
  auto kept = window_samples(samples, rules.history_window);
  if (kept.empty()) return std::nullopt;
  const auto durations_from =
      rules.history_window > 0 && kept.size() > static_cast<std::size_t>(rules.history_window)
          ? kept.size() - static_cast<std::size_t>(rules.history_window)
          : std::size_t{0};
  std::vector<double> measured;
  double lower_bound = 0;
  std::optional<std::int64_t> peak;
  bool whole_run_peak = false;
  for (std::size_t i = 0; i < kept.size(); ++i) {
    const Sample& sample = kept[i];
    if (i >= durations_from) {
      if (sample.timed_out)
        lower_bound = std::max(lower_bound, sample.seconds);
      else
        measured.push_back(sample.seconds);
    }
    // A peak of 0 MiB of a run that was on a GPU measured nothing (a process may hold no memory
    // yet when sampled): reserved as known, it had let pack share the GPU with anything. Nor is
    // memory a framework took up front a need (a JAX test seen at 105 GiB on an H200 was sent
    // to H200s only); check_history_against_tests warns of it.
    if (sample.measured_memory() && !sample.peak_up_front) {
      peak = std::max(peak.value_or(0), *sample.peak_vram_mib);
      whole_run_peak = whole_run_peak || sample.ran_through();
    }
  }
  Estimate estimate;
  if (measured.empty()) {
    estimate.seconds = lower_bound;
    estimate.source = timeout_source;
  } else {
    estimate.seconds = percentile(measured, rules.history_percentile);
    estimate.source = fmt::format("history-p{:g}", rules.history_percentile);
    // A recent run cut short after longer than the percentile: the test runs at least that long
    // now (before, an old pass of 10 s planned a test whose last four runs timed out at 300 s).
    if (lower_bound > estimate.seconds) {
      estimate.seconds = lower_bound;
      estimate.source += "-timeout";
    }
  }
  // Peaks only of runs that failed or were cut short may be of runs that ended before their GPU
  // work: reserving them under pack could share the GPU the test needs whole, so they are only
  // what it uses at least. The largest peak counts once a run that passed measured one.
  if (peak)
    (whole_run_peak ? estimate.peak_vram_mib : estimate.least_vram_mib) =
        with_headroom(*peak, rules.vram_headroom);
  return estimate;
}

PartialRun partial_run(const Sample& sample, std::optional<int> gpus, bool takes_more) {
  if (sample.filtered) return PartialRun::filtered;
  if (!gpus || *gpus == 0) return PartialRun::whole;
  if (sample.given_no_gpu) return PartialRun::given_no_gpu;
  if (sample.gpus_given && *sample.gpus_given > 0 && *sample.gpus_given < *gpus)
    return PartialRun::fewer_gpus;
  // No plan gives a test more GPUs than it asks for, save one given its whole node: such a run is
  // of a time it asked for more. A test's time and memory a GPU on 2 GPUs say little of it on 1.
  if (!takes_more && sample.gpus_given && *sample.gpus_given > *gpus) return PartialRun::more_gpus;
  return PartialRun::whole;
}

int gpus_needed(const ClassifiedTest& test) {
  return test.bucket == Bucket::gpu ? std::max(1, test.requirement->gpus.value) : 0;
}

std::vector<Sample> whole_runs(const std::vector<Sample>& samples, std::optional<int> gpus, bool takes_more) {
  std::vector<Sample> whole;
  whole.reserve(samples.size());
  std::copy_if(
      samples.begin(), samples.end(), std::back_inserter(whole),
      [gpus, takes_more](const Sample& s) { return partial_run(s, gpus, takes_more) == PartialRun::whole; });
  return whole;
}

std::map<std::string, PartialRuns> partial_runs(const History& history, const Classification& tests,
                                                int window) {
  std::map<std::string, PartialRuns> found;
  for (const auto& test : tests.tests) {
    if (test.bucket != Bucket::gpu) continue;  // only GPU tests are planned
    const auto label = label_identity(test.target.label);
    PartialRuns runs;
    runs.needs = gpus_needed(test);
    const bool takes_more = test.requirement->takes_every_node_gpu();
    runs.every_run = true;
    for (auto it = history.samples.lower_bound(SampleKey{label, std::nullopt});
         it != history.samples.end() && it->first.label == label; ++it) {
      runs.every_run =
          runs.every_run &&
          std::all_of(it->second.begin(), it->second.end(), [&runs, takes_more](const Sample& s) {
            return partial_run(s, runs.needs, takes_more) != PartialRun::whole;
          });
      bool whole_before = false;  // a whole run of this unit came before, oldest first
      long fewer_pending = 0;     // runs given fewer GPUs since, that no whole run has followed yet
      for (const auto& sample : recent_samples(it->second, window)) {
        ++runs.recent;
        switch (partial_run(sample, runs.needs, takes_more)) {
          case PartialRun::whole:
            whole_before = true;
            fewer_pending = 0;
            break;
          case PartialRun::filtered: ++runs.filtered; break;
          case PartialRun::given_no_gpu: ++runs.given_no_gpu; break;
          case PartialRun::fewer_gpus:
            runs.fewest_gpus =
                runs.fewer_gpus++ == 0 ? *sample.gpus_given : std::min(runs.fewest_gpus, *sample.gpus_given);
            // Its record says what the test asked for then: given all of it, a run of its older
            // count (whatever order it came in); given less, a machine short of GPUs. Only a record
            // that does not say is judged by the runs around it.
            if (sample.gpus_asked) {
              ++(*sample.gpus_given < *sample.gpus_asked ? runs.fewer_than_asked : runs.fewer_as_asked);
              break;
            }
            if (whole_before) ++runs.fewer_after_whole;
            ++fewer_pending;
            break;
          case PartialRun::more_gpus:
            runs.most_gpus = std::max(runs.most_gpus, *sample.gpus_given);
            ++runs.more_gpus;
            break;
        }
      }
      runs.fewer_last += fewer_pending;
    }
    if (runs.left_out() > 0) found.emplace(label, runs);
  }
  return found;
}

Estimator history_estimator(const History& history, const Classification& tests, const Rules& rules,
                            Estimator fallback) {
  std::map<std::string, std::string> size_of;  // of the GPU tests
  std::map<std::string, int> gpus_of;          // of every test the query names
  std::set<std::string> takes_more;            // the tests given every GPU of their node
  for (const auto& test : tests.tests) {
    if (test.bucket == Bucket::gpu) size_of[label_identity(test.target.label)] = test.target.size;
    gpus_of[label_identity(test.target.label)] = gpus_needed(test);
    if (test.requirement->takes_every_node_gpu()) takes_more.insert(label_identity(test.target.label));
  }
  auto need = [&gpus_of](const std::string& label) {
    auto found = gpus_of.find(label);
    return found == gpus_of.end() ? std::nullopt : std::optional<int>(found->second);
  };
  // Runs that did part of the test's work are left out (partial_run): a GPU test's runs given no
  // GPU or fewer than it needs (run-under's --unplanned=warn, --missing-gpus=warn) mostly skipped
  // it (before, three of 0.4 s planned a test that takes minutes at 0.48 s), and a run filtered
  // to one test case (--test_filter) planned the whole test at its 0.3 s. A CPU test's runs given
  // no GPU are its time.
  auto own = std::make_shared<std::map<SampleKey, Estimate>>();
  for (const auto& [key, samples] : history.samples) {
    const auto gpus = need(key.label);
    const bool more = takes_more.contains(key.label);
    const bool partial = std::any_of(samples.begin(), samples.end(), [gpus, more](const Sample& s) {
      return partial_run(s, gpus, more) != PartialRun::whole;
    });
    if (auto estimate = partial ? estimate_from_samples(whole_runs(samples, gpus, more), rules)
                                : estimate_from_samples(samples, rules))
      own->emplace(key, *estimate);
  }

  auto counts = std::make_shared<std::map<std::string, int>>(history.shard_counts);
  // A history that records no shard count (CSV, JSON rows) but runs of shards beyond a test's count
  // now, shard 0 among them: the test had at least that many shards then, and is planned as
  // resharded (without shard 0 the numbers are 1-based: the plan warns of that instead).
  std::map<std::string, int> shards_now;
  for (const auto& test : tests.tests)
    if (test.bucket == Bucket::gpu && test.target.shard_count > 1 && !test.target.shard_count_unresolved)
      shards_now[label_identity(test.target.label)] = test.target.shard_count;
  for (auto it = own->begin(); it != own->end();) {
    const std::string& label = it->first.label;
    int highest = -1;
    bool first = false;
    for (; it != own->end() && it->first.label == label; ++it)
      if (it->first.shard) {
        highest = std::max(highest, *it->first.shard);
        first = first || *it->first.shard == 0;
      }
    auto now = shards_now.find(label);
    if (first && now != shards_now.end() && highest >= now->second && !counts->contains(label))
      (*counts)[label] = highest + 1;
  }

  // Whole tests' times, a sharded test's the sum of its shards' (before, each shard counted as
  // a test: 4 shards of 400 s made an unsharded test of its class 400 s, not 1,600), scaled up
  // over shards never measured (before, one re-run shard of four beside three cached results was
  // the whole test's time, and the class's median a quarter of the real one).
  std::map<std::string, std::vector<double>> known_by_size;
  for (auto it = own->begin(); it != own->end();
       it = own->lower_bound(SampleKey{it->first.label + '\0', {}})) {
    const std::string& label = it->first.label;
    auto size = size_of.find(label);
    if (size == size_of.end()) continue;
    // Scaled up to the count the history records (without one, runs of shards 0 and 1 of a test
    // with 4 now may be of a time it had 2: check_history_against_tests warns of that).
    auto then = counts->find(label);
    if (auto whole = lookup(*own, label, std::nullopt, then != counts->end() ? then->second : 1);
        whole && whole->source != timeout_source)
      known_by_size[size->second].push_back(whole->seconds);
  }
  auto medians = std::make_shared<std::map<std::string, double>>();
  for (auto& [size, seconds] : known_by_size) (*medians)[size] = percentile(std::move(seconds), 50);

  // Tests with runs of the whole test newer than every run of their shards (where each says when
  // it started): of a test sharded differently now, the whole test's runs are the ones to split.
  auto whole_is_newer = std::make_shared<std::set<std::string>>();
  for (auto it = history.samples.begin(); it != history.samples.end();) {
    const std::string& label = it->first.label;
    std::optional<std::int64_t> whole, shards;
    bool dated = true;
    const auto gpus = need(label);
    const bool more = takes_more.contains(label);
    for (; it != history.samples.end() && it->first.label == label; ++it)
      for (const auto& sample : it->second) {
        if (partial_run(sample, gpus, more) != PartialRun::whole) continue;  // not in its estimate
        if (!sample.start_ms) {
          dated = false;
          continue;
        }
        auto& latest = it->first.shard ? shards : whole;
        latest = std::max(latest.value_or(*sample.start_ms), *sample.start_ms);
      }
    if (dated && whole && shards && *whole > *shards) whole_is_newer->insert(label);
  }
  return [own, medians, counts, whole_is_newer, fallback = std::move(fallback)](const ClassifiedTest& test,
                                                                                std::optional<int> shard) {
    const auto label = label_identity(test.target.label);
    const int now = std::max(1, test.target.shard_count);
    // The count of a sharded era. Nor is a test whose count the query could not resolve (a
    // select()) taken to have changed.
    auto then = test.target.shard_count_unresolved ? counts->end() : counts->find(label);
    const bool has_whole = own->contains(SampleKey{label, std::nullopt});
    // Runs of the whole test (which record no count) are used as they are by a test unsharded
    // now, and split over its shards by one sharded now when they are newer than its sharded
    // era's; otherwise the sharded era's runs are resharded. Before, any whole-test run, however
    // old, turned the resharding off: unsharded, then 4 shards of 100 s, now 2 shards planned each
    // half at an old quarter's 100 s.
    const bool changed = then != counts->end() && then->second != now;
    const bool whole_wins = has_whole && (now == 1 || whole_is_newer->contains(label));
    std::optional<Estimate> found;
    if (changed && !whole_wins) found = resharded(*own, label, then->second, shard ? now : 1);
    if (!found && changed && shard) {
      // The old shards' numbers are not the new ones': only the whole test's runs are split.
      if (auto whole = own->find(SampleKey{label, std::nullopt}); whole != own->end())
        found = split_whole(whole->second, now);
    } else if (!found) {
      found = lookup(*own, label, shard, test.target.shard_count);
      // Unsharded now, with runs of its shards only, and no count in the history (with one,
      // `changed` reshards it above): the sum of its shards' times, scaled up over shards with no
      // run (their results cached), is a guess at the whole test's, warned of as resharding is.
      // Before, it was planned so without a word, --strict too.
      if (found && !shard && now == 1 && !has_whole && found->source != timeout_source)
        found->source += "-resharded";
    }
    Estimate estimate;
    if (found && found->source != timeout_source) {
      estimate = *found;
    } else {
      // A shard with no run of its own beside shards of the same count that have some (its
      // results were cached in the builds read): it takes about what they did. Before, it got
      // its class's median split over the shards, a median the re-run shard alone had made. Only
      // where the history records the count: without it they may be shards of another time.
      auto siblings = shard && !changed && then != counts->end() ? whole_from_shards(*own, label, now, false)
                                                                 : std::nullopt;
      if (siblings) {
        estimate = *siblings;
        estimate.seconds /= now;
        estimate.source += "-other-shards";
        // Its memory is not theirs to reserve (it may need more, or less), but the most they used
        // is the floor it is given: shards of one test mostly load the same model. Before, it had
        // none, and went to a 24 GB GPU beside a sibling that peaked at 30,000 MiB.
        if (estimate.peak_vram_mib)
          estimate.least_vram_mib = std::max(estimate.least_vram_mib.value_or(0), *estimate.peak_vram_mib);
        estimate.peak_vram_mib.reset();
      } else if (auto median = medians->find(test.target.size); median != medians->end()) {
        estimate = Estimate{median->second / (shard ? now : 1), "size-median", std::nullopt};
      } else {
        estimate = fallback(test, shard);
      }
      // Only runs cut short (which measured no peak to reserve): it ran at least that long.
      if (found && found->seconds > estimate.seconds)
        estimate = Estimate{found->seconds, std::string(timeout_source), std::nullopt};
      if (found && found->least_vram_mib)  // what its runs cut short measured
        estimate.least_vram_mib = std::max(estimate.least_vram_mib.value_or(0), *found->least_vram_mib);
    }
    estimate.seconds = std::max(estimate.seconds, min_planned_seconds);
    return estimate;
  };
}

}  // namespace gpuplan
