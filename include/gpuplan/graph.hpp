#pragma once
// The dependency graph of `bazel query 'deps(tests(//...))'`: which tests can reach GPU code,
// and by which path (issue 16). Ingest hands the graph over rule by rule (GraphSink); the
// graph keeps each label once and each edge as one 32-bit node number.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpuplan/big_array.hpp"
#include "gpuplan/classify.hpp"
#include "gpuplan/ingest.hpp"
#include "gpuplan/symbol.hpp"

namespace gpuplan {

/// The dependency graph: every label seen (rules, files, inputs) once, and each rule's inputs.
/// Built by feeding it to read_targets() as its GraphSink; read it once finished.
class DepGraph final : public GraphSink {
 public:
  using Node = std::uint32_t;

  void rule(std::string_view label, std::string_view rule_class) override;
  void input(std::string_view label) override;
  void inputs(std::span<const std::string_view> labels) override;
  void coming(std::string_view label) override;
  void linkopt(std::string_view flag) override;
  void generated_file(std::string_view label, std::string_view generating_rule) override;
  void leaf(std::string_view label) override;
  void configured_closure(bool configured_inputs) override {
    configured_closure_ = true;
    configured_inputs_ = configured_inputs;
  }

  std::size_t node_count() const { return label_start_.size() - 1; }
  std::size_t rule_count() const { return rules_.size(); }
  std::size_t edge_count() const { return edges_.size(); }
  /// The label as canonical_label() spells it ("//a:b", "@pypi//torch:pkg").
  std::string_view label(Node node) const {
    return {text_.data() + label_start_[node], label_start_[node + 1] - label_start_[node]};
  }
  /// The rule class ("py_library"); empty for files and labels the input only named as inputs.
  std::string_view rule_class(Node node) const { return classes_[class_of_[node]].str(); }
  /// Whether the input declared this label as a rule or file, rather than only naming it as an
  /// input (as `tests(//...)` does for the libraries a test uses: `deps(...)` declares them all).
  bool declared(Node node) const { return declared_[node]; }
  /// Whether a label the input never declared is no dependency (cquery's deps(...) output:
  /// a select() branch not taken) rather than one the query did not expand.
  bool is_configured_closure() const { return configured_closure_; }
  /// By node: a label of a configured closure that the input never declared and only rules with
  /// a select() name (a rule with a declared config_setting or constraint_value among its
  /// inputs: the keys): a branch not taken, no dependency. One that a rule without a select()
  /// names is a dependency the query did not expand (`deps(..., 1)`, `except`), as in query
  /// output: what it reaches is unknown. All false outside a configured closure, and where the
  /// rules named only their configured inputs (configuredRuleInput).
  std::vector<bool> untaken_branches() const;
  /// The first of the rule's linkopts that links a GPU library (gpu_linkopt_kind: "-lcudart");
  /// empty for other nodes.
  std::string_view gpu_linkopt(Node node) const {
    auto found = gpu_linkopts_.find(node);
    return found == gpu_linkopts_.end() ? std::string_view() : std::string_view(found->second);
  }
  /// The node of a label in any spelling of the main repository; empty if the graph lacks it.
  std::optional<Node> find(std::string_view label) const;
  /// The node of the `entry`th rule (or generated file) as the input listed them, from 0 to
  /// rule_count(); a rule listed twice is two entries.
  Node rule_node(std::size_t entry) const { return rules_[entry].node; }
  /// The inputs of the `entry`th rule, in input order.
  std::span<const Node> rule_inputs(std::size_t entry) const {
    std::uint64_t end = entry + 1 < rules_.size() ? rules_[entry + 1].first_edge : edges_.size();
    return {edges_.data() + rules_[entry].first_edge, end - rules_[entry].first_edge};
  }
  /// The rules whose class is a test rule class, in input order, each once.
  std::vector<Node> tests() const;
  /// The nodes that list `node` among their inputs (built on first use, then kept).
  std::span<const Node> dependents(Node node) const;
  /// Bytes held for the graph: label text, the label table and the edges.
  std::size_t memory_bytes() const;

