#include "cli/query_input.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iostream>

#include "annotate/rule_matcher.hpp"
#include "cli/io.hpp"
#include "cli/progress.hpp"
#include "gpuplan/error.hpp"
#include "util/text.hpp"

namespace gpuplan::cli {

void add_query_options(CLI::App& command, QueryOptions& options) {
  add_targets_input(command, options.targets);
  command.add_option("--rules", options.rules, "the repository's own conventions and knobs (YAML)");
  command.add_flag("--strict", options.strict,
                   "a warning that says gpuplan had to guess (a conflicting or malformed annotation; a fleet "
                   "warning, where a --fleet is read) is an error (exit 2)");
  command.add_flag("--include-manual", options.include_manual,
                   "take tests tagged manual as the others (by default they are skipped, as `bazel test "
                   "//...` skips them)");
  command.add_flag("--classify-by-deps", options.classify_by_deps,
                   "GPU-annotated tests whose dependency graph reaches no GPU code go to the CPU bucket "
                   "(FILE: bazel query 'deps(tests(//...))' --output=xml)");
}

Rules read_rules(const QueryOptions& options) {
  if (options.rules.empty()) return Rules{};
  auto input = open_input(options.rules);
  return load_rules(input.in(), input.name);
}

void add_untagged_option(CLI::App& command, QueryOptions& options) {
  options.refuse_untagged = true;
  command.add_flag(
      "--allow-untagged", options.allow_untagged,
      "take labels-only input (--output=label) as it is: tests no rule reads by label are CPU tests");
}

GpuDepPatterns gpu_patterns(const Rules& rules) {
  auto patterns = GpuDepPatterns::defaults();
  patterns.gpu_deps.insert(patterns.gpu_deps.end(), rules.gpu_deps.begin(), rules.gpu_deps.end());
  patterns.gpu_free.insert(patterns.gpu_free.end(), rules.gpu_free.begin(), rules.gpu_free.end());
  return patterns;
}

std::string input_name(const QueryOptions& options) {
  const auto& path = options.targets.path;
  return path.empty() || path == "-" ? std::string("<stdin>") : path;
}

namespace {

/// Hands each test to the classifier as the reader finds it.
class ToClassifier : public TargetSink {
 public:
  /// `joined`: the tests come from --attrs's join, whose misses are worth naming. `untagged`:
  /// labels-only tests are checked against the rules that can read them (label, rule class).
  ToClassifier(Classifier& classifier, bool joined, const Rules* untagged)
      : classifier_(classifier), joined_(joined) {
    if (untagged)
      for (const auto& rule : untagged->rules) matchers_.emplace_back(rule);
    check_untagged_ = untagged != nullptr;
  }
  void test(Target&& target) override {
    attributes_ = attributes_ || target.has_attributes;
    if (joined_ && !target.has_attributes) unattributed_.push_back(canonical_label(target.label));
    if (check_untagged_ && !target.has_attributes) {
      if (std::any_of(matchers_.begin(), matchers_.end(),
                      [&](const annotate::RuleMatcher& m) { return !m.apply(target).empty(); }))
        ++matched_;
      else
        unmatched_.push_back(canonical_label(target.label));
    }
    classifier_.add(std::move(target));
  }
  bool attributes() const { return attributes_; }
  /// With --attrs, the tests it does not list (so they came without attributes).
  const std::vector<std::string>& unattributed() const { return unattributed_; }
  /// Labels-only tests that a rule reads, and those none reads (whose tags are unknown).
  long matched() const { return matched_; }
  const std::vector<std::string>& unmatched() const { return unmatched_; }

