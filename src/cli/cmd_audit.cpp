// gpuplan audit [FILE]: where tags and the dependency graph disagree: GPU tests that reach no
// GPU code, tests that reach GPU code without a GPU annotation, and the counts by package.
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "cli/commands.hpp"
#include "cli/history_input.hpp"
#include "cli/io.hpp"
#include "cli/query_input.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/fleet.hpp"
#include "gpuplan/solve.hpp"
#include "gpuplan/units.hpp"
#include "util/json_writer.hpp"
#include "util/markdown.hpp"
#include "util/text.hpp"

namespace gpuplan::cli {

namespace {

struct AuditArgs {
  QueryOptions query;
  std::string fleet;
  std::vector<std::string> history;
  std::string format = "text";
  bool json = false;
  std::string output;
};

/// A GPU-annotated test that touched no GPU in any measured run, whatever the graph says.
struct Untouched {
  std::string label;
  long runs = 0;
  std::string tag_change;
};

/// Judged as `history suggest` judges them: at least its --min-runs default of whole runs, every
/// shard of a sharded test measured (before, one run of one shard of four was enough).
std::vector<Untouched> never_touched(const Classification& tests, const History& history, int window) {
  std::vector<Untouched> list;
  for (const auto& test : tests.tests) {
    if (test.bucket != Bucket::gpu) continue;
    auto runs = untouched_runs(history, label_identity(test.target.label), test.target.shard_count, window);
    if (!runs || *runs < AdviceOptions{}.min_runs) continue;
    list.push_back({canonical_label(test.target.label), *runs, gpu_annotation_removal(test)});
  }
  std::sort(list.begin(), list.end(),
            [](const Untouched& a, const Untouched& b) { return a.label < b.label; });
  return list;
}

/// GPU-hours each test holds in the plan for `fleet`: its units' durations × their GPUs.
std::map<std::string, double> gpu_hours(const std::string& fleet_path, const Estimator& estimate,
                                        const Rules& rules, const Classification& tests, bool strict,
                                        long& fleet_warnings) {
  std::map<std::string, double> hours;
  auto fleet_input = open_input(fleet_path);
  Fleet fleet = load_fleet(fleet_input.in(), fleet_input.name);
  fleet_warnings = print_fleet_warnings(fleet, strict);
  auto units = make_units(tests, ShardMode::per_shard, estimate, rules);
  SolveOptions options;
  options.rules = rules;
  Plan plan = make_plan(tests, std::move(units), fleet, options);
  for (const auto& a : plan.assignments)
    hours[canonical_label(a.unit.label)] += (a.end_s - a.start_s) * static_cast<double>(a.gpus.size()) / 3600;
  return hours;
}

/// What the report says of the tests whose GPU use is unknown.
constexpr std::string_view unknown_heading =
    "the graph cannot tell. For a test that reaches labels the input names but did not expand, give it the "
    "output of bazel query 'deps(tests(//...))'; where no test of a rule class reaches GPU code, or a test "
    "reaches no repository where the others of its class get theirs, or a test's runs used a GPU that the "
    "graph shows no code for (--history), name the GPU code it uses in the rules file's gpu_deps";

/// --strict: a test whose GPU use the graph cannot tell is an error (exit 2), each named.
void refuse_unknown(const QueryOptions& query, const Audit& audit) {
  constexpr std::size_t shown = 10;
  std::string listed;
  std::size_t count = 0;
  for (const auto& e : audit.entries) {
    if (e.kind != Disagreement::unknown) continue;
    if (++count <= shown) listed += fmt::format("\n  {}: {}", e.label, e.reason);
  }
  if (count == 0) return;
  if (count > shown) listed += fmt::format("\n  … and {} more", count - shown);
  throw InputError(Position{input_name(query)},
                   fmt::format("whether {} test{} use{} GPU code is unknown (--strict): {}:{}", count,
                               util::plural(count), count == 1 ? "s" : "", unknown_heading, listed));
}

struct Report {
  const Audit& audit;
  const std::map<std::string, GpuUse>& measured;
  const std::vector<Untouched>& untouched;  ///< --history: GPU tests whose runs touched no GPU
  bool with_hours;
  bool with_history;
  /// Tests the query holds that are skipped (tagged manual, incompatible), so neither planned
  /// nor audited: the totals say so, where "22 tests audited" beside plan's "23 tests" left it
  /// to guess.
  long skipped = 0;
};

std::vector<const AuditEntry*> of_kind(const Audit& audit, Disagreement kind) {
  std::vector<const AuditEntry*> entries;
  for (const auto& e : audit.entries)
    if (e.kind == kind) entries.push_back(&e);
  return entries;
}

double total_hours(const std::vector<const AuditEntry*>& entries) {
  double total = 0;
  for (const auto* e : entries) total += e->gpu_hours;
  return total;
}

/// Why an unknown test is unknown, in Markdown: labels and repositories as code spans (`span`:
/// markdown::code, or code_cell in a table), where GitHub reads no "@name" as a mention of a
/// user (@pypi is one). Rule classes and the rest need no escape.
std::string markdown_reason(const Report& r, const AuditEntry& e, std::string (*span)(std::string_view)) {
  if (!e.undeclared.empty())
    return fmt::format("reaches {}, which the input did not expand", span(e.undeclared));
  if (auto of_class = r.audit.blind.unsupplied.find(e.label); of_class != r.audit.blind.unsupplied.end())
    return r.audit.blind.reason(e.label, of_class->second, span);
  return util::markdown::text(e.reason);
}

/// The line of totals; `markdown`: as Markdown, its example's reason by markdown_reason().
std::string summary_line(const Report& r, bool markdown = false) {
  auto idle = of_kind(r.audit, Disagreement::gpu_without_gpu_code);
  auto missing = of_kind(r.audit, Disagreement::gpu_code_without_annotation);
  std::string line = fmt::format("{} test{} audited: {} GPU-annotated reach no GPU code", r.audit.tests,
                                 util::plural(r.audit.tests), idle.size());
  if (r.with_hours) line += fmt::format(" ({:.2f} GPU-hours in the plan)", total_hours(idle));
  line += fmt::format(", {} reach GPU code without a GPU annotation", missing.size());
  if (r.with_history)
    line += fmt::format(", {} GPU-annotated touched no GPU in their runs", r.untouched.size());
  auto unknown = of_kind(r.audit, Disagreement::unknown);
  const std::string skipped =
      r.skipped == 0 ? std::string()
                     : fmt::format("; {} skipped test{} of the query not audited, as plan skips {}",
                                   r.skipped, util::plural(r.skipped), r.skipped == 1 ? "it" : "them");
  if (markdown) {
    line = util::markdown::text(line);
    if (!unknown.empty())
      line += fmt::format(", {} unknown (e.g. {}: {})", unknown.size(),
                          util::markdown::code(unknown.front()->label),
                          markdown_reason(r, *unknown.front(), util::markdown::code));
  } else if (!unknown.empty()) {
    line += fmt::format(", {} unknown (e.g. {}: {})", unknown.size(), unknown.front()->label,
                        unknown.front()->reason);
  }
  return line + (markdown ? util::markdown::text(skipped) : skipped);
}

std::string measured_of(const Report& r, const AuditEntry& e) {
  auto found = r.measured.find(label_identity(e.label));  // history's keys
  return found == r.measured.end() ? "" : to_string(found->second);
}

void write_text(const Report& r, const util::TextSink& out) {
  auto idle = of_kind(r.audit, Disagreement::gpu_without_gpu_code);
  out(fmt::format("GPU-annotated tests that reach no GPU code ({}): candidates for the CPU bucket\n",
                  idle.size()));
  for (const auto* e : idle) {
    out(fmt::format("  {}{}\n", e->label,
                    r.with_hours ? fmt::format("  {:.2f} GPU-hours", e->gpu_hours) : ""));
    out(fmt::format("      change: {}{}\n", e->tag_change, e->location.empty() ? "" : " at " + e->location));
    if (auto m = measured_of(r, *e); !m.empty()) out(fmt::format("      measured: {}\n", m));
  }
  auto missing = of_kind(r.audit, Disagreement::gpu_code_without_annotation);
  out(fmt::format("\nTests that reach GPU code without a GPU annotation or cpu-only ({})\n", missing.size()));
  for (const auto* e : missing) {
    out(fmt::format("  {}\n      path: {}\n      change: {}{}\n", e->label, e->path, e->tag_change,
                    e->location.empty() ? "" : " at " + e->location));
    if (auto m = measured_of(r, *e); !m.empty()) out(fmt::format("      measured: {}\n", m));
  }
  auto unknown = of_kind(r.audit, Disagreement::unknown);
  if (!unknown.empty())
    out(fmt::format("\nTests whose GPU use is unknown ({}): {}\n", unknown.size(), unknown_heading));
  for (const auto* e : unknown) out(fmt::format("  {}\n      why: {}\n", e->label, e->reason));
  if (r.with_history) {
    out(fmt::format(
        "\nGPU-annotated tests that touched no GPU in any measured run ({}): candidates for the CPU bucket\n",
        r.untouched.size()));
    for (const auto& u : r.untouched)
      out(fmt::format("  {}\n      measured: no GPU touched in {} run{}\n      change: {}\n", u.label, u.runs,
                      util::plural(u.runs), u.tag_change));
  }
  out("\nBy package\n");
  for (const auto& p : r.audit.packages)
    out(
        fmt::format("  {}: {} tests, {} GPU-annotated, {} reach GPU code, {} GPU without GPU code, {} "
                    "GPU code without annotation{}\n",
                    p.package, p.tests, p.gpu_annotated, p.reach_gpu_code, p.gpu_without_gpu_code,
                    p.gpu_code_without_annotation, p.unknown ? fmt::format(", {} unknown", p.unknown) : ""));
  out("\n" + summary_line(r) + "\n");
}

void write_markdown(const Report& r, const util::TextSink& out) {
  using util::markdown::code_cell;
  using util::markdown::text;
  out("### gpuplan audit: tags against the dependency graph\n\n" + summary_line(r, true) + "\n\n");
  auto idle = of_kind(r.audit, Disagreement::gpu_without_gpu_code);
  out(fmt::format("#### GPU-annotated tests that reach no GPU code ({})\n\n", idle.size()));
  if (!idle.empty()) {
    out(r.with_hours ? "| test | GPU-hours | change |" : "| test | change |");
    out(r.with_history ? " measured |\n" : "\n");
    out(r.with_hours ? "|---|---:|---|" : "|---|---|");
    out(r.with_history ? "---|\n" : "\n");
    for (const auto* e : idle) {
      out(fmt::format("| {} |", code_cell(e->label)));
      if (r.with_hours) out(fmt::format(" {:.2f} |", e->gpu_hours));
      out(fmt::format(" {} |", text(e->tag_change)));
      if (r.with_history) out(fmt::format(" {} |", text(measured_of(r, *e))));
      out("\n");
    }
    out("\n");
  }
  auto missing = of_kind(r.audit, Disagreement::gpu_code_without_annotation);
  out(fmt::format("#### Tests that reach GPU code without a GPU annotation ({})\n\n", missing.size()));
  if (!missing.empty()) {
    out("| test | path to GPU code |\n|---|---|\n");
    for (const auto* e : missing) out(fmt::format("| {} | {} |\n", code_cell(e->label), code_cell(e->path)));
    out("\n");
  }
  auto unknown = of_kind(r.audit, Disagreement::unknown);
  if (!unknown.empty()) {
    out(fmt::format("#### Tests whose GPU use is unknown ({})\n\n{}\n\n", unknown.size(),
                    text(unknown_heading)));
    out("| test | why |\n|---|---|\n");
    for (const auto* e : unknown)
      out(fmt::format("| {} | {} |\n", code_cell(e->label), markdown_reason(r, *e, code_cell)));
    out("\n");
  }
  if (r.with_history) {
    out(fmt::format("#### GPU-annotated tests that touched no GPU in any measured run ({})\n\n",
                    r.untouched.size()));
    if (!r.untouched.empty()) {
      out("| test | measured runs | change |\n|---|---:|---|\n");
      for (const auto& u : r.untouched)
        out(fmt::format("| {} | {} | {} |\n", code_cell(u.label), u.runs, text(u.tag_change)));
      out("\n");
    }
  }
  out("<details><summary>By package</summary>\n\n| package | tests | GPU-annotated | reach GPU code | GPU "
      "without GPU code | GPU code without annotation | unknown |\n|---|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& p : r.audit.packages)
    out(fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", code_cell(p.package), p.tests, p.gpu_annotated,
                    p.reach_gpu_code, p.gpu_without_gpu_code, p.gpu_code_without_annotation, p.unknown));
  out("\n</details>\n");
}

/// The report as JSON, written entry by entry (a graph of 150,000 tests, each unknown, made a
/// document of 634 MiB in memory before a byte was written).
void write_json(const Report& r, Output& output) {
  auto idle = of_kind(r.audit, Disagreement::gpu_without_gpu_code);
  auto missing = of_kind(r.audit, Disagreement::gpu_code_without_annotation);
  auto unknown = of_kind(r.audit, Disagreement::unknown);
  nlohmann::ordered_json summary = {{"tests", r.audit.tests},
                                    {"gpu_without_gpu_code", idle.size()},
                                    {"gpu_code_without_annotation", missing.size()},
                                    {"unknown", unknown.size()},
                                    {"not_in_graph", r.audit.not_in_graph},
                                    {"skipped_tests", r.skipped}};
  if (r.with_hours) summary["gpu_hours_without_gpu_code"] = total_hours(idle);
  if (r.with_history) summary["never_touched_gpu"] = r.untouched.size();
  auto entry = [&](const AuditEntry& e) {
    nlohmann::ordered_json o = {{"label", e.label}, {"package", e.package}};
    if (e.kind == Disagreement::gpu_code_without_annotation) o["path"] = e.path;
    if (e.kind == Disagreement::unknown) {
      if (!e.undeclared.empty()) o["undeclared"] = e.undeclared;
      if (!e.suppliers.empty()) o["suppliers"] = e.suppliers;
      o["reason"] = e.reason;
    } else {
      o["change"] = e.tag_change;
    }
    o["location"] = e.location;
    if (r.with_hours && e.kind == Disagreement::gpu_without_gpu_code) o["gpu_hours"] = e.gpu_hours;
    if (auto found = r.measured.find(label_identity(e.label));
        r.with_history && found != r.measured.end() && found->second.runs)
      o["measured"] = {{"runs", found->second.runs},
                       {"gpu_touched_runs", found->second.touched},
                       {"peak_vram_mib", found->second.peak_vram_mib}};
    return o;
  };
  util::JsonWriter w(output.sink());
  w.begin_object();
  w.key("summary").value(summary);
  for (auto [key, list] :
       {std::pair{"gpu_without_gpu_code", &idle}, std::pair{"gpu_code_without_annotation", &missing},
        std::pair{"unknown", &unknown}}) {
    w.key(key).begin_array();
    for (const auto* e : *list) w.value(entry(*e));
    w.end_array();
  }
  if (r.with_history) {
    w.key("never_touched_gpu").begin_array();
    for (const auto& u : r.untouched)
      w.value(nlohmann::ordered_json{{"label", u.label}, {"runs", u.runs}, {"change", u.tag_change}});
    w.end_array();
  }
  w.key("packages").begin_array();
  for (const auto& p : r.audit.packages)
    w.value(nlohmann::ordered_json{{"package", p.package},
                                   {"tests", p.tests},
                                   {"gpu_annotated", p.gpu_annotated},
                                   {"reach_gpu_code", p.reach_gpu_code},
                                   {"gpu_without_gpu_code", p.gpu_without_gpu_code},
                                   {"gpu_code_without_annotation", p.gpu_code_without_annotation},
                                   {"unknown", p.unknown}});
  w.end_array();
  w.end_object();
  w.raw("\n");
  w.flush();
}

void run(const AuditArgs& args, int& status) {
  Rules rules = read_rules(args.query);
  QueryOptions query = args.query;
  query.classify_by_deps = false;  // the audit compares the tags as written with the graph
  rules.classify_by_deps = false;
  DepsInput deps;
  Classification tests = read_and_classify(query, rules, true, &deps);
  if (deps.graph.edge_count() == 0 && !tests.tests.empty())
    throw InputError(
        Position{input_name(query)},
        "audit needs the dependency graph: this input has no rule inputs (make it with bazel query "
        "'deps(tests(//...))' --output=xml or --output=streamed_jsonproto)");
  // Read once the tests are (audit never classifies by deps), with their shard counts as `plan`
  // reads it: before, stale shard_N_of_M folders beside today's won, and the GPU-hours disagreed.
  Diagnostics history_diagnostics;
  const auto history =
      read_history_option(args.history, args.query.strict, history_diagnostics, shard_counts_now(tests));
  // The warnings, as plan gives them: each about the whole input (a rules pattern that matches
  // nothing), the first ten about one test (a malformed tag, which audit had dropped without a word),
  // and the count of the rest; the totals line counts every one.
  Diagnostics shown;
  constexpr long listed_at_most = 10;
  long listed = 0;
  for (const auto& d : tests.diagnostics) {
    if (d.severity != Severity::warning) continue;
    shown.push_back(d);
    if (!d.label.empty() && ++listed > listed_at_most) continue;
    std::cerr << fmt::format("gpuplan: warning: {}{}{}\n", d.label, d.label.empty() ? "" : ": ", d.message);
  }
  if (listed > listed_at_most) std::cerr << fmt::format("gpuplan: … and {} more\n", listed - listed_at_most);
  // Rows of the history it skipped, and of one test (a note of its stale shard folders left out),
  // each with its severity (before, every one was called a warning).
  print_history_diagnostics(history_diagnostics);
  shown.insert(shown.end(), history_diagnostics.begin(), history_diagnostics.end());
  Audit result = audit(tests, deps.graph, *deps.reach, used_gpu(history, rules));
  if (args.query.strict) refuse_unknown(query, result);
  if (!args.query.strict)
    for (const auto& message : result.blind.messages()) {
      std::cerr << fmt::format("gpuplan: warning: {}\n", message);
      shown.push_back(Diagnostic{Severity::warning, "", "", message});
    }
  long fleet_warnings = 0;  // its guesses, printed as the plan's are
  if (!args.fleet.empty()) {
    auto hours = gpu_hours(args.fleet, estimator_for(history, rules, tests), rules, tests, args.query.strict,
                           fleet_warnings);
    for (auto& e : result.entries)
      if (auto found = hours.find(e.label); found != hours.end()) e.gpu_hours = found->second;
  }
  std::map<std::string, GpuUse> measured;
  std::vector<Untouched> untouched;
  if (history) {
    measured = measured_gpu_use(*history, rules.history_window);
    untouched = never_touched(tests, *history, rules.history_window);
  }
  Report report{result,
                measured,
                untouched,
                !args.fleet.empty(),
                !args.history.empty(),
                std::count_if(tests.tests.begin(), tests.tests.end(),
                              [](const ClassifiedTest& t) { return t.bucket == Bucket::skipped; })};
  std::string format = args.json ? "json" : args.format;
  Output output(args.output);
  if (format == "json")
    write_json(report, output);
  else
    (format == "markdown" ? write_markdown : write_text)(report, output.sink());
  output.commit();
  std::cerr << fmt::format("gpuplan: {}; {}\n", summary_line(report),
                           diagnostic_counts(shown, fleet_warnings));
  status = exit_ok;
}

}  // namespace

void add_audit_command(CLI::App& app, int& status) {
  auto args = std::make_shared<AuditArgs>();
  auto* command = app.add_subcommand(
      "audit",
      "Compare tags with the dependency graph (bazel query 'deps(tests(//...))' --output=xml): GPU tests "
      "that reach no GPU code, tests that reach GPU code without a GPU annotation, counts by package");
  add_query_options(*command, args->query);
  command->add_option("--fleet", args->fleet,
                      "the fleet: also show the GPU-hours each GPU test holds in the plan");
  command
      ->add_option("--history", args->history,
                   "past runs (repeatable): durations for the GPU-hours, and measured GPU use from results "
                   "records (peak_vram_mib, gpu_touched)")
      ->allow_extra_args(false);  // one path each: `--history H deps.xml` leaves deps.xml the input
  command->add_option("--format", args->format, "text (default), markdown (a PR comment) or json")
      ->check(CLI::IsMember({"text", "markdown", "json"}));
  command->add_flag("--json", args->json, "the same as --format json");
  command->add_option("-o,--output", args->output, "write the report to this file instead of stdout");
  command->callback([args, &status] { run(*args, status); });
}

}  // namespace gpuplan::cli
