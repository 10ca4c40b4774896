// Shell quoting and command templates: the only way a label or a path reaches a shell.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <initializer_list>
#include <map>
#include <set>
#include <vector>

#include "gpuplan/error.hpp"
#include "gpuplan/run.hpp"
#include "gpuplan/target.hpp"
#include "util/shell_words.hpp"
#include "util/text.hpp"

namespace gpuplan {

std::string shell_quote(std::string_view value) {
  auto safe = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("/._-:,=+@%").find(c) != std::string_view::npos;
  };
  if (!value.empty() && std::all_of(value.begin(), value.end(), safe)) return std::string(value);
  std::string quoted = "'";
  for (char c : value) {
    if (c == '\'')
      quoted += "'\\''";
    else
      quoted += c;
  }
  return quoted + "'";
}

namespace {

/// The runtime ("docker", ...) of the container the template starts, unless it names one of
/// `passed` (what hands the container what it needs).
std::optional<std::string> container_without(std::string_view command_template,
                                             std::initializer_list<std::string_view> passed) {
  for (std::string_view named : passed)
    if (command_template.find(named) != std::string_view::npos) return std::nullopt;
  // As the shell reads it: a quoted "docker run" in a message is no container, and one in a
  // `sh -c '…'` script is.
  const auto words = util::shell_words(command_template);
  for (std::size_t i = 0; i + 1 < words.size(); ++i) {
    auto program = std::string_view(words[i]).substr(words[i].find_last_of('/') + 1);  // /usr/bin/docker too
    if (program != "docker" && program != "podman" && program != "nerdctl") continue;
    std::size_t next = i + 1;
    if (words[next] == "container" && next + 1 < words.size()) ++next;
    if (words[next] == "run") return std::string(program);
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> container_without_unit_gpus(std::string_view command_template) {
  // Not NVIDIA_VISIBLE_DEVICES: exec does not set it per unit, so `-e NVIDIA_VISIBLE_DEVICES` passes on
  // the caller's (a CUDA base image's `all`), and every container saw every GPU without a warning.
  return container_without(command_template, {"{gpus}", "CUDA_VISIBLE_DEVICES"});
}

std::optional<std::string> container_without_sharing_env(std::string_view command_template) {
  return container_without(command_template, {"TF_FORCE_GPU_ALLOW_GROWTH", "XLA_PYTHON_CLIENT_PREALLOCATE"});
}

std::string expand_command(std::string_view command_template, const Assignment& a,
                           const std::string& option) {
  auto value_of = [&](std::string_view name) -> std::optional<std::string> {
    if (name == "label") return a.unit.label;
    if (name == "unit") return a.unit.id;
    if (name == "gpus") return gpu_list(a.gpus);
    if (name == "shard_index") return a.unit.shard_index ? std::to_string(*a.unit.shard_index) : "";
    if (name == "shard_count") return std::to_string(a.unit.shard_count);
    return std::nullopt;
  };
  auto bad = [&](const std::string& what) {
    throw InputError(Position{option},
                     fmt::format("{} in \"{}\" (placeholders: {{label}} {{unit}} {{gpus}} "
                                 "{{shard_index}} {{shard_count}}; {{{{ and }}}} for braces)",
                                 what, command_template));
  };
  // The shell's quoting where each placeholder stands: a value inside the template's own '…' or
  // "…" is written to stay the value there ("label={label}" with a $(…) in the label ran it); one
  // in a command substitution, $(…) or `…`, even inside "…", is quoted as in the open.
  enum class Quote { none, single, double_, paren, backtick };
  std::vector<Quote> quotes{Quote::none};
  auto quoted_for_here = [&](const std::string& value) {
    const Quote quote = quotes.back();
    if (quote == Quote::backtick) {  // in `…`, a \ or ` of the quoted value needs a \ before it
      std::string quoted;
      for (char c : shell_quote(value))
        quoted += c == '\\' || c == '`' ? std::string{'\\', c} : std::string(1, c);
      return quoted;
    }
    if (quote != Quote::single && quote != Quote::double_) return shell_quote(value);
    std::string here;
    for (char c : value) {
      if (quote == Quote::single && c == '\'')
        here += "'\\''";
      else if (quote == Quote::double_ && std::string_view("$`\"\\").find(c) != std::string_view::npos)
        here += {'\\', c};
      else
        here += c;
    }
    return here;
  };
  auto next_is = [&](std::size_t i, char c) {
    return i + 1 < command_template.size() && command_template[i + 1] == c;
  };
  std::string out;
  for (size_t i = 0; i < command_template.size(); ++i) {
    char c = command_template[i];
    const Quote quote = quotes.back();
    if ((c == '{' || c == '}') && next_is(i, c)) {
      out += c;
      ++i;
    } else if (c == '{') {
      auto close = command_template.find('}', i);
      if (close == std::string_view::npos) bad("an unmatched {");
      auto name = command_template.substr(i + 1, close - i - 1);
      auto value = value_of(name);
      if (!value) bad(fmt::format("unknown placeholder {{{}}}", name));
      out += quoted_for_here(*value);
      i = close;
    } else if (c == '}') {
      bad("an unmatched }");
    } else if (quote == Quote::single) {
      out += c;
      if (c == '\'') quotes.pop_back();
    } else {
      out += c;
      bool escapes = c == '\\' && i + 1 < command_template.size() && !next_is(i, '{') && !next_is(i, '}');
      if (escapes) {
        out += command_template[++i];  // an escaped character quotes nothing
      } else if (c == '$' && next_is(i, '(')) {
        out += command_template[++i];
        quotes.push_back(Quote::paren);
      } else if (c == '`') {
        if (quote == Quote::backtick)
          quotes.pop_back();
        else
          quotes.push_back(Quote::backtick);
      } else if (c == '"') {
        if (quote == Quote::double_)
          quotes.pop_back();
        else
          quotes.push_back(Quote::double_);
      } else if (quote == Quote::double_) {
        continue;  // a ' or ) inside "…" is itself
      } else if (c == '\'') {
        quotes.push_back(Quote::single);
      } else if (c == '(' && quote == Quote::paren) {
        quotes.push_back(Quote::paren);  // a subshell's or $((…))'s: the "$(" ends at a later ")"
      } else if (c == ')' && quote == Quote::paren) {
        quotes.pop_back();
      } else if (c == '#' &&
                 (out.size() == 1 || std::isspace(static_cast<unsigned char>(out[out.size() - 2])))) {
        // A comment, to its line's end: its quotes open nothing.
        auto end = std::min(command_template.find('\n', i), command_template.size());
        out.append(command_template.substr(i + 1, end - i - 1));
        i = end - 1;
      }
    }
  }
  return out;
}

std::string run_under_command(const BazelRun& r) {
  auto command = fmt::format("{} run-under --plan {} --node-file {} --lock-dir {}", shell_quote(r.gpuplan),
                             shell_quote(r.plan), shell_quote(r.node_file), shell_quote(r.lock_dir));
  if (r.results) command += " --results " + shell_quote(*r.results);
  if (r.fleet) command += " --fleet " + shell_quote(*r.fleet);
  if (r.warn_missing_gpus) command += " --missing-gpus=warn";
  if (r.query) command += " --query " + shell_quote(*r.query);
  if (r.rules) command += " --rules " + shell_quote(*r.rules);
  return command;
}

void check_bazel_args(const std::vector<std::string>& args, bool with_command) {
  if (args.empty()) return;
  if (with_command)
    throw InputError(Position{"--"},
                     "options after -- are for the default bazel test; with --command, write them into the "
                     "command");
  for (const auto& arg : args) {
    if (!arg.starts_with("-") || arg == "--")
      throw InputError(Position{arg},
                       "only bazel test options may follow --, each as --name=value (--config=cuda, "
                       "--compilation_mode=opt): the plan names the tests, and a separate value could "
                       "not be told from a target");
    // Startup options choosing the rc files go before the command: Bazel refuses them after
    // `test` ('Unrecognized option', exit 2, once exec had started).
    const auto name = arg.substr(0, arg.find('='));
    for (const char* startup : {"bazelrc", "home_rc", "system_rc", "workspace_rc", "ignore_all_rc_files"})
      if (name == fmt::format("--{}", startup) || name == fmt::format("--no{}", startup))
        throw InputError(Position{arg},
                         "a Bazel startup option, which goes before the command and which Bazel refuses "
                         "after `bazel test`: the default command has no place for it; give --command "
                         "'bazel OPTION test --run_under=... {label}' and run-under within it");
    // Bazel keeps the last --run_under, gpuplan's: the team's wrapper (a sanitizer) was dropped
    // without a word and the tests ran without it.
    if (arg.starts_with("--run_under"))
      throw InputError(Position{arg},
                       "the default bazel test's --run_under is gpuplan run-under, and Bazel keeps one: "
                       "run the team's wrapper inside the test, or give --command 'bazel test "
                       "--run_under=... {label}' and run-under within it");
  }
}

NodeCommand bazel_node_command(const std::vector<Assignment>& units, const BazelRun& r) {
  std::set<std::string> labels;
  for (const auto& a : units) labels.insert(canonical_label(a.unit.label));
  std::string command = "bazel test";
  for (const auto& arg : r.bazel_args) command += " " + shell_quote(arg);
  command += fmt::format(" --run_under={} --sandbox_writable_path={}", shell_quote(run_under_command(r)),
                         shell_quote(r.lock_dir));
  if (r.results) {
    auto dir = r.results->substr(0, r.results->rfind('/'));
    command += " --sandbox_writable_path=" + shell_quote(dir.empty() ? "/" : dir);
  }
  if (r.build_events) command += " --build_event_json_file=" + shell_quote(*r.build_events);
  // The plan chose the tests: a .bazelrc's `test --test_tag_filters=-gpu` (common for CPU CI)
  // would otherwise skip GPU tests named here, and Bazel would pass with them unrun.
  command += fmt::format(" --local_test_jobs={} {}", r.jobs, no_test_filters);
  std::string on_the_line = " --";
  for (const auto& label : labels) on_the_line += " " + shell_quote(label);
  if (command.size() + on_the_line.size() <= max_command_line) return {command + on_the_line, {}, {}};
  // 1,700 labels of 80 bytes: "cannot run /bin/sh: Argument list too long", after planning.
  std::string text;
  for (const auto& label : labels) text += label + "\n";
  auto file = fmt::format("{}/targets-{:016x}", r.lock_dir, util::fnv1a(text));
  return {command + " --target_pattern_file=" + shell_quote(file), file, std::move(text)};
}

std::string tests_split_over_nodes(const Plan& plan, std::string_view node) {
  std::map<std::string, std::map<std::string, std::vector<std::string>>> shards;  // label → node → shards
  for (const auto& a : plan.assignments)
    shards[canonical_label(a.unit.label)][a.node].push_back(
        a.unit.shard_index ? std::to_string(*a.unit.shard_index) : "the whole test");
  long split = 0;
  std::string first;
  for (const auto& [label, nodes] : shards) {
    if (nodes.size() < 2 || (!node.empty() && !nodes.contains(std::string(node)))) continue;
    if (split++ > 0) continue;
    std::vector<std::string> parts;
    for (const auto& [name, indexes] : nodes)
      parts.push_back(fmt::format("{} on {}", fmt::join(indexes, ", "), name));
    first = fmt::format("{} (shards {})", label, fmt::join(parts, "; "));
  }
  if (split == 0) return {};
  return fmt::format(
      "the plan puts the shards of {}{} on several nodes: the default bazel test runs every shard of each "
      "test it names, and run-under refuses those planned on another node, so {} on each of its nodes "
      "(the other tests run). Give --command (exec then runs each unit itself, on its planned node), or "
      "plan with --shards=whole",
      first, split > 1 ? fmt::format(" and {} more test{}", split - 1, split == 2 ? "" : "s") : "",
      split > 1 ? "they fail" : "it fails");
}

}  // namespace gpuplan
