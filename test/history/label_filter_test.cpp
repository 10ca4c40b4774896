// `history show` reads one test's runs (LabelFilter): the readers check every row and hold only
// that test's, and say of bad input what they say without a filter.
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <streambuf>

#include "gpuplan/error.hpp"
#include "history/fixtures.hpp"

using namespace gpuplan;
using gpuplan::test::history_fixture;

// clang's AddressSanitizer (gcc's defines __SANITIZE_ADDRESS__).
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define GPUPLAN_TEST_ASAN
#endif
#endif
namespace {

/// Of a history, one test's runs and shard count.
History only(const History& all, const std::string& label) {
  History one;
  for (const auto& [key, samples] : all.samples)
    if (key.label == label) one.samples[key] = samples;
  if (auto count = all.shard_counts.find(label); count != all.shard_counts.end())
    one.shard_counts[label] = count->second;
  return one;
}

std::string messages(const Diagnostics& diagnostics) {
  std::string text;
  for (const auto& d : diagnostics) text += d.message + "\n";
  return text;
}

/// A stream handing out a few bytes at a time, as a pipe may.
class Trickle : public std::streambuf {
 public:
  explicit Trickle(std::string text) : text_(std::move(text)) {}

 protected:
  int_type underflow() override {
    if (at_ >= text_.size()) return traits_type::eof();
    const std::size_t n = std::min<std::size_t>(1 + at_ % 7, text_.size() - at_);
    setg(text_.data() + at_, text_.data() + at_, text_.data() + at_ + n);
    at_ += n;
    return traits_type::to_int_type(*gptr());
  }

 private:
  std::string text_;
  std::size_t at_ = 0;
};

/// A BEP file of `events` testResult events, made as it is read: 100 tests' results, each its own
/// (no event repeats), and one of //a:b at the end.
class GeneratedBep : public std::streambuf {
 public:
  explicit GeneratedBep(long events) : events_(events) {}

 protected:
  int_type underflow() override {
    if (next_ > events_) return traits_type::eof();
    const std::string label = next_ == events_ ? "//a:b" : fmt::format("//c:d{}", next_ % 100);
    line_ = fmt::format(R"({{"id":{{"testResult":{{"label":"{}","run":{},"shard":1,"attempt":1}}}},)"
                        R"("testResult":{{"status":"PASSED","testAttemptDurationMillis":"{}"}}}})"
                        "\n",
                        label, 1 + next_ / 100, 1000 + next_ % 997);
    ++next_;
    setg(line_.data(), line_.data(), line_.data() + line_.size());
    return traits_type::to_int_type(*gptr());
  }

 private:
  long events_, next_ = 0;
  std::string line_;
};

/// A field of this process's /proc/self/status in KiB ("VmRSS", "VmHWM": its peak).
long status_kib(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.starts_with(field + ":")) return std::stol(line.substr(field.size() + 1));
  return 0;
}

HistoryRead read_table_as(const std::string& text, bool strict, const LabelFilter& keep = {}) {
  std::istringstream in(text);
  return read_table(in, "history.csv", strict, keep);
}

/// Read with and without a filter: the filtered history is the whole one's runs of that test,
/// and the diagnostics are the same.
void same_as_unfiltered(const std::string& text, const std::string& label) {
  auto all = read_table_as(text, false);
  auto one = read_table_as(text, false, LabelFilter{label});
  REQUIRE_FALSE(one.history.samples.empty());
  REQUIRE(one.history.samples == only(all.history, label).samples);
  REQUIRE(one.history.shard_counts == only(all.history, label).shard_counts);
  REQUIRE(messages(one.diagnostics) == messages(all.diagnostics));
}

}  // namespace

