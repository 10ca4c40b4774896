#pragma once
// Reading Bazel's query and cquery output (SPEC section 1).
#include <istream>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "gpuplan/target.hpp"

namespace gpuplan {

enum class InputFormat {
  label,               ///< bazel query --output=label
  label_kind,          ///< bazel query --output=label_kind
  xml,                 ///< bazel query --output=xml
  streamed_jsonproto,  ///< bazel query --output=streamed_jsonproto (one Target a line)
  jsonproto,           ///< bazel query --output=jsonproto (pretty-printed objects back to back)
  cquery_label,        ///< bazel cquery --output=label: "//a:b (9f87702)"
  cquery_label_kind,   ///< bazel cquery --output=label_kind: "cc_test rule //a:b (9f87702)"
  cquery_jsonproto,    ///< bazel cquery --output=jsonproto: {"results": [...], "configurations": [...]}
};

/// The names `--input-format` accepts: "label", "label_kind", "xml", "streamed_jsonproto",
/// "jsonproto", "cquery_label", "cquery_label_kind", "cquery_jsonproto".
std::optional<InputFormat> parse_input_format(std::string_view name);
std::string_view to_string(InputFormat format);

/// Receives the dependency graph while a reader streams (`audit`, `--classify-by-deps`):
/// each rule or generated file as it is read, and a rule's inputs right after it. Labels are
/// as Bazel printed them and valid only during the call. Plain ingest passes none and keeps
/// neither the inputs nor the non-test rules.
class GraphSink {
 public:
  virtual ~GraphSink() = default;
  /// A rule begins (a test or not); the inputs that follow are its rule-inputs.
  virtual void rule(std::string_view label, std::string_view rule_class) = 0;
  virtual void input(std::string_view label) = 0;
  /// A hint: a rule or input of this label will follow (a sink may fetch what it needs meanwhile).
  virtual void coming(std::string_view /*label*/) {}
  /// All of a rule's inputs at once, in order: the same as input() for each, but a sink may
  /// look them up together (the readers call this when they hold a rule's inputs anyway).
  virtual void inputs(std::span<const std::string_view> labels) {
    for (std::string_view label : labels) input(label);
  }
  /// One of `linkopts` of the rule that began last (each in order), for a rule of a class that
  /// may_have_linkopts(): a library it links outside the graph, such as the machine's CUDA (-lcudart).
  virtual void linkopt(std::string_view /*flag*/) {}
  /// A generated file, which depends on the rule that makes it.
  virtual void generated_file(std::string_view label, std::string_view generating_rule) = 0;
  /// A target without inputs (source file, package group): a leaf, but declared, so the graph
  /// knows the query expanded it.
  virtual void leaf(std::string_view label) = 0;
  /// The input is cquery's output of deps(...) (it holds rules that are not tests): every
  /// configured dependency is a target of its own there, so a label that a rule with a select()
  /// names as an input but that the output never lists is a branch not taken in its
  /// configuration, no dependency at all. (Without this call such a label is unknown: the
  /// query did not expand it.) `configured_inputs`: the rules named their configured inputs
  /// alone (configuredRuleInput, Bazel 7 on), so none they name is a branch not taken.
  virtual void configured_closure(bool /*configured_inputs*/) {}
};

/// Whether the readers hand a GraphSink the linkopts of rules of this class: C++ and CUDA rules
/// (cc_library, cc_test, cuda_library, ...), the ones that link; an unknown class ("") too. The
/// streamed_jsonproto reader passes every other rule's attributes over unread.
bool may_have_linkopts(std::string_view rule_class);

/// Takes each test as a reader finds it, for a command that uses each test once (`targets
/// --json`, classifying): the list of all the tests is then never held (issue 14).
class TargetSink {
 public:
  virtual ~TargetSink() = default;
  /// The input's format, once detected: before the first test (not called for blank input).
  virtual void start(InputFormat /*format*/) {}
  virtual void test(Target&& target) = 0;
};

/// Reads every test target from `in`, streaming: memory grows with the number of
/// tests, not with the size of the input. `name` is the file name used in error
/// positions. The format is detected from the content unless `forced`.
/// Throws InputError on bad input. Empty input is a valid, empty list. With `graph`, every
/// rule and its rule-inputs also go to it (formats without inputs give rules only).
TargetList read_targets(std::istream& in, const std::string& name,
                        std::optional<InputFormat> forced = std::nullopt, GraphSink* graph = nullptr);
/// The same, handing each test to `tests` as it is read instead of keeping it: the list
/// returned has the format and the dropped counts, and no tests.
TargetList read_targets(std::istream& in, const std::string& name, std::optional<InputFormat> forced,
                        GraphSink* graph, TargetSink& tests);

/// The `<rule>` element of `xml`, a whole `bazel query --output=xml` document, whose name is
/// `label`, as a document of its own: `xml`'s prolog and `<query>` start tag, the element, and
/// `</query>`. The readers make of it what they make of that rule in all of `xml` (for a document
/// that is well-formed), without reading every other rule: `run-under --query`'s one test. nullopt
/// where that cannot be told, for the full read: not such a document (nor one that ends with
/// `</query>`), the name on no rule or on several, an entity other than XML's own, a byte outside
/// ASCII in the element or the prolog, a comment or CDATA section anywhere (Bazel writes none).
std::optional<std::string> xml_rule_alone(std::string_view xml, std::string_view label);

/// The line of `text`, a whole `bazel query --output=streamed_jsonproto` output, that holds the
/// test `label` (label_identity: `@//a:b` is `//a:b`), with its "\n": the readers make of it what
/// they make of that test in all of `text` (for a file whose every line is a Target), without
/// reading every other line. nullopt where that cannot be told, for the full read: the test on no
/// line or on several, a label from its last "//" with `"`, `\` or a byte outside printable ASCII,
/// an escape anywhere that may spell a byte of it (`\/`, `\u002f`; Bazel's `\u003d` for `=`
/// spells its labels with `& ' < = >` so), a line that holds it and that the reader refuses.
std::optional<std::string> streamed_jsonproto_rule_alone(std::string_view text, std::string_view label);

/// The part of `query`, a query's output, that holds the test `label` alone, for `run-under
/// --query`'s one test: xml_rule_alone or streamed_jsonproto_rule_alone by the format read_targets
/// detects in `query`, where the part is detected as that format too. nullopt, for the full read,
/// for every other format (jsonproto, cquery's output, labels) and where those cannot tell.
std::optional<std::string> rule_alone(std::string_view query, std::string_view label);

/// Fills the attributes of labels-only targets from `attributes` (matched by
/// canonical label), for `--attrs FILE`. Targets absent from `attributes` stay as they are; a
/// label `attributes` lists twice becomes both listings, for the classifier to choose between.
void join_attributes(TargetList& targets, const TargetList& attributes);

}  // namespace gpuplan
