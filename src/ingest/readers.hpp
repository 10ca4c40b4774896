#pragma once
// The readers of each input format, and what they share. ingest.cpp picks one.
#include <cstddef>
#include <exception>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/ingest.hpp"
#include "ingest/source.hpp"

namespace gpuplan::ingest {

/// What kind of target a reader met, before it knows whether it is kept.
enum class TargetKind { rule, source_file, generated_file, other };

/// What every label Bazel prints starts with: "//pkg:name" or "@repo//pkg:name". A test named
/// otherwise ("-//a:b", "pkg:rel") is hand-made input, and `bazel test` would read it as a
/// pattern of another kind (a target subtracted, a relative label).
inline bool starts_like_label(std::string_view name) {
  return name.starts_with("//") || name.starts_with('@');
}

/// The error for a test whose name does not start like a label.
inline std::string not_a_label(std::string_view name) {
  return "\"" + std::string(name) + "\" is not a label (\"//pkg:name\" or \"@repo//pkg:name\")";
}

/// Collects the tests of one input and counts the rest. Tests are kept in blocks of
/// fixed capacity while reading (large enough to be mapped and unmapped on their own),
/// so the list never holds two copies of itself, as a growing vector would.
class Collector {
 public:
  /// `name`: the input's name, for the error past max_tests.
  explicit Collector(std::string name = {}) : name_(std::move(name)) {}
  /// Keeps `target` if it is a test rule, otherwise counts it as dropped.
  void add(TargetKind kind, Target&& target);
  /// Keeps a target whose kind the input does not say (the label format): every label is taken as a test.
  void add_unchecked(Target&& target) { keep(std::move(target)); }
  /// Counts a target that was not a test without building it.
  void drop(TargetKind kind, std::string_view rule_class = {});
  /// Whether a rule of this class is kept (so readers can skip the attributes of the rest).
  static bool keeps(std::string_view rule_class) { return is_test_rule_class(rule_class); }
  std::size_t size() const { return size_; }
  Target& at(std::size_t index) { return blocks_[index / block_size][index % block_size]; }
  TargetList finish(InputFormat format);
  /// Where the dependency graph goes, if anyone asked for it; nullptr for plain ingest.
  GraphSink* graph = nullptr;
  /// Where each test goes as it is read, instead of the list; nullptr: keep them.
  TargetSink* tests = nullptr;

 private:
  // 1.5 MiB of Targets: still mapped and unmapped on its own, and small, since finish() holds
  // the whole list plus one block (65,536 a block cost `targets` 84 bytes a test at 150k tests).
  // Not smaller: 2,048 (384 KiB) came from malloc's heap, which kept them, and took 85 MiB, not 58.
  static constexpr std::size_t block_size = 8192;
  void keep(Target&& target);

  std::string name_;
  std::vector<std::vector<Target>> blocks_;
  std::size_t size_ = 0;
  DroppedCounts dropped_;
  std::exception_ptr failed_;  ///< what `tests` threw, rethrown by finish()
};

/// The longest line a label or label_kind reader accepts.
inline constexpr std::size_t max_label_line = std::size_t{1} << 20;
/// The most bytes one target may take: a line of streamed_jsonproto, an object of jsonproto
/// or cquery jsonproto, an XML element. Real ones are far smaller; the bound keeps a
/// broken input from filling memory.
inline constexpr std::size_t max_target_bytes = std::size_t{64} << 20;

/// Whether the input holds nothing but white space: a valid, empty result in any format.
bool is_blank(Source& source);
/// Picks the format from the first bytes of a non-blank `source`. Throws InputError
/// for binary or unrecognisable input.
InputFormat detect_format(Source& source);

/// Whether a label line ends in a cquery configuration: " (9f87702)" or " (null)".
bool has_configuration(std::string_view line);
/// What to add to a message about a line that is Bazel's own log ("INFO: ...", "Loading: ...",
/// colour escapes), which `2>&1` mixes into its output; empty for any other line.
std::string bazel_log_hint(std::string_view line);

void read_xml(Source& source, Collector& out);
void read_label_lines(Source& source, InputFormat format, Collector& out);
void read_streamed_jsonproto(Source& source, Collector& out);
void read_jsonproto(Source& source, Collector& out);
void read_cquery_jsonproto(Source& source, Collector& out);

}  // namespace gpuplan::ingest
