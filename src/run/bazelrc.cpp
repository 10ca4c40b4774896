// Options a team's rc files give `bazel test`, which exec's default command would replace:
// exec gives its own --run_under (and --build_event_json_file) after them, and Bazel keeps the
// last. Bazel's rc files (https://bazel.build/run/bazelrc), read as Bazel 4 reads them (checked
// against Debian's 4.2.3 with --announce_rc): each line "COMMAND[:CONFIG] OPTIONS...", `import`
// and `try-import` PATH (%workspace% the workspace's directory, a relative path the current
// directory's), `#` comments, a backslash at a line's end joining the next, words split by blanks
// with quotes grouping and a backslash escaping. `bazel test` applies the lines of always (Bazel
// 7's; Bazel 4 ignores them), common, build, then test, each command's in the order read; a
// --config=NAME expands where it stands into NAME's lines of those commands in turn, and the
// host's config (linux) where the last --enable_platform_specific_config stands, if it enables it.
#include "gpuplan/bazelrc.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <utility>

#include "gpuplan/error.hpp"
#include "gpuplan/run.hpp"

namespace gpuplan {

namespace {

struct RcLine {
  std::string file;
  long line_number = 0;
  std::string command;                ///< "test" of "test:gpu"
  std::optional<std::string> config;  ///< "gpu" of "test:gpu"; none for a plain line ("test:" is config "")
  std::vector<std::string> words;
};

/// A line's words as Bazel splits them: quotes group, a backslash escapes (in quotes too; one at
/// the end is dropped), `#` outside quotes ends the line, empty words are dropped.
std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '\\') {
      if (i + 1 < line.size()) word += line[++i];
    } else if (quote) {
      if (c == quote)
        quote = 0;
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      if (!word.empty()) words.push_back(word), word.clear();
    } else if (c == '#') {
      break;
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

/// The rc files' lines, and what in them makes Bazel stop before it runs anything.
struct RcFiles {
  std::vector<RcLine> lines;
  std::vector<std::string> refusals;
};

/// Reads `file` and what it imports; `reading` the files being read, outermost first.
/// Returns false where `file` cannot be read. Only a regular file (or a link to one) is read: Bazel
/// refuses a directory as it refuses a missing file, and would read a device such as /dev/zero or
/// wait at a FIFO for ever, which gpuplan must not.
bool read_rc(const std::string& file, const std::string& workspace, RcFiles& rc,
             std::vector<std::string>& reading) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(file, error)) return false;
  std::ifstream in(file);
  if (!in) return false;
  reading.push_back(file);
  std::string line;
  long number = 0;
  while (std::getline(in, line)) {
    const long first = ++number;
    if (line.ends_with('\r')) line.pop_back();
    for (std::string next; line.ends_with('\\') && std::getline(in, next); ++number) {
      if (next.ends_with('\r')) next.pop_back();
      line.pop_back();
      line += next;
    }
    auto words = words_of(line);
    if (words.empty()) continue;
    const auto at = fmt::format("{}:{}", file, first);
    if (words[0] == "import" || words[0] == "try-import") {
      if (words.size() != 2) {
        rc.refusals.push_back(
            fmt::format("{}: {} takes one file, not {} words ('Invalid import declaration')", at, words[0],
                        words.size() - 1));
        continue;
      }
      auto path = words[1];
      if (path.starts_with("%workspace%")) path = workspace + path.substr(11);
      if (std::find(reading.begin(), reading.end(), path) != reading.end()) {
        rc.refusals.push_back(
            fmt::format("{}: imports {}, which is importing it ('Import loop detected')", at, path));
        continue;
      }
      std::error_code error;
      if (const auto type = std::filesystem::status(path, error).type();
          type != std::filesystem::file_type::regular && type != std::filesystem::file_type::directory &&
          type != std::filesystem::file_type::not_found && !error) {
        // Not a refusal (a warning, then bazel test): Bazel does not refuse it, it hangs.
        throw InputError(Position{file, first},
                         fmt::format("{} {}: not a file but a device, FIFO or socket, which Bazel would "
                                     "read or wait at for ever, and so would bazel test; import a file",
                                     words[0], path));
      }
      if (!read_rc(path, workspace, rc, reading) && words[0] == "import")
        rc.refusals.push_back(fmt::format(
            "{}: imports {}, which cannot be read ('Unexpected error reading .blazerc file'; try-import "
            "skips a missing file){}",
            at, path,
            path.front() == '/'
                ? ""
                : ": Bazel reads a relative path from the current directory, not the rc file's"));
      continue;
    }
    auto colon = words[0].find(':');
    RcLine rc_line{file, first, words[0].substr(0, colon),
                   colon == std::string::npos ? std::nullopt : std::optional(words[0].substr(colon + 1)),
                   std::vector<std::string>(words.begin() + 1, words.end())};
    rc.lines.push_back(std::move(rc_line));
  }
  reading.pop_back();
  return true;
}

