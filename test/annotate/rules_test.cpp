// Reading rules files: the example, the knobs, and every kind of mistake with its position.
#include "gpuplan/rules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>

#include "annotate/classify_helpers.hpp"
#include "annotate/rule_matcher.hpp"

using namespace gpuplan;

namespace {

Rules load(const std::string& text) {
  std::istringstream in(text);
  return load_rules(in, "rules.yaml");
}

/// The message load_rules throws for `text`.
std::string error_of(const std::string& text) {
  try {
    load(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("the example rules file loads, mapping the team macro's tag") {
  std::ifstream in(GPUPLAN_SOURCE_DIR "/examples/rules.yaml");
  auto rules = load_rules(in, "examples/rules.yaml");
  REQUIRE(rules.source == "examples/rules.yaml");
  REQUIRE(rules.rules.size() >= 1);
  const auto& rule = rules.rules[0];
  REQUIRE(rule.tag == "team-gpus-(\\d+)");
  REQUIRE(rule.generator_function == "gpu_test");
  REQUIRE(rule.set.at("gpus") == "$1");
  REQUIRE(rule.source().starts_with("rule examples/rules.yaml:"));
}

TEST_CASE("an empty rules file means the defaults") {
  auto rules = load("");
  REQUIRE(rules.multi_gpu_count == 2);
  REQUIRE(rules.multiaccelerator_count == 8);
  REQUIRE(rules.rules.empty());
}

TEST_CASE("a rules file is one YAML document: the rules after a --- are not dropped unseen") {
  // Only the first document was read before; the second's rules never applied.
  REQUIRE(error_of("version: 1\nrules: []\n---\nrules:\n  - {tag: team-gpu, set: {gpus: 1}}\n") ==
          "rules.yaml:3:1: a second YAML document (after ---): a rules file is one document; merge the "
          "rules into one list");
  REQUIRE_THAT(error_of("rules: []\n...\nrules: []\n"),
               Catch::Contains("a second YAML document (after ...)"));
  // An empty document after the last --- drops nothing: still one rules file.
  REQUIRE(error_of("rules: []\n---\n") == "(no error)");
  REQUIRE(error_of("rules: []\n---\n# the end\n") == "(no error)");
  REQUIRE_NOTHROW(load(","));  // yaml-cpp 0.7's LoadAll looped forever on it
}

TEST_CASE("the knobs are read, and sizes not given keep their defaults") {
  auto rules = load(
      "version: 1\nmulti_gpu_count: 4\nmultiaccelerator_count: 16\nsize_default_seconds: {large: 1200}\n"
      "vram_headroom: 0.2\nmax_tests_per_gpu: 2\npack_slowdown: 1.25\nhistory_percentile: "
      "75\nhistory_window: 5\n"
      "disable: [multi_gpu, exec-pool]\n");
  REQUIRE(rules.multi_gpu_count == 4);
  REQUIRE(rules.multiaccelerator_count == 16);
  REQUIRE(rules.size_default_seconds.at("large") == 1200);
  REQUIRE(rules.size_default_seconds.at("small") == 60);
  REQUIRE(rules.vram_headroom == 0.2);
  REQUIRE(rules.max_tests_per_gpu == 2);
  REQUIRE(rules.pack_slowdown == 1.25);
  REQUIRE(rules.history_percentile == 75);
  REQUIRE(rules.history_window == 5);
  REQUIRE(rules.disabled_conventions == std::set<std::string>{"exec-pool", "multi_gpu"});
}

TEST_CASE("history_percentile takes 0 to 100, as history show --percentile does") {
  // 100 plans each unit at its slowest recent run; the rules file refused it (below 100), while
  // `history show --percentile 100` showed that very estimate.
  REQUIRE(load("history_percentile: 100\n").history_percentile == 100);
  REQUIRE(load("history_percentile: 0\n").history_percentile == 0);
  REQUIRE(error_of("history_percentile: 100.5\n") ==
          "rules.yaml:1:21: history_percentile: must be from 0 to 100, not 100.5");
  REQUIRE(error_of("history_percentile: -1\n") ==
          "rules.yaml:1:21: history_percentile: must be from 0 to 100, not -1");
}

TEST_CASE("a rule's position and its gpu_models list are kept") {
  auto rules = load("rules:\n  - label: //video/...\n    set:\n      gpu_models: [L4, L40S]\n");
  REQUIRE(rules.rules.at(0).where.line == 2);
  REQUIRE(rules.rules[0].where.column == 5);
  REQUIRE(rules.rules[0].source() == "rule rules.yaml:2:5");
  REQUIRE(rules.rules[0].set.at("gpu_models") == "L4|L40S");
}

TEST_CASE("an unknown key is an error at its position, with a suggestion") {
  REQUIRE(
      error_of("multi_gpu_cont: 4\n") ==
      "rules.yaml:1:1: unknown key \"multi_gpu_cont\" in the rules file (did you mean \"multi_gpu_count\"?); "
      "known keys: version, multi_gpu_count, multiaccelerator_count, size_default_seconds, vram_headroom, "
      "max_tests_per_gpu, pack_slowdown, history_percentile, history_window, disable, rules, gpu_deps, "
      "gpu_free, classify_by_deps");
  REQUIRE_THAT(error_of("rules:\n  - tag: x\n    set: {gpu: 2}\n"),
               Catch::StartsWith("rules.yaml:3:11: unknown key \"gpu\" in set (did you mean \"gpus\"?)"));
  REQUIRE_THAT(error_of("rules:\n  - tags: x\n    set: {gpus: 2}\n"),
               Catch::StartsWith("rules.yaml:2:5: unknown key \"tags\" in a rule (did you mean \"tag\"?)"));
}

TEST_CASE("a key given twice is an error at the second, naming the first's line, as in fleet files") {
  REQUIRE(error_of("multi_gpu_count: 4\nvram_headroom: 0.1\nmulti_gpu_count: 8\n") ==
          "rules.yaml:3:1: key \"multi_gpu_count\" given twice in the rules file (first on line 1)");
  REQUIRE(error_of("size_default_seconds:\n  small: 60\n  small: 90\n") ==
          "rules.yaml:3:3: key \"small\" given twice in size_default_seconds (first on line 2)");
  REQUIRE(error_of("rules:\n  - tag: x\n    tag: y\n    set: {gpus: 2}\n") ==
          "rules.yaml:3:5: key \"tag\" given twice in a rule (first on line 2)");
  REQUIRE(error_of("rules:\n  - tag: x\n    set:\n      gpus: 2\n      gpus: 4\n") ==
          "rules.yaml:5:7: key \"gpus\" given twice in set (first on line 4)");
}

TEST_CASE("bad values fail with file:line:col") {
  // The fleet loader's words for the same mistakes (util/yaml_keys: one message style).
  REQUIRE(error_of("multi_gpu_count: 0\n") == "rules.yaml:1:18: multi_gpu_count: must be at least 1, not 0");
  REQUIRE(error_of("multi_gpu_count: [2]\n") ==
          "rules.yaml:1:18: multi_gpu_count: must be a whole number, not a list");
  REQUIRE(error_of("vram_headroom: 1.5\n") ==
          "rules.yaml:1:16: vram_headroom: must be at least 0 and below 1, not 1.5");
  REQUIRE_THAT(error_of("version: 2\n"), Catch::StartsWith("rules.yaml:1:10: version:"));
  REQUIRE_THAT(error_of("size_default_seconds: {huge: 5}\n"),
               Catch::StartsWith("rules.yaml:1:24: unknown key \"huge\" in size_default_seconds"));
  REQUIRE_THAT(
      error_of("disable: [multi-gpu]\n"),
      Catch::StartsWith("rules.yaml:1:11: disable: \"multi-gpu\" is not a built-in convention (did you mean "
                        "\"multi_gpu\"?)"));
  REQUIRE_THAT(error_of("rules:\n  - tag: x\n    set: {gpu_mem: lots}\n"),
               Catch::StartsWith("rules.yaml:3:20: set.gpu_mem: \"lots\" is not a memory size"));
  REQUIRE_THAT(error_of("rules:\n  - tag: x\n    set: {cuda: twelve}\n"),
               Catch::StartsWith("rules.yaml:3:17: set.cuda: \"twelve\" is not a version constraint"));
  REQUIRE_THAT(error_of("rules:\n  - tag: x\n    set: {compute_capability: 80}\n"),
               Catch::StartsWith("rules.yaml:3:31: set.compute_capability: 80 is not a compute capability"));
  REQUIRE_THAT(error_of("rules: {tag: x}\n"), Catch::StartsWith("rules.yaml:1:8: rules: expected a list"));
  REQUIRE_THAT(error_of("rules:\n  - tag: x\n    set: {<<: {gpus: 2}}\n"),
               Catch::StartsWith("rules.yaml:3:11: << in set: a YAML merge key"));
  // Written as numpy's quantile, 0.9 planned every unit at nearly its fastest run.
  REQUIRE_THAT(error_of("history_percentile: 0.9\n"),
               Catch::StartsWith("rules.yaml:1:21: history_percentile: 0.9 is the 0.9th percentile") &&
                   Catch::Contains("write 90 for the 90th"));
}

TEST_CASE("regexes, label patterns and captures are checked when the file is read") {
  REQUIRE_THAT(error_of("rules:\n  - tag: 'team-(\\d+'\n    set: {gpus: $1}\n"),
               Catch::StartsWith("rules.yaml:2:10: tag: \"team-(\\d+\" is not a regular expression"));
  REQUIRE_THAT(error_of("rules:\n  - tag: 'team-(\\d+)'\n    set: {gpus: $2}\n"),
               Catch::StartsWith("rules.yaml:3:17: set.gpus: $2 but the tag regex has 1 capture group"));
  REQUIRE_THAT(error_of("rules:\n  - label: //ml:*\n    set: {gpus: $1}\n"),
               Catch::StartsWith("rules.yaml:3:17: set.gpus: $1 needs a tag regex"));
  REQUIRE_THAT(error_of("rules:\n  - label: ml/...\n    set: {gpus: 1}\n"),
               Catch::StartsWith("rules.yaml:2:12: label: \"ml/...\" is not a label pattern"));
  REQUIRE_THAT(error_of("rules:\n  - set: {gpus: 1}\n"),
               Catch::Contains("a rule needs at least one matcher"));
  // Each of these was read, matched no test, and the rule did nothing without a word.
  REQUIRE_THAT(error_of("rules:\n  - label: //jax/\u2026\n    set: {gpus: 1}\n"),
               Catch::StartsWith("rules.yaml:2:12: label: \"//jax/\u2026\" has an ellipsis"));
  REQUIRE_THAT(error_of("rules:\n  - label: //jax/*\n    set: {gpus: 1}\n"),
               Catch::Contains("\"*\" in a package is no wildcard: write //pkg/..."));
  REQUIRE_THAT(error_of("rules:\n  - label: //jax/..\n    set: {gpus: 1}\n"),
               Catch::Contains("has a \".\" or \"..\" segment"));
  REQUIRE_THAT(error_of("rules:\n  - label: \"//jax /...\"\n    set: {gpus: 1}\n"),
               Catch::Contains("has a blank"));
  REQUIRE_NOTHROW(load("rules:\n  - label: \"//pkg:my test\"\n    set: {gpus: 1}\n"));  // a target name may
  REQUIRE_THAT(error_of("rules:\n  - rule_class: py_test, cc_test\n    set: {gpus: 1}\n"),
               Catch::StartsWith("rules.yaml:2:17: rule_class: \"py_test, cc_test\" is not a rule class"));
  REQUIRE_THAT(error_of("rules:\n  - rule_class: py_.*\n    set: {gpus: 1}\n"),
               Catch::Contains("is not a rule class"));
  REQUIRE_THAT(error_of("rules:\n  - tag: \"team-gpus-4\u00a0\"\n    set: {gpus: 1}\n"),
               Catch::Contains("has a no-break space (U+00A0), so it matches no test"));
  REQUIRE_THAT(error_of("gpu_deps: [\"//jax/\u2026\"]\n"), Catch::Contains("so it matches no label"));
  REQUIRE_THAT(error_of("rules:\n  - tag: x\n"), Catch::Contains("a rule needs `set`"));
}

TEST_CASE("YAML syntax errors name the line") {
  REQUIRE_THAT(error_of("rules: [\n  - tag: x\n"), Catch::StartsWith("rules.yaml:"));
  REQUIRE_THAT(error_of("- just\n- a list\n"),
               Catch::StartsWith("rules.yaml:1:1: a rules file is a mapping"));
}

TEST_CASE("label patterns match packages, subpackages and names") {
  using annotate::label_matches;
  REQUIRE(label_matches("//ml/...", "//ml:t"));
  REQUIRE(label_matches("//ml/...", "@//ml/vision:t"));
  REQUIRE_FALSE(label_matches("//ml/...", "//mlx:t"));
  REQUIRE(label_matches("//...", "//any/pkg:t"));
  REQUIRE_FALSE(label_matches("//...", "@other//pkg:t"));
  REQUIRE(label_matches("//ml:*", "//ml:t"));
  REQUIRE(label_matches("//ml:all", "@@//ml:t"));
  REQUIRE_FALSE(label_matches("//ml:*", "//ml/vision:t"));
  // The default query's apparent name and the canonical one of --consistent_labels, Bazel 6,
  // 7 and 8 match each other: before, a rule written for one silently matched none of the other.
  REQUIRE(label_matches("@rules_foo//x/...", "@@rules_foo~//x:gpu_test"));
  REQUIRE(label_matches("@rules_foo//x/...", "@@rules_foo+//x:gpu_test"));
  REQUIRE(label_matches("@rules_foo//x/...", "@rules_foo~1.2.3//x:gpu_test"));
  REQUIRE(label_matches("@@rules_foo~//x/...", "@rules_foo//x:gpu_test"));
  REQUIRE_FALSE(label_matches("@rules_foo//x/...", "@@rules_bar~//x:gpu_test"));
  REQUIRE(label_matches("//ml:t", "//ml:t"));
  REQUIRE(label_matches("//ml", "//ml:ml"));
  REQUIRE(label_matches("@repo//x/...", "@repo//x/y:z"));
}

TEST_CASE("a rule's label is read as gpu_deps reads a pattern: empty segments refused, :all-targets is :*") {
  // Both were read before and matched no test: the rule did nothing without a word.
  REQUIRE_THAT(error_of("rules:\n  - label: //ml/kernels/\n    set: {gpus: 1}\n"),
               Catch::StartsWith("rules.yaml:2:12: label: \"//ml/kernels/\" has an empty segment"));
  REQUIRE_THAT(error_of("rules:\n  - label: //ml//sub/...\n    set: {gpus: 1}\n"),
               Catch::StartsWith("rules.yaml:2:12: label: \"//ml//sub/...\" has an empty segment"));
  REQUIRE_THAT(error_of("gpu_deps: ['//ml/kernels/']\n"), Catch::Contains("has an empty segment"));
  for (const char* pattern : {"//ml:all-targets", "//ml/...:all", "//ml/...:*", "//ml/...:all-targets"})
    REQUIRE_NOTHROW(load(fmt::format("rules:\n  - label: '{}'\n    set: {{gpus: 1}}\n", pattern)));
  using annotate::label_matches;
  REQUIRE(label_matches("//ml:all-targets", "//ml:t"));
  REQUIRE_FALSE(label_matches("//ml:all-targets", "//ml/vision:t"));
  REQUIRE(label_matches("//ml/...:all", "//ml/vision:t"));
  REQUIRE(label_matches("//ml/...:*", "//ml:t"));
  REQUIRE_FALSE(label_matches("//ml/...:*", "//mlx:t"));
}

TEST_CASE("a tag regex with an escaped backslash before a letter is a warning naming its line") {
  // 'accel-(\\d+)' in single quotes: YAML keeps both backslashes, so the regex wants a backslash
  // in the tag, and the rule matched no test without a word.
  auto rules = load("rules:\n  - tag: 'accel-(\\\\d+)'\n    set: {gpus: $1}\n");
  REQUIRE(rules.warnings.size() == 1);
  REQUIRE_THAT(rules.warnings[0].message,
               Catch::StartsWith("rules.yaml:2:10: tag: \"accel-(\\\\d+)\" has \\\\d") &&
                   Catch::Contains("write '\\d' in single quotes or \"\\\\d\" in double quotes"));
  auto target = testing::make_target("//sim:physics_test", {"accel-2"});
  auto warned = testing::classify_one(target, rules);
  REQUIRE(std::any_of(warned.diagnostics.begin(), warned.diagnostics.end(), [](const Diagnostic& d) {
    return d.severity == Severity::warning && d.message.starts_with("rules.yaml:2:10: tag:");
  }));
  REQUIRE(has_errors(testing::classify_one(target, rules, {.strict = true}).diagnostics));
  // Written right, in either quotes, it is no warning; an escaped backslash before a non-letter is
  // left alone.
  REQUIRE(load("rules:\n  - tag: 'accel-(\\d+)'\n    set: {gpus: $1}\n").warnings.empty());
  REQUIRE(load("rules:\n  - tag: \"accel-(\\\\d+)\"\n    set: {gpus: $1}\n").warnings.empty());
  REQUIRE(load("rules:\n  - tag: 'a\\\\\\d'\n    set: {gpus: 1}\n").warnings.empty());
}

TEST_CASE("a rule that matches no test of the query is a note naming its line, never an error") {
  auto rules =
      load("rules:\n  - label: //ml/...\n    set: {gpus: 1}\n  - label: //other/...\n    set: {gpus: 1}\n");
  auto c = testing::classify_one(testing::make_target("//ml:t", {}), rules, {.strict = true});
  REQUIRE(c.diagnostics.size() == 1);
  REQUIRE(c.diagnostics[0].severity == Severity::note);
  REQUIRE(c.diagnostics[0].source == "rules.yaml");
  REQUIRE(c.diagnostics[0].message == "rule rules.yaml:4:5 (label //other/...) matches no test of the query");
}

TEST_CASE("a rule_class that is some test's macro, or a generator_function that is a rule class, warns") {
  auto target = testing::make_target("//sim:physics_test", {});
  target.rule_class = "py_test";
  target.generator_function = "accel_test";
  auto by_class = load("rules:\n  - rule_class: accel_test\n    set: {gpus: 1}\n");
  auto c = testing::classify_one(target, by_class);
  REQUIRE(c.diagnostics.size() == 1);
  REQUIRE(c.diagnostics[0].severity == Severity::warning);
  REQUIRE_THAT(
      c.diagnostics[0].message,
      Catch::StartsWith("rule rules.yaml:2:5 (rule_class accel_test) matches no test of the query") &&
          Catch::EndsWith("did you mean generator_function: accel_test?"));
  REQUIRE(has_errors(testing::classify_one(target, by_class, {.strict = true}).diagnostics));
  auto by_macro = load("rules:\n  - generator_function: py_test\n    set: {gpus: 1}\n");
  REQUIRE_THAT(testing::classify_one(target, by_macro).diagnostics.at(0).message,
               Catch::EndsWith("did you mean rule_class: py_test?"));
}

TEST_CASE("a rule's cpu_only: false against a CPU-only tag warns that the tag wins, and how to override it") {
  auto rules = load("rules:\n  - label: //c:nogpu_test\n    set: {cpu_only: false}\n");
  auto c = testing::classify_one(testing::make_target("//c:nogpu_test", {"nogpu"}), rules);
  REQUIRE(c.tests.at(0).bucket == Bucket::cpu);
  REQUIRE(c.diagnostics.size() == 1);
  REQUIRE(c.diagnostics[0].severity == Severity::warning);
  REQUIRE(
      c.diagnostics[0].message ==
      "rule rules.yaml:2:5 says no but tag nogpu asks for CPU only; it runs as a CPU test; to override the "
      "built-in tag, write disable: [cpu-only] in rules.yaml");
  auto disabled =
      load("disable: [cpu-only]\nrules:\n  - label: //c:nogpu_test\n    set: {cpu_only: false, gpus: 1}\n");
  REQUIRE(
      testing::classify_one(testing::make_target("//c:nogpu_test", {"nogpu"}), disabled).tests.at(0).bucket ==
      Bucket::gpu);
}

TEST_CASE("gpu_deps and gpu_free are label patterns, checked where they are written") {
  std::istringstream in(
      "gpu_deps: ['@xla//xla/stream_executor/cuda/...']\ngpu_free: ['@cuda_nvcc//...']\n"
      "classify_by_deps: true\n");
  Rules rules = load_rules(in, "rules.yaml");
  REQUIRE(rules.gpu_deps == std::vector<std::string>{"@xla//xla/stream_executor/cuda/..."});
  REQUIRE(rules.gpu_free == std::vector<std::string>{"@cuda_nvcc//..."});
  REQUIRE(rules.classify_by_deps);
  REQUIRE(error_of("gpu_deps:\n  - torch\n")
              .starts_with("rules.yaml:2:5: gpu_deps: \"torch\" is not a label pattern"));
  REQUIRE(error_of("classify_by_deps: maybe\n") ==
          "rules.yaml:1:19: classify_by_deps: expected true or false, not \"maybe\"");
}

TEST_CASE("tag regexes run in linear time and bounded stack, whatever the pattern and the tag") {
  // std::regex overflowed the stack on these, or ran for minutes; RE2 answers at once.
  Rule rule;
  rule.tag = "team-gpus-(\\d+)";
  rule.set = {{"gpus", "$1"}};
  annotate::RuleMatcher matcher(rule);
  REQUIRE(matcher.reads_tag("team-gpus-" + std::string(100000, '7')));
  REQUIRE_FALSE(matcher.reads_tag("team-gpus-" + std::string(100000, '7') + "x"));

  rule.tag = "(a+)+b";
  annotate::RuleMatcher backtracking(rule);
  REQUIRE_FALSE(backtracking.reads_tag(std::string(28, 'a')));
  REQUIRE(backtracking.reads_tag(std::string(28, 'a') + "b"));

  std::string nested = std::string(20000, '(') + "a" + std::string(20000, ')');
  REQUIRE(load("rules:\n  - tag: '" + nested + "'\n    set: {gpus: 1}\n").rules.size() == 1);
  rule.tag = nested;
  annotate::RuleMatcher deep(rule);
  REQUIRE(deep.reads_tag("a"));
  REQUIRE_FALSE(deep.reads_tag("aa"));
  REQUIRE_THAT(error_of("rules:\n  - tag: '(a)\\1'\n    set: {gpus: 1}\n"),
               Catch::Contains("is not a regular expression (RE2 syntax)"));
}

TEST_CASE("captures of a tag regex fill $N, unmatched groups as empty text") {
  Rule rule;
  rule.tag = "team-(?:gpus-(\\d+)|cpu)(-x)?";
  rule.set = {{"gpus", "$1"}};
  rule.where = Position{"rules.yaml", 2, 5};
  annotate::RuleMatcher matcher(rule);
  Target target;
  target.label = "//a:t";
  target.tags = {Symbol("team-gpus-3-x"), Symbol("team-cpu")};
  auto readings = matcher.apply(target);
  REQUIRE(readings.size() == 2);
  REQUIRE(readings.at(0).claim->gpus == 3);
  REQUIRE_FALSE(readings.at(1).claim);  // "" is not a GPU count
}

TEST_CASE("a rules file that is not UTF-8 is an error at the byte, before YAML reads it") {
  // Its values reach diagnostics and JSON output, which can carry nothing else.
  REQUIRE_THAT(error_of("rules:\n  - tag: gpu\xff\n    set: {gpus: 1}\n"),
               Catch::StartsWith("rules.yaml:2:13: byte 0xff is not UTF-8"));
}

TEST_CASE("a long key or value is quoted as a short excerpt, never whole") {
  std::string long_word(1000, 'k');
  REQUIRE_THAT(
      error_of(long_word + ": 1\n"),
      Catch::StartsWith("rules.yaml:1:1: unknown key \"" + std::string(60, 'k') + "…\" in the rules file"));
  REQUIRE_THAT(error_of("disable: [" + long_word + "]\n"),
               Catch::StartsWith("rules.yaml:1:11: disable: \"" + std::string(60, 'k') +
                                 "…\" is not a built-in convention; they are: "));
  REQUIRE_THAT(error_of("classify_by_deps: " + long_word + "\n"),
               Catch::Equals("rules.yaml:1:19: classify_by_deps: expected true or false, not \"" +
                             std::string(60, 'k') + "…\""));
  REQUIRE_THAT(error_of("vram_headroom: 0." + std::string(1000, '5') + "9e99\n"),
               Catch::EndsWith("must be at least 0 and below 1, not 0." + std::string(58, '5') + "…"));
}
