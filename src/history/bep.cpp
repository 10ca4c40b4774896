// Bazel's Build Event Protocol, as `bazel test --build_event_json_file=FILE` writes it: one
// JSON event a line (proto3 JSON: int64 as strings, Duration as "12.5s", Timestamp as RFC 3339).
// Only testResult events (one a test attempt) and testSummary events (the shard count) matter.
#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

#include "gpuplan/history.hpp"
#include "gpuplan/limits.hpp"
#include "gpuplan/target.hpp"
#include "history/bad_rows.hpp"
#include "history/time.hpp"

namespace gpuplan {

namespace {

/// The lines of a stream, read in large chunks; each line is followed in memory by at least
/// SIMDJSON_PADDING readable bytes, so simdjson parses it in place.
class PaddedLines {
 public:
  explicit PaddedLines(std::istream& in) : in_(in), buffer_(chunk + simdjson::SIMDJSON_PADDING) {}

  bool next(std::string_view& line) {
    while (true) {
      const char* start = buffer_.data() + begin_;
      if (const void* newline = std::memchr(start, '\n', end_ - begin_)) {
        std::size_t length = static_cast<const char*>(newline) - start;
        line = std::string_view(start, length);
        begin_ += length + 1;
        return true;
      }
      if (eof_) {
        if (begin_ == end_) return false;
        line = std::string_view(start, end_ - begin_);
        begin_ = end_;
        return true;
      }
      fill();
    }
  }

 private:
  static constexpr std::size_t chunk = std::size_t{1} << 20;

  void fill() {
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
    if (buffer_.size() - end_ < chunk + simdjson::SIMDJSON_PADDING)
      buffer_.resize(end_ + chunk + simdjson::SIMDJSON_PADDING);
    in_.read(buffer_.data() + end_, static_cast<std::streamsize>(chunk));
    end_ += static_cast<std::size_t>(in_.gcount());
    if (in_.gcount() == 0) eof_ = true;
  }

  std::istream& in_;
  std::vector<char> buffer_;
  std::size_t begin_ = 0;
  std::size_t end_ = 0;
  bool eof_ = false;
};

/// An int64 that proto3 JSON writes as a string ("1234") or, from other writers, as a number;
/// nothing for a fraction or a number outside int64 ("1e30"), which callers may cast to int64.
std::optional<double> proto_int(simdjson::dom::element value) {
  if (int64_t number; value.get(number) == simdjson::SUCCESS) return static_cast<double>(number);
  if (std::string_view text; value.get(text) == simdjson::SUCCESS) {
    if (auto number = history::parse_number(text);
        number && std::abs(*number) < 9.2e18 && std::trunc(*number) == *number)
      return number;
  }
  return std::nullopt;
}

struct Attempt {
  std::size_t test = 0;  ///< index into the labels seen
  int shard = 1;         ///< 1-based, as BEP counts
  Sample sample;
};

/// One testResult event: an attempt, nothing (cached, not run), or a problem for BadRows.
class ResultReader {
 public:
  std::optional<Attempt> attempt;
  bool cached = false;
  std::string problem;

  void read(simdjson::dom::object id, simdjson::dom::element event) {
    std::string_view label;
    if (id["label"].get(label) != simdjson::SUCCESS || label.empty())
      return fail("a testResult without a label");
    int shard = 1;
    for (std::string_view field : {"run", "shard", "attempt"}) {
      simdjson::dom::element value;
      if (id[field].get(value) != simdjson::SUCCESS) continue;  // proto3 leaves out zeros
      int64_t number = 0;
      if (value.get(number) != simdjson::SUCCESS || number < 1 || number > max_shard_count)
        return fail(fmt::format("testResult {} of {} is not a positive number", field, label));
      if (field == "shard") shard = static_cast<int>(number);
    }
    simdjson::dom::object result;
    if (event["testResult"].get(result) != simdjson::SUCCESS) return;  // aborted: no payload
    bool flag = false;
    if (result["cachedLocally"].get(flag) == simdjson::SUCCESS && flag) {
      cached = true;
      return;
    }
    if (result.at_pointer("/executionInfo/cachedRemotely").get(flag) == simdjson::SUCCESS && flag) {
      cached = true;
      return;
    }
    std::string_view status;
    if (result["status"].get(status) != simdjson::SUCCESS)
      status = "NO_STATUS";  // proto3 leaves out the default
    auto outcome = history::outcome_of(status);
    if (outcome == history::Outcome::none) return;
    Sample sample;
    sample.timed_out = outcome == history::Outcome::lower_bound;
    sample.failed = status == "FAILED";
    if (!read_duration(result, label, sample.seconds) || !read_start(result, label, sample.start_ms)) return;
    label_ = label;
    attempt = Attempt{0, shard, sample};
  }

  std::string_view label() const { return label_; }

 private:
  void fail(std::string message) { problem = std::move(message); }

  bool read_duration(simdjson::dom::object result, std::string_view label, double& seconds) {
    simdjson::dom::element value;
    std::optional<double> parsed = 0.0;  // proto3 leaves out a zero duration
    std::string_view field = "testAttemptDuration";
    if (result["testAttemptDuration"].get(value) == simdjson::SUCCESS) {
      std::string_view text;
      parsed = value.get(text) == simdjson::SUCCESS ? history::parse_proto_duration(text) : std::nullopt;
    } else if (result["testAttemptDurationMillis"].get(value) == simdjson::SUCCESS) {
      field = "testAttemptDurationMillis";
      parsed = proto_int(value);
      if (parsed) *parsed /= 1000;
    }
    if (!parsed) {
      fail(fmt::format("{} of {} is not a duration: {}", field, label, simdjson::minify(value)));
      return false;
    }
    if (*parsed < 0) {
      fail(fmt::format("{} of {} is negative: {}", field, label, simdjson::minify(value)));
      return false;
    }
    if (*parsed > max_duration_s) {
      fail(fmt::format("{} of {} is longer than a year (gpuplan's limit): {}", field, label,
                       simdjson::minify(value)));
      return false;
    }
    seconds = *parsed;
    return true;
  }

