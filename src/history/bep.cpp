// Bazel's Build Event Protocol, as `bazel test --build_event_json_file=FILE` writes it: one
// JSON event a line (proto3 JSON: int64 as strings, Duration as "12.5s", Timestamp as RFC 3339).
// Only testResult events (one a test attempt), testSummary events (the shard count), the
// testResult ids a targetCompleted event announces (one per shard and run), and what says which
// results ran only some test cases (optionsParsed's command line, targetConfigured's test kinds)
// matter. Proto3 JSON may name fields as the .proto does (test_result, as Go's protojson with
// UseProtoNames and Python's preserving_proto_field_name write them) or in lowerCamelCase
// (testResult, Bazel's); parsers must accept both, and each event is read in the spelling of its id.
#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <string>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "gpuplan/error.hpp"
#include "gpuplan/history.hpp"
#include "gpuplan/limits.hpp"
#include "gpuplan/target.hpp"
#include "history/bad_rows.hpp"
#include "history/time.hpp"

namespace gpuplan {

namespace {

/// A TestStatus as the event spells it: its name, or its number (protojson's UseEnumNumbers,
/// numbered as build_event_stream.proto's `enum TestStatus`); "NO_STATUS" when left out (proto3
/// leaves out the default) or unknown. Before, a number read as NO_STATUS and the run was dropped.
std::string_view test_status(simdjson::simdjson_result<simdjson::dom::element> value) {
  static constexpr std::string_view by_number[] = {
      "NO_STATUS",      "PASSED",          "FLAKY",
      "TIMEOUT",        "FAILED",          "INCOMPLETE",
      "REMOTE_FAILURE", "FAILED_TO_BUILD", "TOOL_HALTED_BEFORE_TESTING"};
  std::string_view name;
  if (value.get(name) == simdjson::SUCCESS) return name;
  std::uint64_t number = 0;
  if (value.get(number) == simdjson::SUCCESS && number < std::size(by_number)) return by_number[number];
  return "NO_STATUS";
}

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

/// A field's two proto3 JSON names.
struct Field {
  std::string_view camel, snake;
  std::string_view in(bool snake_case) const { return snake_case ? snake : camel; }
};
constexpr Field test_result{"testResult", "test_result"};
constexpr Field target_completed{"targetCompleted", "target_completed"};
constexpr Field test_summary{"testSummary", "test_summary"};
constexpr Field options_parsed{"optionsParsed", "options_parsed"};
constexpr Field cmd_line{"cmdLine", "cmd_line"};
constexpr Field target_configured{"targetConfigured", "target_configured"};
constexpr Field target_kind{"targetKind", "target_kind"};

/// Whether an invocation's results ran only some of their test cases (Sample::filtered), from
/// its optionsParsed command line (.bazelrc options included) and its tests' kinds: a
/// --test_filter or a googletest filter among the --test_args filters every test of it, pytest's
/// -k only a test whose targetConfigured kind may run pytest (test_kind_may_run_pytest; a test
/// whose event is missing is taken to). Bazel posts a test's targetConfigured before its results
/// (it announces them), and a `started` event begins the next invocation of files put into one.
class InvocationFilter {
 public:
  /// `keep`: whose kinds are held (LabelFilter::keeps); only those tests' results are asked about.
  explicit InvocationFilter(const LabelFilter& keep) : keep_(keep) {}

  /// Reads an event of the kinds that say so; false for any other.
  bool read(std::string_view kind, simdjson::dom::element kind_id, simdjson::dom::element event, bool snake) {
    if (kind == "started") {
      every_test_ = pytest_ = false;
      return true;
    }
    if (kind == options_parsed.in(snake)) {
      std::vector<std::string> options;
      simdjson::dom::array command_line;
      if (event[options_parsed.in(snake)][cmd_line.in(snake)].get(command_line) == simdjson::SUCCESS)
        for (simdjson::dom::element option : command_line) {
          std::string_view text;
          if (option.get(text) == simdjson::SUCCESS) options.emplace_back(text);
        }
      every_test_ = !bazel_test_filter(options, false).empty();
      pytest_ = !every_test_ && !bazel_test_filter(options, true).empty();
      return true;
    }
    if (kind != target_configured.in(snake)) return false;
    std::string_view label, configured_kind;
    if (kind_id["label"].get(label) == simdjson::SUCCESS && kind_id["aspect"].error() != simdjson::SUCCESS &&
        event["configured"][target_kind.in(snake)].get(configured_kind) == simdjson::SUCCESS &&
        !test_kind_may_run_pytest(configured_kind))
      if (auto identity = label_identity(label); keep_.keeps(identity))
        no_pytest_.insert(std::move(identity));
    return true;
  }

