// Reading a rules file (`--rules FILE`): a repository's own conventions and the planner's knobs.
#include "gpuplan/rules.hpp"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>

#include "annotate/claim.hpp"
#include "annotate/conventions.hpp"
#include "annotate/rule_matcher.hpp"
#include "core/utf8.hpp"
#include "gpuplan/graph.hpp"
#include "gpuplan/limits.hpp"
#include "util/suggest.hpp"
#include "util/text.hpp"
#include "util/yaml_keys.hpp"

namespace gpuplan {

std::string Rule::source() const { return "rule " + where.str(); }

namespace {

using annotate::setting_fields;

/// " (did you mean \"gpus\"?)" when one of `known` is close to `word`; else "".
std::string did_you_mean(std::string_view word, const std::vector<std::string_view>& known) {
  auto best = util::closest_match(word, known);
  return best ? fmt::format(" (did you mean \"{}\"?)", *best) : std::string();
}

/// A Starlark name, as rule classes and macros have: a letter or '_', then letters, digits, '_'.
bool is_identifier(std::string_view text) {
  auto word = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  return !text.empty() && !std::isdigit(static_cast<unsigned char>(text[0])) &&
         std::ranges::all_of(text, word);
}

/// "\\d" when `regex` holds an escaped backslash followed by a letter: a literal backslash, which
/// no tag holds, where `\d` was meant (YAML keeps both backslashes of '\\d' in single quotes).
/// Empty otherwise.
std::string_view doubled_escape(std::string_view regex) {
  for (std::size_t i = 0; i + 1 < regex.size(); i += 2) {
    i = regex.find('\\', i);
    if (i == std::string_view::npos || i + 1 >= regex.size()) break;
    if (regex[i + 1] == '\\' && i + 2 < regex.size() &&
        std::isalpha(static_cast<unsigned char>(regex[i + 2])))
      return regex.substr(i, 3);
  }
  return {};
}

std::string known_list(const std::vector<std::string_view>& known) {
  return fmt::format("{}", fmt::join(known, ", "));
}

/// Reads one YAML document into Rules, naming file:line:col in every error.
class RulesReader {
 public:
  explicit RulesReader(const std::string& name) : name_(name) {}

  [[noreturn]] void fail(const YAML::Mark& mark, const std::string& message) const {
    bool known = mark.line >= 0 && mark.column >= 0;
    throw InputError(Position{name_, known ? mark.line + 1 : 0, known ? mark.column + 1 : 0}, message);
  }

  Position position(const YAML::Node& node) const {
    auto mark = node.Mark();
    if (mark.line < 0) return Position{name_};
    return Position{name_, mark.line + 1, mark.column + 1};
  }

  std::string scalar(const YAML::Node& node, std::string_view key) const {
    if (!node.IsScalar()) fail(node.Mark(), fmt::format("{}: expected a single value", key));
    return node.Scalar();
  }

  long integer(const YAML::Node& node, std::string_view key, long least, long most) const {
    auto value = util::whole_number(node, least, most);
    if (!value) fail(node.Mark(), fmt::format("{}: {}", key, value.problem()));
    return *value;
  }

  double number(const YAML::Node& node, std::string_view key, double least, double below) const {
    auto value = util::number_below(node, least, below);
    if (!value) fail(node.Mark(), fmt::format("{}: {}", key, value.problem()));
    return *value;
  }

  /// A percentile, 0 ≤ p ≤ 100 as `history show --percentile` takes it: 100 is the slowest run in
  /// the window, 0 the fastest. Between 0 and 1 it is a quantile as numpy and pandas write one
  /// (0.9 for p90): planned as the 0.9th percentile, every unit got nearly its fastest run.
  double percentile(const YAML::Node& node) const {
    auto read = util::number_from(node, 0, 100);
    if (!read) fail(node.Mark(), fmt::format("history_percentile: {}", read.problem()));
    double p = *read;
    if (auto problem = quantile_problem(p); !problem.empty())
      fail(node.Mark(), "history_percentile: " + problem);
    return p;
  }