TEST_CASE("a label filter keeps one test's rows of a CSV and still finds another test's bad row") {
  const std::string csv =
      "label,shard,seconds,peak_vram_mib,start,shard_count\n"
      "//a:b,,12,1000,2026-11-01T10:00:00Z,\n"
      "//c:d,0,30,,2026-11-01T10:00:00Z,4\n"
      "//c:d,1,seconds?,,2026-11-01T10:00:00Z,4\n"  // line 4: bad, of another test
      "@//a:b,,14,1100,2026-11-02T10:00:00Z,\n"
      "//a:b,1,7,,2026-11-03T10:00:00Z,2\n"
      "//a:b,0,6,,2026-11-03T10:00:00Z,2\n";
  same_as_unfiltered(csv, "//a:b");
  auto one = read_table_as(csv, false, LabelFilter{"//a:b"});
  REQUIRE(one.history.samples.size() == 3);  // its runs whole and of its two shards
  REQUIRE(one.history.shard_counts.at("//a:b") == 2);
  REQUIRE_FALSE(one.history.shard_counts.contains("//c:d"));
  REQUIRE_THAT(messages(one.diagnostics), Catch::Contains("history.csv:4: //c:d: seconds \"seconds?\""));
  // Under --strict another test's bad row is an error, as it was: the file is bad.
  REQUIRE_THROWS_WITH(read_table_as(csv, true, LabelFilter{"//a:b"}),
                      Catch::StartsWith("history.csv:4: //c:d: seconds"));
  // Nothing of a test the file has no rows of, and the same warning.
  auto none = read_table_as(csv, false, LabelFilter{"//x:y"});
  REQUIRE(none.history.samples.empty());
  REQUIRE(messages(none.diagnostics) == messages(read_table_as(csv, false).diagnostics));
}

TEST_CASE("a label filter keeps one test's rows of JSON lines, a JSON array and a summarize file") {
  same_as_unfiltered(
      "{\"label\":\"//a:b\",\"seconds\":3}\n{\"label\":\"//c:d\",\"seconds\":\"x\"}\n"
      "{\"label\":\"//a:b\",\"seconds\":4,\"peak_vram_mib\":900}\n",
      "//a:b");
  same_as_unfiltered(R"([{"label":"//c:d","seconds":1},{"label":"//a:b","seconds":2},{"label":"//a:b"}])",
                     "//a:b");
  same_as_unfiltered(
      R"({"gpuplan_history":1,"units":[{"label":"//c:d","seconds":[1,2]},{"label":"//a:b","shard":1,)"
      R"("shard_count":2,"seconds":[5,6]},{"label":"//c:d","seconds":[1],"failed":[true,false]}]})",
      "//a:b");
}

TEST_CASE("a CSV is read as a stream: a few bytes at a time it reads as it does whole") {
  // A byte order mark, a quoted field across lines, a bad row: every line number the same.
  const std::string csv =
      "\xEF\xBB\xBFlabel,seconds,node\n//a:b,12,\"x\ny\"\n//a:b,nope,\n\n//c:d,3,\"a,\"\"b\"\n";
  auto whole = read_table_as(csv, false);
  Trickle trickle(csv);
  std::istream in(&trickle);
  auto streamed = read_table(in, "history.csv", false);
  REQUIRE(streamed.history.samples == whole.history.samples);
  REQUIRE(whole.history.samples.at({"//c:d", std::nullopt}).at(0).node.str() == "a,\"b");
  REQUIRE(messages(streamed.diagnostics) == messages(whole.diagnostics));
  REQUIRE_THAT(messages(whole.diagnostics), Catch::Contains("history.csv:4: //a:b: seconds \"nope\""));
  // JSON lines whose first object starts only after more space than one read holds.
  std::string lines(100000, ' ');
  lines += "{\"label\":\"//a:b\",\"seconds\":3}\n";
  Trickle spaced(lines);
  std::istream spaced_in(&spaced);
  REQUIRE(read_table(spaced_in, "h.json", true).history.samples.at({"//a:b", std::nullopt}).size() == 1);
}

TEST_CASE("a label filter keeps one test's BEP results and warns of the others' as before") {
  std::ifstream in(history_fixture("bep_run.json"));
  auto all = read_bep(in, "bep_run.json", true);
  REQUIRE(all.history.samples.size() > 1);
  for (const auto& [key, samples] : all.history.samples) {
    std::ifstream again(history_fixture("bep_run.json"));
    auto one = read_bep(again, "bep_run.json", true, LabelFilter{key.label});
    REQUIRE(one.history.samples == only(all.history, key.label).samples);
    REQUIRE(one.history.shard_counts == only(all.history, key.label).shard_counts);
  }
  // Results of two tests with no summary: the warning counts both, and names the first, kept or not.
  auto result = [](const std::string& label, const std::string& millis) {
    return R"({"id":{"testResult":{"label":")" + label +
           R"(","run":1,"shard":1,"attempt":1}},"testResult":{"status":"PASSED","testAttemptDurationMillis":")" +
           millis + "\"}}\n";
  };
  const std::string cut_short = result("//c:d", "1000") + result("//a:b", "2000") + result("//c:d", "3000");
  std::istringstream whole_in(cut_short), one_in(cut_short);
  auto whole = read_bep(whole_in, "bep.json", false);
  auto one = read_bep(one_in, "bep.json", false, LabelFilter{"//a:b"});
  REQUIRE(one.history.samples == only(whole.history, "//a:b").samples);
  REQUIRE(messages(one.diagnostics) == messages(whole.diagnostics));
  REQUIRE_THAT(messages(one.diagnostics), Catch::StartsWith("took 3 results as the whole test's (the first: "
                                                            "line 1, //c:d)"));
  std::istringstream strict_in(cut_short);
  REQUIRE_THROWS_WITH(read_bep(strict_in, "bep.json", true, LabelFilter{"//a:b"}),
                      Catch::StartsWith("bep.json:1: //c:d: without a testSummary"));
}