  /// Whether the test's results in the invocation read so far ran only some of its cases.
  /// `identity`: label_identity of its label.
  bool filtered(const std::string& identity) const {
    return every_test_ || (pytest_ && !no_pytest_.contains(identity));
  }

 private:
  const LabelFilter& keep_;
  bool every_test_ = false;                    ///< --test_filter, or a googletest filter in --test_arg
  bool pytest_ = false;                        ///< only pytest's -k in --test_arg
  std::unordered_set<std::string> no_pytest_;  ///< tests of kinds that cannot run pytest
};

struct Attempt {
  std::size_t test = 0;  ///< index into the labels seen
  int shard = 1;         ///< 1-based, as BEP counts
  long line = 0;
  Sample sample;
};

/// One testResult event: an attempt, nothing (cached, not run), or a problem for BadRows.
class ResultReader {
 public:
  std::optional<Attempt> attempt;
  bool cached = false;
  std::string problem;

  explicit ResultReader(bool snake_case, const TestLogReader* test_log = nullptr)
      : snake_(snake_case), test_log_(test_log) {}

  void read(simdjson::dom::object id, simdjson::dom::element event) {
    if (!read_id(id)) return;
    std::string_view label = label_;
    simdjson::dom::object result;
    if (event[test_result.in(snake_)].get(result) != simdjson::SUCCESS) return;  // aborted: no payload
    bool flag = false;
    if (result[name("cachedLocally", "cached_locally")].get(flag) == simdjson::SUCCESS && flag) {
      cached = true;
      return;
    }
    if (result.at_pointer(name("/executionInfo/cachedRemotely", "/execution_info/cached_remotely"))
                .get(flag) == simdjson::SUCCESS &&
        flag) {
      cached = true;
      return;
    }
    const std::string_view status = test_status(result["status"]);
    auto outcome = history::outcome_of(status);
    if (outcome == history::Outcome::none) return;
    Sample sample;
    sample.timed_out = outcome == history::Outcome::lower_bound;
    sample.failed = status == "FAILED";
    if (!read_duration(result, label, sample.seconds) || !read_start(result, label, sample.start_ms)) return;
    take_out_launch_wait(result, sample);
    attempt = Attempt{0, shard_, 0, sample};
  }

  /// The test and shard a testResult id names (also of an aborted or cached result, and of one
  /// a targetCompleted event announces); false, with the problem, when it names none.
  bool read_id(simdjson::dom::object id) {
    if (id["label"].get(label_) != simdjson::SUCCESS || label_.empty()) {
      fail("a testResult without a label");
      return false;
    }
    for (std::string_view field : {"run", "shard", "attempt"}) {
      simdjson::dom::element value;
      if (id[field].get(value) != simdjson::SUCCESS) continue;  // proto3 leaves out zeros
      int64_t number = 0;
      if (value.get(number) != simdjson::SUCCESS || number < 1 || number > max_shard_count) {
        fail(fmt::format("testResult {} of {} is not a positive number", field, label_));
        return false;
      }
      if (field == "shard") shard_ = static_cast<int>(number);
      if (field == "run") run_ = static_cast<int>(number);
      if (field == "attempt") attempt_ = static_cast<int>(number);
    }
    if (id.at_pointer("/configuration/id").get(configuration_) != simdjson::SUCCESS) configuration_ = {};
    return true;
  }

  std::string_view label() const { return label_; }
  int shard() const { return shard_; }
  /// The id of the configuration the test was built in; "" when the id names none.
  std::string_view configuration() const { return configuration_; }
  /// The run, shard and attempt the id names (0 where it leaves one out).
  std::tuple<int, int, int> numbers() const { return {run_, shard_, attempt_}; }

 private:
  void fail(std::string message) { problem = std::move(message); }
  std::string_view name(std::string_view camel, std::string_view snake) const {
    return snake_ ? snake : camel;
  }