 private:
  Node intern(std::string_view label);
  /// intern() of a label already in main_repo_spelling, with its hash_of().
  Node intern(std::string_view label, std::size_t hash);
  void grow_table();
  void build_reverse() const;

  /// One rule as the input listed it: its inputs are edges_[first_edge, next rule's first_edge).
  struct RuleEntry {
    Node node;
    std::uint64_t first_edge;
  };
  BigArray<char> text_;
  BigArray<std::uint64_t> label_start_ = BigArray<std::uint64_t>(1);
  BigArray<std::uint16_t> class_of_;  ///< index into classes_; 0: not a rule
  std::vector<bool> declared_;
  bool configured_closure_ = false;
  bool configured_inputs_ = false;  ///< the inputs are configuredRuleInput: no branch not taken among them
  std::vector<Symbol> classes_{Symbol()};
  std::unordered_map<std::string_view, std::uint16_t> class_index_;
  /// A slot of the label table (open addressing, at most half full).
  struct Slot {
    std::uint32_t tag = 0;   ///< the high 32 bits of the label's hash
    std::uint32_t node = 0;  ///< node + 1; 0 in an empty slot
    std::uint64_t text = 0;  ///< where the label starts in text_ << 16 | its length (0xffff: that or more)
  };
  static Slot slot_of(Node node, std::size_t hash, std::uint64_t start, std::size_t length);
  /// The slot where a label of this hash begins its probe: the top bits of its tag.
  std::size_t home(std::size_t hash) const;
  /// Whether `slot` holds `label`, whose hash is `hash`.
  bool holds(const Slot& slot, std::string_view label, std::size_t hash) const;
  BigArray<Slot> slots_;
  int home_shift_ = 32;  ///< 32 - log2(slots_.size())
  /// The slots of the labels looked up last, by a few bits of their hash: Bazel prints a
  /// package's rules together, so most inputs are labels just seen, and this small table
  /// (in the cache) finds them without a look at the large one (a cache miss each).
  std::vector<Slot> recent_ = std::vector<Slot>(4096);
  Slot& recent_slot(std::size_t hash) { return recent_[(hash >> 16) & (recent_.size() - 1)]; }
  BigArray<RuleEntry> rules_;
  BigArray<Node> edges_;
  mutable BigArray<std::uint32_t> reverse_start_;
  mutable BigArray<Node> reverse_;
  std::vector<std::pair<std::string_view, std::size_t>> batch_;  ///< inputs(): each label and its hash
  std::unordered_map<Node, std::string> gpu_linkopts_;           ///< gpu_linkopt(): few rules have one
};

/// Labels that are GPU code (`gpu_deps`) and labels that are not even though a GPU pattern
/// covers them (`gpu_free`). A pattern is a Bazel target pattern ("@pypi//torch/...",
/// "//third_party/gpus/...", "@local_config_cuda//cuda:cudart") in which `*` matches any run
/// of characters within the repository name or one package segment ("@cuda_*//...",
/// "@*//nvidia_*/..."). A repository pattern also matches Bzlmod's canonical names, whose
/// last part after "~" or "+" is the apparent name ("@@rules_python~~pip~pypi_311_torch").
struct GpuDepPatterns {
  std::vector<std::string> gpu_deps;
  std::vector<std::string> gpu_free;
  /// Rules that are GPU code by their class, whatever their label (rules_cuda's cuda_library).
  std::vector<std::string> gpu_rule_classes;
  /// The built-in set (README "Classification from the dependency graph"): PyTorch, JAX,
  /// TensorFlow, CUDA, ROCm, as rules_python, hermetic CUDA and rules_cuda name them; and as
  /// gpu_free, the names of CPU builds that a gpu_deps pattern covers (@libtorch_cpu).
  static GpuDepPatterns defaults();
};

/// What makes a file GPU code by its name whatever its repository, or empty: "a CUDA source"
/// (.cu, .cuh; TensorFlow's .cu.cc and .cu.h), "a HIP source" (.hip), "a CUDA header" (cuda.h,
/// cuda_runtime.h, nccl.h, ...), "a ROCm header" (hip_runtime.h, ...), "a CUDA library"
/// (libcudart.so, libcublas_static.a, libcuda.so.1, ...) or "a ROCm library" (libamdhip64.so, ...).
std::string_view gpu_file_kind(std::string_view label);
/// What a linkopts flag links, where that is GPU code as gpu_file_kind() says of its file:
/// "-lcudart", "-lcuda", "-l:libcudart.so.12", "/usr/local/cuda/lib64/libcublas.so",
/// "-Wl,--no-as-needed,-lnccl" → "a CUDA library"; empty for other flags ("-lm", "-L/opt/cuda").
std::string_view gpu_linkopt_kind(std::string_view flag);

/// Checks one gpu_deps/gpu_free pattern; returns the problem, empty when it is valid.
std::string gpu_pattern_problem(std::string_view pattern);
/// Whether `label` (canonical) falls under a valid `pattern`.
bool gpu_pattern_matches(std::string_view pattern, std::string_view label);

/// The patterns that match no label of `graph` (a rules file's gpu_deps or gpu_free: a typo, or
/// a canonical repository name another Bazel version spells differently), in their order.
std::vector<std::string> unmatched_patterns(const DepGraph& graph, const std::vector<std::string>& patterns);

/// For each node, whether it reaches GPU code and the next node on a shortest path there.
/// Linear in the graph: distances by one depth-first pass over the inputs, then the steps
/// distance by distance; on a cycle or a rule listed twice, a breadth-first pass over the
/// reverse graph instead, which picks the same step among equal paths.
class GpuReach {
 public:
  GpuReach(const DepGraph& graph, const GpuDepPatterns& patterns);

