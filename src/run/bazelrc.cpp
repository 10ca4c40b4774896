// The --run_under a team's .bazelrc files give `bazel test`: exec's default command gives its
// own after them, and Bazel keeps the last one, so theirs would not run, without a word.
// Bazel's rc files (https://bazel.build/run/bazelrc): /etc/bazel.bazelrc, the workspace's
// .bazelrc, then ~/.bazelrc; each line "COMMAND[:CONFIG] OPTIONS...", `import` and `try-import`
// PATH (%workspace% the workspace's directory), `#` comments, words split as the shell does.
// `bazel test` applies its own lines, and those of `build`, `common` and `always`; a
// `--config=NAME`, on the command line or in a line that applies, applies COMMAND:NAME lines too.
#include <filesystem>
#include <fstream>
#include <set>

#include "gpuplan/run.hpp"

namespace gpuplan {

namespace {

struct RcLine {
  std::string file;
  long number = 0;
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

void read_rc(const std::filesystem::path& file, const std::string& workspace, std::vector<RcLine>& lines,
             std::set<std::string>& seen) {
  std::error_code ec;
  auto canonical = std::filesystem::weakly_canonical(file, ec).string();
  if (!seen.insert(canonical).second) return;  // an import cycle
  std::ifstream in(file);
  std::string line;
  long number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (line.ends_with('\r')) line.pop_back();
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
              number,
              words[0].substr(0, colon),
              colon == std::string::npos ? "" : words[0].substr(colon + 1),
              {}};
    rc.words.assign(words.begin() + 1, words.end());
    lines.push_back(std::move(rc));
  }
}

}  // namespace

std::vector<RcRunUnder> rc_run_unders(const std::string& cwd, const std::string& home,
                                      const std::vector<std::string>& bazel_args) {
  namespace fs = std::filesystem;
  std::string workspace;
  for (fs::path dir = cwd; !dir.empty(); dir = dir.parent_path()) {
    std::error_code ec;
    for (const char* marker : {"MODULE.bazel", "REPO.bazel", "WORKSPACE", "WORKSPACE.bazel"})
      if (fs::is_regular_file(dir / marker, ec)) workspace = dir.string();
    if (!workspace.empty() || dir == dir.root_path()) break;
  }
  std::vector<RcLine> lines;
  std::set<std::string> seen;
  read_rc("/etc/bazel.bazelrc", workspace, lines, seen);
  if (!workspace.empty()) read_rc(fs::path(workspace) / ".bazelrc", workspace, lines, seen);
  if (!home.empty()) read_rc(fs::path(home) / ".bazelrc", workspace, lines, seen);
  const std::set<std::string> applies{"test", "build", "common", "always"};
  std::set<std::string> configs;
  auto add_configs = [&](const std::vector<std::string>& words) {
    bool added = false;
    for (std::size_t i = 0; i < words.size(); ++i) {
      if (words[i].starts_with("--config=")) added |= configs.insert(words[i].substr(9)).second;
      if (words[i] == "--config" && i + 1 < words.size()) added |= configs.insert(words[i + 1]).second;
    }
    return added;
  };
  add_configs(bazel_args);
  for (bool grew = true; grew;) {  // a config's lines may name further configs
    grew = false;
    for (const auto& rc : lines)
      if (applies.contains(rc.command) && (rc.config.empty() || configs.contains(rc.config)))
        grew |= add_configs(rc.words);
  }
  std::vector<RcRunUnder> found;
  for (const auto& rc : lines) {
    if (!applies.contains(rc.command) || !(rc.config.empty() || configs.contains(rc.config))) continue;
    for (std::size_t i = 0; i < rc.words.size(); ++i) {
      std::string value;
      if (rc.words[i].starts_with("--run_under="))
        value = rc.words[i].substr(12);
      else if (rc.words[i] == "--run_under" && i + 1 < rc.words.size())
        value = rc.words[i + 1];
      else
        continue;
      if (!value.empty() && value.find("run-under") == std::string::npos)  // gpuplan's own is exec's too
        found.push_back({rc.file, rc.number, rc.config, value});
    }
  }
  return found;
}

}  // namespace gpuplan