  bool read_start(simdjson::dom::object result, std::string_view label, std::optional<std::int64_t>& start) {
    simdjson::dom::element value;
    if (result["testAttemptStart"].get(value) == simdjson::SUCCESS) {
      std::string_view text;
      if (value.get(text) == simdjson::SUCCESS) start = history::parse_timestamp_ms(text);
      if (!start)
        fail(fmt::format("testAttemptStart of {} is not a timestamp: {}", label, simdjson::minify(value)));
      return start.has_value();
    }
    if (result["testAttemptStartMillisEpoch"].get(value) == simdjson::SUCCESS) {
      auto millis = proto_int(value);
      if (millis) start = history::epoch_ms(*millis);
      if (!start)
        fail(fmt::format("testAttemptStartMillisEpoch of {} is not a time from 1970 to 9999: {}", label,
                         simdjson::minify(value)));
      return start.has_value();
    }
    return true;
  }

  std::string_view label_;
};

}  // namespace

HistoryRead read_bep(std::istream& in, const std::string& name, bool strict) {
  history::BadRows bad(name, strict);
  simdjson::dom::parser parser;
  std::unordered_map<std::string, std::size_t> index;
  std::vector<std::string> labels;
  std::vector<Attempt> attempts;
  std::unordered_map<std::size_t, int> summary_shards;
  HistoryRead read;
  auto test_index = [&](std::string_view label) {
    auto [it, added] = index.try_emplace(canonical_label(label), labels.size());
    if (added) labels.push_back(it->first);
    return it->second;
  };

  PaddedLines lines(in);
  std::string_view line;
  long number = 0;
  while (lines.next(line)) {
    ++number;
    if (line.ends_with('\r')) line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    simdjson::dom::element event;
    if (auto error = parser.parse(line.data(), line.size(), false).get(event)) {
      bad.add(number, fmt::format("not a JSON build event: {}", simdjson::error_message(error)));
      continue;
    }
    simdjson::dom::object id;
    if (event["id"].get(id) != simdjson::SUCCESS) {
      // A Build Event Service journal: each Bazel event wrapped as
      // {"orderedBuildEvent": {"event": {"bazelEvent": {"@type": ..., "id": ...}}}}; the
      // envelopes without a bazelEvent are the build's lifecycle (enqueued, finished), nothing to read.
      simdjson::dom::element inner;
      bool enveloped = false;
      for (const char* pointer : {"/orderedBuildEvent/event/bazelEvent", "/event/bazelEvent", "/bazelEvent"})
        if (event.at_pointer(pointer).get(inner) == simdjson::SUCCESS) {
          enveloped = true;
          break;
        }
      if (!enveloped && (event["orderedBuildEvent"].error() == simdjson::SUCCESS ||
                         event["event"].error() == simdjson::SUCCESS)) {
        continue;
      }
      if (!enveloped) {
        bad.add(number, "a build event without an \"id\" object");
        continue;
      }
      if (inner["id"].get(id) != simdjson::SUCCESS) {
        bad.add(number, "a Build Event Service envelope whose bazelEvent has no \"id\" object");
        continue;
      }
      event = inner;
    }
    simdjson::dom::object result_id;
    if (id["testResult"].get(result_id) == simdjson::SUCCESS) {
      ResultReader result;
      result.read(result_id, event);
      if (!result.problem.empty()) bad.add(number, result.problem);
      if (result.cached) ++read.history.cached_results;
      if (result.attempt) {
        result.attempt->test = test_index(result.label());
        attempts.push_back(*result.attempt);
      }
      continue;
    }
    simdjson::dom::object summary_id;
    std::string_view label;
    if (id["testSummary"].get(summary_id) == simdjson::SUCCESS &&
        summary_id["label"].get(label) == simdjson::SUCCESS) {
      int64_t shards = 0;
      if (event.at_pointer("/testSummary/shardCount").get(shards) == simdjson::SUCCESS) {
        if (shards < 0 || shards > max_shard_count)  // not a cast that wraps 2^32 + 2 to 2
          bad.add(number, fmt::format("testSummary shardCount {} of {} is not a shard count from 0 to {}",
                                      shards, label, max_shard_count));
        else
          summary_shards[test_index(label)] = static_cast<int>(shards);
      }
    }
  }

  // A test is sharded when its summary says so or a result names a shard past the first.
  std::vector<int> shard_count(labels.size(), 0);
  for (const auto& attempt : attempts)
    shard_count[attempt.test] = std::max(shard_count[attempt.test], attempt.shard);
  for (auto [test, count] : summary_shards) shard_count[test] = std::max(shard_count[test], count);
  for (std::size_t test = 0; test < labels.size(); ++test)
    if (shard_count[test] > 1) read.history.shard_counts[labels[test]] = shard_count[test];
  for (auto& attempt : attempts) {
    std::optional<int> shard;
    if (shard_count[attempt.test] > 1) shard = attempt.shard - 1;
    read.history.samples[SampleKey{labels[attempt.test], shard}].push_back(attempt.sample);
  }
  read.diagnostics = bad.diagnostics();
  return read;
}

}  // namespace gpuplan