  bool reaches(DepGraph::Node node) const { return next_[node] != unreached; }
  /// The node reaches no GPU dep but reaches labels the input never declared (it is not the
  /// output of deps(...)), so whether it reaches GPU code is unknown.
  bool unknown(DepGraph::Node node) const { return !reaches(node) && undeclared_next_[node] != unreached; }
  /// An undeclared label it reaches, for the message (only when unknown()).
  DepGraph::Node first_undeclared(DepGraph::Node node) const;
  /// node, its input, ..., the GPU dep: a shortest path; empty when the node reaches none.
  std::vector<DepGraph::Node> path(DepGraph::Node node) const;
  /// "//ml:train_test → //ml:model → @pypi//torch:pkg"
  std::string path_text(DepGraph::Node node) const;
  /// The pattern that made `node` a GPU dep ("" for other nodes, and for one that is GPU code
  /// by its rule class or its file name).
  const std::string& matched_pattern(DepGraph::Node node) const;
  /// gpu_file_kind() of a GPU dep that no pattern matched and that is no GPU rule class: what
  /// made it GPU code ("a CUDA library"); empty otherwise.
  std::string_view file_kind(DepGraph::Node node) const;
  /// DepGraph::gpu_linkopt() of a GPU dep that is GPU code by its linkopts (no pattern, class or
  /// file name made it one); empty otherwise.
  std::string_view linkopt(DepGraph::Node node) const;