 private:
  Classifier& classifier_;
  bool joined_;
  bool attributes_ = false;
  std::vector<std::string> unattributed_;
  bool check_untagged_ = false;
  std::vector<annotate::RuleMatcher> matchers_;
  long matched_ = 0;
  std::vector<std::string> unmatched_;
};

/// Labels-only input: a test no rule reads has unknown tags, and would silently be a CPU test.
/// None read: refused (exit 2). Some read: each of the others is a warning (an error under --strict).
void check_untagged(const QueryOptions& options, const ToClassifier& sink, std::size_t tests,
                    const std::string& format) {
  if (!options.refuse_untagged || options.allow_untagged || tests == 0 || sink.attributes() ||
      sink.matched() > 0)
    return;
  throw InputError(
      Position{input_name(options)},
      fmt::format(
          "the input is {} output: labels without tags, so all {} tests would be planned as CPU tests{}. "
          "Give the tags: bazel query --output=xml (or --output=streamed_jsonproto), or join them with "
          "--attrs FILE, or classify by label with --rules; --allow-untagged takes it as it is",
          format.empty() ? "labels-only" : format, tests,
          options.rules.empty() ? "" : fmt::format(" (no rule of {} matches any of them)", options.rules)));
}

/// --classify-by-deps: the graph must be there, or every GPU test would look GPU-free.
void apply_classify_by_deps(const QueryOptions& options, Classification& classification, DepsInput& deps) {
  if (deps.graph.edge_count() == 0 && !classification.tests.empty())
    throw InputError(Position{input_name(options)},
                     "--classify-by-deps needs the dependency graph: this input has no rule inputs (make it "
                     "with bazel query 'deps(tests(//...))' --output=xml or --output=streamed_jsonproto)");
  const auto used_gpu =
      options.read_history ? options.read_history(classification) : std::map<std::string, std::string>();
  auto blind = blind_tests(classification, deps.graph, *deps.reach, used_gpu);
  for (const auto& message : blind.messages())
    classification.diagnostics.push_back(Diagnostic{options.strict ? Severity::error : Severity::warning, "",
                                                    "--classify-by-deps",
                                                    message + "; --classify-by-deps leaves them GPU tests"});
  deps.moved_to_cpu = classify_by_deps(classification, deps.graph, *deps.reach, blind, options.strict);
  long unknown = 0;
  for (const auto& test : classification.tests) {
    auto label = canonical_label(test.target.label);
    auto node = deps.graph.find(label);
    if (test.bucket != Bucket::gpu || !node || !deps.reach->unknown(*node)) continue;
    ++unknown;
    classification.diagnostics.push_back(Diagnostic{
        options.strict ? Severity::error : Severity::warning, label, "--classify-by-deps",
        fmt::format("reaches {}, which the input did not expand: whether it uses GPU code is unknown, so it "
                    "stays a GPU test (query deps(...) of it)",
                    deps.graph.label(deps.reach->first_undeclared(*node)))});
  }
  std::cerr << fmt::format(
      "gpuplan: --classify-by-deps moved {} GPU test{} that reach no GPU code to the CPU bucket",
      deps.moved_to_cpu, util::plural(deps.moved_to_cpu));
  if (unknown > 0)
    std::cerr << fmt::format("; {} left as they are: their deps are not in the input (query deps(...))",
                             unknown);
  const auto unsupplied = static_cast<long>(blind.unsupplied.size());
  const auto used = static_cast<long>(blind.used_gpu.size());
  const auto without_implicit = static_cast<long>(blind.without_implicit.size());
  const long blind_classes = blind.count() - unsupplied - used - without_implicit;
  if (used > 0) std::cerr << fmt::format("; {} left as they are: their runs used a GPU (--history)", used);
  if (blind_classes > 0)
    std::cerr << fmt::format("; {} left as they are: no test of their rule class reaches GPU code",
                             blind_classes);
  if (without_implicit > 0)
    std::cerr << fmt::format("; {} left as they are: the graph has no implicit deps (--noimplicit_deps)",
                             without_implicit);
  if (unsupplied > 0)
    std::cerr << fmt::format(
        "; {} left as they are: they reach no repository where other tests of their rule class get GPU code",
        unsupplied);
  std::cerr << '\n';
}

/// Whether the input declares some label its rules name as inputs: deps(...) does, while
/// tests(//...) names the libraries a test uses and declares none of them.
bool expands_inputs(const DepGraph& graph) {
  for (std::size_t entry = 0; entry < graph.rule_count(); ++entry)
    for (DepGraph::Node input : graph.rule_inputs(entry))
      if (graph.declared(input)) return true;
  return false;
}

}  // namespace

long print_fleet_warnings(const Fleet& fleet, bool strict) {
  const long count = static_cast<long>(fleet.warnings.size());
  // Each warning begins with its file:line:col, so the error lists them as classify lists its errors.
  if (strict && count > 0)
    throw InputError(Position{fleet.source},
                     fmt::format("{} error{} (--strict):\n  {}", count, util::plural(count),
                                 fmt::join(fleet.warnings, "\n  ")));
  for (const auto& w : fleet.warnings) std::cerr << fmt::format("gpuplan: warning: {}\n", w);
  return count;
}

std::string diagnostic_counts(const Diagnostics& diagnostics, long more_warnings, long more_notes) {
  long warnings = more_warnings, notes = more_notes, errors = 0;
  for (const auto& d : diagnostics)
    (d.severity == Severity::note ? notes : d.severity == Severity::error ? errors : warnings)++;
  std::string counts =
      fmt::format("{} warning{}, {} note{}", warnings, util::plural(warnings), notes, util::plural(notes));
  if (errors > 0) counts = fmt::format("{} error{}, {}", errors, util::plural(errors), counts);
  return counts;
}

void print_diagnostic_totals(const Diagnostics& diagnostics, bool list_warnings, bool of_one_test,
                             long warnings_printed) {
  constexpr long shown = 10;
  long listed = 0;
  std::string first;
  for (const auto& d : diagnostics) {
    if (d.severity == Severity::note) continue;
    ++listed;
    if (first.empty() && !d.label.empty()) first = d.label;
    if (list_warnings && listed <= shown)
      std::cerr << fmt::format("gpuplan: {}: {}{}{}\n", to_string(d.severity), d.label,
                               d.label.empty() ? "" : ": ", d.message);
  }
  if (list_warnings && listed > shown) std::cerr << fmt::format("gpuplan: … and {} more\n", listed - shown);
  const std::string counts = diagnostic_counts(diagnostics, warnings_printed);
  if (of_one_test)
    std::cerr << fmt::format("gpuplan: {}\n", counts);
  else
    std::cerr << fmt::format("gpuplan: {}; gpuplan explain {} for one test\n", counts,
                             first.empty() ? "LABEL" : first);
}

/// How cquery's output was read: the labels its rules name under a select() but it never lists
/// (branches not taken), which are then no dependencies, as its configuration decides; and, on
/// a line of its own, those named by a rule without a select(), which it did not expand.
void note_configured_closure(const DepGraph& graph) {
  if (!graph.is_configured_closure()) return;
  const std::vector<bool> untaken = graph.untaken_branches();
  long branches = 0, unexpanded = 0;
  std::string_view branch, other;
  for (DepGraph::Node node = 0; node < graph.node_count(); ++node) {
    if (graph.declared(node)) continue;
    if (untaken[node] ? branches++ == 0 : unexpanded++ == 0)
      (untaken[node] ? branch : other) = graph.label(node);
  }
  if (branches > 0)
    std::cerr << fmt::format(
        "gpuplan: note: the cquery output holds deps(...): {} label{} its rules name under a select() but it "
        "never lists (e.g. {}) are branches not taken in its configuration, no dependencies; run cquery with "
        "the flags of the test run (--config=cuda, ...)\n",
        branches, util::plural(branches), branch);
  if (unexpanded > 0)
    std::cerr << fmt::format(
        "gpuplan: note: {} label{} the cquery output names without a select() but never lists (e.g. {}) "
        "{} not expanded: what {} reach is unknown (a query bounded by depth or by except; give deps(...) "
        "whole)\n",
        unexpanded, util::plural(unexpanded), other, unexpanded == 1 ? "was" : "were",
        unexpanded == 1 ? "it may" : "they may");
}

/// The rules file's gpu_deps and gpu_free patterns that match no label of a dependency graph:
/// a gpu_deps pattern that matches nothing makes its tests look GPU-free without a word.
void check_patterns_match(const QueryOptions& options, const Rules& rules, const DepGraph& graph,
                          Diagnostics& diagnostics) {
  // Without deps(...) output a pattern has only the tests' direct inputs to match: missing
  // there, it is no typo (explain --strict of tests(//...) failed on the example's gpu_free).
  if (!expands_inputs(graph)) return;
  for (const auto& [key, patterns] : {std::pair{"gpu_deps", &rules.gpu_deps}, {"gpu_free", &rules.gpu_free}})
    for (const auto& pattern : unmatched_patterns(graph, *patterns)) {
      std::string message = fmt::format("{} pattern \"{}\" of {} matches no label of the dependency graph",
                                        key, pattern, options.rules);
      const std::string_view repo = std::string_view(pattern).substr(0, pattern.find("//"));
      if (repo.starts_with("@@") && repo.find_first_of("~+") != std::string_view::npos)
        message += fmt::format(
            ": a canonical repository name is spelled differently by each Bazel version "
            "(rules_python~~pip~pypi in Bazel 7, rules_python++pip+pypi in Bazel 8); write the apparent "
            "name, @{}{}, which matches both",
            apparent_repo_name(repo.substr(2)), std::string_view(pattern).substr(repo.size()));
      else
        message += std::string_view(key) == "gpu_deps" ? ": no test reaches GPU code through it (a typo?)"
                                                       : " (a typo?)";
      diagnostics.push_back(
          Diagnostic{options.strict ? Severity::error : Severity::warning, "", options.rules, message});
    }
}

Classification read_and_classify(const QueryOptions& options, const Rules& rules, bool annotations,
                                 DepsInput* deps) {
  bool by_deps = options.classify_by_deps || rules.classify_by_deps;
  DepsInput local;
  if (by_deps && !deps) deps = &local;
  // Each test is classified as it is read: the targets and the classified tests are never
  // both held whole (issue 14).
  Classifier classifier(rules, {options.include_manual, options.strict, annotations, !options.drop_inputs});
  const bool untagged = options.refuse_untagged && !options.allow_untagged;
  ToClassifier sink(classifier, !options.targets.attrs.empty(), untagged ? &rules : nullptr);
  auto targets = read_targets_input(options.targets, deps ? &deps->graph : nullptr, sink);
  check_untagged(options, sink, classifier.size(), targets.format);
  if (deps) {
    deps->reach = std::make_unique<GpuReach>(deps->graph, gpu_patterns(rules));
    note_configured_closure(deps->graph);
  }
  progress::stage(fmt::format("sorting {} tests", classifier.size()));
  auto classification = classifier.finish(targets.dropped);
  for (const auto& label : sink.unattributed())  // their tags are unknown: each would quietly be a CPU test
    classification.diagnostics.push_back(Diagnostic{
        options.strict ? Severity::error : Severity::warning, label, "--attrs",
        fmt::format("not in --attrs {}: without its tags it is planned as a CPU test (query both files with "
                    "the same expression)",
                    options.targets.attrs)});
  if (!sink.attributes())  // labels-only, and some tests matched a rule: the others' tags are unknown
    for (const auto& label : sink.unmatched())
      classification.diagnostics.push_back(Diagnostic{
          options.strict ? Severity::error : Severity::warning, label, input_name(options),
          fmt::format(
              "the input has no tags ({} output) and no rule of {} matches this test, so it is planned "
              "as a CPU test; give the tags (--output=xml), a rule for it, or --allow-untagged",
              targets.format, options.rules)});
  if (targets.format.empty())  // nothing at all, not even XML's <query>
    classification.diagnostics.push_back(Diagnostic{
        options.strict ? Severity::error : Severity::warning, "", input_name(options),
        fmt::format(
            "{} is empty, so there are no tests. A bazel query that fails writes nothing, so this may be "
            "one: run `bazel query ... | gpuplan ...` under `set -o pipefail` to fail with it (an "
            "empty result of --output=xml is <query version=\"2\"></query>, never empty)",
            input_name(options))});
  if (classification.tests.empty() && targets.dropped.test_suites > 0)  // `bazel query //pkg:gpu_suite`
    classification.diagnostics.push_back(Diagnostic{
        options.strict ? Severity::error : Severity::warning, "", input_name(options),
        fmt::format(
            "{} holds {} test_suite{} and no tests: bazel query lists a test_suite as itself, not its "
            "tests, so no test is planned. Query the tests: bazel query 'tests(//pkg:suite)'",
            input_name(options), targets.dropped.test_suites, util::plural(targets.dropped.test_suites))});
  if (deps) check_patterns_match(options, rules, deps->graph, classification.diagnostics);
  if (by_deps) apply_classify_by_deps(options, classification, *deps);
  if (!options.refuse_errors || !has_errors(classification.diagnostics)) return classification;
  std::string errors;
  long count = 0;
  for (const auto& d : classification.diagnostics) {
    if (d.severity != Severity::error) continue;
    ++count;
    errors += fmt::format("\n  {}{}{}", d.label, d.label.empty() ? "" : ": ", d.message);
  }
  throw InputError(Position{input_name(options)},
                   fmt::format("{} error{} (--strict):{}", count, util::plural(count), errors));
}

Classification without_gpu_tests(Classification tests, long& gpu_tests) {
  auto is_gpu = [](const ClassifiedTest& t) { return t.bucket == Bucket::gpu; };
  gpu_tests = std::count_if(tests.tests.begin(), tests.tests.end(), is_gpu);
  std::erase_if(tests.tests, is_gpu);
  tests.tests.shrink_to_fit();
  return tests;
}

void drop_classification_inputs(Classification& tests) {
  for (auto& test : tests.tests) {
    std::string().swap(test.target.location);
    std::vector<Symbol>().swap(test.target.tags);
    test.target.exec_properties.clear();
    test.annotations.clear();
    if (test.bucket == Bucket::gpu) test.reason = Symbol();
  }
}

}  // namespace gpuplan::cli