  /// Fails on a key of a mapping (in `where`) that is not a word, unknown, or given twice.
  void check_key(util::KeyChecker& keys, const YAML::Node& key, const std::vector<std::string_view>& known,
                 std::string_view where) const {
    auto problem = keys.check(key);
    if (!problem) return;
    auto word = scalar(key, where);
    if (problem->kind == util::KeyProblem::Kind::repeated)
      fail(key.Mark(), fmt::format("key \"{}\" given twice in {} (first on line {})", util::excerpt(word),
                                   where, problem->first_line));
    if (word == "<<") fail(key.Mark(), fmt::format("<< in {}: {}", where, util::merge_key_problem));
    fail(key.Mark(), fmt::format("unknown key \"{}\" in {}{}; known keys: {}", util::excerpt(word), where,
                                 did_you_mean(word, known), known_list(known)));
  }

  Rules read(const YAML::Node& root) {
    Rules rules;
    rules.source = name_;
    if (!root || root.IsNull()) return rules;
    if (!root.IsMap())
      fail(root.Mark(), "a rules file is a mapping with keys such as version, rules, disable");
    static const std::vector<std::string_view> keys = {"version",
                                                       "multi_gpu_count",
                                                       "multiaccelerator_count",
                                                       "size_default_seconds",
                                                       "vram_headroom",
                                                       "max_tests_per_gpu",
                                                       "pack_slowdown",
                                                       "history_percentile",
                                                       "history_window",
                                                       "disable",
                                                       "rules",
                                                       "gpu_deps",
                                                       "gpu_free",
                                                       "classify_by_deps"};
    util::KeyChecker seen(keys);
    for (const auto& entry : root) {
      check_key(seen, entry.first, keys, "the rules file");
      auto key = entry.first.Scalar();
      const auto& value = entry.second;
      if (key == "version")
        integer(value, key, 1, 1);
      else if (key == "multi_gpu_count")
        rules.multi_gpu_count = static_cast<int>(integer(value, key, 1, max_gpus_per_test));
      else if (key == "multiaccelerator_count")
        rules.multiaccelerator_count = static_cast<int>(integer(value, key, 1, max_gpus_per_test));
      else if (key == "size_default_seconds")
        read_sizes(value, rules);
      else if (key == "vram_headroom")
        rules.vram_headroom = number(value, key, 0, 1);
      else if (key == "max_tests_per_gpu")
        rules.max_tests_per_gpu = static_cast<int>(integer(value, key, 1, 1000));
      else if (key == "pack_slowdown")
        rules.pack_slowdown = number(value, key, 1, 100);
      else if (key == "history_percentile")
        rules.history_percentile = percentile(value);
      else if (key == "history_window")
        rules.history_window = static_cast<int>(integer(value, key, 1, 100000));
      else if (key == "disable")
        read_disabled(value, rules);
      else if (key == "gpu_deps" || key == "gpu_free")
        read_gpu_patterns(value, key, key == "gpu_deps" ? rules.gpu_deps : rules.gpu_free);
      else if (key == "classify_by_deps")
        rules.classify_by_deps = boolean(value, key);
      else
        read_rules(value, rules);
    }
    return rules;
  }

 private:
  void read_sizes(const YAML::Node& node, Rules& rules) const {
    if (!node.IsMap())
      fail(node.Mark(), "size_default_seconds: expected a mapping such as {small: 60, large: 900}");
    static const std::vector<std::string_view> sizes = {"small", "medium", "large", "enormous"};
    util::KeyChecker seen(sizes);
    for (const auto& entry : node) {
      check_key(seen, entry.first, sizes, "size_default_seconds");
      auto key = "size_default_seconds." + entry.first.Scalar();
      rules.size_default_seconds[entry.first.Scalar()] = number(entry.second, key, 0.001, max_duration_s);
    }
  }

