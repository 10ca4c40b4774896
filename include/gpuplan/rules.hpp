#pragma once
// A repository's own conventions and the planner's knobs (`--rules FILE`, schemas/rules.schema.json).
#include <istream>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "gpuplan/error.hpp"

namespace gpuplan {

/// One rule of a rules file: when every given matcher matches, `set` applies.
/// Values may use the tag regex's captures as $1, $2, ...
struct Rule {
  std::optional<std::string> tag;                 ///< regex matched against each whole tag
  std::optional<std::string> label;               ///< "//pkg/...", "//pkg:*", or a label
  std::optional<std::string> rule_class;          ///< "py_test"
  std::optional<std::string> generator_function;  ///< "gpu_py_test"
  std::map<std::string, std::string> set;         ///< requirement field → value, as written
  Position where;                                 ///< the rule's position in its file
};

/// Rules and defaults; a default-constructed Rules is what gpuplan uses without --rules.
struct Rules {
  int multi_gpu_count = 2;         ///< GPUs for TensorFlow's `multi_gpu` tag
  int multiaccelerator_count = 8;  ///< GPUs for JAX's `multiaccelerator` tag
  /// Planned duration of a test without history, by Bazel size.
  std::map<std::string, double> size_default_seconds{
      {"small", 60}, {"medium", 300}, {"large", 900}, {"enormous", 3600}};
  double vram_headroom = 0.15;  ///< `pack` keeps summed VRAM under capacity × (1 − headroom)
  int max_tests_per_gpu = 4;    ///< `pack`: at most this many units on one GPU
  double pack_slowdown = 1.0;   ///< `pack`: planned duration × this for shareable units
  double history_percentile = 90;  ///< a unit's planned duration: this percentile of its recent samples
  int history_window = 20;         ///< the most recent attempts per unit that the percentile looks at
  std::set<std::string> disabled_conventions;  ///< built-in conventions switched off, by name
  std::vector<Rule> rules;
  std::string source;  ///< the rules file's name; empty for the defaults
};

/// Reads a rules file. Throws InputError with file:line:col on anything wrong.
Rules load_rules(std::istream& in, const std::string& name);

}  // namespace gpuplan
