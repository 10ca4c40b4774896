// Options a team's rc files give `bazel test`, which exec's default command would replace:
// exec gives its own --run_under (and --build_event_json_file) after them, and Bazel keeps the
// last. Bazel's rc files (https://bazel.build/run/bazelrc): each line "COMMAND[:CONFIG]
// OPTIONS...", `import` and `try-import` PATH (%workspace% the workspace's directory), `#`
// comments, a backslash at a line's end joining the next, words split by blanks with quotes
// grouping and a backslash escaping. `bazel test` applies the lines of always/common, then
// build, then test, each command's in the order read; a --config=NAME expands where it stands
// into NAME's lines of those commands in turn.
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

#include "gpuplan/run.hpp"

namespace gpuplan {

namespace {

struct RcLine {
  std::string file;
  long line_number = 0;
  std::string command, config;  ///< "test", "gpu" of "test:gpu"; config empty for none
  std::vector<std::string> words;
};

/// A line's words as Bazel splits them: quotes group, a backslash escapes (in quotes too), `#`
/// outside quotes ends the line, empty words are dropped.
std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (c == '\\' && i + 1 < line.size()) {
      word += line[++i];
    } else if (quote) {
      if (c == quote)
        quote = 0;
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c;
    } else if (c == ' ' || c == '\t') {
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

/// Reads `file` and what it imports into `lines`; `reading` the files being read (a file that
/// imports itself, or one that imports it, is read once).
void read_rc(const std::string& file, const std::string& workspace, std::vector<RcLine>& lines,
             std::vector<std::string>& reading) {
  if (std::find(reading.begin(), reading.end(), file) != reading.end()) return;  // an import loop
  std::ifstream in(file);
  if (!in) return;
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
    if ((words[0] == "import" || words[0] == "try-import") && words.size() == 2) {
      auto path = words[1];
      if (path.starts_with("%workspace%")) path = workspace + path.substr(11);
      read_rc(path, workspace, lines, reading);
      continue;
    }
    auto colon = words[0].find(':');
    RcLine rc{file, first, words[0].substr(0, colon),
              colon == std::string::npos ? "" : words[0].substr(colon + 1),
              std::vector<std::string>(words.begin() + 1, words.end())};
    lines.push_back(std::move(rc));
  }
  reading.pop_back();
}

/// A word of the expanded options, and the line it came from (none: the command line).
struct Word {
  std::string text;
  const RcLine* from = nullptr;
};

bool enables_platform_config(const std::string& word) {
  return word == "--enable_platform_specific_config" || word == "--enable_platform_specific_config=true" ||
         word == "--enable_platform_specific_config=1" || word == "--enable_platform_specific_config=yes";
}

class Expander {
 public:
  explicit Expander(const std::vector<RcLine>& lines) : lines_(lines) {}

  /// `config`'s lines (empty: the plain lines) of the commands `test` inherits, each expanded.
  void add_lines(const std::string& config, std::vector<Word>& out) {
    if (!config.empty() && !expanding_.insert(config).second) return;  // a config naming itself
    for (const char* command : {"always", "common", "build", "test"})
      for (const auto& rc : lines_)
        if (rc.command == command && rc.config == config) add_words(rc.words, &rc, out);
    if (!config.empty()) expanding_.erase(config);
  }

  /// `words`, each --config=NAME replaced where it stands by NAME's lines, and under
  /// --enable_platform_specific_config the host's (linux) after the rc files' own lines.
  void add_words(const std::vector<std::string>& words, const RcLine* from, std::vector<Word>& out) {
    for (std::size_t i = 0; i < words.size(); ++i) {
      std::string config;
      if (words[i].starts_with("--config=")) config = words[i].substr(9);
      if (words[i] == "--config" && i + 1 < words.size()) config = words[++i];
      if (!config.empty()) {
        add_lines(config, out);
        continue;
      }
      platform_ = platform_ || enables_platform_config(words[i]);
      out.push_back({words[i], from});
    }
  }

  bool platform() const { return platform_; }

 private:
  const std::vector<RcLine>& lines_;
  std::set<std::string> expanding_;
  bool platform_ = false;
};

}  // namespace

std::optional<RcOption> rc_option(const std::vector<std::string>& rc_files, const std::string& workspace,
                                  const std::vector<std::string>& bazel_args, const std::string& option) {
  std::vector<RcLine> lines;
  std::vector<std::string> reading;
  for (const auto& file : rc_files) read_rc(file, workspace, lines, reading);
  Expander expander(lines);
  std::vector<Word> words;
  expander.add_lines("", words);
  // The host's config, after the rc files' lines, where they or the command line enable it.
  std::vector<Word> platform;
  if (expander.platform() || std::any_of(bazel_args.begin(), bazel_args.end(), enables_platform_config))
    expander.add_lines("linux", platform);
  words.insert(words.end(), platform.begin(), platform.end());
  expander.add_words(bazel_args, nullptr, words);
  std::optional<RcOption> last;
  const std::string flag = "--" + option;
  for (std::size_t i = 0; i < words.size(); ++i) {
    const auto& w = words[i];
    std::optional<std::string> value;
    if (w.text.starts_with(flag + "=")) value = w.text.substr(flag.size() + 1);
    if (w.text == flag && i + 1 < words.size()) value = words[++i].text;
    if (!value) continue;
    if (w.from)
      last = RcOption{w.from->file, w.from->line_number, w.from->config, *value};
    else
      last = RcOption{{}, 0, {}, *value};  // the command line's own
  }
  return last;
}

bool is_gpuplan_run_under(const std::string& value) {
  auto words = words_of(value);
  auto slash = words.empty() ? std::string::npos : words[0].rfind('/');
  return words.size() >= 2 &&
         words[0].substr(slash == std::string::npos ? 0 : slash + 1).find("gpuplan") != std::string::npos &&
         words[1] == "run-under";
}

}  // namespace gpuplan