  bool boolean(const YAML::Node& node, std::string_view key) const {
    auto text = scalar(node, key);
    if (text != "true" && text != "false")
      fail(node.Mark(), fmt::format("{}: expected true or false, not \"{}\"", key, util::excerpt(text)));
    return text == "true";
  }

  void read_gpu_patterns(const YAML::Node& node, const std::string& key,
                         std::vector<std::string>& out) const {
    if (!node.IsSequence())
      fail(node.Mark(),
           fmt::format("{}: expected a list of label patterns, such as [\"@pypi//torch:*\"]", key));
    for (const auto& item : node) {
      auto pattern = scalar(item, key);
      if (auto unseen = util::unseen_character(pattern); !unseen.empty())
        fail(item.Mark(),
             fmt::format("{}: \"{}\" has {}, so it matches no label", key, util::excerpt(pattern), unseen));
      if (auto problem = gpu_pattern_problem(pattern); !problem.empty())
        fail(item.Mark(), fmt::format("{}: {}", key, problem));
      out.push_back(pattern);
    }
  }

  void read_disabled(const YAML::Node& node, Rules& rules) const {
    if (!node.IsSequence())
      fail(node.Mark(), "disable: expected a list of convention names, such as [multi_gpu]");
    for (const auto& item : node) {
      auto name = scalar(item, "disable");
      const auto& known = convention_names();
      if (std::find(known.begin(), known.end(), name) == known.end())
        fail(item.Mark(), fmt::format("disable: \"{}\" is not a built-in convention{}; they are: {}",
                                      util::excerpt(name), did_you_mean(name, known), known_list(known)));
      rules.disabled_conventions.insert(name);
    }
  }

  void read_rules(const YAML::Node& node, Rules& rules) const {
    if (!node.IsSequence()) fail(node.Mark(), "rules: expected a list of rules (- tag: ..., set: {...})");
    for (const auto& item : node) rules.rules.push_back(read_rule(item, rules.warnings));
  }

  Rule read_rule(const YAML::Node& node, Diagnostics& warnings) const {
    if (!node.IsMap())
      fail(node.Mark(),
           "a rule is a mapping with matchers (tag, label, rule_class, "
           "generator_function) and set");
    static const std::vector<std::string_view> keys = {"tag", "label", "rule_class", "generator_function",
                                                       "set"};
    Rule rule;
    rule.where = position(node);
    unsigned captures = 0;
    std::optional<YAML::Node> set;
    util::KeyChecker seen(keys);
    for (const auto& entry : node) {
      check_key(seen, entry.first, keys, "a rule");
      auto key = entry.first.Scalar();
      if (key == "set") {
        set.emplace(entry.second);
        continue;
      }
      auto value = scalar(entry.second, key);
      if (auto unseen = util::unseen_character(value); !unseen.empty())
        fail(entry.second.Mark(),
             fmt::format("{}: \"{}\" has {}, so it matches no test", key, util::excerpt(value), unseen));
      if (key == "tag") {
        auto check = annotate::check_regex(value);
        if (!check.problem.empty())
          fail(entry.second.Mark(), fmt::format("tag: \"{}\" is not a regular expression (RE2 syntax): {}",
                                                util::excerpt(value), check.problem));
        captures = static_cast<unsigned>(check.captures);
        rule.tag = value;
        if (auto escape = doubled_escape(value); !escape.empty()) {
          auto meant = escape.substr(1);
          warnings.push_back(Diagnostic{
              Severity::warning, "", position(entry.second).str(),
              fmt::format("{}: tag: \"{}\" has {}, a literal backslash before \"{}\", and no tag holds a "
                          "backslash, so the rule matches no tag; write '{}' in single quotes or \"\\{}\" in "
                          "double quotes (YAML keeps both backslashes of '{}')",
                          position(entry.second).str(), util::excerpt(value), escape, meant.substr(1), meant,
                          meant, escape)});
        }
      } else if (key == "label") {
        if (auto problem = annotate::label_pattern_problem(value); !problem.empty())
          fail(entry.second.Mark(), "label: " + problem);
        rule.label = value;
      } else if (!is_identifier(value)) {
        fail(entry.second.Mark(),
             fmt::format("{}: \"{}\" is not a {} (one name, as bazel query prints it: {}), so it matches no "
                         "test; write a rule for each",
                         key, util::excerpt(value), key == "rule_class" ? "rule class" : "macro's name",
                         key == "rule_class" ? "py_test" : "cuda_test"));
      } else if (key == "rule_class") {
        rule.rule_class = value;
      } else {
        rule.generator_function = value;
      }
    }
    if (!rule.tag && !rule.label && !rule.rule_class && !rule.generator_function)
      fail(node.Mark(), "a rule needs at least one matcher: tag, label, rule_class or generator_function");
    if (!set) fail(node.Mark(), "a rule needs `set`: the requirement fields it sets");
    read_settings(*set, rule, captures);
    return rule;
  }