TEST_CASE("history show's memory does not grow with the other tests' BEP results") {
  // In a child process of its own, its peak RSS reset to what it holds now (a forked child starts
  // with its parent's peak): how far the read grew it. 300,000 results of other tests held a key
  // each, 20 MiB and more. Under AddressSanitizer (the test command's build) freed memory waits in
  // its quarantine (up to 256 MiB) and every block has redzones, so peak RSS says nothing of what
  // is held: the check runs in the release build (`ctest` in build/).
#if defined(__SANITIZE_ADDRESS__) || defined(GPUPLAN_TEST_ASAN)
  WARN("not measured under AddressSanitizer: its quarantine keeps freed memory resident");
  return;
#endif
  std::fflush(stdout);
  const pid_t child = ::fork();
  if (child == 0) {
    std::ofstream("/proc/self/clear_refs") << "5";  // resets VmHWM (Linux 4.0)
    const long before = status_kib("VmRSS");
    GeneratedBep bep(300'000);
    std::istream in(&bep);
    auto one = read_bep(in, "bep.json", false, LabelFilter{"//a:b"});
    const long grew_kib = status_kib("VmHWM") - before;
    std::fprintf(stderr, "history show of one test of 300,000 BEP results: peak RSS grew %ld KiB\n",
                 grew_kib);
    ::_exit(one.history.sample_count() == 1 && grew_kib < 8 * 1024 ? 0 : 1);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
}

TEST_CASE("a label filter tells another test's resent BEP results apart no more") {
  // The price of the memory above: with a filter, a result of another test sent twice counts twice
  // in the warning of results taken for the whole test's (it is not held either way).
  auto result = [](const std::string& label) {
    return R"({"id":{"testResult":{"label":")" + label +
           R"(","run":1,"shard":1,"attempt":1}},"testResult":{"status":"PASSED","testAttemptDurationMillis":"1000"}}
)";
  };
  const std::string resent = result("//c:d") + result("//c:d") + result("//a:b") + result("//a:b");
  std::istringstream whole_in(resent), one_in(resent);
  auto whole = read_bep(whole_in, "bep.json", false);
  auto one = read_bep(one_in, "bep.json", false, LabelFilter{"//a:b"});
  REQUIRE(one.history.samples == only(whole.history, "//a:b").samples);
  REQUIRE_THAT(messages(whole.diagnostics), Catch::Contains("took 2 results as the whole test's"));
  REQUIRE_THAT(messages(one.diagnostics), Catch::Contains("took 3 results as the whole test's"));
  REQUIRE_THAT(messages(whole.diagnostics), Catch::Contains("2 testResult events repeat an earlier one"));
  REQUIRE_THAT(messages(one.diagnostics),
               Catch::Contains("1 testResult event repeats an earlier one (the first: "
                               "line 4, //a:b)"));
}

TEST_CASE("a label filter leaves out another test's test.xml and still finds it bad") {
  const TestLogPath path{"//c:d", std::nullopt, 1, 0};
  std::istringstream good(R"(<testsuites time="5"><testsuite time="5"/></testsuites>)");
  REQUIRE(read_junit(good, "test.xml", path, true, LabelFilter{"//a:b"}).history.samples.empty());
  std::istringstream bad("<testsuites time=\"5\">");
  REQUIRE_THROWS_WITH(read_junit(bad, "test.xml", path, true, LabelFilter{"//a:b"}),
                      Catch::StartsWith("test.xml:1: not well-formed JUnit XML"));
}