/// A word of the expanded options, and the line it came from (none: the command line).
struct Word {
  std::string text;
  const RcLine* from = nullptr;
};

std::string where(const RcLine* from) {
  return from ? fmt::format("{}:{}", from->file, from->line_number) : "the options after --";
}

/// Whether `word` sets --enable_platform_specific_config, and to what.
std::optional<bool> platform_config_setting(const std::string& word) {
  static const std::string name = "--enable_platform_specific_config";
  if (word == name || word == "--no" + name.substr(2)) return word == name;
  if (!word.starts_with(name + "=")) return std::nullopt;
  auto value = word.substr(name.size() + 1);
  return value == "true" || value == "1" || value == "yes";
}

/// The commands whose lines `bazel test` applies, in Bazel's order.
constexpr const char* test_commands[] = {"always", "common", "build", "test"};

/// How much expand() expands before it stops with an error: the options' bytes, each with one
/// more for the blank before it, and each --config=NAME expanded. A --config expands each time
/// it is named, so configs that name the next one twice double at each step: 26 such lines held
/// fuzz_bazelrc past its 10 s limit, each line doubling it (2026-12-06). A real rc file expands
/// to some KiB. Bazel 4 expands them all: 17 such lines, 2^17 options of 20 bytes (2.6 MiB), took
/// it 8.4 s with its server's start; 23 ran its server out of Java heap after 237 s.
constexpr std::size_t max_expanded_bytes = std::size_t{2} << 20;

class Expander {
 public:
  Expander(const std::vector<RcLine>& lines, std::vector<std::string>& refusals) : refusals_(refusals) {
    // Each config's lines (none: the plain lines) in the order Bazel applies them, found once:
    // a config is expanded each time it is named.
    for (const char* command : test_commands)
      for (const auto& rc : lines)
        if (rc.command == command) lines_[rc.config].push_back(&rc);
  }

  /// The plain lines of the commands `test` inherits, each expanded.
  void add_plain(std::vector<Word>& out) {
    if (auto plain = lines_.find(std::nullopt); plain != lines_.end())
      for (const RcLine* rc : plain->second) add_words(rc->words, rc, out);
  }

  /// `config`'s lines of those commands, each expanded; `from` the line that names it.
  void add_config(const std::string& config, const RcLine* from, std::vector<Word>& out) {
    spend(from, config.size() + 10);  // "--config=NAME "
    if (std::find(expanding_.begin(), expanding_.end(), config) != expanding_.end()) {
      std::string chain;
      for (const auto& c : expanding_) chain += c + " > ";
      refusals_.push_back(fmt::format("{}: --config={} names itself ({}{}; 'Config expansion has a cycle')",
                                      where(from), config, chain, config));
      return;
    }
    auto lines = lines_.find(config);
    expanding_.push_back(config);
    if (lines != lines_.end())
      for (const RcLine* rc : lines->second) add_words(rc->words, rc, out);
    expanding_.pop_back();
    if (lines == lines_.end() && undefined_.emplace(from, config).second)  // once for each line naming it
      refusals_.push_back(
          fmt::format("{}: --config={} is not defined for bazel test in any rc file ('Config value '{}' is "
                      "not defined in any "
                      ".rc file')",
                      where(from), config, config));
  }

  /// `words`, each --config=NAME replaced where it stands by NAME's lines.
  void add_words(const std::vector<std::string>& words, const RcLine* from, std::vector<Word>& out) {
    for (std::size_t i = 0; i < words.size(); ++i) {
      std::optional<std::string> config;
      if (words[i].starts_with("--config=")) config = words[i].substr(9);
      if (words[i] == "--config" && i + 1 < words.size()) config = words[++i];
      if (config) {
        add_config(*config, from, out);
      } else {
        spend(from, words[i].size() + 1);
        out.push_back({words[i], from});
      }
    }
  }

 private:
  /// Counts `bytes` of an expansion from the rc line `from` (none: the command line, which is
  /// read once); throws past max_expanded_bytes.
  void spend(const RcLine* from, std::size_t bytes) {
    if (!from || (spent_ += bytes) <= max_expanded_bytes) return;
    throw InputError(Position{from->file, from->line_number},
                     fmt::format("the --config expansions pass {} MiB of options, gpuplan's limit: a config "
                                 "that names another twice doubles its options, as Bazel expands a --config "
                                 "each time it is named",
                                 max_expanded_bytes >> 20));
  }

  std::map<std::optional<std::string>, std::vector<const RcLine*>> lines_;
  std::vector<std::string>& refusals_;
  std::vector<std::string> expanding_;
  std::size_t spent_ = 0;
  std::set<std::pair<const RcLine*, std::string>> undefined_;  ///< refused already
};