 private:
  /// Sets `next` from the nodes marked is_source in it as walk() would, without the reverse
  /// graph; false, with `next` untouched, where the graph has a cycle (outside sources and
  /// walls) or a node listed as a rule twice.
  static bool descend(const DepGraph& graph, const std::vector<bool>& wall,
                      std::vector<DepGraph::Node>& next);
  /// Breadth-first from the nodes in `queue` (already marked in `next`) to their dependents.
  static void walk(const DepGraph& graph, const std::vector<bool>& wall, std::vector<DepGraph::Node>& queue,
                   std::vector<DepGraph::Node>& next);
  static constexpr DepGraph::Node unreached = 0xffffffffu;
  static constexpr DepGraph::Node is_source = 0xfffffffeu;
  static constexpr std::size_t by_class = static_cast<std::size_t>(-1);
  static constexpr std::size_t by_file_name = static_cast<std::size_t>(-2);
  static constexpr std::size_t by_linkopt = static_cast<std::size_t>(-3);
  const DepGraph& graph_;
  std::vector<DepGraph::Node> next_;
  std::vector<DepGraph::Node> undeclared_next_;  ///< like next_, towards an undeclared label
  std::unordered_map<DepGraph::Node, std::size_t>
      sources_;  ///< GPU dep → index of its pattern (by_class: its class; by_file_name: gpu_file_kind;
                 ///< by_linkopt: its linkopts)
  std::vector<std::string> patterns_;
};

/// Rule classes that are configuration, not code: never GPU deps, never on a path
/// (`bazel query` lists every select() key, e.g. @local_config_cuda//cuda:using_nvcc).
bool is_configuration_rule(std::string_view rule_class);

/// How a test's annotation and the graph disagree, or that the graph cannot say.
enum class Disagreement {
  gpu_without_gpu_code,         ///< annotated for a GPU, reaches no GPU code: a candidate for the CPU bucket
  gpu_code_without_annotation,  ///< reaches GPU code, has no GPU annotation and no cpu-only
  unknown,  ///< reaches no GPU code but labels the input did not expand (GpuReach::unknown), or is a test
            ///< whose GPU code the graph would not show (BlindTests)
};
/// "gpu-without-gpu-code", "gpu-code-without-annotation", "unknown"
std::string_view to_string(Disagreement kind);

/// GPU-annotated tests that reach no GPU code although the graph holds all their deps, and of
/// which the graph still cannot tell whether they need a GPU, because their GPU code would not
/// be in it: GPU code from outside Bazel's graph (a system Python's torch, CUDA linked by a
/// .bazelrc's --linkopt, a tool of the machine) or under labels gpu_deps does not name. Three kinds:
/// - tests whose runs used a GPU (results records, given with --history): the runs outweigh the graph;
/// - blind classes: no test of the rule class reaches GPU code;
/// - unsupplied tests: the class's tests reach their GPU code only in other repositories (its
///   suppliers: @pypi for py_tests through rules_python) and this test reaches no label of any
///   of them, so its own third-party code comes from elsewhere. A class some of whose GPU code
///   is the main repository's own is trusted, as every test reaches the main repository.
struct BlindTests {
  std::map<std::string, long> classes;  ///< blind class → how many of its GPU tests reach no GPU code
  std::map<std::string, std::string> unsupplied;  ///< label → rule class, of the unsupplied tests
  /// Each class with unsupplied tests → its suppliers, repository names without "@" ("pypi").
  std::map<std::string, std::vector<std::string>> suppliers;
  /// GPU tests the graph shows no GPU code for whose runs used a GPU (--history): label → what
  /// the runs measured. Their GPU code is outside the graph, whatever their class's tests reach.
  std::map<std::string, std::string> used_gpu;
  /// In a graph queried with --noimplicit_deps (no test reaches Bazel's own test support,
  /// @bazel_tools//tools/test), the tests of rule classes other than Bazel's common ones (cc_test,
  /// py_test, ...): label → rule class. What their rule adds itself (a private attribute's
  /// default, such as a torch_test rule's runtime) is not in the graph.
  std::map<std::string, std::string> without_implicit;
  /// Whether the graph cannot tell of this test (of any kind).
  bool contains(const std::string& label, const std::string& rule_class) const {
    return used_gpu.contains(label_identity(label)) || classes.contains(rule_class) ||
           unsupplied.contains(label) || without_implicit.contains(label);
  }
  /// Why not, as the audit lists it; empty for a test the graph can tell of. `repository`
  /// writes each supplier ("@pypi"): as it is, or as a Markdown code span.
  std::string reason(const std::string& label, const std::string& rule_class,
                     std::string (*repository)(std::string_view) = nullptr) const;
  /// The warning for each class (blind, or with unsupplied tests): what the graph cannot tell
  /// and how to let it.
  std::vector<std::string> messages() const;
  /// How many tests the kinds hold.
  long count() const;
};
/// `used_gpu`: the tests whose runs used a GPU → what the runs measured (from --history).
BlindTests blind_tests(const Classification& tests, const DepGraph& graph, const GpuReach& reach,
                       const std::map<std::string, std::string>& used_gpu = {});

/// One test the audit lists.
struct AuditEntry {
  std::string label;
  std::string package;  ///< "//ml", "@repo//pkg"
  Disagreement kind;
  std::string path;        ///< the path to GPU code (gpu_code_without_annotation)
  std::string undeclared;  ///< a label it reaches that the input named but never expanded (unknown)
  std::string reason;      ///< unknown: why ("reaches @x//:y, which the input did not expand")
  std::vector<std::string> suppliers;  ///< unknown, of an unsupplied test: its class's suppliers ("pypi")
  std::string tag_change;  ///< what to edit: "remove tags gpu:2, nvlink (or add cpu-only)"; "add tag gpu"
  std::string location;    ///< the rule's BUILD position, as Bazel printed it
  double gpu_hours = 0;    ///< GPU-hours it holds in the plan (`--fleet`), 0 otherwise
};

/// The counts of one package, for the summary lines.
struct PackageAudit {
  std::string package;
  long tests = 0;
  long gpu_annotated = 0;
  long reach_gpu_code = 0;
  long gpu_without_gpu_code = 0;
  long gpu_code_without_annotation = 0;
  long unknown = 0;  ///< reach labels the input did not expand
};

/// The disagreements between tags and graph, for `gpuplan audit`.
struct Audit {
  std::vector<AuditEntry> entries;     ///< grouped by kind, then by label
  std::vector<PackageAudit> packages;  ///< by package
  long tests = 0;                      ///< tests audited (skipped ones are not)
  long not_in_graph = 0;               ///< tests the graph does not hold
  BlindTests blind;                    ///< blind_tests(): their GPU use is unknown
};

/// What to edit in the BUILD file so that a GPU test stops asking for a GPU ("remove tags gpu:2,
/// nvlink"), from its annotations (classify with annotations kept); `audit` and `history suggest` say it.
std::string gpu_annotation_removal(const ClassifiedTest& test);

/// Compares each classified test (not the skipped ones) with what the graph says; `used_gpu`
/// as for blind_tests().
Audit audit(const Classification& tests, const DepGraph& graph, const GpuReach& reach,
            const std::map<std::string, std::string>& used_gpu = {});

/// The supplier of a GPU dep (BlindTests): the apparent name of its repository; for a
/// whl_library spoke matched by a pattern such as @*_torch//:*, the hub's name ("pypi_311" for
/// @pypi_311_torch). Empty in the main repository. `pattern`: the gpu_deps pattern it matched, if any.
std::string gpu_supplier(std::string_view label, std::string_view pattern);
/// Whether `label` belongs to the repositories of `supplier`: its own, or a spoke of it
/// ("pypi_numpy" or "pypi_311_numpy" of "pypi").
bool from_supplier(std::string_view supplier, std::string_view label);

/// `--classify-by-deps`: GPU tests that cannot reach GPU code go to the CPU bucket, each with
/// a warning naming what it lacks. Tests whose reach is unknown stay. Never moves a CPU test to
/// the GPU bucket, but names each one with no GPU annotation that reaches GPU code, with its path
/// (a warning, an error when `strict`): on a CPU runner its GPU code fails or is skipped. Returns
/// how many moved. `blind`: blind_tests() of the tests, which stay where they are.
long classify_by_deps(Classification& tests, const DepGraph& graph, const GpuReach& reach,
                      const BlindTests& blind, bool strict = false);

/// "//ml" for "//ml:train_test", "@pypi//torch" for "@pypi//torch:pkg".
std::string package_of(std::string_view label);

}  // namespace gpuplan
