// Shell quoting and command templates: the only way a label or a path reaches a shell.
#include <fmt/format.h>

#include <algorithm>

#include "gpuplan/error.hpp"
#include "gpuplan/run.hpp"

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
  std::string out;
  for (size_t i = 0; i < command_template.size(); ++i) {
    char c = command_template[i];
    if ((c == '{' || c == '}') && i + 1 < command_template.size() && command_template[i + 1] == c) {
      out += c;
      ++i;
    } else if (c == '{') {
      auto close = command_template.find('}', i);
      if (close == std::string_view::npos) bad("an unmatched {");
      auto name = command_template.substr(i + 1, close - i - 1);
      auto value = value_of(name);
      if (!value) bad(fmt::format("unknown placeholder {{{}}}", name));
      out += shell_quote(*value);
      i = close;
    } else if (c == '}') {
      bad("an unmatched }");
    } else {
      out += c;
    }
  }
  return out;
}

std::string default_command(const Assignment& a) {
  std::string command = "bazel test --test_env=CUDA_VISIBLE_DEVICES={gpus}";
  // Bazel cannot run one shard of a test, and refuses TEST_TOTAL_SHARDS in --test_env: the
  // test runs unsharded, and a --run_under prefix gives it this shard's variables.
  if (a.unit.shard_index)
    command += " --test_sharding_strategy=disabled --run_under=" +
               shell_quote(fmt::format("env TEST_TOTAL_SHARDS={} TEST_SHARD_INDEX={}", a.unit.shard_count,
                                       *a.unit.shard_index));
  return expand_command(command + " -- {label}", a);
}

}  // namespace gpuplan
