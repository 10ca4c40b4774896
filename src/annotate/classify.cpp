// From each test's tags, exec_properties and matching rules to its requirement and bucket.
#include "gpuplan/classify.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <iterator>
#include <limits>
#include <numeric>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "annotate/claim.hpp"
#include "annotate/conventions.hpp"
#include "annotate/rule_matcher.hpp"
#include "gpuplan/limits.hpp"
#include "gpuplan/size.hpp"
#include "util/text.hpp"

namespace gpuplan {

std::string_view to_string(Bucket bucket) {
  switch (bucket) {
    case Bucket::gpu: return "gpu";
    case Bucket::cpu: return "cpu";
    case Bucket::skipped: return "skipped";
  }
  return "cpu";
}

namespace {

using annotate::Claim;
using annotate::Reading;
using annotate::RuleMatcher;

/// `text` as a regular expression that matches it alone (for a rule to copy into a rules file).
std::string regex_escaped(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (std::string_view(R"(\^$.|?*+()[]{})").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string gpu_count_text(int count) { return fmt::format("{} GPU{}", count, util::plural(count)); }

/// WORLD_SIZE's value as torch.distributed reads it (Python's int(), which allows blanks around
/// the digits): how many processes the test starts, saturated at the most a long long holds;
/// nullopt for what is no whole number of at least 1 ("$(N)", "0", "-1", "4.0").
std::optional<long long> world_size_processes(std::string_view value) {
  constexpr std::string_view blanks = " \t\n\r\f\v";
  auto first = value.find_first_not_of(blanks);
  if (first == std::string_view::npos) return std::nullopt;
  value = value.substr(first, value.find_last_not_of(blanks) - first + 1);
  if (value.find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  long long count = 0;
  auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), count);
  if (error == std::errc::result_out_of_range) return std::numeric_limits<long long>::max();
  if (count < 1) return std::nullopt;
  return count;
}

template <class Item, class Name>
std::string join(const std::vector<Item>& items, Name name) {
  std::string text;
  for (const auto& item : items) text += (text.empty() ? "" : ", ") + name(item);
  return text;
}

/// canonical_label without a copy: the sort compares N log N times,
/// and each test's label for its findings is copied into the same string.
std::string_view canonical_view(std::string_view label) {
  if (label.starts_with("@@//")) return label.substr(2);
  if (label.starts_with("@//")) return label.substr(1);
  // A bzlmod canonical repository name (with + or ~) is one repository with one @ or two, as
  // canonical_label() says: @rules_foo+//a:t and @@rules_foo+//a:t are one test (here both
  // "@rules_foo+//a:t", a view cannot add the @ canonical_label() writes).
  if (label.starts_with("@@") &&
      label.substr(0, label.find("//")).find_first_of("+~") != std::string_view::npos)
    return label.substr(1);
  return label;
}

/// @platforms//:incompatible, the constraint value that makes Bazel skip a target (since Bazel 7
/// also spelt @@platforms//, or with the module's canonical suffix: @@platforms~//, @@platforms+//).
bool is_incompatible_marker(const Constraint& constraint) {
  std::string_view label = constraint.label.str();
  while (label.starts_with('@')) label.remove_prefix(1);
  auto slashes = label.find("//");
  if (constraint.exec || slashes == std::string_view::npos || label.substr(slashes) != "//:incompatible")
    return false;
  auto repo = label.substr(0, slashes);
  return repo == "platforms" || repo.starts_with("platforms~") || repo.starts_with("platforms+");
}

/// A constraint value that rules_cuda's requires_cuda() adds to target_compatible_with where CUDA
/// is not enabled or no CUDA toolchain is configured (`@rules_cuda//cuda:rules_are_enabled`,
/// `@rules_cuda//cuda:valid_toolchain_is_configured`): no platform has either, so Bazel runs the
/// test only where CUDA is. query prints both, the select()s merged; cquery only where CUDA is off.
bool is_rules_cuda_requirement(const Constraint& constraint) {
  std::string_view label = constraint.label.str();
  while (label.starts_with('@')) label.remove_prefix(1);
  auto slashes = label.find("//");
  if (constraint.exec || constraint.condition || slashes == std::string_view::npos) return false;
  auto repo = label.substr(0, slashes);
  auto target = label.substr(slashes);
  return (repo == "rules_cuda" || repo.starts_with("rules_cuda~") || repo.starts_with("rules_cuda+")) &&
         (target == "//cuda:rules_are_enabled" || target == "//cuda:valid_toolchain_is_configured");
}

/// Classifies one test: reads its annotations, then combines what they claim.
class TestClassifier {
 public:
  TestClassifier(const Rules& rules, const std::vector<RuleMatcher>& matchers, const ClassifyOptions& options,
                 Diagnostics& diagnostics)
      : rules_(rules), matchers_(matchers), options_(options), diagnostics_(diagnostics) {}

  ClassifiedTest classify(Target target) {
    test_ = ClassifiedTest{};
    claims_.clear();
    malformed_.clear();
    gpu_markers_.clear();
    count_given_ = false;
    count_of_tags_only_ = false;
    std::sort(target.tags.begin(), target.tags.end());
    target.tags.erase(std::unique(target.tags.begin(), target.tags.end()), target.tags.end());
    test_.target = std::move(target);
    // As canonical_label() writes it, the form explain looks for, in the buffer of the last test's.
    label_.assign(canonical_view(test_.target.label));
    if (label_.starts_with('@') && !label_.starts_with("@@") &&
        label_.find_first_of("+~") < label_.find("//"))
      label_.insert(0, 1, '@');
    // Tests that declare the same tags (and nothing else a convention or rule reads) get the
    // same requirement, reason and findings: worked out once, copied after (issue 14).
    std::string key = shared_key();
    const std::size_t first_finding = diagnostics_.size();
    if (auto it = key.empty() ? outcomes_.end() : outcomes_.find(key); it != outcomes_.end()) {
      reuse(it->second);
    } else {
      reason_.clear();
      classify_annotations();
      test_.reason = reason_;
      if (!key.empty()) remember(std::move(key), first_finding);
    }
    read_name(first_finding);  // not of the tags: the name is no part of the key
    if (test_.bucket == Bucket::gpu && test_.target.shard_count_unresolved)
      report(bad(), "shard_count",
             "shard_count is a select(), which bazel query cannot resolve: it is planned unsharded, and if "
             "Bazel shards it, run-under refuses the shards (bazel cquery --output=jsonproto gives the value "
             "for a configuration)");
    if (!test_.target.unexplained_input().empty()) report_selected_exec_properties();
    if (test_.target.selected_exec_properties && !test_.target.selected_exec_properties->branches.empty())
      report_exec_properties_branches();
    if (test_.target.selected_exec_properties) report_selected_attributes();
    return std::move(test_);
  }

  /// What the tests so far made of each rule of the rules file, in its order.
  struct RuleUse {
    bool matched = false;  ///< it matched some test
    /// Some test has as its generator_function the rule's rule_class, or as its rule class the
    /// rule's generator_function: the two confused.
    bool names_other_kind = false;
  };
  const std::vector<RuleUse>& rule_uses() const { return rule_uses_; }

 private:
  /// What classifying a test by its tags alone gave, for the next test with the same tags.
  struct Outcome {
    Bucket bucket;
    Symbol reason;
    SharedRequirement requirement;
    BoxedVector<Annotation> annotations;
    Diagnostics findings;  ///< without the label
  };

  /// The test's tags as one text when they are all that decides its outcome: no rules (they
  /// may read labels and rule classes), no exec_properties, no backend in its name. Else "".
  /// Whether a macro made it is part of the key: a backend tag is then the macro's (by_macro);
  /// so are its launch settings, which read_device_env, read_world_size and read_process_args
  /// read beside the tags (a JAX package's multi-process tests share one outcome, where each was
  /// worked out alone: 150,000 of them took classify from 55 to 173 MiB).
  std::string shared_key() const {
    const Target& t = test_.target;
    if (!matchers_.empty() || !t.exec_properties.empty() || !t.constraints.empty() ||
        annotate::read_variant_name(t.label, t.generator_function.str()))
      return {};
    std::string key = t.has_attributes ? "a" : "l";
    key += t.generator_function.str();  // read_macro reads it
    for (const auto& tag : t.tags) {
      key += '\0';
      key += tag.str();
    }
    if (t.launch_settings) {
      const auto& launch = t.launch();
      key += '\0';
      for (const Symbol* text : {&launch.device_env, &launch.world_size_env, &launch.process_args})
        key += fmt::format("\1{}:{}", text->str().size(), text->str());
    }
    return key;
  }

  void reuse(const Outcome& outcome) {
    test_.bucket = outcome.bucket;
    test_.reason = outcome.reason;
    test_.requirement = outcome.requirement;
    test_.annotations = outcome.annotations;
    for (const auto& d : outcome.findings) diagnostics_.push_back({d.severity, label_, d.source, d.message});
  }

  void remember(std::string key, std::size_t first_finding) {
    Outcome outcome{test_.bucket, test_.reason, test_.requirement, test_.annotations, {}};
    for (std::size_t i = first_finding; i < diagnostics_.size(); ++i)
      outcome.findings.push_back(
          {diagnostics_[i].severity, "", diagnostics_[i].source, diagnostics_[i].message});
    outcomes_.emplace(std::move(key), std::move(outcome));
  }

  /// Reads the test's annotations and combines what they claim into test_.
  void classify_annotations() {
    bool macro_ruled = false;  // a rule that names the test's generator_function read it
    bool manual = read_tags();
    read_exec_properties();
    if (rule_uses_.size() != matchers_.size()) rule_uses_.resize(matchers_.size());
    for (std::size_t i = 0; i < matchers_.size(); ++i) {
      auto readings = matchers_[i].apply(test_.target);
      rule_uses_[i].matched = rule_uses_[i].matched || !readings.empty();
      const Rule& rule = rules_.rules[i];
      const Target& t = test_.target;
      rule_uses_[i].names_other_kind =
          rule_uses_[i].names_other_kind ||
          (rule.rule_class && *rule.rule_class == t.generator_function.str()) ||
          (rule.generator_function && *rule.generator_function == t.rule_class.str());
      for (auto& reading : readings) take(reading);
      macro_ruled = macro_ruled || (!readings.empty() && rule.generator_function);
    }
    read_compatibility_conditions();
    if (!macro_ruled) read_cuda_test_macro();
    if (std::none_of(claims_.begin(), claims_.end(), [](const Claim& c) { return c.backend.has_value(); }))
      if (auto variant =
              annotate::read_variant_name(test_.target.label, test_.target.generator_function.str()))
        take(*variant);
    combine();
    if (manual && !options_.include_manual) {
      test_.bucket = Bucket::skipped;
      reason_ = "tagged manual";
    }
    read_incompatible();
    read_constraints();
    read_gpu_markers();
    read_macro();
    read_device_env();
    read_world_size();
    read_process_args();
  }

  /// A GPU test whose args give JAX's multi-process runner (jax/_src/test_multiprocess.py)
  /// --num_processes=N and --gpus_per_process=M starts N processes and hands each M GPUs of those
  /// it sees, by index: it needs N×M, and with fewer it starts fewer processes and skips the cases
  /// that need the others, passing. That count is the test's own, so it wins over a count-only tag's
  /// (multiaccelerator's 8, or what the rules file makes it): jax_multiplatform_test's 2-process
  /// tests (tests/mosaic/BUILD's gpu_distributed_test) were planned on 8 GPUs, and a rules file's
  /// multiaccelerator_count: 4 planned jax_multiprocess_test's 4×2 on 4, with no word. A count the
  /// annotations give (gpu:2) is kept, with a note where it differs.
  void read_process_args() {
    const std::string& args = test_.target.launch().process_args.str();
    if (args.empty() || test_.bucket != Bucket::gpu || test_.requirement->takes_every_node_gpu()) return;
    std::optional<std::string_view> processes_flag, gpus_flag;  // absl's flags: the last one written wins
    for (std::string_view rest = args; !rest.empty();) {
      auto flag = rest.substr(0, rest.find(' '));
      rest.remove_prefix(std::min(rest.size(), flag.size() + 1));
      (flag.starts_with("--num_processes=") ? processes_flag : gpus_flag) = flag;
    }
    auto count_in = [](std::optional<std::string_view> flag) {
      return flag ? world_size_processes(flag->substr(flag->find('=') + 1)) : std::nullopt;
    };
    const auto processes = count_in(processes_flag), gpus_each = count_in(gpus_flag);
    auto source = "args " + util::excerpt(args, 100);
    if (!processes || !gpus_each) {
      note(source, "not read: no count of processes and of GPUs each");
      // Left out, --gpus_per_process is 0: the processes share every GPU they see, as does
      // --gpus_per_process=0. A value that is no count ("$(N)", which Bazel expands only when it
      // runs the test) leaves the test's count unknown: with fewer GPUs than it turns out to need,
      // the runner starts fewer processes and passes.
      std::optional<std::string_view> unread;
      if (processes_flag && !processes)
        unread = processes_flag;
      else if (gpus_flag && !gpus_each && *gpus_flag != "--gpus_per_process=0")
        unread = gpus_flag;
      if (!unread || (count_given_ && !count_of_tags_only_)) return;
      report(bad(), source,
             fmt::format(
                 "the test's args give JAX's multi-process runner {}, which is no count (a whole "
                 "number of at least 1; a Make variable such as $(N) Bazel expands only when it runs "
                 "the test), so they do not say how many GPUs its processes use: it is planned with "
                 "{}, and with fewer than it needs the runner starts fewer processes, skips the cases "
                 "that need the others and passes. Tag it gpu:N, N its processes times their GPUs each",
                 util::excerpt(*unread, 100), gpu_count_text(std::max(test_.requirement->gpus.value, 1))));
      return;
    }
    const long long wanted =
        *processes > max_gpus_per_test / *gpus_each ? max_gpus_per_test + 1LL : *processes * *gpus_each;
    const int gpus = static_cast<int>(std::min<long long>(wanted, max_gpus_per_test));
    const auto start = fmt::format("the test's args start {} processes with {} GPU{} each", *processes,
                                   *gpus_each, util::plural(*gpus_each));
    note(source,
         fmt::format("{} processes × {} GPU{} each", *processes, *gpus_each, util::plural(*gpus_each)));
    const int given = test_.requirement->gpus.value;
    if (gpus == given) return;
    const std::string& given_by = test_.requirement->gpus.source.str();
    if (count_given_ && !count_of_tags_only_) {
      report(Severity::note, source,
             fmt::format("{}, but {} gives it {}; it is planned with {}, as that says", start, given_by,
                         gpu_count_text(given), gpu_count_text(given)));
      return;
    }
    report(
        Severity::note, source,
        fmt::format(
            "{}: it is planned with {}{}{}", start, gpu_count_text(gpus),
            count_of_tags_only_ ? fmt::format(", not the {} that {} gives", gpu_count_text(given), given_by)
                                : std::string(),
            wanted > max_gpus_per_test ? ", the most gpuplan plans for one test, which no node has" : ""));
    test_.requirement.edit().gpus = {gpus, Symbol(source)};
    reason_ += fmt::format("; {} → {}", source, gpu_count_text(gpus));
  }

  /// A GPU test whose `env` sets WORLD_SIZE=N starts N torch.distributed processes, and under NCCL
  /// each needs a GPU of its own (rtp-llm's 4-GPU tests say so only there, beside exec_properties
  /// {"gpu": "H20"}: planned on 1 GPU, one failed or skipped what needs the others, another ran
  /// its 4 ranks on one GPU). With no GPU count given, it gets N GPUs, with a warning (a guess: the
  /// processes may share a GPU); a count given, it keeps that, with a note. A CPU test's processes
  /// may use gloo: a note. A value that is no count ("$(N)", "0") on a GPU test with no count
  /// given: a warning, as 1 GPU is then a guess (before, it was not read, with no word, and
  /// WORLD_SIZE=512 planned a 512-process test on 1 GPU).
  void read_world_size() {
    const std::string& env = test_.target.launch().world_size_env.str();
    if (env.empty() || test_.bucket == Bucket::skipped || test_.requirement->takes_every_node_gpu()) return;
    auto value = std::string_view(env).substr(env.find('=') + 1);
    auto source = "env " + util::excerpt(env, 100);
    auto read = world_size_processes(value);
    if (!read) {
      note(source, "not read: no count of processes");
      if (test_.bucket != Bucket::gpu || count_given_) return;
      const bool make_variable = value.find("$(") != std::string_view::npos;
      report(bad(), source,
             fmt::format("the test's env sets WORLD_SIZE={}, which is {}, so it does not say how many GPUs "
                         "the test's torch.distributed processes use: it is planned with {}, as no "
                         "annotation gives a count. If each process needs a GPU of its own, tag it gpu:N, N "
                         "their number",
                         value.empty() ? "\"\"" : util::excerpt(value, 100),
                         make_variable ? "a Make variable, which Bazel expands when it runs the test and "
                                         "query output prints as written"
                                       : "no count of processes (a whole number of at least 1)",
                         gpu_count_text(std::max(test_.requirement->gpus.value, 1))));
      return;
    }
    const long long processes = *read;
    if (processes <= std::max(test_.requirement->gpus.value, 1)) return;
    auto process_count = processes == std::numeric_limits<long long>::max() ? util::excerpt(value, 100)
                                                                            : std::to_string(processes);
    if (test_.bucket == Bucket::cpu) {
      // rtp-llm's 4-GPU perf targets without exec_properties; but gloo runs such processes on CPUs.
      if (test_.requirement->gpus.source == "default")
        report(Severity::note, source,
               fmt::format("the test's env sets WORLD_SIZE={}, {} torch.distributed processes, but no "
                           "annotation asks for a GPU, so it is planned as a CPU test, as gloo's processes "
                           "need none; if they use NCCL, tag it gpu:{}",
                           process_count, process_count, process_count));
      return;
    }
    note(source, fmt::format("{} torch.distributed processes", process_count));
    const int given = test_.requirement->gpus.value;
    if (count_given_) {
      report(Severity::note, source,
             fmt::format("the test's env sets WORLD_SIZE={}, {} processes, each with a GPU of its own under "
                         "NCCL, but {} gives it {}; it is planned with {}, as that says",
                         process_count, process_count, test_.requirement->gpus.source.str(),
                         gpu_count_text(given), gpu_count_text(given)));
      return;
    }
    // More than gpuplan plans for one test is more than any node has: planned with that most, the
    // test is unschedulable, with the planner's reason, and not run on 1 GPU.
    const int gpus = static_cast<int>(std::min<long long>(processes, max_gpus_per_test));
    test_.requirement.edit().gpus = {gpus, Symbol(source)};
    reason_ += fmt::format("; {} → {} GPUs", source, gpus);
    report(
        bad(), source,
        fmt::format("the test's env sets WORLD_SIZE={}, {} processes, each with a GPU of its own under NCCL, "
                    "but no annotation gives a GPU count, which would be {}: it is planned with {} GPUs{}",
                    process_count, process_count, gpu_count_text(given), gpus,
                    processes > max_gpus_per_test
                        ? ", the most gpuplan plans for one test, which no node has. If its processes "
                          "share fewer GPUs, tag it gpu:N"
                        : fmt::format(". If it needs them, tag it gpu:{}; if its processes share fewer "
                                      "GPUs, tag it gpu:N",
                                      gpus)));
  }

  /// A test's `env` that chooses GPUs itself: Bazel gives the test that value in place of the
  /// GPUs gpuplan plans for it (run-under took a "0,1" for a launcher's allocation and kept
  /// GPU 0 of it: a 2-GPU test ran on one and passed). An empty or -1 value hides every GPU,
  /// which says CPU on a CPU test (JAX's and TensorFlow's way to force one).
  void read_device_env() {
    const std::string& env = test_.target.launch().device_env.str();
    if (env.empty() || test_.bucket == Bucket::skipped) return;
    auto value = std::string_view(env).substr(env.find('=') + 1);
    bool hides = value.empty() || value == "-1";
    auto source = "env " + util::excerpt(env, 100);
    note(source, hides ? "hides every GPU from the test" : "chooses the test's GPUs itself, over gpuplan's");
    if (test_.bucket == Bucket::gpu)
      report(bad(), source,
             hides
                 ? fmt::format("the test's env sets {}, which hides every GPU from it: it holds the GPUs "
                               "gpuplan plans for it and runs without them. Remove it from env, or, if the "
                               "test needs no GPU, remove its GPU annotations and tag it cpu-only",
                               util::excerpt(env, 100))
                 : fmt::format("the test's env sets {}, which Bazel gives the test in place of the GPUs "
                               "gpuplan plans for it, so it may run on GPUs another test holds, or on fewer "
                               "than it needs. Remove it from env: gpuplan sets it for each run",
                               util::excerpt(env, 100)));
    else if (!hides &&
             std::none_of(claims_.begin(), claims_.end(), [](const Claim& c) { return c.cpu_only; }))
      report(bad(), source,
             fmt::format("the test's env sets {}, so it uses a GPU, but no GPU annotation says so, and it "
                         "is planned as a CPU test, where it runs without one. Tag it gpu (or gpu:N) and "
                         "remove it from env",
                         util::excerpt(env, 100)));
  }

  /// The macro that made a test with no GPU annotation, when its name says GPU (rules_cuda's
  /// cuda_test compiles the test with nvcc; a team's gpu_test): the test is planned as a CPU
  /// test, where it runs without a GPU, and the macro, not a tag, is what says so.
  void read_macro() {
    const std::string& macro = test_.target.generator_function.str();
    if (macro.empty() || test_.bucket != Bucket::cpu || test_.requirement->gpus.source != "default" ||
        !gpu_markers_.empty() || !annotate::looks_gpu_related(macro))
      return;  // a GPU test, cpu-only, or a tag already warned of
    auto meaning = annotate::marks_gpu_tests(macro);
    if (!meaning) return;  // a word beside it says otherwise (cpu_or_gpu_test, no_gpu_test)
    auto source = "generator_function " + macro;
    note(source, "ignored: no convention or rule reads it");
    report(bad(), source,
           fmt::format(
               "the macro that made the test, {}, names a GPU, but no convention or rule reads it, so "
               "the test is planned as a CPU test, where it runs without a GPU. If the macro makes "
               "GPU tests, have it tag them {} or give a rule such as {{generator_function: {}, set: "
               "{{{}}}}}; if this test needs no GPU, tag it cpu-only",
               util::excerpt(macro, 100), meaning->tags(), util::excerpt(macro, 100), meaning->rule_set()));
  }
  /// A test with no GPU annotation whose own name says GPU (Apollo's cuda_util_test, which
  /// Apollo's CI leaves out of its CPU runs by name, untagged): a note, which explain shows, and
  /// not a warning, since repositories name CPU tests of GPU code so too (XLA's gpu_fusible_test).
  /// `first_finding`: the test's first diagnostic; one of its tags or its macro warned already.
  void read_name(std::size_t first_finding) {
    if (test_.bucket != Bucket::cpu || test_.requirement->gpus.source != "default" ||
        std::any_of(diagnostics_.begin() + static_cast<std::ptrdiff_t>(first_finding), diagnostics_.end(),
                    [](const Diagnostic& d) { return d.severity != Severity::note; }))
      return;
    auto name = std::string_view(label_).substr(label_.rfind(':') + 1);
    if (!annotate::looks_gpu_related(name)) return;
    auto meaning = annotate::marks_gpu_tests(name);
    if (!meaning) return;  // a word beside it says otherwise (cuda_disabled_test)
    report(Severity::note, "name " + util::excerpt(name, 100),
           fmt::format("the test's name says GPU, but no annotation does, so it is planned as a CPU test; if "
                       "it needs a GPU, tag it {} (or give a rule with its label), else tag it cpu-only",
                       meaning->tags()));
  }

  Severity bad() const { return options_.strict ? Severity::error : Severity::warning; }

  /// Query input with the branches merged (--output=xml, JSON's default --proto:flatten_selects):
  /// the test's exec_properties may be a select(), which query prints as every branch merged,
  /// each key with the first branch's value (XML) or the last's (JSON), and with no mark; its
  /// trace, a config_setting, is in unexplained_input. A guess when gpuplan read its GPU ask from
  /// them: `{"gpu": "1"}` before a `{"gpu": "4"}` planned on 1 GPU from XML, silently.
  void report_selected_exec_properties() {
    auto from_properties = std::find_if(claims_.begin(), claims_.end(), [](const Claim& c) {
      return c.source.find("exec_properties ") != std::string::npos;
    });
    if (from_properties == claims_.end()) return;
    using Trace = SelectedExecProperties::Trace;
    const Trace trace = test_.target.selected_exec_properties->trace;
    const std::string input = util::excerpt(test_.target.unexplained_input(), 200);
    const std::string seen =
        trace == Trace::json_config_dependencies
            ? fmt::format(
                  "the test's $config_dependencies names {}, the condition of a select() on one of "
                  "its attributes",
                  input)
            : fmt::format("the test has the input {}, which none of its attributes names (a config_setting?)",
                          input);
    const bool json = trace != Trace::xml_input;
    report(bad(), "exec_properties",
           fmt::format(
               "exec_properties may be a select(): {}, and {} prints a select()ed "
               "exec_properties as its branches merged, each key with the {} branch's value, "
               "unmarked; it is planned by {} ({}bazel cquery --output=jsonproto gives the value "
               "for a configuration)",
               seen, json ? "bazel query's JSON output (by default, --proto:flatten_selects)" : "bazel query",
               json ? "last" : "first", util::excerpt(from_properties->source, 200),
               json ? "bazel query --noproto:flatten_selects prints the branches; " : ""));
  }

  /// JSON query input under --noproto:flatten_selects: a select()ed exec_properties with its
  /// branches. They are read as read_exec_properties reads exec_properties, and when they ask for
  /// different things, the planned value (their merge, as from XML) is a guess: the XML warning's
  /// category, naming each branch's condition.
  void report_exec_properties_branches() {
    const auto& branches = test_.target.selected_exec_properties->branches;
    std::vector<std::string> asks;
    for (const auto& branch : branches) asks.push_back(what_asks(branch.properties));
    const bool more = test_.target.selected_exec_properties->more_branches;
    if (std::all_of(asks.begin(), asks.end(), [&](const std::string& a) { return a == asks.front(); })) {
      if (more)
        report(bad(), "exec_properties",
               fmt::format("exec_properties is a select() of more than {} configurations; gpuplan compared "
                           "the first {}, which ask for {}, and not the others, which may ask for other "
                           "GPUs (bazel cquery --output=jsonproto gives the value for a configuration)",
                           branches.size(), branches.size(), asks.front()));
      return;
    }
    auto spelled = [](const ExecProperties& properties) {
      std::string text;
      for (const auto& [key, value] : properties)
        text += fmt::format("{}{}={}", text.empty() ? "" : " ", key, value);
      return text.empty() ? std::string("{}") : text;
    };
    std::string listed;
    for (std::size_t i = 0; i < branches.size(); ++i)
      listed += fmt::format("{}{} gives {} ({})", i ? ", " : "", util::excerpt(branches[i].conditions, 200),
                            util::excerpt(spelled(branches[i].properties), 200), asks[i]);
    report(bad(), "exec_properties",
           fmt::format(
               "exec_properties is a select() whose branches ask for different things: {}{}; bazel query "
               "cannot tell which applies, and it is planned by {} ({}: the branches merged, each key "
               "with the first branch's value, as --output=xml prints it) (bazel cquery "
               "--output=jsonproto gives the value for a configuration)",
               listed,
               more ? fmt::format(" (and configurations past these {}, not compared)", branches.size()) : "",
               util::excerpt(spelled(test_.target.exec_properties), 200),
               what_asks(test_.target.exec_properties)));
  }

  /// JSON query input under --noproto:flatten_selects: a select()ed env, target_compatible_with or
  /// exec_compatible_with whose branches differ in what gpuplan plans by (env's GPU choice; a
  /// constraint a rule reads, that looks like a GPU platform's or that makes Bazel skip the test).
  /// It is planned as --output=xml reads it, which is a guess: the exec_properties warning's kind.
  /// A target_compatible_with whose branches differ only in @platforms//:incompatible, beside a
  /// condition that names a GPU stack, is rules_cuda's requires_cuda_enabled(), and one whose
  /// branches differ only in the constraint values of its requires_cuda() is that:
  /// read_compatibility_conditions said what it plans, as for --output=xml.
  void report_selected_attributes() {
    const auto& constraints = test_.target.constraints;
    const bool gpu_stack_condition =
        std::any_of(constraints.begin(), constraints.end(), [](const Constraint& c) {
          return c.condition && !annotate::gpu_stack_vendor(c.label.str()).empty();
        });
    auto rules_cuda_select = [&](const std::string& label) {
      Constraint constraint{.label = Symbol(label)};
      return (gpu_stack_condition && is_incompatible_marker(constraint)) ||
             is_rules_cuda_requirement(constraint);
    };
    for (const auto& selected : test_.target.selected_exec_properties->other_attributes) {
      if (selected.attribute == "target_compatible_with" &&
          std::all_of(selected.differing.begin(), selected.differing.end(), rules_cuda_select))
        continue;
      const bool env = selected.attribute == "env";
      const bool matters =
          env ||
          std::any_of(selected.differing.begin(), selected.differing.end(), [&](const std::string& label) {
            return annotate::looks_gpu_related(label) ||
                   is_incompatible_marker(
                       Constraint{Symbol(label), selected.attribute != "target_compatible_with"}) ||
                   std::any_of(matchers_.begin(), matchers_.end(),
                               [&](const RuleMatcher& m) { return m.reads_tag(label); });
          });
      if (!matters) continue;
      report(
          bad(), selected.attribute,
          fmt::format("{} is a select() whose branches differ in what gpuplan plans by: {}; bazel query "
                      "cannot tell which applies, and it is planned by {} (bazel cquery --output=jsonproto "
                      "gives the value for a configuration)",
                      selected.attribute, util::excerpt(selected.branches, 400),
                      env ? "no GPU choice from env, as --output=xml reads a select()ed env"
                          : "every branch's labels, as --output=xml prints them"));
    }
  }

  /// What `properties` ask for, as read_exec_properties reads them, without a word: the claims'
  /// meanings ("2 GPUs"), sorted, and a rule's tags as they are; "nothing" when none.
  std::string what_asks(const ExecProperties& properties) const {
    std::vector<std::string> asks;
    int most = 0;  // of resources:gpu-N
    for (const auto& [key, value] : properties) {
      const auto tag = annotate::exec_property_tag(key, value);
      if (std::any_of(matchers_.begin(), matchers_.end(),
                      [&](const RuleMatcher& m) { return m.reads_tag(tag); })) {
        asks.push_back("a rule reads " + tag);
        continue;
      }
      std::string_view name = key;
      util::strip_prefix(name, "test.");
      if (util::strip_prefix(name, "resources:gpu-") && !name.empty() &&
          name.find_first_not_of("0123456789") == std::string_view::npos) {
        auto count = annotate::parse_gpu_count(name);
        if (std::strtod(std::string(value).c_str(), nullptr) > 0 && count) most = std::max(most, *count);
        continue;
      }
      auto recognized = annotate::read_exec_property(key, value, rules_);
      if (recognized && recognized->reading.claim &&
          !rules_.disabled_conventions.count(std::string(recognized->convention)))
        asks.push_back(recognized->reading.claim->meaning());
    }
    if (most) asks.push_back(Claim{.gpu = true, .gpus = most}.meaning());
    std::sort(asks.begin(), asks.end());
    asks.erase(std::unique(asks.begin(), asks.end()), asks.end());
    return asks.empty() ? "nothing" : fmt::format("{}", fmt::join(asks, ", "));
  }

  void report(Severity severity, std::string source, std::string message) {
    diagnostics_.push_back({severity, label_, std::move(source), std::move(message)});
  }

  void note(const std::string& source, std::string meaning, bool by_macro = false) {
    if (options_.annotations) test_.annotations.push_back({source, std::move(meaning), by_macro});
  }

  void take(const Reading& reading, bool by_macro = false) {
    if (reading.claim) {
      note(reading.source, reading.claim->meaning(), by_macro);
      claims_.push_back(*reading.claim);
      if (!reading.caveat.empty())
        report(reading.caveat_warns ? bad() : Severity::note, reading.source,
               fmt::format("{} {}", util::excerpt(reading.source, 200), reading.caveat));
      return;
    }
    // A requires-gpu- tag means "needs a GPU" however it goes on (unknown_requires_gpu): ignored,
    // requires-gpu-nvidia:two or requires-gpu-sm8 sent the test to CPU runners.
    if (std::string_view rest = reading.source; util::strip_prefix(rest, "tag requires-gpu-")) {
      // Of the vendor it names, if it names one (requires-gpu-amd:two is AMD's still).
      std::string vendor;
      for (const char* known : {"nvidia", "amd", "intel"})
        if (rest.starts_with(known)) vendor = known;
      Claim c{.source = reading.source, .gpu = true};
      if (!vendor.empty()) c.vendor = vendor;
      note(reading.source, c.meaning() + " (malformed: a guess from the prefix requires-gpu-)");
      claims_.push_back(std::move(c));
      return report(bad(), reading.source,
                    fmt::format("{} is malformed: {}; it is read as 1 GPU of {}, as any requires-gpu- tag (a "
                                "CPU runner would run the test without one)",
                                util::excerpt(reading.source, 200), reading.problem,
                                vendor.empty() ? std::string("any vendor") : vendor_display(vendor)));
    }
    note(reading.source, "ignored: " + reading.problem);
    malformed_.push_back(reading.source);
    report(bad(), reading.source,
           fmt::format("{} is malformed: {}; it is ignored", util::excerpt(reading.source, 200),
                       reading.problem));
  }

  /// A recognised annotation, unless its convention is switched off by the rules file.
  void take(const annotate::Recognized& recognized) {
    if (rules_.disabled_conventions.count(std::string(recognized.convention))) {
      note(recognized.reading.source, fmt::format("ignored: the convention {} is switched off in {}",
                                                  recognized.convention, rules_.source));
      return;
    }
    // A backend tag or name on a test a macro made is the macro's, not its call's.
    take(recognized.reading,
         annotate::is_backend_variant(recognized.convention) && !test_.target.generator_function.empty());
  }

  /// A tag that reads as no annotation but is one letter, case or blank away from one.
  void near_miss(const std::string& source, const std::string& meant) {
    note(source, fmt::format("ignored: not an annotation gpuplan knows (did you mean {}?)", meant));
    malformed_.push_back(source);
    report(bad(), source,
           fmt::format("{} looks like a GPU annotation but is not one: did you mean \"{}\"? It is ignored",
                       util::excerpt(source, 200), meant));
  }

  /// requires-gpu-SUFFIX that no convention reads: the repositories that write the prefix mean
  /// "needs a GPU" by it, so it is read as 1 GPU of any vendor, with a warning (a CPU runner would
  /// run the test without one, and the warning says what to write instead).
  /// A typo of one (requires-gpu-nvida) is read so too: its author meant a GPU test as much.
  /// One that names a GPU model (requires-gpu-a100, as XLA's build macros write internally) is
  /// read as 1 GPU of that model.
  void unknown_requires_gpu(const std::string& source, std::string_view tag,
                            std::optional<std::string> meant) {
    auto named = annotate::named_gpus(tag.substr(std::string_view("requires-gpu-").size()), true);
    Claim c{.source = source, .gpu = true, .gpus = named.count};
    const auto& model = named.models;
    if (auto models = annotate::parse_models(model); !model.empty() && models) {
      c.gpu_models = *models;
      meant.reset();
    }
    note(source, c.meaning() + " (a guess from the prefix requires-gpu-)");
    claims_.push_back(std::move(c));
    report(
        bad(), source,
        fmt::format("{} is not a requires-gpu- tag gpuplan knows{}, so it is read as {} of {}; gpuplan "
                    "knows nvidia, amd, intel, smXY, vulkan and AMD architectures such as cdna3, and a rule "
                    "whose tag regex matches it can say what it means",
                    util::excerpt(source, 200),
                    meant ? fmt::format(" (did you mean \"{}\"?)", *meant) : std::string(),
                    named.count > 1 ? fmt::format("{} GPUs", *named.count) : "1 GPU",
                    model.empty() ? std::string("any vendor") : "the model it names, " + model));
  }

  /// `text`: the tag, or an exec_property's key; `as_tag`: what a rule's tag regex would match
  /// ("key:value" for an exec_property), empty for a constraint value.
  void unknown(const std::string& source, std::string_view text, bool is_tag, std::string_view as_tag = {}) {
    if (is_tag && text.starts_with('-') && annotate::read_tag(text.substr(1), rules_)) {
      // A tag filter's exclusion written as a tag (TensorFlow Federated's py_cpu_gpu_test tags its
      // _cpu variant -requires-gpu-nvidia): it says "not a GPU test", and asks for nothing.
      note(source, "ignored: a tag filter's exclusion, not an annotation");
      return report(Severity::note, source,
                    fmt::format("{} is how --test_tag_filters excludes {}: as a tag it asks for "
                                "nothing, so it is ignored",
                                util::excerpt(source, 200), util::excerpt(text.substr(1), 100)));
    }
    if (is_tag) {
      auto meant = annotate::near_miss(text);
      if (text.starts_with("requires-gpu-") && !rules_.disabled_conventions.count("requires-gpu"))
        return unknown_requires_gpu(source, text, meant);
      if (meant) return near_miss(source, *meant);
    }
    if (!annotate::looks_gpu_related(text)) return;
    if (auto meaning = as_tag.empty() ? std::nullopt : annotate::marks_gpu_tests(as_tag))
      gpu_markers_.push_back({source, std::string(as_tag), *meaning, is_tag});
    else
      unread_gpu_note(source);
  }

  /// A tag or constraint value naming a GPU model (or a constraint value naming a vendor) that
  /// nothing reads, on a GPU test that asks for none: the planner may give the test a GPU of
  /// another. `matched`: what a rule's tag regex matches; `there`: what happens on such a GPU.
  /// Returns whether it said so.
  bool unread_gpu_choice(const std::string& source, const std::string& model, const std::string& vendor,
                         std::string_view matched, std::string_view there) {
    const Requirement& r = *test_.requirement;
    if (test_.bucket != Bucket::gpu || r.gpu_models || (model.empty() && (vendor.empty() || r.vendor)))
      return false;
    const bool is_model = !model.empty();
    if (!is_model && vendor == "apple") {
      note(source, "ignored: gpuplan plans no Apple GPUs");
      report(
          bad(), source,
          fmt::format("{} names Apple's GPUs, and gpuplan plans NVIDIA, AMD and Intel GPUs only, so the test "
                      "is planned on another vendor's GPU, {}. If no node of the fleet can run it, tag it "
                      "cpu-only or give a rule whose tag regex matches it, such as {{tag: '^{}$', set: "
                      "{{cpu_only: true}}}}, so that it holds no GPU (Bazel skips it on a CPU runner too)",
                      util::excerpt(source, 200), there, util::excerpt(regex_escaped(matched), 100)));
      return true;
    }
    const std::string& name = is_model ? model : vendor;
    const std::string tag = is_model             ? "gpu-model:" + model
                            : vendor == "nvidia" ? "cuda-only"
                            : vendor == "amd"    ? "rocm-only"
                                                 : "oneapi-only";
    note(source, "ignored: no convention or rule reads it");
    report(
        bad(), source,
        fmt::format("{} names the GPU {} {}, but no convention or rule reads it, so the test may be planned "
                    "on a GPU of another {}, {}. If it needs {}, tag it {} or give a rule whose tag regex "
                    "matches it, such as {{tag: '^{}$', set: {{{}: {}}}}}",
                    util::excerpt(source, 200), is_model ? "model" : "vendor", name,
                    is_model ? "model" : "vendor", there, name, tag,
                    util::excerpt(regex_escaped(matched), 100), is_model ? "gpu_models" : "vendor", name));
    return true;
  }

  void unread_gpu_note(const std::string& source) {
    note(source, "ignored: no convention or rule reads it");
    report(Severity::note, source,
           fmt::format("{} mentions GPUs but no built-in convention or rule reads it, so it is ignored "
                       "(a rules file can give it a meaning)",
                       util::excerpt(source, 200)));
  }

  /// A tag that names a GPU as a word is how some repositories' CI picks their GPU tests (Ray runs
  /// its train_v2_gpu tests on GPU machines), and an exec_property whose key names one asks a
  /// remote executor for a GPU (nvidia.com/gpu, gpu-type). On a test with no GPU annotation it is
  /// a warning: the test is planned as a CPU test, where it runs without a GPU and may skip its
  /// GPU paths and pass. On any other test it is the note of every GPU-looking tag nothing reads.
  void read_gpu_markers() {
    const bool unannotated = test_.bucket == Bucket::cpu && test_.requirement->gpus.source == "default";
    for (const auto& marker : gpu_markers_) {
      if (!unannotated) {
        if (!unread_gpu_choice(marker.source, marker.meaning.model, "", marker.as_tag,
                               "where it may fail, or skip what needs that model and pass"))
          unread_gpu_note(marker.source);
        continue;
      }
      note(marker.source, "ignored: no convention or rule reads it");
      report(bad(), marker.source,
             fmt::format(
                 "{} names a GPU{}, but no convention or rule reads it, so the test is planned as a CPU "
                 "test, where it runs without a GPU. If {}, tag the test {} or give a rule whose tag "
                 "regex matches it, such as {{tag: '^{}$', set: {{{}}}}}; if it needs no GPU, tag "
                 "it cpu-only",
                 util::excerpt(marker.source, 200),
                 marker.meaning.model.empty() ? std::string() : " model (" + marker.meaning.model + ")",
                 !marker.is_tag                 ? "it asks a remote executor for a GPU"
                 : marker.meaning.model.empty() ? "the tag marks GPU tests (Ray's CI runs its train_v2_gpu "
                                                  "tests on GPU machines)"
                                                : "the tag marks tests for that GPU",
                 marker.meaning.tags(), util::excerpt(regex_escaped(marker.as_tag), 100),
                 marker.meaning.rule_set()));
    }
  }

  /// Reads every tag; returns whether the test is tagged manual.
  bool read_tags() {
    bool manual = false;
    for (const auto& tag : test_.target.tags) {
      if (tag == "manual") {
        manual = true;
        note("tag manual", options_.include_manual ? "planned anyway (--include-manual)"
                                                   : "left out, as Bazel leaves it out of wildcards");
      } else if (std::none_of(matchers_.begin(), matchers_.end(),
                              [&](const RuleMatcher& m) { return m.reads_tag(tag); })) {
        read_tag(tag);
      }
    }
    return manual;
  }

  /// Modular's remote-execution resources {"test.resources:gpu-4": "0.01"}: a machine of N GPUs,
  /// asked for when the amount is above 0; a test that asks for several (gpu-2 and gpu-4) needs
  /// the most. Returns the keys it read.
  std::set<std::string> read_gpu_machine_resources() {
    std::set<std::string> read;
    std::optional<std::pair<int, std::string>> most;  // N and its property
    for (const auto& [key, value] : test_.target.exec_properties) {
      std::string_view name = key;
      util::strip_prefix(name, "test.");
      const auto tag = annotate::exec_property_tag(key, value);  // (clang 14 captures no binding)
      if (!util::strip_prefix(name, "resources:gpu-") || name.empty() ||
          name.find_first_not_of("0123456789") != std::string_view::npos ||
          std::any_of(matchers_.begin(), matchers_.end(),
                      [&](const RuleMatcher& m) { return m.reads_tag(tag); }))
        continue;  // not one, or a rule reads it
      read.insert(key);
      const double amount = std::strtod(std::string(value).c_str(), nullptr);
      auto count = annotate::parse_gpu_count(name);
      if (!(amount > 0) || !count) continue;  // gpu-1: "0": not asked for
      if (!most || *count > most->first) most = {*count, fmt::format("exec_properties {}={}", key, value)};
    }
    if (most) {
      Claim c{.source = most->second, .gpu = true, .gpus = most->first};
      note(c.source, c.meaning());
      claims_.push_back(std::move(c));
    }
    return read;
  }

  void read_exec_properties() {
    const auto machine_resources = read_gpu_machine_resources();
    for (const auto& [key, value] : test_.target.exec_properties) {
      if (machine_resources.count(key)) continue;
      auto tag = annotate::exec_property_tag(key, value);
      if (std::any_of(matchers_.begin(), matchers_.end(),
                      [&](const RuleMatcher& m) { return m.reads_tag(tag); }))
        continue;  // a rule reads it, as a tag
      auto source = fmt::format("exec_properties {}={}", key, value);
      if (auto recognized = annotate::read_exec_property(key, value, rules_))
        take(*recognized);
      else if (!annotate::is_falsy(value) && annotate::read_tag(key, rules_))
        report(
            bad(), source,
            fmt::format("{} is ignored: {} is a flag, set by true, yes, 1 or nothing (and off by false, no "
                        "or 0)",
                        util::excerpt(source, 200), util::excerpt(key, 100)));
      else if (auto meant = annotate::property_near_miss(key))
        near_miss(source, fmt::format("{}={}", *meant, value));
      else
        unknown(source, key, false, tag);
    }
  }

  /// @platforms//:incompatible in target_compatible_with. cquery resolved it: Bazel skips the test in
  /// this configuration, and `bazel test` naming it (as exec does) refuses to start, so no test of
  /// the node would run. query merged the branches of a select(): it may apply or not, a note.
  void read_incompatible() {
    const auto& constraints = test_.target.constraints;
    auto marker = std::find_if(constraints.begin(), constraints.end(), is_incompatible_marker);
    const bool configured = !test_.target.configuration.empty();
    if (marker == constraints.end() && configured)  // cquery where rules_cuda's CUDA is off
      marker = std::find_if(constraints.begin(), constraints.end(), is_rules_cuda_requirement);
    if (marker == constraints.end()) return;
    if (configured) {
      if (test_.bucket == Bucket::skipped) return;
      test_.bucket = Bucket::skipped;
      reason_ = fmt::format(
          "incompatible in the queried configuration (target_compatible_with resolves to {}): Bazel skips "
          "it, and refuses to start a bazel test that names it",
          marker->label.str());
      return;
    }
    note(marker->source(), "Bazel skips the test where this applies");
    report(Severity::note, marker->source(),
           fmt::format("{}: where it applies (always, or in a select() branch, which bazel query cannot tell "
                       "apart), Bazel skips the test, and a bazel test that names it (as gpuplan exec does) "
                       "refuses to start; bazel cquery with the nodes' flags resolves it, and gpuplan then "
                       "leaves the test out where it applies",
                       marker->source()));
  }

  /// A select() on target_compatible_with whose condition names a GPU stack, and one of whose
  /// branches makes the test incompatible (rules_cuda's requires_cuda_enabled(), as PyTorch's
  /// //c10/cuda/test:test writes it, or bazel-skylib's compatibility.none_of(":no_cuda"); query
  /// output does not say which branch): taken to run only where CUDA is enabled, so a CUDA test,
  /// though it names no GPU. Read as 1 GPU of that vendor with a warning (an error
  /// under --strict), as a pool named after a GPU stack is: a test that only needs the toolkit to
  /// build has none. With another annotation that asks for a GPU it only keeps the vendor; a CPU
  /// annotation, or a rule that reads the condition, decides instead.
  void read_compatibility_conditions() {
    bool rules_cuda_read = false;
    for (const auto& constraint : test_.target.constraints) {
      // rules_cuda's requires_cuda() (the faiss module's //tests:test_c_api_gpu in the Bazel Central
      // Registry): its two constraint values say one thing, read once; cquery resolved them
      // (read_incompatible).
      const bool rules_cuda = is_rules_cuda_requirement(constraint);
      if (rules_cuda && (rules_cuda_read || !test_.target.configuration.empty())) continue;
      if (!constraint.condition && !rules_cuda) continue;
      const std::string& label = constraint.label.str();
      auto vendor = rules_cuda ? std::string("nvidia") : annotate::gpu_stack_vendor(label);
      if (vendor.empty() || std::any_of(matchers_.begin(), matchers_.end(),
                                        [&](const RuleMatcher& m) { return m.reads_tag(label); }))
        continue;
      rules_cuda_read = rules_cuda_read || rules_cuda;
      auto source = constraint.source();
      if (std::any_of(claims_.begin(), claims_.end(), [](const Claim& c) { return c.cpu_only; })) {
        note(source, "ignored: a CPU annotation says the test needs no GPU");
        continue;
      }
      bool asks_gpu = std::any_of(claims_.begin(), claims_.end(),
                                  [](const Claim& c) { return c.wants_gpu() && !c.qualifies_only; });
      Claim c{.source = source, .gpu = !asks_gpu, .vendor = vendor, .qualifies_only = asks_gpu};
      note(source, c.meaning());
      claims_.push_back(c);
      if (asks_gpu) continue;
      auto why = rules_cuda ? fmt::format(
                                  "rules_cuda's requires_cuda() puts it there where CUDA is not "
                                  "enabled, and no platform has it, so the test is incompatible "
                                  "there and runs only with {}'s GPU stack",
                                  vendor_display(vendor))
                            : fmt::format(
                                  "a select() on {} makes the test incompatible in one of its "
                                  "branches, as rules_cuda's requires_cuda_enabled() does where CUDA "
                                  "is not enabled (bazel query does not say which branch), so it is "
                                  "taken to run only with {}'s GPU stack",
                                  util::excerpt(label, 100), vendor_display(vendor));
      report(bad(), source,
             fmt::format("{}: {}, yet no annotation names a GPU: it is read as 1 {} GPU (a test that only "
                         "needs the toolkit to build has none). Tag it requires-gpu-{} (or "
                         "requires-gpu-{}:N), or cpu-only, or give a rule whose tag regex matches {}",
                         source, why, vendor_display(vendor), vendor, vendor, util::excerpt(label, 100)));
    }
  }

  /// rules_cuda's cuda_test macro (cuda/private/macros/cuda_test.bzl): a cc_test whose sources it
  /// compiles with the CUDA compiler into a cuda_library, and it adds no tag. Its tests launch
  /// kernels (rules_cuda's examples/basic_macros; VORTICITY-INC/VTensor's cuBLAS and cuSOLVER tests),
  /// and a CPU runner fails them ("no CUDA-capable device is detected"): read as 1 NVIDIA GPU with a
  /// warning (an error under --strict), as requires_cuda_enabled() is, since a test of host code
  /// alone needs none. Beside an annotation that asks for GPUs it only keeps the vendor; a CPU
  /// annotation, or a rule that names the macro, decides instead.
  /// tensorflow/lingvo's lingvo_cuda_py_test (lingvo/lingvo.bzl) tags its tests requires-gpu, of
  /// any vendor, but lingvo runs them only on TensorFlow's CUDA build (nvidia/cuda images with
  /// --runtime=nvidia, docker/dev.Dockerfile), which sees no AMD or Intel GPU: it keeps the vendor
  /// too. Before, such a test could be planned on an AMD GPU and pass there without touching it.
  void read_cuda_test_macro() {
    const std::string& macro = test_.target.generator_function.str();
    if (macro != "cuda_test" && macro != "lingvo_cuda_py_test") return;
    auto source = "generator_function " + macro;
    if (std::any_of(claims_.begin(), claims_.end(), [](const Claim& c) { return c.cpu_only; })) {
      note(source, "ignored: a CPU annotation says the test needs no GPU");
      return;
    }
    if (std::any_of(claims_.begin(), claims_.end(), [](const Claim& c) { return c.vendor.has_value(); }))
      return;  // a vendor is named already (an AMD one is then a conflict of its own)
    bool asks_gpu = std::any_of(claims_.begin(), claims_.end(),
                                [](const Claim& c) { return c.wants_gpu() && !c.qualifies_only; });
    if (!asks_gpu && macro != "cuda_test") return;  // lingvo's tag was switched off: nothing to keep
    Claim c{.source = source, .gpu = !asks_gpu, .vendor = std::string("nvidia"), .qualifies_only = asks_gpu};
    note(source, c.meaning());
    claims_.push_back(c);
    if (asks_gpu) return;
    report(bad(), source,
           "rules_cuda's cuda_test made the test: it compiles its sources with the CUDA compiler, and no "
           "annotation names a GPU: it is read as 1 NVIDIA GPU (a test of host code alone has none). Tag "
           "it requires-gpu-nvidia (or requires-gpu-nvidia:N), or cpu-only, or give a rule such as "
           "{generator_function: cuda_test, set: {gpus: 1, vendor: nvidia}}");
  }

  /// The constraint values no rule reads that look like a GPU platform's ("//:has_gpu"): ignored
  /// with a note on a GPU test (a warning where it names a GPU model or vendor the test does not
  /// ask for: Modular's //:h100_gpu, //:amd_gpu), but a CPU test with one is likely a GPU test sent
  /// to CPU runners,
  /// whose platform lacks it (with target_compatible_with, Bazel skips it there and passes).
  void read_constraints() {
    for (const auto& constraint : test_.target.constraints) {
      const std::string& label = constraint.label.str();
      if (constraint.condition || is_rules_cuda_requirement(constraint) ||
          !annotate::looks_gpu_related(label) ||
          std::any_of(matchers_.begin(), matchers_.end(),
                      [&](const RuleMatcher& m) { return m.reads_tag(label); }))
        continue;
      auto source = constraint.source();
      auto model = annotate::named_gpus(label, false).models;
      if (test_.bucket != Bucket::cpu || test_.requirement->gpus.source != "default") {
        if (!unread_gpu_choice(source, model, annotate::named_gpu_vendor(label), label,
                               constraint.exec
                                   ? "where no execution platform has it (bazel test fails to find "
                                     "one)"
                                   : "whose platform lacks it, so Bazel skips the test there as "
                                     "incompatible and passes"))
          unknown(source, label, false);
        continue;
      }
      note(source, "ignored: no convention or rule reads it");
      report(bad(), source,
             fmt::format("{} looks like a GPU platform's constraint, but no convention or rule reads it, so "
                         "the test is planned as a CPU test, where {}. Tag it {}, or give a rule whose tag "
                         "regex matches {}",
                         util::excerpt(source, 200),
                         constraint.exec ? "no execution platform has it (bazel test fails to find one, or "
                                           "remote execution runs it on a GPU gpuplan did not plan)"
                                         : "a CPU runner's platform lacks it, so Bazel skips the test as "
                                           "incompatible and passes",
                         model.empty() ? std::string("gpu (or gpu:N)") : "gpu-model:" + model,
                         util::excerpt(label, 100)));
    }
  }

  /// A tag no rule reads: a built-in convention, a near miss of one, or nothing gpuplan knows.
  void read_tag(std::string_view tag) {
    auto source = fmt::format("tag {}", tag);
    bool blank_ends = !tag.empty() && (std::isspace(static_cast<unsigned char>(tag.front())) ||
                                       std::isspace(static_cast<unsigned char>(tag.back())));
    if (blank_ends) {
      if (auto meant = annotate::near_miss(tag)) return near_miss(source, *meant);
    }
    if (auto recognized = annotate::read_tag(tag, rules_)) return take(*recognized);
    unknown(source, tag, true, tag);
  }

  void combine() {
    // A TPU test is neither runner's, whatever no_gpu beside it says (TensorFlow's tpu_py_test).
    if (std::any_of(claims_.begin(), claims_.end(),
                    [](const Claim& c) { return c.backend == annotate::Backend::tpu; }) &&
        other_backend())
      return;
    auto cpu = std::find_if(claims_.begin(), claims_.end(), [](const Claim& c) { return c.cpu_only; });
    std::vector<Claim> gpu;
    std::copy_if(claims_.begin(), claims_.end(), std::back_inserter(gpu),
                 [](const Claim& c) { return c.wants_gpu() && !c.qualifies_only; });
    Requirement& r = test_.requirement.edit();
    if (cpu != claims_.end()) {
      test_.bucket = Bucket::cpu;
      r.gpus = {0, cpu->source};
      reason_ = cpu->source + " → CPU only";
      // A rule's `cpu_only: false` loses to a CPU-only tag, as `nvlink: false` does to `nvlink`;
      // only switching the built-in convention off lets the rule decide.
      auto refused =
          std::find_if(claims_.begin(), claims_.end(), [](const Claim& c) { return c.not_cpu_only; });
      std::string override =
          cpu->source.starts_with("rule ")
              ? std::string()
              : fmt::format("; to override the built-in tag, write disable: [cpu-only] in {}",
                            rules_.source.empty() ? "the rules file" : rules_.source);
      if (refused != claims_.end() &&
          std::none_of(gpu.begin(), gpu.end(), [&](const Claim& c) { return c.source == refused->source; }))
        report(bad(), refused->source + ", " + cpu->source,
               fmt::format("{} says no but {} asks for CPU only; it runs as a CPU test{}", refused->source,
                           cpu->source, override));
      if (gpu.empty()) return;
      auto sources = join(gpu, [](const Claim& c) { return c.source; });
      reason_ += fmt::format(" (overriding {})", sources);
      report(bad(), cpu->source + ", " + sources,
             fmt::format("{} says CPU only but {} {} a GPU; CPU-only wins, so it runs as a CPU test{}",
                         cpu->source, sources, gpu.size() == 1 ? "asks for" : "ask for",
                         refused == claims_.end() ? std::string() : override));
      return;
    }
    if (other_backend()) return;
    if (gpu.empty()) {
      test_.bucket = Bucket::cpu;
      r.gpus = {0, "default"};
      if (!malformed_.empty())
        reason_ = fmt::format("no GPU annotation it could read ({} malformed, ignored)",
                              fmt::join(malformed_, ", "));
      else if (!test_.target.has_attributes && test_.target.tags.empty())
        reason_ = "no GPU annotation (the input has labels only: no tags to read)";
      else
        reason_ = "no GPU annotation";
      return;
    }
    test_.bucket = Bucket::gpu;
    const bool counted =
        std::any_of(gpu.begin(), gpu.end(), [](const Claim& c) { return c.gpus.has_value(); });
    count_given_ = counted;
    count_of_tags_only_ = counted && std::all_of(gpu.begin(), gpu.end(), [](const Claim& c) {
                            return !c.gpus || c.counts_accelerators;
                          });
    bool implied = combine_count(gpu);
    std::copy_if(claims_.begin(), claims_.end(), std::back_inserter(gpu),
                 [](const Claim& c) { return c.wants_gpu() && c.qualifies_only; });
    combine_memory(gpu);
    combine_constraints(gpu, &Claim::cuda, r.cuda);
    combine_constraints(gpu, &Claim::compute_capability, r.compute_capability);
    check_satisfiable(r.cuda, "CUDA version");
    check_satisfiable(r.compute_capability, "compute capability");
    combine_models(gpu);
    combine_vendor(gpu);
    if (excluded_vendor()) return;
    r.nvlink = combine_flag(claims_, &Claim::nvlink, "NVLink");
    r.exclusive = combine_flag(claims_, &Claim::exclusive, "the whole node");
    reason_ = fmt::format("{}", fmt::join(gpu_reasons(gpu), "; "));
    // Bazel's own tags only: gpuplan's gpu-exclusive keeps SPEC's count (1 for `gpu`).
    const bool bazel_exclusive = std::any_of(claims_.begin(), claims_.end(), [](const Claim& c) {
      return c.source == "tag exclusive" || c.source == "tag exclusive-if-local";
    });
    if (!counted && bazel_exclusive && r.is_exclusive() && !r.needs_nvlink()) {
      // It holds the node, and Bazel runs an exclusive test alone with every GPU of the machine
      // visible: Ray's `exclusive` GPU tests start 2 GPU workers. Given 1, they saw 1 of the 8
      // GPUs the plan kept for them, and waited or failed.
      r.every_node_gpu = Sourced<bool>{true, r.exclusive->source};
      reason_ += "; no GPU count given and it holds the node, so every GPU of it";
    } else if (implied) {
      reason_ += "; no GPU count given, so 1 GPU";
    }
    // NVLink joins GPUs: a test that asks for it means several, and on the 1 GPU it is given it
    // may pass without its multi-GPU work (NCCL's collectives run on one rank).
    if (!counted && r.needs_nvlink())
      report(bad(), r.nvlink->source,
             fmt::format("{} asks for NVLink between the test's GPUs, but no annotation gives it a GPU "
                         "count, so it is planned on 1 GPU, where NVLink joins nothing{}. Tag it with its "
                         "count (gpu:N); if 1 GPU is what it needs, drop nvlink",
                         r.nvlink->source,
                         bazel_exclusive ? " (exclusive gives a test every GPU of its node only where it "
                                           "asks for no NVLink, which need not join them all)"
                                         : ""));
  }

  /// A CPU or TPU variant of a multi-backend macro: not a GPU test, whatever the macro's shared tags
  /// say. Returns false for a GPU variant or a test that names no backend.
  bool other_backend() {
    const Claim* backend = nullptr;
    for (const auto& c : claims_) {
      if (!c.backend) continue;
      if (!backend) {
        backend = &c;
      } else if (*c.backend != *backend->backend) {
        report(bad(), backend->source + ", " + c.source,
               fmt::format("{} makes it the {} variant but {} the {} variant; using {}", backend->source,
                           to_string(*backend->backend), c.source, to_string(*c.backend), backend->source));
      }
    }
    if (!backend || *backend->backend == annotate::Backend::gpu) return false;
    auto kind = *backend->backend;
    std::vector<std::string> counted;
    for (const auto& c : claims_) {
      if (!c.wants_gpu() || c.qualifies_only || c.backend) continue;
      if (c.counts_accelerators) {
        counted.push_back(c.source);
        continue;
      }
      report(bad(), c.source + ", " + backend->source,
             fmt::format("{} asks for a GPU but {} makes it the {} variant; it runs without GPUs", c.source,
                         backend->source, to_string(kind)));
    }
    Requirement& r = test_.requirement.edit();
    r.gpus = {0, backend->source};
    test_.bucket = kind == annotate::Backend::cpu ? Bucket::cpu : Bucket::skipped;
    reason_ = kind == annotate::Backend::cpu
                  ? fmt::format("{} → the cpu variant: a CPU test", backend->source)
                  : fmt::format("{} → the tpu variant: a TPU test, not planned on GPUs or CPU runners",
                                backend->source);
    if (!counted.empty())
      reason_ += fmt::format(" ({}: the macro's, on every variant, and no GPU ask on this one)",
                             fmt::join(counted, ", "));
    return true;
  }

  /// A GPU test not for one vendor's GPUs (XLA's no-oneapi). Its copy for that vendor (xla_test
  /// still makes the intelgpu_any one, which XLA's oneAPI CI leaves out) runs nowhere gpuplan
  /// plans: skipped, with the reason. A test of no vendor keeps any vendor's GPUs, with a note:
  /// a requirement holds one vendor, not all but one. Returns true when the test is skipped.
  bool excluded_vendor() {
    auto excluded = std::find_if(claims_.begin(), claims_.end(),
                                 [](const Claim& c) { return c.excluded_vendor.has_value(); });
    if (excluded == claims_.end()) return false;
    Requirement& r = test_.requirement.edit();
    const std::string vendor = vendor_display(*excluded->excluded_vendor);
    if (r.vendor && r.vendor->value == *excluded->excluded_vendor) {
      test_.bucket = Bucket::skipped;
      reason_ = fmt::format(
          "{} → not for {} GPUs, which {} asks for: its repository's CI leaves it out, and "
          "it is not planned on GPUs or CPU runners",
          excluded->source, vendor, r.vendor->source);
      r.gpus = {0, excluded->source};
      return true;
    }
    if (!r.vendor) {
      std::string_view tag = excluded->source;
      util::strip_prefix(tag, "tag ");
      report(
          Severity::note, excluded->source,
          fmt::format("{} says the test is not for {} GPUs, but it asks for no vendor, so it may be planned "
                      "on an {} GPU (a requirement holds one vendor); a rule such as {{tag: '^{}$', set: "
                      "{{vendor: nvidia}}}} keeps it to one",
                      excluded->source, vendor, vendor, tag));
    }
    return false;
  }

  /// One vendor: the first annotation's; a different one is a conflict.
  void combine_vendor(const std::vector<Claim>& gpu) {
    const Claim* first = nullptr;
    for (const auto& c : gpu) {
      if (!c.vendor) continue;
      if (!first) {
        first = &c;
        test_.requirement.edit().vendor = Sourced<std::string>{*c.vendor, c.source};
      } else if (*c.vendor != *first->vendor) {
        report(bad(), first->source + ", " + c.source,
               fmt::format("{} asks for an {} GPU but {} for an {} GPU; using {}", first->source,
                           vendor_display(*first->vendor), c.source, vendor_display(*c.vendor),
                           vendor_display(*first->vendor)));
      }
    }
  }

  /// What each annotation asked for, those that give a count first.
  static std::vector<std::string> gpu_reasons(std::vector<Claim> gpu) {
    std::stable_partition(gpu.begin(), gpu.end(), [](const Claim& c) { return c.gpu || c.gpus; });
    std::vector<std::string> reasons;
    reasons.reserve(gpu.size());
    for (const auto& c : gpu) reasons.push_back(c.source + " → " + c.meaning());
    return reasons;
  }

  /// Largest explicit count wins; else 1. Returns true when only qualifiers implied the GPU.
  bool combine_count(const std::vector<Claim>& gpu) {
    auto& gpus = test_.requirement.edit().gpus;
    const Claim* best = nullptr;
    for (const auto& c : gpu)
      if (c.gpus && (!best || *c.gpus > *best->gpus)) best = &c;
    if (best) {
      gpus = {*best->gpus, best->source};
      for (const auto& c : gpu)
        if (c.gpus && *c.gpus != *best->gpus)
          report(
              bad(), c.source + ", " + best->source,
              fmt::format("{} asks for {} but {} for {}; using {}, the largest count", c.source,
                          gpu_count_text(*c.gpus), best->source, gpu_count_text(*best->gpus), *best->gpus));
      return false;
    }
    auto flag = std::find_if(gpu.begin(), gpu.end(), [](const Claim& c) { return c.gpu; });
    gpus = {1, flag != gpu.end() ? flag->source : gpu.front().source};
    return flag == gpu.end();
  }

  void combine_memory(const std::vector<Claim>& gpu) {
    const Claim* best = nullptr;
    for (const auto& c : gpu)
      if (c.gpu_mem_mib && (!best || *c.gpu_mem_mib > *best->gpu_mem_mib)) best = &c;
    if (!best) return;
    test_.requirement.edit().gpu_mem_mib = Sourced<std::int64_t>{*best->gpu_mem_mib, best->source};
    for (const auto& c : gpu)
      if (c.gpu_mem_mib && *c.gpu_mem_mib != *best->gpu_mem_mib)
        report(bad(), c.source + ", " + best->source,
               fmt::format("{} asks for {} of GPU memory but {} for {}; using {}, the largest", c.source,
                           format_mib(*c.gpu_mem_mib), best->source, format_mib(*best->gpu_mem_mib),
                           format_mib(*best->gpu_mem_mib)));
  }

  /// Every constraint must hold; the same constraint from two annotations is kept once.
  static void combine_constraints(const std::vector<Claim>& gpu, std::vector<VersionConstraint> Claim::*field,
                                  std::vector<Sourced<VersionConstraint>>& out) {
    for (const auto& c : gpu)
      for (const auto& constraint : c.*field)
        if (std::none_of(out.begin(), out.end(), [&](const auto& have) { return have.value == constraint; }))
          out.push_back({constraint, c.source});
  }

  /// Constraints no version meets together (cuda>=12.4 with cuda<12.0; requires-gpu-sm80-only
  /// with gpu-cc>=9.0): a conflict naming them, which plan would otherwise report as a fleet that
  /// lacks the version. The test keeps them, and no node runs it.
  void check_satisfiable(const std::vector<Sourced<VersionConstraint>>& constraints, std::string_view what) {
    using Op = VersionConstraint::Op;
    const Sourced<VersionConstraint>*low = nullptr, *high = nullptr;
    for (const auto& c : constraints) {
      auto op = c.value.op;
      if (op == Op::eq) {
        bool met = std::all_of(constraints.begin(), constraints.end(),
                               [&](const auto& other) { return other.value.satisfied_by(c.value.version); });
        if (!met) return conflicting_versions(constraints, what);
        return;
      }
      bool lower = op == Op::ge || op == Op::gt;
      auto& bound = lower ? low : high;
      if (!bound) {
        bound = &c;
        continue;
      }
      auto order = c.value.version <=> bound->value.version;
      bool tighter =
          lower ? (order > 0 || (order == 0 && op == Op::gt)) : (order < 0 || (order == 0 && op == Op::lt));
      if (tighter) bound = &c;
    }
    if (!low || !high) return;
    auto order = low->value.version <=> high->value.version;
    if (order > 0 || (order == 0 && (low->value.op == Op::gt || high->value.op == Op::lt)))
      conflicting_versions(constraints, what);
  }

  void conflicting_versions(const std::vector<Sourced<VersionConstraint>>& constraints,
                            std::string_view what) {
    std::vector<std::string> sources, values;
    for (const auto& c : constraints) {
      if (std::find(sources.begin(), sources.end(), c.source) == sources.end()) sources.push_back(c.source);
      values.push_back(c.value.str());
    }
    report(bad(), fmt::format("{}", fmt::join(sources, ", ")),
           fmt::format("{} allow no {} ({} together): no node can run the test, which is planned as "
                       "unschedulable",
                       fmt::join(sources, ", "), what, fmt::join(values, ", ")));
  }

  /// The models both lists allow (lower case, as claims hold them): a model in both, or a model of
  /// one whose family the other names (`a100` and `a100-sxm-80gb` allow `a100-sxm-80gb`), or
  /// whose family and memory it names (`a100-80gb`, a pool's, and `a100-sxm-80gb`).
  static std::vector<std::string> common_models(const std::vector<std::string>& a,
                                                const std::vector<std::string>& b) {
    // The catalog names a model FAMILY-..., or the family with a dash inside (Max-1100 of max1100);
    // named_gpu_model reads the family from other spellings (a100-sxm4-80gb).
    auto within = [](const std::string& model, const std::string& family) {
      std::string undashed;
      std::ranges::copy_if(model, std::back_inserter(undashed), [](char c) { return c != '-'; });
      if (model == family || model.starts_with(family + "-") || undashed == family ||
          annotate::named_gpu_model(model) == family)
        return true;
      auto memory = family.rfind('-');  // a100-80gb: the family a100, of 80gb
      return memory != std::string::npos && family.ends_with("gb") &&
             model.ends_with(family.substr(memory)) &&
             annotate::named_gpu_model(model) == family.substr(0, memory);
    };
    std::vector<std::string> common;
    for (const auto& x : a)
      for (const auto& y : b) {
        const std::string* both = within(y, x) ? &y : within(x, y) ? &x : nullptr;
        if (both && std::find(common.begin(), common.end(), *both) == common.end()) common.push_back(*both);
      }
    return common;
  }

  /// Models from several annotations: only those all of them allow.
  void combine_models(const std::vector<Claim>& gpu) {
    const Claim* first = nullptr;
    std::vector<std::string> models;
    std::vector<std::string> sources;
    for (const auto& c : gpu) {
      if (!c.gpu_models) continue;
      if (!first) {
        first = &c;
        models = *c.gpu_models;
      } else {
        models = common_models(models, *c.gpu_models);
      }
      sources.push_back(c.source);
    }
    if (!first) return;
    auto& out = test_.requirement.edit().gpu_models;
    if (models.empty()) {
      out = Sourced<std::vector<std::string>>{*first->gpu_models, first->source};
      report(bad(), fmt::format("{}", fmt::join(sources, ", ")),
             fmt::format("{} allow no GPU model in common; using those of {} ({})", fmt::join(sources, ", "),
                         first->source, fmt::join(*first->gpu_models, "|")));
      return;
    }
    out = Sourced<std::vector<std::string>>{models, fmt::format("{}", fmt::join(sources, ", "))};
  }

  /// A yes/no need: asked for by any annotation, it holds.
  std::optional<Sourced<bool>> combine_flag(const std::vector<Claim>& claims,
                                            std::optional<bool> Claim::*field, std::string_view what) {
    const Claim* yes = nullptr;
    const Claim* no = nullptr;
    for (const auto& c : claims) {
      if (!(c.*field)) continue;
      if (*(c.*field) && !yes) yes = &c;
      if (!*(c.*field) && !no) no = &c;
    }
    if (yes && no)
      report(bad(), no->source + ", " + yes->source,
             fmt::format("{} says no but {} asks for {}; it gets {}", no->source, yes->source, what, what));
    if (yes) return Sourced<bool>{true, yes->source};
    if (no) return Sourced<bool>{false, no->source};
    return std::nullopt;
  }

  const Rules& rules_;
  const std::vector<RuleMatcher>& matchers_;
  const ClassifyOptions& options_;
  Diagnostics& diagnostics_;
  ClassifiedTest test_;
  std::string label_;
  std::string reason_;  ///< the test's reason while it is worked out
  std::vector<Claim> claims_;
  /// A tag or exec_property no convention reads that names a GPU as a word ("train_v2_gpu").
  struct GpuMarker {
    std::string source;            ///< "tag train_v2_gpu", "exec_properties gpu-type=a100"
    std::string as_tag;            ///< what a rule's tag regex matches: "train_v2_gpu", "gpu-type:a100"
    annotate::GpuMarking meaning;  ///< what it may mean: gpu, gpu:2, gpu-model:h100
    bool is_tag;
  };
  /// Held until the test's bucket is known (read_gpu_markers).
  std::vector<GpuMarker> gpu_markers_;
  std::vector<std::string> malformed_;  ///< sources of the annotations ignored as malformed
  bool count_given_ = false;            ///< a GPU test whose annotations give its count (`gpu:2`, not `gpu`)
  /// That count is a count-only tag's (multiaccelerator, multi_gpu): a number of the rules file's,
  /// not the test's.
  bool count_of_tags_only_ = false;
  std::unordered_map<std::string, Outcome> outcomes_;  ///< by shared_key
  std::vector<RuleUse> rule_uses_;                     ///< by the rule's place in rules_.rules
};

/// Tests kept in blocks of fixed capacity while they are classified, so that the list never
/// holds two copies of itself, as a growing vector would.
class TestBlocks {
 public:
  void push_back(ClassifiedTest&& test) {
    if (size_ % block_size == 0) {
      blocks_.emplace_back();
      blocks_.back().reserve(block_size);
    }
    blocks_.back().push_back(std::move(test));
    ++size_;
  }
  std::size_t size() const { return size_; }
  ClassifiedTest& operator[](std::size_t index) { return blocks_[index / block_size][index % block_size]; }
  /// Moves every test into `out`, freeing each block once moved.
  void move_to(std::vector<ClassifiedTest>& out) {
    out.reserve(out.size() + size_);
    for (auto& block : blocks_) {
      std::move(block.begin(), block.end(), std::back_inserter(out));
      std::vector<ClassifiedTest>().swap(block);
    }
    blocks_.clear();
    size_ = 0;
  }

 private:
  // 2 MiB a block: always mapped and unmapped on its own. Blocks of about 1 MiB came from
  // malloc's heap once the reader had freed a buffer of that size (malloc then raises the size
  // it maps at), and the heap kept them after finish(): 22 MiB more for `classify` at 150k tests.
  static constexpr std::size_t block_size = (std::size_t{2} << 20) / sizeof(ClassifiedTest);
  std::vector<std::vector<ClassifiedTest>> blocks_;
  std::size_t size_ = 0;
};

/// Seven bytes of `label` from `depth` (zeros past its end), then how many bytes it has from
/// `depth` on, at most 8: two labels' keys compare as the labels' bytes there do, and a key whose
/// last byte is under 8 holds the label's last byte.
std::uint64_t label_key(std::string_view label, std::size_t depth) {
  std::size_t rest = label.size() > depth ? label.size() - depth : 0;
  std::uint64_t key = 0;
  for (std::size_t i = 0; i < 7; ++i)
    key = key << 8 | (i < rest ? static_cast<unsigned char>(label[depth + i]) : 0u);
  return key << 8 | std::min<std::size_t>(rest, 8);
}

bool label_before(const Target& a, const Target& b) {
  // One comparison of the labels, not != and then <, which compared equal-length labels twice.
  int order = canonical_view(a.label).compare(canonical_view(b.label));
  if (order != 0) return order < 0;
  // One test's listings: by configuration, then as written (//a:t before @//a:t), so that their
  // findings come out in one order whatever the input's.
  return a.configuration != b.configuration ? a.configuration < b.configuration : a.label < b.label;
}

/// For each place, the test (in the order added) that goes there: by canonical label, then
/// configuration and the label as written, then the order added, as std::stable_sort with
/// label_before orders them.
/// A radix sort, most significant bytes first: each round sorts the tests still tied by a key of
/// their next seven label bytes. A comparison sort followed two tests to their labels at each
/// comparison, a cache miss or two each: at 1M tests that was 13% of `plan` on the generated
/// query (ordered by team, so not sorted already). 12 bytes a test while it sorts, 4 after.
std::vector<std::uint32_t> label_order(TestBlocks& tests) {
  struct Keyed {
    std::uint32_t high, low, test;
    std::uint64_t key() const { return std::uint64_t{high} << 32 | low; }
  };
  auto by_key = [](const Keyed& a, const Keyed& b) {
    return a.key() != b.key() ? a.key() < b.key() : a.test < b.test;
  };
  std::size_t count = tests.size();
  static_assert(max_tests <= UINT32_MAX, "the readers stop at max_tests: a test number fits 32 bits");
  std::vector<Keyed> keyed(count);
  for (std::size_t i = 0; i < count; ++i) keyed[i].test = static_cast<std::uint32_t>(i);
  std::vector<std::pair<std::size_t, std::size_t>> tied{{0, count}}, next;  // [begin, end) of keyed
  for (std::size_t depth = 0; !tied.empty(); depth += 7) {
    for (auto [begin, end] : tied) {
      for (std::size_t k = begin; k < end; ++k) {
        std::uint64_t key = label_key(canonical_view(tests[keyed[k].test].target.label), depth);
        keyed[k].high = static_cast<std::uint32_t>(key >> 32);
        keyed[k].low = static_cast<std::uint32_t>(key);
      }
      std::sort(keyed.begin() + static_cast<std::ptrdiff_t>(begin),
                keyed.begin() + static_cast<std::ptrdiff_t>(end), by_key);
      for (std::size_t k = begin, j; k < end; k = j) {
        j = k + 1;
        while (j < end && keyed[j].key() == keyed[k].key()) ++j;
        if (j - k < 2) continue;
        if ((keyed[k].low & 0xff) == 8) {  // the labels go on: the next round tells them apart
          next.emplace_back(k, j);
        } else {  // the same label: as label_before orders its listings, then in the order added
          auto first = keyed.begin() + static_cast<std::ptrdiff_t>(k),
               last = keyed.begin() + static_cast<std::ptrdiff_t>(j);
          std::stable_sort(first, last, [&](const Keyed& a, const Keyed& b) {
            return label_before(tests[a.test].target, tests[b.test].target);
          });
        }
      }
    }
    tied.swap(next);
    next.clear();
  }
  std::vector<std::uint32_t> order(count);
  for (std::size_t i = 0; i < count; ++i) order[i] = keyed[i].test;
  return order;
}

}  // namespace

struct Classifier::State {
  State(const Rules& rules_in, const ClassifyOptions& options_in)
      : rules(rules_in), options(options_in), classifier(rules, matchers, options, diagnostics) {
    matchers.reserve(rules.rules.size());
    for (const auto& rule : rules.rules) matchers.emplace_back(rule);
  }
  const Rules& rules;
  ClassifyOptions options;
  std::vector<RuleMatcher> matchers;
  Diagnostics diagnostics;  ///< in the order the tests were added
  /// For each diagnostic, the test (in the order added) it is about.
  std::vector<std::size_t> diagnostic_test;
  TestClassifier classifier;
  TestBlocks tests;  ///< in the order added
};

Classifier::Classifier(const Rules& rules, const ClassifyOptions& options)
    : state_(std::make_unique<State>(rules, options)) {}

Classifier::~Classifier() = default;

std::size_t Classifier::size() const { return state_->tests.size(); }

void Classifier::add(Target&& target) {
  State& s = *state_;
  ClassifiedTest test = s.classifier.classify(std::move(target));
  if (!s.options.inputs) {
    std::string().swap(test.target.location);
    std::vector<Symbol>().swap(test.target.tags);
    test.target.exec_properties.clear();
  }
  s.diagnostic_test.resize(s.diagnostics.size(), s.tests.size());
  s.tests.push_back(std::move(test));
}

namespace {

/// Which of a test's listings is kept: the least.
auto listing_rank(const ClassifiedTest& t) {
  int gpus = t.requirement->gpus.value;
  return std::tuple(static_cast<int>(t.bucket), -gpus, -t.target.shard_count, t.reason.str(),
                    t.target.configuration.str(), std::string_view(t.target.label));
}

/// A test the input lists twice, now side by side: planned once. That includes cquery's listings
/// of one test in two configurations: `bazel test LABEL` runs it in one, and the plan's units
/// and run-under know tests by label (before, both were planned, with their own shard counts).
/// Listings that differ keep the one that needs GPUs, so that a GPU test never runs on a CPU
/// runner for a second listing; either way a warning names the test (an error under --strict).
/// Which listing is kept never depends on the input's order: GPU before CPU before skipped, then
/// the most GPUs and shards, then the reason, the configuration and the label as written.
void drop_duplicates(Classification& result, bool strict) {
  auto& tests = result.tests;
  auto same = [](const ClassifiedTest& a, const ClassifiedTest& b) {
    return canonical_view(a.target.label) == canonical_view(b.target.label);
  };
  std::size_t kept = 0;
  std::set<std::string> listed_twice;  // canonical labels
  for (std::size_t i = 0; i < tests.size();) {
    std::size_t end = i + 1;
    while (end < tests.size() && same(tests[i], tests[end])) ++end;
    std::size_t chosen = i;
    bool differ = false;
    for (std::size_t k = i + 1; k < end; ++k) {
      differ = differ || tests[k].bucket != tests[i].bucket ||
               tests[k].reason.str() != tests[i].reason.str() ||
               tests[k].target.shard_count != tests[i].target.shard_count;
      if (listing_rank(tests[k]) < listing_rank(tests[chosen])) chosen = k;
    }
    if (end - i > 1) {
      listed_twice.insert(canonical_label(tests[chosen].target.label));
      std::set<std::string> configurations;  // made for a test listed twice only, not for every test
      for (std::size_t k = i; k < end; ++k) configurations.insert(tests[k].target.configuration.str());
      result.diagnostics.push_back(
          {strict ? Severity::error : Severity::warning, canonical_label(tests[chosen].target.label), "input",
           fmt::format("listed {} times in the input{}; planned once, as {}", end - i,
                       configurations.size() > 1
                           ? fmt::format(" (in the configurations {}: bazel test runs it in one)",
                                         fmt::join(configurations, ", "))
                           : "",
                       differ ? fmt::format("the listing that says {} (the listings differ)",
                                            tests[chosen].reason.str())
                              : std::string("the listings are the same"))});
    }
    if (kept != chosen) tests[kept] = std::move(tests[chosen]);
    ++kept;
    i = end;
  }
  tests.resize(kept);
  // The findings of a test's listings come in the order of the listings, which ties (one
  // spelling, one configuration) leave in the input's: by their text, so no order decides.
  auto& found = result.diagnostics;
  for (std::size_t a = 0; a < found.size() && !listed_twice.empty();) {
    std::size_t b = a + 1;
    while (b < found.size() && found[b].label == found[a].label) ++b;
    if (b - a > 1 && listed_twice.contains(found[a].label))
      std::stable_sort(found.begin() + static_cast<std::ptrdiff_t>(a),
                       found.begin() + static_cast<std::ptrdiff_t>(b),
                       [](const Diagnostic& x, const Diagnostic& y) {
                         return std::tie(x.source, x.message) < std::tie(y.source, y.message);
                       });
    a = b;
  }
}

/// An external test listed by its apparent name and by the one canonical name of that identity
/// ("@rules_foo//x:t" and "@@rules_foo~//x:t": a query's and a cquery's output joined) sorts in two
/// places, and was planned twice, one listing on GPUs and one on CPU runners. Planned once now,
/// as drop_duplicates does, with its warning. Two canonical names of one identity are two
/// repositories (two versions of a module), and an apparent name beside them is left as it is.
void merge_apparent_spellings(Classification& result, bool strict) {
  auto& tests = result.tests;
  auto external = [](std::string_view label) {
    return label.starts_with('@') && !label.starts_with("@//") && !label.starts_with("@@//");
  };
  std::map<std::string, std::vector<std::size_t>> canonical;  // identity → tests so named
  std::vector<std::pair<std::size_t, std::string>> apparent;  // test, identity
  for (std::size_t i = 0; i < tests.size(); ++i) {
    if (!external(tests[i].target.label)) continue;
    auto identity = label_identity(tests[i].target.label);
    if (identity == canonical_view(tests[i].target.label))
      apparent.emplace_back(i, std::move(identity));
    else
      canonical[std::move(identity)].push_back(i);
  }
  std::vector<bool> dropped(tests.size(), false);
  for (const auto& [i, identity] : apparent) {
    auto found = canonical.find(identity);
    if (found == canonical.end() || found->second.size() != 1) continue;
    std::size_t other = found->second.front();
    bool keep_apparent = listing_rank(tests[i]) < listing_rank(tests[other]);
    std::size_t kept = keep_apparent ? i : other;
    dropped[keep_apparent ? other : i] = true;
    result.diagnostics.push_back(
        {strict ? Severity::error : Severity::warning, canonical_label(tests[kept].target.label), "input",
         fmt::format(
             "listed twice in the input, as {} and {} (one repository's apparent and canonical "
             "names); planned once, as {}",
             tests[i].target.label, tests[other].target.label,
             tests[i].reason.str() != tests[other].reason.str()
                 ? fmt::format("the listing that says {} (the listings differ)", tests[kept].reason.str())
                 : std::string("the listings are the same"))});
  }
  if (std::find(dropped.begin(), dropped.end(), true) == dropped.end()) return;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < tests.size(); ++i)
    if (!dropped[i]) {
      if (kept != i) tests[kept] = std::move(tests[i]);
      ++kept;
    }
  tests.resize(kept);
}

/// "tag \"accel-(\\d+)\", label //ml/...": what a rule matches by.
std::string matchers_text(const Rule& rule) {
  std::vector<std::string> parts;
  if (rule.tag) parts.push_back(fmt::format("tag \"{}\"", util::excerpt(*rule.tag)));
  if (rule.label) parts.push_back(fmt::format("label {}", util::excerpt(*rule.label)));
  if (rule.rule_class) parts.push_back(fmt::format("rule_class {}", *rule.rule_class));
  if (rule.generator_function)
    parts.push_back(fmt::format("generator_function {}", *rule.generator_function));
  return fmt::format("{}", fmt::join(parts, ", "));
}

/// What the rules file says of itself: its load-time warnings, and its rules that matched no
/// test. Those are notes (a repository's rules file and a query of one package leave most of its
/// rules unmatched), except a rule_class that is the macro of some test, or a generator_function
/// that is the rule class of one: a warning, as it is surely the other key that was meant.
void report_rules(const Rules& rules, const std::vector<TestClassifier::RuleUse>& uses, bool strict,
                  Diagnostics& diagnostics) {
  const Severity bad = strict ? Severity::error : Severity::warning;
  for (auto warning : rules.warnings) {
    warning.severity = bad;
    diagnostics.push_back(std::move(warning));
  }
  constexpr long listed = 10;
  long unmatched = 0;
  for (std::size_t i = 0; i < uses.size() && i < rules.rules.size(); ++i) {
    if (uses[i].matched) continue;
    const Rule& rule = rules.rules[i];
    auto what = fmt::format("{} ({}) matches no test of the query", rule.source(), matchers_text(rule));
    if (uses[i].names_other_kind) {
      bool macro = rule.rule_class.has_value();
      const std::string& name = macro ? *rule.rule_class : *rule.generator_function;
      diagnostics.push_back(Diagnostic{
          bad, "", rules.source,
          fmt::format("{}, but {} is the {} some of its tests: did you mean {}: {}?", what, name,
                      macro ? "macro (generator_function) that made" : "rule class (rule_class) of",
                      macro ? "generator_function" : "rule_class", name)});
    } else if (++unmatched <= listed) {
      diagnostics.push_back(Diagnostic{Severity::note, "", rules.source, what});
    }
  }
  if (unmatched > listed)
    diagnostics.push_back(Diagnostic{Severity::note, "", rules.source,
                                     fmt::format("… and {} more rules of {} match no test of the query",
                                                 unmatched - listed, rules.source)});
}

}  // namespace

Classification Classifier::finish(const DroppedCounts& dropped) {
  State& s = *state_;
  Classification result;
  result.dropped = dropped;
  std::size_t count = s.tests.size();
  bool sorted = true;  // a query's output usually comes sorted already: checked in one pass
  for (std::size_t i = 1; i < count && sorted; ++i)
    sorted = !label_before(s.tests[i].target, s.tests[i - 1].target);
  if (!sorted) {
    std::vector<std::uint32_t> order = label_order(s.tests);  // order[i]: the test that goes to place i
    // The findings follow their tests: by place, in the order found within one test.
    if (!s.diagnostics.empty()) {
      std::vector<std::uint32_t> place(count);
      for (std::size_t i = 0; i < count; ++i) place[order[i]] = static_cast<std::uint32_t>(i);
      std::vector<std::size_t> by_place(s.diagnostics.size());
      std::iota(by_place.begin(), by_place.end(), 0);
      std::stable_sort(by_place.begin(), by_place.end(), [&](std::size_t a, std::size_t b) {
        return place[s.diagnostic_test[a]] < place[s.diagnostic_test[b]];
      });
      result.diagnostics.reserve(s.diagnostics.size() + 1);
      for (std::size_t d : by_place) result.diagnostics.push_back(std::move(s.diagnostics[d]));
    }
    // Follow each cycle of the permutation, moving one test at a time: never a second list.
    for (std::size_t start = 0; start < count; ++start) {
      if (order[start] == start) continue;
      ClassifiedTest held = std::move(s.tests[start]);
      std::size_t to = start;
      for (std::size_t from = order[start]; from != start; from = order[from]) {
        s.tests[to] = std::move(s.tests[from]);
        order[to] = static_cast<std::uint32_t>(to);
        to = from;
      }
      s.tests[to] = std::move(held);
      order[to] = static_cast<std::uint32_t>(to);
    }
  }
  if (result.diagnostics.empty()) result.diagnostics = std::move(s.diagnostics);
  s.tests.move_to(result.tests);
  drop_duplicates(result, s.options.strict);
  merge_apparent_spellings(result, s.options.strict);

  report_rules(s.rules, s.classifier.rule_uses(), s.options.strict, result.diagnostics);

  if (auto total = dropped.total(); total > 0)
    result.diagnostics.push_back(
        {Severity::note, "", "input",
         fmt::format("{} target{} that {} not tests left out: {}", total, util::plural(total),
                     total == 1 ? "is" : "are", describe(dropped))});
  return result;
}

Classification classify(const TargetList& targets, const Rules& rules, const ClassifyOptions& options) {
  return classify(TargetList(targets), rules, options);
}

Classification classify(TargetList&& targets, const Rules& rules, const ClassifyOptions& options) {
  Classifier classifier(rules, options);
  for (auto& target : targets.tests) classifier.add(std::move(target));
  std::vector<Target>().swap(targets.tests);
  return classifier.finish(targets.dropped);
}

}  // namespace gpuplan
