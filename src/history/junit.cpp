// JUnit XML in bazel-testlogs: the test.xml Bazel generates (<testsuites><testsuite><testcase
// time=…>, whole seconds), or the richer one a test wrote itself (gtest: <testsuites time
// timestamp>; pytest: <testsuites><testsuite time timestamp>). Streamed through expat.
#include <expat.h>
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "gpuplan/error.hpp"
#include "gpuplan/history.hpp"
#include "gpuplan/limits.hpp"
#include "gpuplan/target.hpp"
#include "history/bad_rows.hpp"
#include "history/time.hpp"

namespace gpuplan {

namespace {

/// What the elements of one file say about how long the test ran.
struct Times {
  XML_Parser parser = nullptr;
  int depth = 0;
  std::optional<double> root_time;  ///< <testsuites time> or a root <testsuite time>
  double suites_time = 0;           ///< the <testsuite time>s below <testsuites>
  bool every_suite_timed = true;
  int suites = 0;
  double cases_time = 0;  ///< every <testcase time>
  int cases = 0;
  std::optional<std::int64_t> start_ms;
  bool timed_out = false;
  bool failed = false;  ///< a <failure> or <error>: a case failed, so the test exited non-zero
  bool any_testcase = false;
  int testcases = 0;
  /// The <testcase>s with a <skipped> (pytest, JUnit 5, gtest ≥ 1.11) or result="skipped" (gtest):
  /// when every one is, the run measured none of the test's work (a GPU test that found no GPU).
  int skipped_cases = 0;
  /// Of them, googletest's DISABLED_ tests, never run: status="notrun" (result="suppressed" since
  /// gtest 1.10).
  int disabled_cases = 0;
  int case_depth = 0;  ///< the depth of the <testcase> being read; 0 outside one
  bool case_skipped = false;
  bool case_disabled = false;
  bool declared_empty = false;  ///< a suite says tests="0" (rules_go's report of a binary with no tests)
  long root_line = 1;
  std::string problem;
  long problem_line = 0;

  void fail(std::string message) {
    if (!problem.empty()) return;
    problem = std::move(message);
    problem_line = static_cast<long>(XML_GetCurrentLineNumber(parser));
    XML_StopParser(parser, XML_FALSE);
  }

  static const char* attribute(const XML_Char** attributes, std::string_view name) {
    for (int i = 0; attributes[i]; i += 2)
      if (name == attributes[i]) return attributes[i + 1];
    return nullptr;
  }

  /// "1,234.5" or "12,345,678.25": digits grouped by three with commas, then a point. Without the
  /// point "1,234" may as well be a decimal comma.
  static bool grouped_by_thousands(std::string_view value) {
    size_t point = value.find('.');
    if (point == std::string_view::npos) return false;
    std::string_view whole = value.substr(0, point);
    size_t first = whole.find(',');
    if (first == std::string_view::npos || first == 0 || first > 3 || whole[0] == '0') return false;
    for (size_t i = first; i < whole.size(); i += 4)
      if (whole[i] != ',' || i + 4 > whole.size() ||
          !std::all_of(whole.begin() + static_cast<long>(i) + 1, whole.begin() + static_cast<long>(i) + 4,
                       [](char c) { return c >= '0' && c <= '9'; }))
        return false;
    return std::all_of(whole.begin(), whole.begin() + static_cast<long>(first),
                       [](char c) { return c >= '0' && c <= '9'; });
  }

