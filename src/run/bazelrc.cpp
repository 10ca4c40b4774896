// The --run_under a team's .bazelrc files give `bazel test`: exec's default command gives its
// own after them, and Bazel keeps the last one, so theirs would not run, without a word.
// Bazel's rc files (https://bazel.build/run/bazelrc): /etc/bazel.bazelrc, the workspace's
// .bazelrc, then ~/.bazelrc; each line "COMMAND[:CONFIG] OPTIONS...", `import` and `try-import`
// PATH (%workspace% the workspace's directory), `#` comments, words split as the shell does.
// `bazel test` applies its own lines, and those of `build`, `common` and `always`; a
// `--config=NAME`, on the command line or in a line that applies, applies COMMAND:NAME lines too.
#include <algorithm>
#include <filesystem>
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

/// A line's words as the shell would split them: quotes group, a backslash escapes.
std::vector<std::string> words_of(const std::string& line) {
  std::vector<std::string> words;
  std::string word;
  bool in_word = false;
  char quote = 0;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else if (c == '\\' && quote == '"' && i + 1 < line.size())
        word += line[++i];
      else
        word += c;
    } else if (c == '\'' || c == '"') {
      quote = c, in_word = true;
    } else if (c == '\\' && i + 1 < line.size()) {
      word += line[++i], in_word = true;
    } else if (c == ' ' || c == '\t') {
      if (in_word) words.push_back(word), word.clear(), in_word = false;
    } else if (c == '#' && !in_word) {
      break;
    } else {
      word += c, in_word = true;
    }
  }
  if (in_word) words.push_back(word);
  return words;
}

/// Whether a line ends in an odd number of backslashes: the last escapes its line's end.
bool continues(const std::string& line) {
  auto kept = line.find_last_not_of('\\');
  return (line.size() - (kept == std::string::npos ? 0 : kept + 1)) % 2 == 1;
}

void read_rc(const std::filesystem::path& file, const std::string& workspace, std::vector<RcLine>& lines,
             std::set<std::string>& seen) {
  std::error_code ec;
  auto canonical = std::filesystem::weakly_canonical(file, ec).string();
  if (!seen.insert(canonical).second) return;  // an import cycle
  std::ifstream in(file);
  std::string line;
  long number = 0;
  while (std::getline(in, line)) {
    const long first = ++number;
    if (line.ends_with('\r')) line.pop_back();
    // A line ending in an unescaped backslash goes on in the next.
    for (std::string next; continues(line) && std::getline(in, next); ++number) {
      if (next.ends_with('\r')) next.pop_back();
      line.pop_back();
      line += next;
    }
    auto words = words_of(line);
    if (words.empty()) continue;
    if ((words[0] == "import" || words[0] == "try-import") && words.size() == 2) {
      auto path = words[1];
      if (path.starts_with("%workspace%")) path = workspace + path.substr(11);
      read_rc(path, workspace, lines, seen);
      continue;
    }
    auto colon = words[0].find(':');
    RcLine rc{file.string(),
              first,
              words[0].substr(0, colon),
              colon == std::string::npos ? "" : words[0].substr(colon + 1),
              {}};
    rc.words.assign(words.begin() + 1, words.end());
    lines.push_back(std::move(rc));
  }
}

}  // namespace

std::string bazel_workspace(const std::string& cwd) {
  namespace fs = std::filesystem;
  for (fs::path dir = cwd; !dir.empty(); dir = dir.parent_path()) {
    std::error_code ec;
    for (const char* marker : {"MODULE.bazel", "REPO.bazel", "WORKSPACE", "WORKSPACE.bazel"})
      if (fs::is_regular_file(dir / marker, ec)) return dir.string();
    if (dir == dir.root_path()) break;
  }
  return cwd;
}

std::optional<RcRunUnder> rc_run_under(const std::string& cwd, const std::string& home,
                                       const std::vector<std::string>& bazel_args) {
  namespace fs = std::filesystem;
  const std::string workspace = bazel_workspace(cwd);
  std::vector<RcLine> lines;
  std::set<std::string> seen;
  read_rc("/etc/bazel/bazelrc", workspace, lines, seen);  // Debian's Bazel's, which try-imports the next
  read_rc("/etc/bazel.bazelrc", workspace, lines, seen);
  read_rc(fs::path(workspace) / ".bazelrc", workspace, lines, seen);
  if (!home.empty()) read_rc(fs::path(home) / ".bazelrc", workspace, lines, seen);
  // Bazel applies the options of the commands `test` inherits in this order, each command's
  // lines in the order read; a config's where --config names it, after the rc files' own.
  const std::map<std::string, int> rank{{"always", 0}, {"common", 0}, {"build", 1}, {"test", 2}};
  std::stable_sort(lines.begin(), lines.end(), [&](const RcLine& a, const RcLine& b) {
    auto rank_of = [&](const RcLine& l) { return rank.contains(l.command) ? rank.at(l.command) : 3; };
    return std::pair(!a.config.empty(), rank_of(a)) < std::pair(!b.config.empty(), rank_of(b));
  });
  std::set<std::string> configs;
  auto add_configs = [&](const std::vector<std::string>& words) {
    bool added = false;
    for (std::size_t i = 0; i < words.size(); ++i) {
      if (words[i].starts_with("--config=")) added |= configs.insert(words[i].substr(9)).second;
      if (words[i] == "--config" && i + 1 < words.size()) added |= configs.insert(words[i + 1]).second;
      // --enable_platform_specific_config applies the host's config (test:linux)
      if (words[i] == "--enable_platform_specific_config" ||
          words[i] == "--enable_platform_specific_config=true" ||
          words[i] == "--enable_platform_specific_config=1" ||
          words[i] == "--enable_platform_specific_config=yes")
        added |= configs.insert("linux").second;
    }
    return added;
  };
  auto applies = [&](const RcLine& rc) {
    return rank.contains(rc.command) && (rc.config.empty() || configs.contains(rc.config));
  };
  add_configs(bazel_args);
  for (bool grew = true; grew;) {  // a config's lines may name further configs
    grew = false;
    for (const auto& rc : lines)
      if (applies(rc)) grew |= add_configs(rc.words);
  }
  std::optional<RcRunUnder> last;
  for (const auto& rc : lines) {
    if (!applies(rc)) continue;
    for (std::size_t i = 0; i < rc.words.size(); ++i) {
      if (rc.words[i].starts_with("--run_under="))
        last = RcRunUnder{rc.file, rc.line_number, rc.config, rc.words[i].substr(12)};
      else if (rc.words[i] == "--run_under" && i + 1 < rc.words.size())
        last = RcRunUnder{rc.file, rc.line_number, rc.config, rc.words[i + 1]};
    }
  }
  if (!last || last->value.empty()) return std::nullopt;  // none, or reset by an empty one
  // gpuplan run-under itself (the .bazelrc lines the README gives): exec's is the same.
  auto words = words_of(last->value);
  if (words.size() >= 2 && fs::path(words[0]).filename().string().find("gpuplan") != std::string::npos &&
      words[1] == "run-under")
    return std::nullopt;
  return last;
}

}  // namespace gpuplan