  void read_settings(const YAML::Node& set, Rule& rule, unsigned captures) const {
    if (!set.IsMap() || set.size() == 0)
      fail(set.Mark(),
           fmt::format("set: expected a mapping of requirement fields ({})", known_list(setting_fields())));
    util::KeyChecker seen(setting_fields());
    for (const auto& entry : set) {
      check_key(seen, entry.first, setting_fields(), "set");
      auto field = entry.first.Scalar();
      auto value = settings_value(entry.second, field);
      check_setting(entry.second, field, value, captures, rule.tag.has_value());
      rule.set[field] = value;
    }
  }

  /// A scalar, or for gpu_models a list joined with '|'.
  std::string settings_value(const YAML::Node& node, const std::string& field) const {
    if (field != "gpu_models" || !node.IsSequence()) return scalar(node, "set." + field);
    std::string joined;
    for (const auto& item : node) joined += (joined.empty() ? "" : "|") + scalar(item, "set.gpu_models");
    return joined;
  }

  /// Values without captures are checked now; $N must name a capture of the tag regex.
  void check_setting(const YAML::Node& node, const std::string& field, const std::string& value,
                     unsigned captures, bool has_tag) const {
    bool uses_captures = false;
    for (size_t i = 0; i + 1 < value.size(); ++i) {
      if (value[i] != '$') continue;
      if (value[i + 1] == '$') {
        ++i;
        continue;
      }
      if (!std::isdigit(static_cast<unsigned char>(value[i + 1]))) continue;
      auto group = static_cast<unsigned>(value[i + 1] - '0');
      if (!has_tag)
        fail(node.Mark(), fmt::format("set.{}: ${} needs a tag regex to capture from", field, group));
      if (group > captures)
        fail(node.Mark(), fmt::format("set.{}: ${} but the tag regex has {} capture group{}", field, group,
                                      captures, util::plural(captures)));
      uses_captures = true;
    }
    if (uses_captures) return;
    if (auto applied = annotate::apply_setting({}, field, value); !applied)
      fail(node.Mark(), fmt::format("set.{}: {}", field, applied.problem()));
  }

  const std::string& name_;
};

}  // namespace

std::string quantile_problem(double p) {
  if (p <= 0 || p >= 1) return {};
  return fmt::format(
      "{} is the {}th percentile, nearly each unit's fastest run: a percentile, not a quantile; write {:.4g} "
      "for the {:.4g}th",
      p, p, p * 100, p * 100);
}

Rules load_rules(std::istream& in, const std::string& name) {
  YAML::Node root;
  RulesReader reader(name);
  std::string text = read_small_text(in, name, max_yaml_bytes);
  require_utf8(text, name);  // values reach diagnostics and JSON output
  std::optional<util::SecondDocument> second;
  try {
    second = util::second_document(text);
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    reader.fail(e.mark, util::excerpt(e.msg, 200));
  }
  // Only the first document was read before: the rules after a `---` were dropped unseen.
  if (second)
    reader.fail(second->at, util::second_document_problem(
                                *second, "a rules file is one document; merge the rules into one list"));
  return reader.read(root);
}

}  // namespace gpuplan
