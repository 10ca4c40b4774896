#pragma once
// What the three JSON formats share: build.proto's Target message in proto3's JSON
// mapping, read with simdjson, and a splitter that finds whole objects in a stream.
#include <simdjson.h>

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/error.hpp"
#include "ingest/attributes.hpp"
#include "ingest/readers.hpp"
#include "ingest/select_trace.hpp"

namespace gpuplan::ingest {

/// Reads JSON texts that hold one Target each ({"type": "RULE", "rule": {...}}).
class JsonTargets {
 public:
  explicit JsonTargets(Collector& out) : out_(out) {}

  /// Adds the Target in `json` (which must be followed by SIMDJSON_PADDING readable bytes,
  /// `readable` in all). `start` is where the text begins in the input, for errors.
  void add(std::string_view json, std::size_t readable, const Position& start);

  /// Reads a cquery result ({"target": {...}, "configuration": {...}, "configurationId": N}).
  /// Returns the configurationId it names, 0 if none; the configuration's checksum, if
  /// given inline (Bazel before 7), is already set on the target.
  std::uint64_t add_configured(std::string_view json, std::size_t readable, const Position& start);

  /// Parses a JSON object for the caller, who must visit all of its fields (text after the
  /// object is detected once the object is consumed); errors are reported as for a target.
  void parse_object(std::string_view json, std::size_t readable, const Position& start,
                    const std::function<void(simdjson::ondemand::object)>& use);

  /// Once the input is read: tells the graph when the cquery output read is deps(...)'s (it
  /// holds rules that are not tests), whose every configured dependency is a result of its own.
  void finish();

 private:
  void read_target(simdjson::ondemand::object target);
  void read_rule(simdjson::ondemand::object rule);
  void read_attribute(simdjson::ondemand::object attribute, Target& target);
  /// An exec_properties of type SELECTOR_LIST (--noproto:flatten_selects): its branches, merged
  /// into target.exec_properties as --output=xml merges them, and kept when there are several.
  void read_selected_exec_properties(simdjson::ondemand::object attribute, Target& target);
  /// A test whose exec_properties were read as a plain dict, or whose target_compatible_with holds
  /// @platforms//:incompatible, from query output (not cquery's): its target parsed again, for
  /// the trace a select()ed exec_properties leaves when query flattens it
  /// (--proto:flatten_selects, the default), as SelectTrace reads it, and for the conditions of
  /// the select() that makes the test incompatible (note_compatibility_condition).
  void find_select_trace(Target& target);
  /// An env, target_compatible_with or exec_compatible_with of type SELECTOR_LIST: a list's every
  /// branch's labels, env's GPU choice where all branches make the same one (as --output=xml reads
  /// them), and what differs between the branches kept for classify's warning; of a
  /// target_compatible_with, every condition of a select() one of whose branches makes the test
  /// incompatible, whichever branch that is, as XML keeps them (note_compatibility_condition).
  void read_selected_attribute(simdjson::ondemand::object attribute, Attribute which, std::string_view name,
                               Target& target);
  /// The test's selected_exec_properties to add to: a copy of what it held, or a new one.
  static SelectedExecProperties& selections(Target& target);
  /// The linkopts of a rule that is not a test, for the GraphSink, from its "attribute" array.
  void read_linkopts(simdjson::ondemand::array attributes, std::string_view rule);
  /// The strings of a linkopts attribute's stringListValue, into linkopts_; of a select() left
  /// unflattened (SELECTOR_LIST), every branch's, as flattened output lists them.
  void add_linkopts(simdjson::ondemand::object attribute, std::string_view rule);
  /// ruleInput (labels) or cquery's configuredRuleInput ({"label": ...}), for the GraphSink.
  void read_rule_inputs(simdjson::ondemand::array inputs, bool configured, std::string_view rule);
  /// Fails on an input of `rule` whose label is "" (the string just read).
  [[noreturn]] void fail_empty_input(bool configured, std::string_view rule);
  void read_generated_file(simdjson::ondemand::object file);
  [[noreturn]] void fail(const std::string& message, const char* at = nullptr);
  /// Fails on JSON simdjson refused with `error`, at `bad_byte` when that is known to be the cause.
  [[noreturn]] void fail_invalid(simdjson::error_code error, const char* bad_byte = nullptr);

  Collector& out_;
  simdjson::ondemand::parser parser_;
  simdjson::ondemand::document document_;
  bool have_document_ = false;  ///< document_ holds the object being read (not a stale one)
  std::string_view text_;
  Position start_;
  std::vector<std::string_view> inputs_;  ///< the current rule's ruleInput, into the parser's strings
  std::vector<std::string_view> configured_inputs_;  ///< its configuredRuleInput (cquery, newer Bazel)
  std::vector<std::string> linkopts_;                ///< its linkopts, for the GraphSink
  /// A second parse of rare text: read_linkopts()'s array that names them, find_select_trace()'s
  /// target.
  simdjson::ondemand::parser again_parser_;
  std::size_t readable_ = 0;  ///< bytes readable from text_ (its SIMDJSON_PADDING included)
  SelectTrace trace_;         ///< find_select_trace(): the labels the test's attributes name
  /// The current rule's "$config_dependencies", the conditions of its select()s: not printed
  /// (--noproto:default_values), printed empty, or naming some.
  enum class ConfigDependencies : std::uint8_t { unknown, none, some };
  ConfigDependencies config_dependencies_ = ConfigDependencies::unknown;
  bool cquery_ = false;
  bool saw_non_test_rule_ = false;      ///< a rule that is not a test: the output of deps(...)
  bool saw_configured_inputs_ = false;  ///< a rule named its configuredRuleInput (Bazel 7 on)
};

/// The short configuration id cquery prints after a label ("f5527a6"), from a checksum.
std::string short_configuration(std::string_view checksum);

/// Finds whole JSON objects in a stream without holding more than one: the top-level
/// objects (`depth` 0, jsonproto's objects back to back) or the objects inside the
/// arrays of a top-level object (`depth` 2, cquery's results[] and configurations[]).
/// Calls `each(key, text, readable, start)` for each; `key` names the array holding it.
class JsonObjects {
 public:
  using Each = std::function<void(std::string_view key, std::string_view text, std::size_t readable,
                                  const Position& start)>;
  JsonObjects(Source& source, int depth) : source_(source), depth_(depth) {}
  void read(const Each& each);

 private:
  [[noreturn]] void fail(const std::string& message) const;

  Source& source_;
  int depth_;
  long line_ = 1;
  long column_ = 0;
};

}  // namespace gpuplan::ingest
