#pragma once
// A test target as Bazel described it: the vocabulary that ingest produces.
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuplan/boxed.hpp"
#include "gpuplan/symbol.hpp"

namespace gpuplan {

/// One constraint value a test asks of a platform.
struct Constraint {
  Symbol label;       ///< "//:has_4_gpus"
  bool exec = false;  ///< from exec_compatible_with (the platform that runs it), else target_compatible_with
  /// A condition of a select() on target_compatible_with, not a value of it: query prints the list
  /// merged (rules_cuda's requires_cuda_enabled() as @platforms//:incompatible alone), and the
  /// config_setting that picks the branch only among the rule-inputs ("@rules_cuda//cuda:is_cuda_enabled").
  bool condition = false;
  /// "target_compatible_with //:has_4_gpus", "target_compatible_with select() on //:cuda": how
  /// messages name it.
  std::string source() const;
};

/// A test's exec_properties (Bazel's string_dict): each key once, in key order. A sorted vector
/// behind one pointer, not a std::map: 8 bytes in every test held instead of 48, as nearly every
/// test has none (classify's peak memory, README "Performance").
class ExecProperties {
 public:
  using Entry = std::pair<std::string, std::string>;
  ExecProperties() = default;
  ExecProperties(std::initializer_list<Entry> entries) {
    for (const auto& [key, value] : entries) set(key, value);
  }
  /// Sets `key` to `value`: a key given twice keeps its last value, as a dict does.
  void set(std::string_view key, std::string_view value);
  auto begin() const { return entries_.begin(); }
  auto end() const { return entries_.end(); }
  bool empty() const { return entries_.empty(); }
  std::size_t size() const { return entries_.size(); }
  /// Empties it, keeping no memory.
  void clear() { entries_.clear(); }
  bool operator==(const ExecProperties&) const = default;

 private:
  BoxedVector<Entry> entries_;
};

/// One branch of a select()ed exec_properties, as JSON query output gives it unflattened
/// (`--noproto:flatten_selects`): the condition that picks it and its dict.
struct ExecPropertiesBranch {
  std::string conditions;  ///< "//:cuda_big"; for `select() | select()`, "//:a + //:b"
  ExecProperties properties;
};

/// A select()ed env, target_compatible_with or exec_compatible_with whose branches differ, as
/// JSON query output gives it unflattened (`--noproto:flatten_selects`).
struct SelectedAttribute {
  std::string attribute;  ///< "target_compatible_with"
  std::string branches;   ///< "//:cuda gives //:has_gpu, //conditions:default gives nothing"
  /// What some configurations have and others lack: constraint labels, or env's GPU choice
  /// ("CUDA_VISIBLE_DEVICES=0"; "" for none).
  std::vector<std::string> differing;
};

/// The traces of a select()ed exec_properties, which query reads as its branches merged, each key
/// with the value of the first branch that sets it (as --output=xml prints it, with no mark).
/// classify warns when they show that the test may ask for other GPUs than planned.
struct SelectedExecProperties {
  /// Where unexplained_input was seen, which says how the query output merged the branches.
  enum class Trace : std::uint8_t {
    xml_input,                ///< --output=xml: the first branch's value of each key
    json_input,               ///< JSON, --proto:flatten_selects (the default): the last branch's
    json_config_dependencies  ///< the same, named by the rule's $config_dependencies attribute
  };
  /// Query input with the branches merged (--output=xml, or JSON by default): a rule-input of a test
  /// with exec_properties that none of its printed label attributes names and that is no implicit
  /// dependency ("//:cuda_big"), or that its $config_dependencies names: a config_setting's trace.
  std::string unexplained_input;
  Trace trace = Trace::xml_input;
  /// JSON query input under --noproto:flatten_selects: the branches themselves, two or more
  /// (every configuration of several select()s concatenated, up to 64).
  std::vector<ExecPropertiesBranch> branches;
  bool more_branches = false;  ///< configurations past those 64, not kept
  /// JSON query input under --noproto:flatten_selects: the other select()ed attributes gpuplan
  /// plans by (env, target_compatible_with, exec_compatible_with) whose branches differ.
  std::vector<SelectedAttribute> other_attributes;
};

/// What a test's `env` and `args` say of the processes and GPUs it starts: in few tests, so a
/// Target holds it behind one pointer (16 bytes a test less than three fields in every test).
struct LaunchSettings {
  /// The first key of the `env` attribute that chooses GPUs, with its value
  /// ("CUDA_VISIBLE_DEVICES=0,1"; also HIP_ and ROCR_VISIBLE_DEVICES); empty when it sets none.
  Symbol device_env;
  /// The `env` attribute's WORLD_SIZE with its value as written ("WORLD_SIZE=4"; empty when it
  /// sets none): how many processes the test's torch.distributed run starts, each with a GPU of
  /// its own under NCCL. Kept as text, so that classify can name a value that is no count
  /// ("$(N)", "0") or more than any node has, where a count kept alone lost it.
  Symbol world_size_env;
  /// The `args` that say how many processes JAX's multi-process test runner
  /// (jax/_src/test_multiprocess.py) starts and how many GPUs each gets, as written and in order
  /// ("--num_processes=2 --gpus_per_process=1"); empty when it has neither.
  Symbol process_args;
};

/// One test rule from `bazel query`/`cquery` output. Fields a labels-only format
/// cannot carry keep their defaults and `has_attributes` is false.
struct Target {
  std::string label;  ///< exactly as Bazel printed it: "//a:b", "@repo//a:b", "@@repo+//a:b"
  Symbol rule_class;  ///< "py_test"; empty for the `label` format
  std::vector<Symbol> tags;
  Symbol size = "medium";  ///< small | medium | large | enormous (Bazel's default: medium)
  Symbol timeout;          ///< short | moderate | long | eternal; empty: derived from size
  int shard_count = 0;     ///< 0: not sharded (Bazel's shard_count default of -1 reads as 0)
  /// shard_count is a select() that query output does not resolve (XML's configurable="yes"
  /// without a value; JSON's attribute without intValue): shard_count is then 0, a guess.
  bool shard_count_unresolved = false;
  bool flaky = false;
  bool has_attributes = false;  ///< false for label / label_kind input
  /// What shows that exec_properties is a select(), which query output prints merged (null for
  /// a test with no such trace: nearly all; one pointer in every test held).
  std::shared_ptr<const SelectedExecProperties> selected_exec_properties;
  ExecProperties exec_properties;
  /// The constraint values of target_compatible_with and exec_compatible_with: what the test's
  /// platform, or the one that runs it, must have ("//:has_gpu"). Query merges a select()'s branches.
  std::vector<Constraint> constraints;
  /// What its `env` and `args` say of the processes and GPUs it starts: set in few tests, so held
  /// behind one pointer (launch(), edit_launch()).
  Boxed<LaunchSettings> launch_settings;
  Symbol generator_function;  ///< the macro that made it, if any
  std::string location;       ///< "pkg/BUILD:12:8" as Bazel reports it
  Symbol configuration;       ///< cquery configuration id ("9f87702", "null"); empty for query

