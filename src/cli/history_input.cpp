#include "cli/history_input.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <streambuf>
#include <tuple>

#include "cli/io.hpp"
#include "cli/query_input.hpp"
#include "core/utf8.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/limits.hpp"
#include "gpuplan/size.hpp"
#include "run/os.hpp"
#include "util/head_then_rest.hpp"
#include "util/text.hpp"

namespace gpuplan::cli {

namespace fs = std::filesystem;

namespace {

bool is_testlogs(const fs::path& component) {
  return component == "testlogs" || component == "bazel-testlogs";
}

/// The part of `path` below its last bazel-testlogs (or bazel-out/…/testlogs) folder, as
/// written (below its first with `first`: a path inside such a folder, whose packages may be
/// named testlogs too); empty when it names none.
std::optional<fs::path> lexically_below_testlogs(const fs::path& path, bool first = false) {
  std::optional<fs::path> below;
  for (const auto& component : path) {
    if (is_testlogs(component) && !(first && below))
      below = fs::path();
    else if (below && !component.empty() && component != ".")
      *below /= component;
  }
  return below;
}

/// The same, as given or once symlinks are resolved.
std::optional<fs::path> below_testlogs(const fs::path& path) {
  if (auto below = lexically_below_testlogs(path)) return below;
  std::error_code ignored;
  return lexically_below_testlogs(fs::weakly_canonical(path, ignored));
}

void add(History& history, Diagnostics& diagnostics, HistoryRead read) {
  history.merge(std::move(read.history));
  diagnostics.insert(diagnostics.end(), read.diagnostics.begin(), read.diagnostics.end());
}

/// The configuration whose testlogs folder holds `path` ("k8-opt" for
/// bazel-out/k8-opt/testlogs/...); empty under bazel-testlogs, a link to one of them.
std::string configuration_of(const fs::path& path) {
  std::string configuration;
  fs::path before, twice_before;
  for (const auto& component : path) {
    if (component == "testlogs" && twice_before == "bazel-out") configuration = before.string();
    twice_before = std::move(before);
    before = component;
  }
  return configuration;
}

/// label, shard, attempt, file, what its path says, its path below its testlogs folder
using TestLogFile = std::tuple<std::string, int, int, std::string, TestLogPath, std::string>;

/// Bazel leaves a test's shard_N_of_M folders of an older shard_count beside today's: of a test
/// with files of several counts, keeps those of its count now (`shards_now`, by label identity,
/// from the query) and names the others in a note. Nothing in the files says which is newer
/// (their modification times are a CI artifact copy's), so without the query's count it keeps
/// the most shards' and warns (an error under `strict`). Before, the folders were read in name
/// order and the last count read won: stale shard_N_of_4 beside today's shard_N_of_2.
void keep_one_shard_count(const std::string& directory, bool strict,
                          const std::map<std::string, int>& shards_now, std::vector<TestLogFile>& files,
                          Diagnostics& diagnostics) {
  std::map<std::string, std::map<int, long>> counts;  ///< label → shard count → files
  for (const auto& file : files)
    if (std::get<4>(file).shard) ++counts[std::get<0>(file)][std::get<4>(file).shard_count];
  std::map<std::string, int> kept;
  for (const auto& [label, by_count] : counts) {
    if (by_count.size() < 2) continue;
    auto now = shards_now.find(label_identity(label));
    const bool known = now != shards_now.end() && by_count.contains(now->second);
    const int keep = known ? now->second : by_count.rbegin()->first;
    kept[label] = keep;
    std::vector<std::string> folders, stale;
    long left_out = 0;
    for (const auto& [count, number] : by_count) {
      folders.push_back(fmt::format("shard_N_of_{}", count));
      if (count == keep) continue;
      stale.push_back(folders.back());
      left_out += number;
    }
    const std::string what = fmt::format(
        "{} holds runs of it in {} folders (Bazel leaves a test's old ones behind when its shard_count "
        "changes)",
        directory, fmt::join(folders, " and "));
    if (known) {
      diagnostics.push_back(
          Diagnostic{Severity::note, canonical_label(label), "--history",
                     fmt::format("{}: read those of its {} shards now; {} file{} of {} left out", what, keep,
                                 left_out, util::plural(left_out), fmt::join(stale, ", "))});
      continue;
    }
    const std::string message = fmt::format(
        "{}, and nothing in them says which are newer (a copy's file times do not): read those of {} shards, "
        "{} "
        "file{} of {} left out. Given the query or a plan (plan, explain, audit, classify, history suggest, "
        "simulate), gpuplan takes its count instead; or delete the stale folders",
        what, keep, left_out, util::plural(left_out), fmt::join(stale, ", "));
    if (strict) throw InputError(Position{canonical_label(label)}, message + " (--strict)");
    diagnostics.push_back(Diagnostic{Severity::warning, canonical_label(label), "--history", message});
  }
  if (kept.empty()) return;
  std::erase_if(files, [&](const TestLogFile& file) {
    auto keep = kept.find(std::get<0>(file));
    return keep != kept.end() && std::get<4>(file).shard && std::get<4>(file).shard_count != keep->second;
  });
}

/// Whether `path` is a regular file this process may read, found without waiting: opening a FIFO
/// for reading waits for a writer that may never come.
bool is_readable_file(const fs::path& path) {
  auto opened = os::open_regular(path.string(), O_RDONLY);
  if (opened) ::close(*opened);
  return static_cast<bool>(opened);
}

/// Whether the test.log beside a test.xml (attempt_N.log beside attempt_N.xml) says googletest
/// ran under a filter: the "Note: Google Test filter = PATTERNS" it prints first when its filter
/// is not `*` (--gtest_filter, GTEST_FILTER, Bazel's --test_filter), or pytest's "collected N items
/// / M deselected" (-k, -m), among the log's first 16 KiB. test.xml does not say: its time was
/// read as the whole test's.
bool log_says_filtered(const fs::path& xml) {
  auto log = xml;
  log.replace_extension(".log");
  if (!is_readable_file(log)) return false;
  std::ifstream in(log, std::ios::binary);
  if (!in) return false;
  std::string head(16384, '\0');
  in.read(head.data(), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<std::size_t>(in.gcount()));
  constexpr std::string_view note = "Note: Google Test filter = ";
  for (auto at = head.find(note); at != std::string::npos; at = head.find(note, at + 1)) {
    const auto from = at + note.size();
    const auto filter = std::string_view(head).substr(from, head.find_first_of("\r\n", from) - from);
    if (!filter.empty() && filter != "*") return true;
  }
  constexpr std::string_view collected = "collected ";
  for (auto at = head.find(collected); at != std::string::npos; at = head.find(collected, at + 1)) {
    const auto line = std::string_view(head).substr(at, head.find_first_of("\r\n", at) - at);
    if ((at == 0 || head[at - 1] == '\n') && line.find(" deselected") != std::string_view::npos) return true;
  }
  return false;
}

/// Reads the test.cache_status beside a final test.xml (attempts have none), when asked: read_junit
/// asks where the XML cannot be read, apply_cache_status for every run read from a test.xml.
BazelCacheStatusReader cache_status_beside(const fs::path& xml) {
  if (xml.filename() != "test.xml") return {};
  return [path = xml.parent_path() / "test.cache_status"]() -> std::optional<BazelCacheStatusFile> {
    if (!is_readable_file(path)) return std::nullopt;
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    return BazelCacheStatusFile{path.string(),
                                {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()}};
  };
}

/// Where Bazel's test.cache_status beside a final test.xml (attempts have none) says the run
/// failed or timed out and test.xml says it passed (a test that crashed or hung at exit after
/// writing it: CUDA or NCCL teardown), `sample` as Bazel saw it, with a note saying so. A timeout
/// is a lower bound of the time Bazel gave it, which its test.xml's falls short of (a time longer
/// than a year, gpuplan's limit, is not taken: the test.xml alone decides, with a note).
void apply_cache_status(Sample& sample, const std::string& label, const fs::path& xml,
                        Diagnostics& diagnostics) {
  if (xml.filename() != "test.xml" || sample.timed_out) return;
  const auto file = cache_status_beside(xml)();
  if (!file) return;
  const auto& path = file->name;
  const auto status = read_bazel_cache_status(file->bytes);
  auto note = [&](std::string message) {
    diagnostics.push_back(Diagnostic{Severity::note, label, path, std::move(message)});
  };
  if (!status)
    return note(
        fmt::format("{}: not the status Bazel writes beside a test.xml (a protocol buffer "
                    "message); the run is read from its test.xml alone",
                    path));
  if (status->status == BazelCacheStatus::timeout) {
    const double seconds = static_cast<double>(status->run_duration_ms.value_or(0)) / 1000;
    if (seconds > max_duration_s)
      return note(
          fmt::format("{}: Bazel timed the run out after {} ms (run_duration_millis), longer than a "
                      "year (gpuplan's limit); the run is read from its test.xml alone",
                      path, *status->run_duration_ms));
    note(
        fmt::format("{}: Bazel timed the run out after {:.3f}s, after its test.xml said it passed in {}s "
                    "(the test hung after writing it): a timeout of at least {:.3f}s",
                    path, seconds, sample.seconds, std::max(seconds, sample.seconds)));
    sample.timed_out = true;
    sample.failed = false;
    sample.timed_by_bazel = sample.timed_by_bazel || seconds >= sample.seconds;
    sample.seconds = std::max(seconds, sample.seconds);
  } else if (status->status == BazelCacheStatus::failed && !sample.failed) {
    note(
        fmt::format("{}: Bazel failed the run, whose test.xml says it passed (the test exited with an error "
                    "after writing it, as a crash at exit does): a failed run",
                    path));
    sample.failed = true;
  }
}

/// The first `launch_wait_log_head` bytes of a test.log, where it is a regular file last written
/// at or before `written_by_ms` (ms since 1970) when that is given; nullopt where not, or where
/// this process cannot read it. One stat, and no open, for a log a later run wrote: a build
/// event file of many builds names each log many times. Never waits on a FIFO.
std::optional<std::string> test_log_head(const std::string& log,
                                         std::optional<std::int64_t> written_by_ms = {}) {
  struct stat info {};
  if (::stat(log.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return std::nullopt;
  const std::int64_t written_ms =
      static_cast<std::int64_t>(info.st_mtim.tv_sec) * 1000 + info.st_mtim.tv_nsec / 1'000'000;
  if (written_by_ms && written_ms > *written_by_ms) return std::nullopt;
  auto fd = os::open_regular(log, O_RDONLY);
  if (!fd) return std::nullopt;
  std::string head(launch_wait_log_head, '\0');
  std::size_t total = 0;
  while (total < head.size()) {
    const auto got = ::read(*fd, head.data() + total, head.size() - total);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    total += static_cast<std::size_t>(got);
  }
  ::close(*fd);
  head.resize(total);
  return head;
}

/// `read`'s runs, of one test.xml, marked filtered where its test.log says so, failed or timed
/// out where its test.cache_status says so, and, where their time is Bazel's, without the wait for
/// GPUs that run-under's line in the test.log names (Bazel's clock starts at its launch).
HistoryRead with_bazel_logs(HistoryRead read, const fs::path& xml) {
  const bool filtered = log_says_filtered(xml);
  bool log_read = false;  ///< the test.log is read once, where a run needs it
  std::optional<LaunchWait> wait;
  for (auto& [key, samples] : read.history.samples)
    for (auto& sample : samples) {
      sample.filtered = sample.filtered || filtered;
      apply_cache_status(sample, canonical_label(key.label), xml, read.diagnostics);
      if (!sample.timed_by_bazel) continue;
      if (!log_read) {
        log_read = true;
        auto log = xml;
        log.replace_extension(".log");
        if (auto head = test_log_head(log.string())) wait = find_launch_wait(*head);
      }
      if (wait) sample.seconds = std::max(0.0, std::round((sample.seconds - wait->seconds) * 1000) / 1000);
    }
  return read;
}

/// Every test.xml below a bazel-testlogs directory, each attempt before the test's final one.
void read_testlogs(const std::string& directory, bool strict, const std::map<std::string, int>& shards_now,
                   const LabelFilter& keep, History& history, Diagnostics& diagnostics) {
  // A directory at or below bazel-testlogs: paths below it continue the path below that. One
  // above it (an artifacts folder holding bazel-testlogs/ or bazel-out/*/testlogs/ as folders):
  // each file's path below its own testlogs folder (before, "//bazel-testlogs/pkg:test", a test
  // of no query, and its runs went unused without a word).
  const auto prefix = below_testlogs(directory);
  std::vector<TestLogFile> files;
  std::map<std::string, int> at_path;  ///< how many files are at each path below a testlogs folder
  std::set<std::string>
      others;  ///< files that are no test's test.xml: the first few by name, for the warning
  long other_count = 0;
  std::error_code error;
  for (auto it =
           fs::recursive_directory_iterator(directory, fs::directory_options::skip_permission_denied, error);
       !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    // A test's XML that is no regular file (a link to nothing, a FIFO) is kept: reading it says why.
    std::error_code kind;  // a link to nothing has none, and is no reason to stop
    const bool regular = it->is_regular_file(kind);
    if (!regular && it->is_directory(kind)) continue;
    const auto inside = it->path().lexically_relative(directory);
    auto relative = (prefix ? *prefix / inside : lexically_below_testlogs(inside, true).value_or(inside))
                        .generic_string();
    auto test = it->path().extension() == ".xml" ? parse_testlog_path(relative) : std::nullopt;
    if (!test && !regular) continue;
    if (!test) {  // no test's test.xml
      ++other_count;
      others.insert(it->path().lexically_relative(directory).generic_string());
      if (others.size() > 4) others.erase(std::prev(others.end()));
      continue;
    }
    int order = test->attempt == 0 ? INT_MAX : test->attempt;
    ++at_path[relative];
    files.emplace_back(test->label, test->shard.value_or(-1), order, it->path().string(), *test,
                       std::move(relative));
  }
  if (error)
    throw InputError(Position{directory}, fmt::format("cannot read the directory: {}", error.message()));
  // A directory of BEP files or results CSVs: read as bazel-testlogs, it gave no run, silently.
  if (files.empty())
    diagnostics.push_back(Diagnostic{
        Severity::warning,
        {},
        {},
        others.empty()
            ? fmt::format("{}: no test.xml below it, and no other file: no runs read from it", directory)
            : fmt::format(
                  "{}: no test.xml below it (a directory is read as bazel-testlogs), and no runs read "
                  "from it; it holds {}{}: give such files by name to read them",
                  directory, fmt::join(others, ", "),
                  other_count > static_cast<long>(others.size()) ? ", ..." : "")});
  std::sort(files.begin(), files.end(), [](const auto& a, const auto& b) {
    return std::tie(std::get<0>(a), std::get<1>(a), std::get<2>(a), std::get<3>(a)) <
           std::tie(std::get<0>(b), std::get<1>(b), std::get<2>(b), std::get<3>(b));
  });
  keep_one_shard_count(directory, strict, shards_now, files, diagnostics);
  // An artifacts folder holding bazel-testlogs/ and bazel-out/*/testlogs/ both as folders has
  // each test.xml twice, at one path below its testlogs folder, with the same bytes
  // (bazel-testlogs is a link to one of them, copied): read once (before, every run counted
  // twice). Other bytes there are another run; other paths (run_2_of_3/) always are.
  long copies = 0;
  std::map<std::string, std::vector<std::string>> texts_at;     ///< of files at a path held more than once
  std::map<std::string, std::set<std::string>> configurations;  ///< label → those its runs read are of
  for (const auto& [label, shard, order, path, test, relative] : files) {
    // One file that cannot be read (no permission, a link to nothing, a FIFO, which open_input
    // would wait on) is one run lost, as a bad row is: not the whole folder's (before, exit 2 for a
    // file without permission; a link to nothing or a FIFO left out without a word).
    if (auto opened = os::open_regular(path, O_RDONLY); opened) {
      ::close(*opened);
    } else {
      const std::string run =
          test.shard ? fmt::format("{} shard {} of {}", test.label, *test.shard, test.shard_count)
                     : test.label;
      std::string why = opened.problem();
      if (std::error_code ignored; fs::is_symlink(path, ignored) && !fs::exists(path, ignored))
        why += " (a symbolic link to nothing)";
      if (strict)
        throw InputError(Position{escape_invalid_utf8(path)},
                         fmt::format("{}: cannot read: {} (--strict)", run, why));
      diagnostics.push_back(Diagnostic{
          Severity::warning, "", escape_invalid_utf8(path),
          fmt::format("{}: cannot read: {}: the run is left out; --strict makes this an error", run, why)});
      continue;
    }
    Input input = open_input(path);
    if (auto configuration = configuration_of(path); !configuration.empty())
      configurations[label].insert(std::move(configuration));
    if (at_path[relative] < 2) {
      add(history, diagnostics,
          with_bazel_logs(read_junit(input.in(), input.name, test, strict, keep, cache_status_beside(path)),
                          path));
      continue;
    }
    std::string text{std::istreambuf_iterator<char>(input.in()), std::istreambuf_iterator<char>()};
    auto& texts = texts_at[relative];
    if (std::find(texts.begin(), texts.end(), text) != texts.end()) {
      ++copies;
      continue;
    }
    texts.push_back(text);
    std::istringstream in(std::move(text));
    add(history, diagnostics,
        with_bazel_logs(read_junit(in, input.name, test, strict, keep, cache_status_beside(path)), path));
  }
  // Runs of one label in two configurations (bazel-out/k8-fastbuild/ and bazel-out/k8-opt/: builds
  // with other flags, one of them perhaps stale) are read as one test's samples; BEP in the same
  // case warns, and so does this (before, without a word).
  for (const auto& [label, names] : configurations) {
    if (names.size() < 2) continue;
    const std::string message = fmt::format(
        "{} holds its runs in {} configurations ({}), read as samples of one test: builds with other flags "
        "(-c opt and fastbuild), which may take other times; give one configuration's testlogs folder",
        directory, names.size(), fmt::join(names, ", "));
    if (strict) throw InputError(Position{canonical_label(label)}, message + " (--strict)");
    diagnostics.push_back(Diagnostic{Severity::warning, canonical_label(label), "--history", message});
  }
  if (copies > 0)
    diagnostics.push_back(Diagnostic{
        Severity::note,
        {},
        {},
        fmt::format(
            "{}: {} test.xml file{} the same bytes as another of the same test and attempt (bazel-testlogs/ "
            "and bazel-out/*/testlogs/ both copied): each run read once",
            directory, copies, copies == 1 ? " is" : "s are")});
}

void read_file(const std::string& path, bool strict, const LabelFilter& keep, History& history,
               Diagnostics& diagnostics) {
  Input input = open_input(path);
  std::string head(4096, '\0');
  head.resize(static_cast<std::size_t>(input.in().rdbuf()->sgetn(head.data(), 4096)));
  util::HeadThenRest whole(head, *input.in().rdbuf());
  std::istream in(&whole);
  if (auto problem = history_head_problem(head); !problem.empty())
    throw InputError(Position{input.name}, problem);
  switch (detect_history_format(head)) {
    case HistoryFormat::bep:
      return add(
          history, diagnostics,
          read_bep(in, input.name, strict, keep, [](const std::string& path, std::int64_t written_by_ms) {
            return test_log_head(path, written_by_ms);
          }));
    case HistoryFormat::csv:
    case HistoryFormat::json: return add(history, diagnostics, read_table(in, input.name, strict, keep));
    case HistoryFormat::junit: {
      auto below = below_testlogs(path);
      auto test = below ? parse_testlog_path(below->generic_string()) : std::nullopt;
      if (!test)
        throw InputError(
            Position{input.name},
            "a JUnit file outside bazel-testlogs/PACKAGE/TEST/: which test it belongs to is unknown; "
            "pass the bazel-testlogs directory instead");
      return add(
          history, diagnostics,
          with_bazel_logs(read_junit(in, input.name, *test, strict, keep, cache_status_beside(path)), path));
    }
  }
}

}  // namespace

History read_history_paths(const std::vector<std::string>& paths, bool strict, Diagnostics& diagnostics,
                           const std::map<std::string, int>& shards_now, const LabelFilter& keep) {
  History history;
  long repeated = 0;
  for (const auto& path : paths) {
    History one;
    std::error_code ignored;
    if (path != "-" && fs::is_directory(path, ignored))
      read_testlogs(path, strict, shards_now, keep, one, diagnostics);
    else
      read_file(path, strict, keep, one, diagnostics);
    repeated += history.merge_new(std::move(one));
  }
  if (repeated > 0)
    std::cerr << fmt::format(
        "gpuplan: history: {} record{} repeated an earlier one (the same test, start and result: one run "
        "read twice) and counted once\n",
        repeated, util::plural(repeated));
  for (const auto& [label, older] : history.other_shard_counts) {
    auto now = history.shard_counts.find(label);
    diagnostics.push_back(Diagnostic{
        Severity::note, label, "--history",
        fmt::format(
            "its {} run{} of shards from when it had {} shards {} left out: a later input or row (or "
            "run, by start time) has it with {}, and a shard then was of another size",
            older.second, util::plural(older.second), older.first, older.second == 1 ? "is" : "are",
            now == history.shard_counts.end() ? std::string("another count") : std::to_string(now->second))});
  }
  return history;
}

std::string print_history_diagnostics(const Diagnostics& diagnostics) {
  constexpr long notes_shown = 10;
  long notes = 0;
  for (const auto& d : diagnostics) {
    if (d.severity == Severity::note && ++notes > notes_shown) continue;
    const std::string& where = d.label.empty() ? d.source : d.label;
    std::cerr << fmt::format("gpuplan: {}: {}{}{}\n", to_string(d.severity), where, where.empty() ? "" : ": ",
                             d.message);
  }
  if (notes > notes_shown)
    std::cerr << fmt::format("gpuplan: note: … and {} more note{} like these\n", notes - notes_shown,
                             util::plural(notes - notes_shown));
  return diagnostic_counts(diagnostics);
}

std::optional<History> read_history_option(const std::vector<std::string>& paths, bool strict,
                                           Diagnostics& diagnostics,
                                           const std::map<std::string, int>& shards_now) {
  if (paths.empty()) return std::nullopt;
  return read_history_paths(paths, strict, diagnostics, shards_now);
}

std::map<std::string, int> shard_counts_now(const Classification& tests) {
  std::map<std::string, int> counts;
  for (const auto& test : tests.tests)
    if (test.target.shard_count > 1 && !test.target.shard_count_unresolved)
      counts[label_identity(test.target.label)] = test.target.shard_count;
  return counts;
}

void read_history_for_classifying(const std::vector<std::string>& paths, QueryOptions& query,
                                  const Rules& rules, std::optional<History>& history,
                                  Diagnostics& diagnostics) {
  if (paths.empty() || (!query.classify_by_deps && !rules.classify_by_deps)) return;
  query.read_history = [&paths, strict = query.strict, &rules, &history,
                        &diagnostics](const Classification& tests) {
    history = read_history_option(paths, strict, diagnostics, shard_counts_now(tests));
    return used_gpu(history, rules);
  };
}

namespace {

/// The name after a label's ':' (or its last package part, as Bazel names //a/b the same as //a/b:b).
std::string_view target_name(std::string_view label) {
  const auto colon = label.rfind(':');
  if (colon != std::string_view::npos && label.find("//") < colon) return label.substr(colon + 1);
  return label.substr(label.rfind('/') + 1);
}

/// A note for each GPU test without runs whose name is that of tests with runs that the query no
/// longer names: the test moved from there, perhaps (a renamed or split package).
template <typename HasRuns>
Diagnostics moved_tests(const History& history, const Classification& tests, const HasRuns& has_runs) {
  Diagnostics notes;
  std::set<std::string> in_query;
  for (const auto& test : tests.tests) in_query.insert(label_identity(test.target.label));
  std::map<std::string_view, std::vector<std::string_view>> gone;  // by name: labels with runs
  std::string_view previous;
  for (const auto& entry : history.samples) {
    const std::string& label = entry.first.label;
    if (label == previous) continue;
    previous = label;
    if (!in_query.contains(label)) gone[target_name(label)].push_back(label);
  }
  if (gone.empty()) return notes;
  std::set<std::string> seen;
  for (const auto& test : tests.tests) {
    if (test.bucket != Bucket::gpu) continue;
    auto label = label_identity(test.target.label);
    if (!seen.insert(label).second || has_runs(label)) continue;
    auto found = gone.find(target_name(label));
    if (found == gone.end()) continue;
    const auto& from = found->second;
    const auto n = static_cast<long>(from.size());
    std::string names = fmt::format("{}", fmt::join(from.begin(), from.begin() + std::min(n, 3L), ", "));
    if (n > 3) names += fmt::format(" and {} more", n - 3);
    notes.push_back(Diagnostic{
        Severity::note, label, "--history",
        fmt::format("has no runs in the history, and {} of its name {} some, which the query no longer "
                    "names ({}): if it moved from there, those runs are its own, but a label's runs count "
                    "only for that label, so it is planned as a test without history until it has runs",
                    n == 1 ? "a test" : "tests", n == 1 ? "has" : "have", names)});
  }
  return notes;
}

}  // namespace

void check_history_against_tests(const std::optional<History>& history, const Rules& rules,
                                 Classification& tests, bool strict) {
  if (!history) return;
  const Severity severity = strict ? Severity::error : Severity::warning;
  Diagnostics found;
  // History keys runs by label_identity: tests of two canonical repositories of one identity
  // (two versions of a module, or two extensions' repositories of one name) share their runs.
  // Only another repository's labels have canonical names (a main-repository label is one test).
  std::map<std::string, std::set<std::string>> spellings;
  for (const auto& test : tests.tests)
    if (auto label = canonical_label(test.target.label); label.starts_with('@'))
      spellings[label_identity(label)].insert(std::move(label));
  for (const auto& [label, canonical] : spellings) {
    auto runs = history->samples.lower_bound(SampleKey{label, std::nullopt});
    if (canonical.size() < 2 || runs == history->samples.end() || runs->first.label != label) continue;
    found.push_back(Diagnostic{
        severity, label, "--history",
        fmt::format("names {} tests ({}), and the history keys runs by that name: each is estimated from "
                    "the runs of all of them",
                    canonical.size(), fmt::join(canonical, ", "))});
  }
  // A / in a test's name reads as a package in a bazel-testlogs path: the runs of //t:sub/dir_test,
  // at t/sub/dir_test/test.xml, are keyed //t/sub:dir_test. Where the query has no such test and
  // the test none of its own, they are named (before, it was planned without history, silently).
  std::vector<std::pair<const std::string*, std::string>> slashed;  // such a test, its path's label
  for (const auto& test : tests.tests) {
    const std::string& label = test.target.label;
    auto slashes = label.find("//");
    auto colon = slashes == std::string::npos ? std::string::npos : label.find(':', slashes);
    auto slash = colon == std::string::npos ? std::string::npos : label.rfind('/');
    if (slash == std::string::npos || slash < colon) continue;
    std::string package = label.substr(slashes + 2, colon - slashes - 2);
    slashed.emplace_back(&label, label.substr(0, slashes + 2) + package + (package.empty() ? "" : "/") +
                                     label.substr(colon + 1, slash - colon - 1) + ":" +
                                     label.substr(slash + 1));
  }
  std::set<std::string> in_query;  // only where some test has a / in its name
  if (!slashed.empty())
    for (const auto& test : tests.tests) in_query.insert(label_identity(test.target.label));
  auto has_runs = [&history](const std::string& identity) {
    auto runs = history->samples.lower_bound(SampleKey{identity, std::nullopt});
    return runs != history->samples.end() && runs->first.label == identity;
  };
  for (const auto& [label_of, path_label] : slashed) {
    const std::string& label = *label_of;
    auto path_identity = label_identity(path_label);
    if (in_query.contains(path_identity) || !has_runs(path_identity) || has_runs(label_identity(label)))
      continue;
    found.push_back(Diagnostic{
        severity, label_identity(label), "--history",
        fmt::format(
            "has no runs in the history, but {} has, which is how a bazel-testlogs path names this test's "
            "runs (a / in a test's name cannot be told from its package there): they are not used, "
            "and it is planned as a test without history. Give Bazel's --build_event_json_file, or "
            "run-under's or exec's results records, which name it",
            path_label)});
  }
  // A test moved to another package has no runs under its new label; its runs are under the old
  // one, which the query no longer names. Nothing says it is the same test, so they stay unused,
  // but the test is named beside them (before, it was planned from its size class without a word).
  Diagnostics notes = moved_tests(*history, tests, has_runs);
  // A GPU test's runs that did part of its work (partial_run) are left out of its duration.
  for (const auto& [label, runs] : partial_runs(*history, tests, rules.history_window)) {
    std::vector<std::pair<long, std::string>> why;  // how many runs, and what they were
    if (runs.given_no_gpu > 0)
      why.emplace_back(runs.given_no_gpu,
                       "given no GPU (results records' gpus empty: run-under's --unplanned=warn ran it with "
                       "CUDA_VISIBLE_DEVICES empty) and used none: a GPU test mostly skips its GPU work so");
    if (runs.fewer_gpus > 0) {
      // What their records say the test asked for then (gpus_asked), where they say it.
      std::vector<std::string> asked;
      if (runs.fewer_as_asked > 0)
        asked.push_back(
            fmt::format("{} given all it asked for then: runs of its older count", runs.fewer_as_asked));
      if (runs.fewer_than_asked > 0)
        asked.push_back(fmt::format("{} given fewer than it asked for then: a machine short of GPUs",
                                    runs.fewer_than_asked));
      why.emplace_back(
          runs.fewer_gpus,
          fmt::format("given fewer GPUs than the {} it needs (as few as {}: results records' gpus, "
                      "a --missing-gpus=warn run on a machine with only some of its planned GPUs, or a "
                      "run from before its GPU count was raised{}): a multi-GPU test skips or shrinks its "
                      "multi-GPU work so",
                      runs.needs, runs.fewest_gpus,
                      asked.empty() ? std::string()
                                    : fmt::format("; by their gpus_asked, {}", fmt::join(asked, ", and "))));
    }
    if (runs.more_gpus > 0)
      why.emplace_back(runs.more_gpus,
                       fmt::format("given more GPUs than the {} it asks for now (as many as {}: runs from "
                                   "before its GPU count was lowered): its time and memory on each GPU "
                                   "then are not its own on fewer",
                                   runs.needs, runs.most_gpus));
    if (runs.filtered > 0)
      why.emplace_back(
          runs.filtered,
          "filtered to some of its test cases (Bazel's --test_filter, googletest's --gtest_filter, "
          "pytest's -k) and ran only those");
    auto were = [](long n) { return n == 1 ? "was" : "were"; };
    const long left_out = runs.left_out();
    std::string what = fmt::format("{} of its last {} run{} in the history ", left_out, runs.recent,
                                   util::plural(runs.recent));
    if (why.size() == 1) {
      what += fmt::format("{} {}", were(left_out), why.front().second);
    } else {
      what += "did only part of its work:";
      for (const auto& [count, reason] : why) what += fmt::format(" {} {} {};", count, were(count), reason);
      what.pop_back();
    }
    // Runs of another GPU count only: those of fewer GPUs given all their test asked for then
    // (results records' gpus_asked), or, where the record does not say, all before a whole run of
    // their unit and none after one. The repository changed the test's count, nothing went wrong,
    // and a warning would fail --strict plans for the window's length. Runs given fewer GPUs than
    // they asked for, or after a whole run, are a machine short of GPUs, and so may be those no
    // whole run followed yet: a warning.
    const bool older_count_only = runs.more_gpus + runs.fewer_gpus == left_out &&
                                  runs.fewer_than_asked == 0 && runs.fewer_after_whole == 0 &&
                                  runs.fewer_last == 0;
    (older_count_only ? notes : found)
        .push_back(Diagnostic{
            older_count_only ? Severity::note : severity, label, "--history",
            fmt::format(
                "{}, and {} left out of its duration{}", what, left_out == 1 ? "it is" : "they are",
                runs.every_run ? "; with no other run, it is planned as a test without history" : "")});
  }
  for (const auto& test : tests.tests) {
    const auto label = label_identity(test.target.label);
    // A test with no GPU annotation (only those are looked up) whose runs used a GPU.
    if (test.bucket == Bucket::cpu && test.requirement->gpus.source == "default") {
      auto use = measured_gpu_use(*history, label, rules.history_window);
      if (use && use->touched > 0)
        found.push_back(Diagnostic{
            severity, label, "--history",
            fmt::format("has no GPU annotation, but its runs used a GPU ({}): planned as a CPU test, it runs "
                        "without one. Tag it gpu (or gpu:N), or cpu-only if the GPU it touched is not needed",
                        to_string(*use))});
    }
    // Memory a framework took up front is no need (estimate_from_samples leaves it out): the test
    // is planned as if unmeasured, and a test that needs that much must say so.
    if (test.bucket == Bucket::gpu && !test.requirement->gpu_mem_mib)
      if (auto peak = up_front_peak(*history, label, rules.history_window))
        found.push_back(Diagnostic{
            severity, label, "--history",
            fmt::format(
                "its runs' peak GPU memory, {} MiB, is {:.0f}% or more of the GPU it ran on: memory its "
                "framework took up front (JAX takes 75% at its first operation, TensorFlow nearly all), "
                "not what it needs, so it is planned as if unmeasured. Tag it gpu-mem:SIZE if it needs "
                "that much; or measure it with XLA_PYTHON_CLIENT_PREALLOCATE=false (JAX) or "
                "TF_FORCE_GPU_ALLOW_GROWTH=true (TensorFlow) in its env",
                *peak, up_front_share * 100)});
    // Runs of a shard the test has not, nor had by the history's own count: 1-based shard
    // numbers (BEP's, or bazel-testlogs' shard_N_of_M) written into a CSV's 0-based column. No
    // estimate reads them, and the others are each one shard off.
    if (test.bucket != Bucket::gpu || test.target.shard_count < 2 || test.target.shard_count_unresolved)
      continue;
    // 1-based: shards 1 to N, none numbered 0. (Runs of shards 0 to 7 of a test with 4 now are of
    // a time it had 8: the estimate reshards them, with a warning of its own.)
    const int shards = test.target.shard_count;
    if (history->shard_counts.contains(label)) continue;
    if (history->samples.contains(SampleKey{label, 0})) {
      // Runs of shards 0 to K-1 only, of a test with N > K shards now, and no count recorded
      // (records before results' shard_count): of N shards with the last never run, or of a time it had
      // K, each run then a whole K-th of the test. Read as the first; said, since it is a guess.
      auto last = std::prev(history->samples.lower_bound(SampleKey{label, shards}));
      const int highest = last->first.shard.value_or(0);
      if (highest + 1 < shards)
        found.push_back(Diagnostic{
            severity, label, "--history",
            fmt::format(
                "has runs of shards 0 to {} only, {} shards now, and no shard count in the history "
                "(BEP's shardCount and gpuplan's results records' shard_count are): read as runs of {} of "
                "its {} shards, the others planned without them. If it had {} shards then, each run "
                "took {:.3g} times what a shard takes now: give the history from BEP, or drop its "
                "older runs",
                highest, shards, highest + 1, shards, highest + 1,
                static_cast<double>(shards) / (highest + 1))});
      continue;
    }
    auto last = history->samples.lower_bound(SampleKey{label, shards + 1});
    if (last == history->samples.begin()) continue;
    --last;
    if (last->first.label != label || last->first.shard != shards) continue;
    found.push_back(Diagnostic{
        severity, label, "--history",
        fmt::format(
            "has runs of shards 1 to {} in the history, none of shard 0, and {} shards, numbered 0 to {}: "
            "each run is read as the next shard's, and shard {}'s are not used. Shards in a CSV or JSON "
            "history are numbered from 0, as TEST_SHARD_INDEX (BEP's and bazel-testlogs' shard_N_of_M "
            "count from 1)",
            shards, shards, shards - 1, shards)});
  }
  if (strict && !found.empty()) {
    std::string errors;
    for (const auto& d : found) errors += fmt::format("\n  {}: {}", d.label, d.message);
    throw InputError(Position{"--history"},
                     fmt::format("{} error{} (--strict):{}", found.size(),
                                 util::plural(static_cast<long>(found.size())), errors));
  }
  tests.diagnostics.insert(tests.diagnostics.end(), found.begin(), found.end());
  tests.diagnostics.insert(tests.diagnostics.end(), notes.begin(), notes.end());
}

Estimator estimator_for(const std::optional<History>& history, const Rules& rules,
                        const Classification& tests) {
  if (!history) return size_default_estimator(rules);
  return history_estimator(*history, tests, rules, size_default_estimator(rules));
}

std::map<std::string, std::string> used_gpu(const std::optional<History>& history, const Rules& rules) {
  std::map<std::string, std::string> used;
  if (!history) return used;
  for (const auto& [label, use] : measured_gpu_use(*history, rules.history_window))
    if (use.touched > 0) used.emplace(label, to_string(use));
  return used;
}

Estimator noting_shards_from_siblings(Estimator estimate, double vram_headroom, ShardsFromSiblings& noted) {
  return [estimate = std::move(estimate), vram_headroom, &noted](const ClassifiedTest& test,
                                                                 std::optional<int> shard) {
    Estimate e = estimate(test, shard);
    if (!shard || !e.source.ends_with("-other-shards")) return e;
    auto& borrowing = noted[test.target.label];
    borrowing.count = std::max(1, test.target.shard_count);
    if (std::find(borrowing.shards.begin(), borrowing.shards.end(), *shard) == borrowing.shards.end())
      borrowing.shards.push_back(*shard);
    if (e.least_vram_mib)
      borrowing.floor_mib =
          std::max(borrowing.floor_mib.value_or(0), without_headroom(*e.least_vram_mib, vram_headroom));
    return e;
  };
}

RunsLeftOut runs_left_out(const std::optional<History>& history, const Classification& tests, int window) {
  RunsLeftOut left_out;
  if (!history) return left_out;
  left_out.cached_results = history->cached_results;
  left_out.skipped_runs = history->skipped_runs;
  for (const auto& [label, runs] : partial_runs(*history, tests, window)) {
    left_out.given_no_gpu += runs.given_no_gpu;
    left_out.fewer_gpus += runs.fewer_gpus;
    left_out.more_gpus += runs.more_gpus;
    left_out.filtered += runs.filtered;
  }
  return left_out;
}

std::string history_coverage(const std::vector<std::string>& paths, const std::vector<Unit>& units,
                             const ShardsFromSiblings& siblings_of, const RunsLeftOut& left_out, bool strict,
                             Diagnostics& diagnostics) {
  if (paths.empty() || units.empty()) return {};
  long own = 0, siblings = 0, median = 0;
  std::string resharded;  // the last test warned of: its units come one after another
  auto warn = [&](const std::string& label, const std::string& message) {
    if (strict) throw InputError(Position{label}, message + " (--strict)");
    diagnostics.push_back(Diagnostic{Severity::warning, canonical_label(label), "--history", message});
  };
  for (const auto& unit : units) {
    // A unit of a test planned whole names each source of its shards' estimates, joined by '+'.
    const std::string_view source = unit.duration_source.str();
    bool from_own = false, from_siblings = false, from_median = false, every_whole = true;
    for (std::size_t from = 0; from <= source.size();) {
      const std::size_t end = std::min(source.find('+', from), source.size());
      const std::string_view piece = source.substr(from, end - from);
      from = end + 1;
      from_siblings = from_siblings || piece.ends_with("-other-shards");
      from_own = from_own || (piece.starts_with("history") && !piece.ends_with("-other-shards"));
      from_median = from_median || piece == "size-median";
      every_whole = every_whole && piece.ends_with(whole_resharded_suffix);
    }
    if (from_own)
      ++own;
    else if (from_siblings)
      ++siblings;
    else if (from_median)
      ++median;
    if (!source.ends_with("-resharded") || unit.label == resharded) continue;
    // A test planned whole (--shards=whole) from runs of the whole test only: its shards' even
    // shares add up to those runs' time, no guess.
    const bool from_whole = source.ends_with(whole_resharded_suffix);
    if (every_whole && !unit.shard_index) continue;
    resharded = unit.label;
    warn(unit.label,
         from_whole ? fmt::format("its runs were of the whole test, and it has {} shards now: a shard with "
                                  "no run of its own is "
                                  "planned at an even share of the whole test's time",
                                  unit.shard_count)
         : unit.shard_count == 1
             ? std::string(
                   "its runs were measured in shards, and it is unsharded now: it is planned at the sum "
                   "of its shards' times, a shard with no run (its result cached, or never run) at "
                   "their average")
             : fmt::format(
                   "its runs were measured with another shard count than it has now ({} shards): it is "
                   "planned from the whole test's measured time, split over its shards",
                   unit.shard_count));
  }
  for (auto [label, borrowing] : siblings_of) {
    std::sort(borrowing.shards.begin(), borrowing.shards.end());
    const auto n = static_cast<long>(borrowing.shards.size());
    warn(label,
         fmt::format("shard{} {} of its {} {} no run in the history (cached in the builds read, or never "
                     "run): planned from the runs of its other shards, each taking what they took on "
                     "average{}",
                     util::plural(n), fmt::join(borrowing.shards, ", "), borrowing.count,
                     n == 1 ? "has" : "have",
                     borrowing.floor_mib
                         ? fmt::format(", and placed only on GPUs with at least the most memory they used "
                                       "({}), which {} may not need",
                                       format_mib(*borrowing.floor_mib), n == 1 ? "it" : "each")
                         : std::string()));
  }
  const long total = static_cast<long>(units.size());
  std::string line = fmt::format("gpuplan: history: {} of {} GPU unit{} planned from their own runs, ", own,
                                 total, util::plural(total));
  if (siblings > 0) line += fmt::format("{} from their test's other shards' runs, ", siblings);
  line += fmt::format("{} from their size class's median, {} from the size default", median,
                      total - own - siblings - median);
  if (left_out.cached_results > 0)
    line += fmt::format("; {} cached result{} skipped (they repeat an older run's time)",
                        left_out.cached_results, util::plural(left_out.cached_results));
  auto say_left_out = [&line](long count, std::string_view which) {
    if (count > 0) line += fmt::format("; {} run{} {} left out", count, util::plural(count), which);
  };
  say_left_out(left_out.skipped_runs, "that skipped every test case");
  say_left_out(left_out.given_no_gpu, "of GPU tests given no GPU");
  say_left_out(left_out.fewer_gpus, "of GPU tests given fewer GPUs than they need");
  say_left_out(left_out.more_gpus, "of GPU tests given more GPUs than they ask for now");
  say_left_out(left_out.filtered, "filtered to some test cases");
  line += '\n';
  // Runs of the query's GPU tests that are all left out (each test named in a finding of its own,
  // a note for a count changed since) say the file is their history: no guess to warn of here.
  // Before, a history of one retagged test failed every --strict plan on this word alone.
  const long theirs_left_out =
      left_out.given_no_gpu + left_out.fewer_gpus + left_out.more_gpus + left_out.filtered;
  if (own + siblings + median == 0 && theirs_left_out == 0) {
    const std::string where = fmt::format("{}", fmt::join(paths, ", "));
    const std::string message = fmt::format(
        "no GPU unit has a run in it: every duration is a size default. Is it the history of these tests "
        "(their labels, e.g. {})?",
        units.front().label);
    if (strict) throw InputError(Position{where}, message + " (--strict)");
    diagnostics.push_back(Diagnostic{Severity::warning, "", "--history", where + ": " + message});
  }
  return line;
}

}  // namespace gpuplan::cli