  /// The element's time="…" in seconds; empty when absent or empty. A bad one is a problem.
  std::optional<double> time_of(std::string_view element, const XML_Char** attributes) {
    const char* text = attribute(attributes, "time");
    if (!text || !*text) return std::nullopt;  // rules_go's report of a test binary with no tests: time=""
    std::string_view value(text);
    auto seconds = history::parse_number(value);
    if (!seconds && grouped_by_thousands(value)) {
      // Surefire and JUnit 5 group thousands in the writer's locale: time="1,234.5"
      std::string digits;
      for (char c : value)
        if (c != ',') digits += c;
      seconds = history::parse_number(digits);
    }
    if (!seconds && value.find(',') != std::string_view::npos)
      fail(fmt::format(
          "<{} time=\"{}\">: a comma that is not between groups of three digits before a "
          "point (1,234.5): a decimal comma (12,5) or a thousands point (1.234,5) of the "
          "writer's locale cannot be told apart from the other; write the time with a decimal point",
          element, value));
    else if (!seconds)
      fail(fmt::format("<{} time=\"{}\">: not a number of seconds", element, value));
    else if (*seconds < 0)
      fail(fmt::format("<{} time=\"{}\">: a negative time", element, value));
    else if (*seconds > max_duration_s)
      fail(fmt::format("<{} time=\"{}\">: longer than a year (gpuplan's limit)", element, value));
    return problem.empty() ? seconds : std::nullopt;
  }

  void read_timestamp(std::string_view element, const XML_Char** attributes) {
    const char* text = attribute(attributes, "timestamp");
    if (!text || start_ms) return;
    start_ms = history::parse_timestamp_ms(text);
    if (!start_ms) fail(fmt::format("<{} timestamp=\"{}\">: not an ISO 8601 time", element, text));
  }

  void start(std::string_view element, const XML_Char** attributes) {
    ++depth;
    if (element == "testsuites" || element == "testsuite") {
      const char* tests = attribute(attributes, "tests");
      if (tests && std::string_view(tests) == "0") declared_empty = true;
    }
    if (depth == 1) {
      root_line = static_cast<long>(XML_GetCurrentLineNumber(parser));
      if (element != "testsuites" && element != "testsuite")
        return fail(fmt::format("not a JUnit file: the root element is <{}>, not <testsuites>", element));
      root_time = time_of(element, attributes);
      read_timestamp(element, attributes);
    } else if (element == "testsuite") {
      auto time = time_of(element, attributes);
      if (depth == 2) {
        ++suites;
        every_suite_timed = every_suite_timed && time.has_value();
        suites_time += time.value_or(0);
      }
      read_timestamp(element, attributes);
    } else if (element == "testcase") {
      any_testcase = true;
      ++testcases;
      case_depth = depth;
      const char* result = attribute(attributes, "result");
      const char* status = attribute(attributes, "status");
      case_disabled = (result && std::string_view(result) == "suppressed") ||
                      (status && std::string_view(status) == "notrun");
      case_skipped = case_disabled || (result && std::string_view(result) == "skipped");
      if (auto time = time_of(element, attributes)) {
        ++cases;
        cases_time += *time;
      }
    } else if (element == "skipped" && case_depth > 0 && depth == case_depth + 1) {
      case_skipped = true;
    } else if (element == "error" || element == "failure") {
      // Bazel's generated test.xml says "exited with error code N"; 142 is a test it killed at
      // its timeout. Any other is a failed run, as a gtest, pytest or JUnit <failure> is.
      const char* message = attribute(attributes, "message");
      if (message && std::string_view(message) == "exited with error code 142")
        timed_out = true;
      else
        failed = true;
    }
  }

  void end() {
    if (case_depth > 0 && depth == case_depth) {
      skipped_cases += case_skipped;
      disabled_cases += case_disabled;
      case_depth = 0;
    }
    --depth;
  }

  /// Every test case was skipped or disabled, and none failed.
  bool all_skipped() const { return testcases > 0 && skipped_cases == testcases && !failed && !timed_out; }

