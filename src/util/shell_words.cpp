// A command line split into words as /bin/sh splits it (POSIX, "Token Recognition" and
// "Quoting" of the Shell Command Language).
#include "util/shell_words.hpp"

#include <algorithm>
#include <array>
#include <iterator>

namespace gpuplan::util {

namespace {

bool is_operator(char c) { return std::string_view(";&|()<>").find(c) != std::string_view::npos; }

class Splitter {
 public:
  explicit Splitter(std::string_view line) : line_(line) {}

  std::vector<std::string> words() {
    while (at_ < line_.size()) {
      const char c = line_[at_];
      if (c == ' ' || c == '\t' || c == '\n' || is_operator(c)) {
        end_word();
        ++at_;
      } else if (c == '#' && !in_word_) {  // a comment, to the end of its line
        at_ = std::min(line_.find('\n', at_), line_.size());
      } else if (c == '\\') {
        if (at_ + 1 < line_.size() && line_[at_ + 1] == '\n') {  // a continued line
          at_ += 2;
          continue;
        }
        take(at_ + 1 < line_.size() ? line_[++at_] : c);
        ++at_;
      } else if (c == '\'') {
        const auto close = std::min(line_.find('\'', at_ + 1), line_.size());
        in_word_ = true;
        word_.append(line_.substr(at_ + 1, close - at_ - 1));
        at_ = close + 1;
      } else if (c == '"') {
        double_quoted();
      } else if (starts_substitution()) {
        substitution();
      } else {
        take(c);
        ++at_;
      }
    }
    end_word();
    return std::move(words_);
  }

 private:
  /// At a $( or a `: a command substitution, which is one piece of its word.
  bool starts_substitution() const {
    return line_[at_] == '`' || (line_[at_] == '$' && at_ + 1 < line_.size() && line_[at_ + 1] == '(');
  }

  void take(char c) {
    in_word_ = true;
    word_ += c;
  }

  void end_word() {
    if (in_word_) words_.push_back(std::move(word_));
    word_.clear();
    in_word_ = false;
  }

  /// From the opening ": what is quoted, to the closing " (or the end).
  void double_quoted() {
    in_word_ = true;
    for (++at_; at_ < line_.size() && line_[at_] != '"';) {
      const char c = line_[at_];
      if (c == '\\' && at_ + 1 < line_.size() &&
          std::string_view("$`\"\\\n").find(line_[at_ + 1]) != std::string_view::npos) {
        if (line_[at_ + 1] != '\n') word_ += line_[at_ + 1];
        at_ += 2;
      } else if (starts_substitution()) {
        substitution();
      } else {
        word_ += c;
        ++at_;
      }
    }
    ++at_;
  }

  /// From $( or `: the substitution as written, to its closing ) or ` (or the end). A ) inside
  /// its quotes, or one that closes an inner (, does not close it.
  void substitution() {
    in_word_ = true;
    const std::size_t begin = at_;
    if (line_[at_] == '`') {
      for (++at_; at_ < line_.size() && line_[at_] != '`'; ++at_)
        if (line_[at_] == '\\') ++at_;
    } else {
      int depth = 0;
      for (at_ += 1; at_ < line_.size(); ++at_) {
        const char c = line_[at_];
        if (c == '\\') {
          ++at_;
        } else if (c == '\'') {
          at_ = std::min(line_.find('\'', at_ + 1), line_.size());
        } else if (c == '"') {
          for (++at_; at_ < line_.size() && line_[at_] != '"'; ++at_)
            if (line_[at_] == '\\') ++at_;
        } else if (c == '(') {
          ++depth;
        } else if (c == ')' && --depth == 0) {
          break;
        }
      }
    }
    at_ = std::min(at_ + 1, line_.size());
    word_.append(line_.substr(begin, at_ - begin));
  }

  std::string_view line_;
  std::size_t at_ = 0;
  std::string word_;
  bool in_word_ = false;
  std::vector<std::string> words_;
};

/// A shell program's name, whatever folder it is in: /bin/sh, bash.
bool is_shell(std::string_view word) {
  word.remove_prefix(std::min(word.size(), word.find_last_of('/') + 1));
  constexpr std::array<std::string_view, 6> shells{"sh", "bash", "dash", "zsh", "ksh", "ash"};
  return std::find(shells.begin(), shells.end(), word) != shells.end();
}

}  // namespace

std::vector<std::string> shell_words(std::string_view line) {
  auto words = Splitter(line).words();
  std::vector<std::string> out;
  for (std::size_t i = 0; i < words.size(); ++i) {
    out.push_back(std::move(words[i]));
    if (!is_shell(out.back())) continue;
    // Its options (-e, -o pipefail), and -c among them: the word after them is a script.
    bool script = false;
    while (i + 1 < words.size() && words[i + 1].size() > 1 &&
           (words[i + 1][0] == '-' || words[i + 1][0] == '+') && words[i + 1] != "--") {
      const std::string& option = words[++i];
      script = script || (option[0] == '-' && option[1] != '-' && option.find('c') != std::string::npos);
      out.push_back(option);
      if ((option == "-o" || option == "+o") && i + 1 < words.size()) out.push_back(std::move(words[++i]));
    }
    if (script && i + 1 < words.size()) {
      auto inner = shell_words(words[++i]);
      std::move(inner.begin(), inner.end(), std::back_inserter(out));
    }
  }
  return out;
}

}  // namespace gpuplan::util
