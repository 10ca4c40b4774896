#pragma once
// A repository's own conventions and the planner's knobs (`--rules FILE`, schemas/rules.schema.json).
#include <istream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/diagnostic.hpp"
#include "gpuplan/error.hpp"

namespace gpuplan {

/// One rule of a rules file: when every given matcher matches, `set` applies.
/// Values may use the tag regex's captures as $1, $2, ... ($0: the whole tag).
struct Rule {
  std::optional<std::string> tag;  ///< regex matched against each whole tag (and exec_property as KEY:VALUE)
  std::optional<std::string> label;               ///< "//pkg/...", "//pkg:*", or a label
  std::optional<std::string> rule_class;          ///< "py_test"
  std::optional<std::string> generator_function;  ///< "gpu_py_test"
  /// Requirement field → value, as written: gpus, gpu_mem, cuda, compute_capability,
  /// gpu_models ("l4|l40s"), nvlink, exclusive, cpu_only.
  std::map<std::string, std::string> set;
  Position where;  ///< the rule's position in its file

  /// "rule examples/rules.yaml:12:5": how requirements set by this rule name their source.
  std::string source() const;
};

/// Rules and defaults; a default-constructed Rules is what gpuplan uses without --rules.
struct Rules {
  int multi_gpu_count = 2;         ///< GPUs for TensorFlow's `multi_gpu` tag
  int multiaccelerator_count = 8;  ///< GPUs for JAX's `multiaccelerator` tag
  /// Planned duration of a test without history, by Bazel size.
  std::map<std::string, double> size_default_seconds{
      {"small", 60}, {"medium", 300}, {"large", 900}, {"enormous", 3600}};
  double vram_headroom = 0.15;     ///< `pack` keeps summed VRAM under capacity × (1 − headroom)
  int max_tests_per_gpu = 4;       ///< `pack`: at most this many units on one GPU
  double pack_slowdown = 1.0;      ///< `pack`: planned duration × this for shareable units
  double history_percentile = 90;  ///< a unit's planned duration: this percentile of its recent samples
  int history_window = 20;         ///< the most recent attempts per unit that the percentile looks at
  std::set<std::string> disabled_conventions;  ///< built-in conventions switched off, by name
  std::vector<Rule> rules;
  /// Label patterns of GPU code, added to the built-in set (README "Classification from the
  /// dependency graph"), and of deps that are CPU-only although a GPU pattern covers them.
  std::vector<std::string> gpu_deps;
  std::vector<std::string> gpu_free;
  bool classify_by_deps = false;  ///< as `--classify-by-deps`: GPU tests reaching no GPU code run on CPUs
  std::string source;             ///< the rules file's name; empty for the defaults
  /// What reads but is almost surely a mistake (a tag regex that wants a backslash in the tag),
  /// each a warning whose message starts with file:line:col; classifying reports them, as
  /// errors under --strict.
  Diagnostics warnings;
};

/// Reads a rules file. Throws InputError with file:line:col on anything wrong.
Rules load_rules(std::istream& in, const std::string& name);

/// What is wrong with `p` as a percentile when it lies between 0 and 1, a quantile as numpy and
/// pandas write one (0.9 for p90: planned at it, every unit got nearly its fastest run); empty
/// otherwise.
std::string quantile_problem(double p);

/// The names of the built-in conventions, as `disable:` in a rules file spells them.
const std::vector<std::string_view>& convention_names();

/// The most GPUs one test may ask for; a larger count is a malformed annotation.
inline constexpr int max_gpus_per_test = 1024;

}  // namespace gpuplan