/// Every option `bazel test` with `bazel_args` gets, in the order Bazel applies them (the last
/// of an option wins), and the rc content that makes Bazel refuse to start.
struct Expanded {
  RcFiles rc;
  std::vector<Word> words;
};

Expanded expand(const std::vector<std::string>& rc_files, const std::string& workspace,
                const std::vector<std::string>& bazel_args) {
  Expanded e;
  std::vector<std::string> reading;
  for (const auto& file : rc_files) read_rc(file, workspace, e.rc, reading);
  Expander expander(e.rc.lines, e.rc.refusals);
  expander.add_plain(e.words);
  expander.add_words(bazel_args, nullptr, e.words);
  // The host's config expands where the last --enable_platform_specific_config stands, after
  // every other --config, if that one enables it (a cross-compiling config's
  // --noenable_platform_specific_config turns it off).
  auto last = std::find_if(e.words.rbegin(), e.words.rend(),
                           [](const Word& w) { return platform_config_setting(w.text).has_value(); });
  bool defined = std::any_of(e.rc.lines.begin(), e.rc.lines.end(), [](const RcLine& l) {
    return l.config == "linux" && std::find(std::begin(test_commands), std::end(test_commands), l.command) !=
                                      std::end(test_commands);
  });
  if (last != e.words.rend() && *platform_config_setting(last->text) && defined) {
    std::vector<Word> platform;
    expander.add_config("linux", last->from, platform);
    e.words.insert(last.base(), platform.begin(), platform.end());
  }
  return e;
}

/// Why Bazel refuses a --run_under value, in its words, as its ShellUtils.tokenize splits it
/// (a backslash escapes outside quotes and, before `\\` or `"`, in double quotes; none in single
/// quotes), or nullopt where it takes it.
std::optional<std::string> run_under_refusal(const std::string& value) {
  bool words = false, in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"' && ++i == value.size())
        return "Not a valid command prefix backslash at end of string";
    } else if (c == '\'' || c == '"') {
      quote = c, in_word = true;
    } else if (c == ' ' || c == '\t') {
      words = words || in_word, in_word = false;
    } else {
      if (c == '\\' && ++i == value.size()) return "Not a valid command prefix backslash at end of string";
      in_word = true;
    }
  }
  if (quote) return "Not a valid command prefix unterminated quotation";
  if (!words && !in_word) return "Empty command";
  return std::nullopt;
}

}  // namespace

std::optional<RcOption> rc_option(const std::vector<std::string>& rc_files, const std::string& workspace,
                                  const std::vector<std::string>& bazel_args, const std::string& option) {
  const auto e = expand(rc_files, workspace, bazel_args);
  const auto& words = e.words;
  std::optional<RcOption> last;
  const std::string flag = "--" + option;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const auto& w = words[i];
    std::optional<std::string> value;
    if (w.text.starts_with(flag + "=")) value = w.text.substr(flag.size() + 1);
    if (w.text == flag && i + 1 < words.size()) value = words[++i].text;
    if (!value) continue;
    if (w.from)
      last = RcOption{w.from->file, w.from->line_number, w.from->config.value_or(""), *value};
    else
      last = RcOption{{}, 0, {}, *value};  // the command line's own
  }
  return last;
}

std::vector<std::string> rc_refusals(const std::vector<std::string>& rc_files, const std::string& workspace,
                                     const std::vector<std::string>& bazel_args) {
  auto e = expand(rc_files, workspace, bazel_args);
  // Bazel parses every --run_under it applies, even one a later one replaces.
  for (std::size_t i = 0; i < e.words.size(); ++i) {
    std::optional<std::string> value;
    if (e.words[i].text.starts_with("--run_under=")) value = e.words[i].text.substr(12);
    if (e.words[i].text == "--run_under" && i + 1 < e.words.size()) value = e.words[i + 1].text;
    if (auto why = value ? run_under_refusal(*value) : std::nullopt)
      e.rc.refusals.push_back(
          fmt::format("{}: --run_under={}, which Bazel refuses ('While parsing option --run_under={}: {}') "
                      "even where a later one replaces it",
                      where(e.words[i].from), *value, *value, *why));
  }
  std::vector<std::string> once;  // a config named twice
  std::set<std::string> seen;
  for (auto& r : e.rc.refusals)
    if (seen.insert(r).second) once.push_back(std::move(r));
  return once;
}

bool is_gpuplan_run_under(const std::string& value) {
  auto words = words_of(value);
  auto slash = words.empty() ? std::string::npos : words[0].rfind('/');
  return words.size() >= 2 &&
         words[0].substr(slash == std::string::npos ? 0 : slash + 1).find("gpuplan") != std::string::npos &&
         words[1] == "run-under";
}

}  // namespace gpuplan