  /// What its `env` and `args` say of how it starts (empty settings for nearly every test).
  const LaunchSettings& launch() const {
    static const LaunchSettings none;
    return launch_settings ? *launch_settings : none;
  }
  /// The same, to set, made where the test has none yet.
  LaunchSettings& edit_launch() { return launch_settings ? *launch_settings : launch_settings.emplace(); }

  /// selected_exec_properties' unexplained_input; empty when there is none.
  std::string_view unexplained_input() const {
    return selected_exec_properties ? std::string_view(selected_exec_properties->unexplained_input) : "";
  }
};

/// The label with the main-repository prefixes "@//" and "@@//" turned into "//",
/// so "@//a:b", "@@//a:b" and "//a:b" compare equal, and "@rules_foo+//a:b" spelled
/// "@@rules_foo+//a:b" (a name with + or ~ is a canonical one). Other repositories are kept.
std::string canonical_label(std::string_view label);

/// A bzlmod canonical repository name (without @) as the main repository's BUILD files and
/// Bazel's default query output name it: a module's own repository ("rules_foo~" in Bazel 7,
/// "rules_foo+" in 8, "rules_foo~1.2.3" in 6) by the module's name, an extension's
/// ("rules_python~~pip~pypi_torch", "+cuda_ext+cuda_cudart") by its last part; any other
/// name as it is.
std::string_view apparent_repo_name(std::string_view repo);

/// What tells whether two labels name one test: canonical_label(), with a canonical repository
/// name in its apparent name, so the default query's "@rules_foo//x:t" and the
/// "@@rules_foo~//x:t" of TEST_TARGET, BEP, bazel-testlogs and --consistent_labels are one
/// test. (A bazel_dep given another repo_name is not matched: its names share nothing.)
std::string label_identity(std::string_view label);

/// A test rule class: ends in "_test" ("test_suite" is not a test).
bool is_test_rule_class(std::string_view rule_class);

/// What the input held besides tests; dropped, and counted for the diagnostics.
struct DroppedCounts {
  long source_files = 0;
  long generated_files = 0;
  long non_test_rules = 0;
  long test_suites = 0;
  long other = 0;  ///< package groups, environment groups, ...
  long total() const { return source_files + generated_files + non_test_rules + test_suites + other; }
};

/// "2 non-test rules, 1 test_suite": what was dropped, in words; "" if nothing.
std::string describe(const DroppedCounts& dropped);

/// The tests read from one input, in input order.
struct TargetList {
  std::string format;  ///< the input format's name, as `--input-format` spells it
  std::vector<Target> tests;
  DroppedCounts dropped;
};

}  // namespace gpuplan