  bool read_duration(simdjson::dom::object result, std::string_view label, double& seconds) {
    simdjson::dom::element value;
    // Bazel sets the Duration, which proto3 JSON writes even when zero ("0s"); only Bazel 4's
    // millis are left out at zero, and no test process runs under a millisecond. A result with
    // neither is from an export that dropped them: a 0 s run would plan the test at nothing.
    std::optional<double> parsed;
    std::string_view field = name("testAttemptDuration", "test_attempt_duration");
    if (result[field].get(value) == simdjson::SUCCESS) {
      std::string_view text;
      parsed = value.get(text) == simdjson::SUCCESS ? history::parse_proto_duration(text) : std::nullopt;
    } else if (result[name("testAttemptDurationMillis", "test_attempt_duration_millis")].get(value) ==
               simdjson::SUCCESS) {
      field = name("testAttemptDurationMillis", "test_attempt_duration_millis");
      parsed = proto_int(value);
      if (parsed) *parsed /= 1000;
    } else {
      fail(fmt::format("the result of {} has no {} (nor {}): how long it ran is not in the file", label,
                       field, name("testAttemptDurationMillis", "test_attempt_duration_millis")));
      return false;
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

  /// Bazel times an attempt from its launch of the test's --run_under: where run-under's line in
  /// the test.log the result names says the test waited for its GPUs, that wait is not the test's.
  /// A later run of the test writes over the log: a line whose launch is not within this attempt
  /// is another run's, and left alone.
  void take_out_launch_wait(simdjson::dom::object result, Sample& sample) const {
    if (!test_log_ || !*test_log_ || !sample.start_ms) return;
    simdjson::dom::array files;
    if (result[name("testActionOutput", "test_action_output")].get(files) != simdjson::SUCCESS) return;
    for (auto file : files) {
      std::string_view file_name, uri;
      if (file["name"].get(file_name) != simdjson::SUCCESS || file_name != "test.log" ||
          file["uri"].get(uri) != simdjson::SUCCESS || !uri.starts_with("file://"))
        continue;
      constexpr std::int64_t slack_ms = 1000;  // Bazel's clock reads the start before it spawns the test
      const auto end_ms = *sample.start_ms + static_cast<std::int64_t>(sample.seconds * 1000);
      const auto head = (*test_log_)(std::string(uri.substr(7)), end_ms + 2 * slack_ms);
      const auto wait = head ? find_launch_wait(*head) : std::nullopt;
      if (wait && wait->seconds <= sample.seconds && wait->launched_ms >= *sample.start_ms - slack_ms &&
          static_cast<double>(wait->launched_ms) <=
              static_cast<double>(*sample.start_ms) + sample.seconds * 1000)
        sample.seconds = std::round((sample.seconds - wait->seconds) * 1000) / 1000;
      return;
    }
  }

  bool read_start(simdjson::dom::object result, std::string_view label, std::optional<std::int64_t>& start) {
    simdjson::dom::element value;
    std::string_view field = name("testAttemptStart", "test_attempt_start");
    if (result[field].get(value) == simdjson::SUCCESS) {
      std::string_view text;
      if (value.get(text) == simdjson::SUCCESS) start = history::parse_timestamp_ms(text);
      if (!start) fail(fmt::format("{} of {} is not a timestamp: {}", field, label, simdjson::minify(value)));
      return start.has_value();
    }
    field = name("testAttemptStartMillisEpoch", "test_attempt_start_millis_epoch");
    if (result[field].get(value) == simdjson::SUCCESS) {
      auto millis = proto_int(value);
      if (millis) start = history::epoch_ms(*millis);
      if (!start)
        fail(fmt::format("{} of {} is not a time from 1970 to 9999: {}", field, label,
                         simdjson::minify(value)));
      return start.has_value();
    }
    return true;
  }

  bool snake_;
  const TestLogReader* test_log_;
  std::string_view label_;
  std::string_view configuration_;
  int run_ = 0, attempt_ = 0;
  int shard_ = 1;
};

}  // namespace

/// A result as read, to tell one an event stream repeats.
struct ResultKey {
  std::size_t test;
  int run, shard, attempt;
  std::uint32_t configuration;  ///< numbered as first seen
  double seconds;
  std::int64_t start_ms;
  bool operator==(const ResultKey&) const = default;
  struct Hash {
    std::size_t operator()(const ResultKey& k) const {
      std::size_t h = k.test;
      for (std::uint64_t part : {std::uint64_t(k.run), std::uint64_t(k.shard), std::uint64_t(k.attempt),
                                 std::uint64_t(k.configuration), std::bit_cast<std::uint64_t>(k.seconds),
                                 std::uint64_t(k.start_ms)})
        h = (h ^ part) * 0x100000001b3ULL;
      return h;
    }
  };
};

HistoryRead read_bep(std::istream& in, const std::string& name, bool strict, const LabelFilter& keep,
                     const TestLogReader& test_log) {
  history::BadRows bad(name, strict);
  simdjson::dom::parser parser;
  std::unordered_map<std::string, std::size_t> index;
  std::vector<std::string> labels;
  std::vector<Attempt> attempts;
  std::vector<bool> kept;  ///< by test: whether `keep` keeps its runs (those of the others are not held)
  /// Of a test whose runs are not kept: how many attempts it had, and the line of the first.
  std::unordered_map<std::size_t, std::pair<long, long>> dropped;
  std::unordered_map<std::size_t, int> summary_shards;
  // Per test: the highest shard any event names, and whether a testSummary or a targetCompleted
  // event said how many shards it has (the summary's shardCount, left out when 0; the
  // announcement, one testResult id per shard).
  std::unordered_map<std::size_t, int> shard_named;
  std::unordered_set<std::size_t> shards_known;
  // Per test: the configuration of its first run; the tests with a run in another one, and where
  // the first such run is.
  std::unordered_map<std::size_t, std::string> configuration_of;
  std::unordered_set<std::size_t> mixed;
  // Results already read, by test, run, shard, attempt, configuration, duration and start: a
  // Build Event Service journal that resent events holds one twice, and it was counted twice.
  // (Two builds' files put into one share ids, not durations and starts: both count.) Only of
  // the tests `keep` keeps: `history show` of one test held every other test's keys too, its
  // memory growing with the file's results (300,000: 36 MiB) where it shows a few.
  std::unordered_map<std::string, std::uint32_t> configuration_ids;
  std::unordered_set<ResultKey, ResultKey::Hash> results_seen;
  std::pair<std::string_view, std::uint32_t> last_configuration;  // the last result's, looked up once
  long repeated = 0, first_repeated_line = 0;
  std::string first_repeated_label;
  long first_other_line = 0;
  std::string first_other_label, configurations;
  HistoryRead read;
  InvocationFilter filter(keep);
  auto test_index = [&](std::string_view label) {
    auto [it, added] = index.try_emplace(label_identity(label), labels.size());
    if (added) {
      labels.push_back(it->first);
      kept.push_back(keep.keeps(it->first));
    }
    return it->second;
  };

  PaddedLines lines(in);
  std::string_view line;
  long number = 0;
  while (lines.next(line)) {
    ++number;
    // A UTF-8 byte order mark (an editor's or PowerShell's) before the first event: before, that
    // event was a bad row.
    if (number == 1 && line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);
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
      for (const char* pointer :
           {"/orderedBuildEvent/event/bazelEvent", "/event/bazelEvent", "/bazelEvent",
            "/ordered_build_event/event/bazel_event", "/event/bazel_event", "/bazel_event"})
        if (event.at_pointer(pointer).get(inner) == simdjson::SUCCESS) {
          enveloped = true;
          break;
        }
      if (!enveloped && (event["orderedBuildEvent"].error() == simdjson::SUCCESS ||
                         event["ordered_build_event"].error() == simdjson::SUCCESS ||
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
    auto name_shard = [&](const ResultReader& result) {
      std::size_t test = test_index(result.label());
      int& highest = shard_named[test];
      highest = std::max(highest, result.shard());
      return test;
    };
    // The id has one field, its kind; the kinds read here have two words, so the kind tells
    // the spelling (testResult or test_result).
    std::string_view kind;
    simdjson::dom::element kind_id;
    for (auto field : id) {
      kind = field.key;
      kind_id = field.value;
      break;
    }
    const bool snake = kind.find('_') != std::string_view::npos;
    if (filter.read(kind, kind_id, event, snake)) continue;
    simdjson::dom::object result_id;
    if (kind == test_result.in(snake) && kind_id.get(result_id) == simdjson::SUCCESS) {
      ResultReader result(snake, &test_log);
      result.read(result_id, event);
      if (!result.problem.empty()) bad.add(number, result.problem);
      if (result.cached) ++read.history.cached_results;
      if (result.label().empty()) continue;
      std::size_t test = name_shard(result);
      if (result.attempt) {
        auto [run, shard, attempt] = result.numbers();
        if (configuration_ids.empty() || result.configuration() != last_configuration.first) {
          auto it = configuration_ids
                        .try_emplace(std::string(result.configuration()),
                                     static_cast<std::uint32_t>(configuration_ids.size()))
                        .first;
          last_configuration = {it->first, it->second};  // a node's key stays where it is
        }
        auto configuration = last_configuration.second;
        ResultKey key{test,
                      run,
                      shard,
                      attempt,
                      configuration,
                      result.attempt->sample.seconds,
                      result.attempt->sample.start_ms.value_or(-1)};
        if (kept[test] && !results_seen.insert(key).second) {
          if (repeated++ == 0) first_repeated_line = number, first_repeated_label = labels[test];
          continue;
        }
        if (kept[test]) {
          result.attempt->sample.filtered = filter.filtered(labels[test]);
          result.attempt->test = test;
          result.attempt->line = number;
          attempts.push_back(*result.attempt);
        } else {
          ++dropped.try_emplace(test, 0, number).first->second.first;
        }
        auto [first, added] = configuration_of.try_emplace(test, result.configuration());
        if (!added && first->second != result.configuration() && mixed.insert(test).second &&
            mixed.size() == 1) {
          first_other_line = number;
          first_other_label = labels[test];
          configurations = fmt::format("{} and {}", first->second, result.configuration());
        }
      }
      continue;
    }
    if (kind == target_completed.in(snake)) {
      simdjson::dom::array children;
      if (event["children"].get(children) != simdjson::SUCCESS) continue;
      for (simdjson::dom::element child : children) {
        simdjson::dom::object child_id;
        ResultReader announced(snake);
        if (child[test_result.in(snake)].get(child_id) != simdjson::SUCCESS || !announced.read_id(child_id))
          continue;
        shards_known.insert(name_shard(announced));
      }
      continue;
    }
    simdjson::dom::object summary_id;
    std::string_view label;
    if (kind == test_summary.in(snake) && kind_id.get(summary_id) == simdjson::SUCCESS &&
        summary_id["label"].get(label) == simdjson::SUCCESS) {
      simdjson::dom::element summary;
      if (event[test_summary.in(snake)].get(summary) != simdjson::SUCCESS) continue;  // an aborted one
      shards_known.insert(test_index(label));
      int64_t shards = 0;
      if (summary[snake ? "shard_count" : "shardCount"].get(shards) != simdjson::SUCCESS) continue;
      if (shards < 0 || shards > max_shard_count)  // not a cast that wraps 2^32 + 2 to 2
        bad.add(number, fmt::format("testSummary shardCount {} of {} is not a shard count from 0 to {}",
                                    shards, label, max_shard_count));
      else
        summary_shards[test_index(label)] = static_cast<int>(shards);
    }
  }

  // A test is sharded when its summary says so or any event names a shard past the first: an
  // interrupted build ends with its unrun shards' results aborted and its summary too, so a
  // shard's time must not become the whole test's.
  std::vector<int> shard_count(labels.size(), 0);
  for (auto [test, highest] : shard_named) shard_count[test] = highest;
  for (auto [test, count] : summary_shards) shard_count[test] = std::max(shard_count[test], count);
  for (std::size_t test = 0; test < labels.size(); ++test)
    if (shard_count[test] > 1 && kept[test]) read.history.shard_counts[labels[test]] = shard_count[test];
  // Only shard 1 named, and nothing says the test has one: a file cut off (or filtered down to
  // its testResult events) before the summary could say it had more.
  auto unknown_shards = [&](std::size_t test) {
    return shard_count[test] <= 1 && !shards_known.contains(test);
  };
  long unknown = 0;
  struct {
    long line = 0;
    std::size_t test = 0;
  } first_unknown;
  auto note_unknown = [&](std::size_t test, long count, long line) {
    if (unknown == 0 || line < first_unknown.line) first_unknown = {line, test};
    unknown += count;
  };
  for (const auto& [test, attempts_left_out] : dropped)
    if (unknown_shards(test)) note_unknown(test, attempts_left_out.first, attempts_left_out.second);
  for (auto& attempt : attempts) {
    std::optional<int> shard;
    if (shard_count[attempt.test] > 1)
      shard = attempt.shard - 1;
    else if (unknown_shards(attempt.test))
      note_unknown(attempt.test, 1, attempt.line);
    read.history.samples[SampleKey{labels[attempt.test], shard}].push_back(attempt.sample);
  }
  read.diagnostics = bad.diagnostics();
  if (unknown > 0) {
    std::string why =
        "without a testSummary or targetCompleted event, a result of shard 1 of several cannot be told from "
        "one of the whole test (the file was cut off before the build ended, or filtered down to its "
        "testResult events)";
    const std::string& label = labels[first_unknown.test];
    if (strict) throw InputError(Position{name, first_unknown.line}, fmt::format("{}: {}", label, why));
    read.diagnostics.push_back(Diagnostic{
        Severity::warning, "", name,
        fmt::format(
            "took {} {} as the whole test's (the first: line {}, {}): {}; --strict makes this an error",
            unknown, unknown == 1 ? "result" : "results", first_unknown.line, label, why)});
  }
  if (repeated > 0)
    read.diagnostics.push_back(Diagnostic{
        Severity::note, "", name,
        fmt::format(
            "{} testResult event{} repeat{} an earlier one (the first: line {}, {}), as a Build Event "
            "Service journal that resent events holds them: each result is counted once",
            repeated, repeated == 1 ? "" : "s", repeated == 1 ? "s" : "", first_repeated_line,
            first_repeated_label)});
  if (!mixed.empty()) {
    std::string why = fmt::format(
        "ran in more than one configuration ({}, line {}): a test built for two platforms or by a "
        "transition, whose times differ, and gpuplan plans one test from all its runs",
        configurations, first_other_line);
    if (strict)
      throw InputError(Position{name, first_other_line}, fmt::format("{}: {}", first_other_label, why));
    read.diagnostics.push_back(
        Diagnostic{Severity::warning, first_other_label, name,
                   fmt::format("{} {}{}; --strict makes this an error", first_other_label, why,
                               mixed.size() > 1 ? fmt::format(" (and {} more test{} so)", mixed.size() - 1,
                                                              mixed.size() == 2 ? "" : "s")
                                                : "")});
  }
  return read;
}

BepOutcomes read_bep_outcomes(std::istream& in) {
  simdjson::dom::parser parser;
  BepOutcomes outcomes;
  const LabelFilter every_test;
  InvocationFilter filter(every_test);
  PaddedLines lines(in);
  std::string_view line;
  for (bool first = true; lines.next(line); first = false) {
    if (first && line.starts_with("\xEF\xBB\xBF")) line.remove_prefix(3);
    simdjson::dom::element event;
    simdjson::dom::object id, result;
    if (parser.parse(line.data(), line.size(), false).get(event) != simdjson::SUCCESS) continue;
    if (event["id"].get(id) == simdjson::SUCCESS)
      for (auto field : id) {  // its one field, the event's kind
        filter.read(field.key, field.value, event, false);
        break;
      }
    std::string_view label;
    if (event.at_pointer("/id/testSummary/label").get(label) == simdjson::SUCCESS) {
      outcomes.overall_status[std::string(label)] =
          test_status(event.at_pointer("/testSummary/overallStatus"));
      continue;
    }
    if (event.at_pointer("/id/testResult").get(id) != simdjson::SUCCESS ||
        event["testResult"].get(result) != simdjson::SUCCESS)
      continue;
    ResultReader reader(false);
    if (!reader.read_id(id)) continue;
    BepOutcome outcome;
    outcome.label = reader.label();
    auto [run, shard, attempt] = reader.numbers();
    outcome.run = std::max(run, 1);  // 0: proto3 left out the 1
    outcome.shard = std::max(shard, 1);
    outcome.attempt = std::max(attempt, 1);
    outcome.status = test_status(result["status"]);
    outcome.filtered = filter.filtered(label_identity(outcome.label));
    bool flag = false;
    outcome.cached =
        (result["cachedLocally"].get(flag) == simdjson::SUCCESS && flag) ||
        (result.at_pointer("/executionInfo/cachedRemotely").get(flag) == simdjson::SUCCESS && flag);
    simdjson::dom::element value;
    std::string_view text;
    if (result["testAttemptDuration"].get(text) == simdjson::SUCCESS)
      outcome.seconds = history::parse_proto_duration(text).value_or(0);
    else if (result["testAttemptDurationMillis"].get(value) == simdjson::SUCCESS)
      outcome.seconds = proto_int(value).value_or(0) / 1000;
    simdjson::dom::array files;
    if (result["testActionOutput"].get(files) == simdjson::SUCCESS)
      for (auto file : files) {
        std::string_view file_name, uri;
        if (file["name"].get(file_name) == simdjson::SUCCESS && file_name == "test.log" &&
            file["uri"].get(uri) == simdjson::SUCCESS && uri.starts_with("file://"))
          outcome.test_log = uri.substr(7);
      }
    outcomes.results.push_back(std::move(outcome));
  }
  return outcomes;
}

}  // namespace gpuplan