  std::optional<double> seconds() const {
    if (root_time) return root_time;
    if (suites > 0 && every_suite_timed) return suites_time;
    if (cases > 0) return cases_time;
    return std::nullopt;
  }
  /// The time is Bazel's own XML's (no time on <testsuites> or on every <testsuite>): counted from
  /// Bazel's launch of the test, a --run_under's wait included. A test's own XML times itself.
  bool timed_by_bazel() const { return !root_time && !(suites > 0 && every_suite_timed) && cases > 0; }
};

void XMLCALL on_start(void* data, const XML_Char* name, const XML_Char** attributes) {
  static_cast<Times*>(data)->start(name, attributes);
}

void XMLCALL on_end(void* data, const XML_Char*) { static_cast<Times*>(data)->end(); }

/// Why a file expat refused is not XML, where its bytes say: empty, or cut short (the error came
/// at its end), or Bazel 4's own XML of a test whose name it wrote unescaped.
std::string unreadable_why(std::size_t bytes, bool at_end, const TestLogPath& test) {
  if (bytes == 0) return " (the file is empty)";
  if (at_end)
    return " (the file ends before its root element closes: cut short, as a test's own XML is when it "
           "crashed or was timed out while writing it)";
  auto name = std::string_view(test.label).substr(test.label.find("//") + 2);
  if (name.find_first_of("&<\"") != std::string_view::npos)
    return " (Bazel 4 writes the test's name into the test.xml it makes without escaping it, and this "
           "test's name holds &, < or \")";
  return {};
}

std::string_view status_name(int status) {
  static constexpr std::string_view names[] = {
      "NO_STATUS",      "PASSED",          "FLAKY",
      "TIMEOUT",        "FAILED",          "INCOMPLETE",
      "REMOTE_FAILURE", "FAILED_TO_BUILD", "BLAZE_HALTED_BEFORE_TESTING"};
  return status >= 0 && status < static_cast<int>(std::size(names)) ? names[status] : "an unknown status";
}

/// The run Bazel's test.cache_status records, for a test.xml that cannot be read: a sample of its
/// run_duration_millis where it ended PASSED, FLAKY or FAILED, a lower bound where TIMEOUT. Else
/// (no such file, another file, a status that measured nothing, no time, a time longer than a
/// year) why it gives none.
struct CacheStatusRun {
  std::optional<Sample> sample;
  std::string name;  ///< the file's
  std::string said;  ///< what it says of the run, or why it gives none
};

CacheStatusRun run_from_cache_status(const BazelCacheStatusReader& read) {
  CacheStatusRun run;
  auto file = read ? read() : std::nullopt;
  if (!file) {
    run.said = "no test.cache_status beside it to read the run from";
    return run;
  }
  run.name = file->name;
  auto status = read_bazel_cache_status(file->bytes);
  if (!status) {
    run.said = fmt::format("{} beside it is not the message Bazel writes there", file->name);
    return run;
  }
  const bool ended = status->status == BazelCacheStatus::passed ||
                     status->status == BazelCacheStatus::flaky || status->status == BazelCacheStatus::failed;
  if (!ended && status->status != BazelCacheStatus::timeout) {
    run.said = fmt::format("{} beside it says {}, a run that measured nothing", file->name,
                           status_name(status->status));
    return run;
  }
  if (!status->run_duration_ms) {
    run.said = fmt::format("{} beside it says {} with no run_duration_millis", file->name,
                           status_name(status->status));
    return run;
  }
  if (static_cast<double>(*status->run_duration_ms) / 1000 > max_duration_s) {
    run.said = fmt::format(
        "{} beside it says {} after {} ms (run_duration_millis), longer than a year "
        "(gpuplan's limit)",
        file->name, status_name(status->status), *status->run_duration_ms);
    return run;
  }
  Sample sample;
  sample.seconds = static_cast<double>(*status->run_duration_ms) / 1000;
  sample.timed_out = status->status == BazelCacheStatus::timeout;
  sample.failed = status->status == BazelCacheStatus::failed;
  sample.timed_by_bazel = true;
  run.said = fmt::format("{} after {:.3f}s{}", status_name(status->status), sample.seconds,
                         sample.timed_out ? " (a timeout: at least that long)" : "");
  run.sample = sample;
  return run;
}

}  // namespace

HistoryRead read_junit(std::istream& in, const std::string& name, const TestLogPath& test, bool strict,
                       const LabelFilter& keep, const BazelCacheStatusReader& cache_status) {
  history::BadRows bad(name, strict);
  std::unique_ptr<XML_ParserStruct, decltype(&XML_ParserFree)> parser(XML_ParserCreate("UTF-8"),
                                                                      XML_ParserFree);
  if (!parser) throw std::bad_alloc();
  Times times;
  times.parser = parser.get();
  XML_SetUserData(parser.get(), &times);
  XML_SetElementHandler(parser.get(), on_start, on_end);

  HistoryRead read;
  auto run = [&test] {
    return test.shard ? fmt::format("{} shard {} of {}", test.label, *test.shard, test.shard_count)
                      : test.label;
  };
  char buffer[1 << 16];
  std::size_t bytes = 0;
  bool done = false;
  while (!done) {
    in.read(buffer, sizeof buffer);
    auto count = in.gcount();
    bytes += static_cast<std::size_t>(count);
    done = count == 0;
    if (XML_Parse(parser.get(), buffer, static_cast<int>(count), done) == XML_STATUS_ERROR) {
      if (!times.problem.empty()) {
        bad.add(times.problem_line, times.problem);
        read.diagnostics = bad.diagnostics();
        return read;
      }
      const long line = static_cast<long>(XML_GetCurrentLineNumber(parser.get()));
      const std::string what =
          fmt::format("not well-formed JUnit XML: {}{}", XML_ErrorString(XML_GetErrorCode(parser.get())),
                      unreadable_why(bytes, done, test));
      if (test.attempt > 0) {
        bad.add(line,
                what + "; Bazel keeps no test.cache_status beside an attempt's XML to read the run from");
        read.diagnostics = bad.diagnostics();
        return read;
      }
      // Bazel's own record of the run, a message beside the final test.xml, says how it ended and
      // how long it took: no guess, so a note, and no error under --strict.
      auto from_status = run_from_cache_status(cache_status);
      if (!from_status.sample) {
        bad.add(line, fmt::format("{}; {}", what, from_status.said));
        read.diagnostics = bad.diagnostics();
        return read;
      }
      if (std::string label = label_identity(test.label); keep.keeps(label)) {
        if (test.shard) read.history.shard_counts[label] = test.shard_count;
        read.history.samples[SampleKey{label, test.shard}].push_back(*from_status.sample);
        read.diagnostics.push_back(Diagnostic{
            Severity::note, "", name,
            fmt::format("{}: line {}: {}: its run is read from {} instead, where Bazel recorded it: {}",
                        run(), line, what, from_status.name, from_status.said)});
      }
      return read;
    }
  }
  auto seconds = times.seconds();
  if (!seconds && times.declared_empty && !times.any_testcase) {
    // Zero tests ran: nothing to learn, and nothing wrong.
  } else if (!seconds) {
    bad.add(times.root_line, "no time=\"…\" on <testsuites>, <testsuite> or <testcase>");
  } else if (std::string label = label_identity(test.label); !keep.keeps(label)) {
    // Another test's run: `history show` holds only the one it shows.
  } else if (times.all_skipped()) {
    const int skipped = times.skipped_cases - times.disabled_cases;
    std::string why = fmt::format(
        "every test case in it was {}, so its {}s measured none of the test's work",
        times.disabled_cases == 0
            ? fmt::format("skipped ({} of {}: pytest's skip, GTEST_SKIP; a GPU test that finds no GPU skips "
                          "itself)",
                          skipped, times.testcases)
        : skipped == 0 ? fmt::format("disabled ({} of {}: googletest does not run DISABLED_ tests)",
                                     times.disabled_cases, times.testcases)
                       : fmt::format("skipped or disabled ({} skipped and {} disabled of {}: GTEST_SKIP, "
                                     "googletest's DISABLED_ tests)",
                                     skipped, times.disabled_cases, times.testcases),
        *seconds);
    if (strict) throw InputError(Position{name, times.root_line}, fmt::format("{}: {}", run(), why));
    ++read.history.skipped_runs;
    read.diagnostics.push_back(
        Diagnostic{Severity::warning, "", name,
                   fmt::format("{}: {}: the run is left out; --strict makes this an error", run(), why)});
    return read;
  } else {
    if (test.shard) read.history.shard_counts[label] = test.shard_count;
    Sample sample{*seconds, times.timed_out, std::nullopt, times.start_ms, std::nullopt, {}};
    sample.failed = times.failed && !times.timed_out;
    sample.timed_by_bazel = times.timed_by_bazel();
    read.history.samples[SampleKey{label, test.shard}].push_back(sample);
  }
  read.diagnostics = bad.diagnostics();
  return read;
}

}  // namespace gpuplan
