// Whole commands as users run them (issue 14): `gpuplan targets`, `classify`, `plan`, `verify`,
// `compare`, `history summarize` and one `run-under` launch on generated monorepos of 10k, 150k and 1M tests,
// and the other commands a user runs on the same files (`show`, `render`, every `export`, `simulate`,
// `explain`, `history suggest`, `fleet check` of 10,000 imported nodes, `fleet import`),
// each a fresh process timed from outside (wall, CPU = user + system, peak RSS from wait4), several runs and
// the median, beside `xmllint --stream --noout` and `jq -c .` on the same files. Usage: commands_bench
// [--quick] [--runs=N] [--sizes=10000,150000] [--gpuplan=PATH] [--keep] [--dir=DIR] [--only=WORD[|WORD...]]
//   --quick: 10k and 150k tests only; --keep: leave the generated files in the temporary folder;
//   --dir=DIR: write them in DIR instead, and leave them (claims_bench reads its plan and fleet there);
//   --only=WORD: only the gpuplan commands whose row names WORD ("plan", "targets"; "show|render": either),
//   beside the anchors.
// Exits 1 when a target of issue 14 item 3 is missed (at 150k tests and more). The two CPU ratios
// (plan against xmllint, 10,000 nodes against 1,000) are timed again with the two commands in turn.
#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <map>
#include <string>
#include <vector>

#include "child_run.hpp"

namespace {

namespace fs = std::filesystem;

/// One generated test: tags that the built-in conventions read, about one in eight a CPU test,
/// one in 25 sharded four ways, sizes taking turns. Labels as long as real ones.
struct Shape {
  std::string package, name, size;
  std::vector<std::string> tags;
  int line, shards;
};

Shape shape(long i) {
  static const std::vector<std::vector<std::string>> tag_sets = {
      {"gpu"},      {"gpu:2", "nvlink"},   {"requires-gpu-nvidia"}, {"gpu", "gpu-mem:40GiB"},
      {"cpu-only"}, {"requires-gpu-sm80"}, {"gpu:4", "cuda>=12.0"}, {"gpu", "team-ml"},
  };
  static const char* sizes[] = {"small", "medium", "large", "medium", "small"};
  return {fmt::format("team{:03}/models/m{:05}", i % 97, i / 100),
          fmt::format("case_{:07}_test", i),
          sizes[i % 5],
          tag_sets[i % tag_sets.size()],
          static_cast<int>(i % 100) * 7 + 1,
          i % 25 == 0 ? 4 : 0};
}

bool is_gpu(const Shape& s) { return s.tags.front() != "cpu-only"; }

/// GPU units the planner sees: one per shard of each GPU test.
long gpu_units(long tests) {
  long units = 0;
  for (long i = 0; i < tests; ++i)
    if (Shape s = shape(i); is_gpu(s)) units += s.shards ? s.shards : 1;
  return units;
}

/// `bazel query --output=xml` as Bazel 6 prints a py_test with few rule inputs (its source and
/// one library); `heavy` adds the eleven implicit inputs Bazel 4 lists for every test.
void write_xml(const fs::path& path, long count, bool heavy) {
  static const char* implicit[] = {
      "@bazel_tools//tools/launcher:launcher",       "@bazel_tools//tools/test:collect_cc_coverage",
      "@bazel_tools//tools/test:collect_coverage",   "@bazel_tools//tools/test:coverage_report_generator",
      "@bazel_tools//tools/test:coverage_support",   "@bazel_tools//tools/test:runtime",
      "@bazel_tools//tools/test:test_setup",         "@bazel_tools//tools/test:test_wrapper",
      "@bazel_tools//tools/test:test_xml_generator", "@bazel_tools//tools/test:xml_writer",
      "@bazel_tools//tools/python:py_runtime"};
  std::ofstream out(path, std::ios::binary);
  out << "<?xml version=\"1.1\" encoding=\"UTF-8\" standalone=\"no\"?>\n<query version=\"2\">\n";
  std::string text;
  for (long i = 0; i < count; ++i) {
    Shape s = shape(i);
    text.clear();
    fmt::format_to(std::back_inserter(text),
                   "    <rule class=\"py_test\" location=\"/home/ci/monorepo/{0}/BUILD:{2}:8\" "
                   "name=\"//{0}:{1}\">\n"
                   "        <string name=\"name\" value=\"{1}\"/>\n        <list name=\"tags\">\n",
                   s.package, s.name, s.line);
    for (const auto& tag : s.tags) {
      std::string escaped = tag;
      if (auto at = escaped.find('>'); at != std::string::npos) escaped.replace(at, 1, "&gt;");
      fmt::format_to(std::back_inserter(text), "            <string value=\"{}\"/>\n", escaped);
    }
    fmt::format_to(
        std::back_inserter(text),
        "        </list>\n        <list name=\"srcs\">\n            <label value=\"//{0}:{1}.py\"/>\n"
        "        </list>\n        <string name=\"size\" value=\"{2}\"/>\n",
        s.package, s.name, s.size);
    if (s.shards)
      fmt::format_to(std::back_inserter(text), "        <int name=\"shard_count\" value=\"{}\"/>\n",
                     s.shards);
    fmt::format_to(std::back_inserter(text),
                   "        <rule-input name=\"//{0}:{1}.py\"/>\n        <rule-input name=\"//{0}:lib\"/>\n",
                   s.package, s.name);
    if (heavy)
      for (const char* input : implicit)
        fmt::format_to(std::back_inserter(text), "        <rule-input name=\"{}\"/>\n", input);
    text += "    </rule>\n";
    out << text;
  }
  out << "</query>\n";
}

/// `bazel query --output=streamed_jsonproto`: one Target a line, the attributes Bazel prints.
void write_streamed_jsonproto(const fs::path& path, long count) {
  std::ofstream out(path, std::ios::binary);
  std::string text;
  for (long i = 0; i < count; ++i) {
    Shape s = shape(i);
    std::string tags;
    for (const auto& tag : s.tags) tags += fmt::format("{}\"{}\"", tags.empty() ? "" : ",", tag);
    text.clear();
    fmt::format_to(
        std::back_inserter(text),
        R"({{"type":"RULE","rule":{{"name":"//{0}:{1}","ruleClass":"py_test","location":"/home/ci/monorepo/{0}/BUILD:{2}:8","attribute":[)"
        R"({{"name":"flaky","type":"BOOLEAN","intValue":0,"stringValue":"false","explicitlySpecified":false,"booleanValue":false}},)"
        R"({{"name":"shard_count","type":"INTEGER","intValue":{4},"explicitlySpecified":{5}}},)"
        R"({{"name":"size","type":"STRING","stringValue":"{6}","explicitlySpecified":true,"nodep":false}},)"
        R"({{"name":"srcs","type":"LABEL_LIST","stringListValue":["//{0}:{1}.py"],"explicitlySpecified":true,"nodep":false}},)"
        R"({{"name":"tags","type":"STRING_LIST","stringListValue":[{3}],"explicitlySpecified":true,"nodep":false}}],)"
        R"("ruleInput":["//{0}:{1}.py","//{0}:lib"]}}}})"
        "\n",
        s.package, s.name, s.line, tags, s.shards ? s.shards : -1, s.shards ? "true" : "false", s.size);
    out << text;
  }
}

/// `nodes` nodes of 8 GPUs in four pools: H100 on NVSwitch, A100 in NVLink pairs, A100 40GB
/// on PCIe with an older CUDA, L40S.
void write_fleet(const fs::path& path, long nodes) {
  std::ofstream out(path, std::ios::binary);
  out << "version: 1\npools:\n";
  const char* pools[] = {
      "  - name: h100\n    count: {}\n    gpu: {{model: H100-SXM-80GB, count: 8}}\n    cuda: \"12.4\"\n"
      "    topology: nvswitch\n",
      "  - name: a100\n    count: {}\n    gpu: {{model: A100-SXM-80GB, count: 8}}\n    cuda: \"12.2\"\n"
      "    topology: {{nvlink_pairs: [[0, 1], [2, 3], [4, 5], [6, 7]]}}\n",
      "  - name: a100-40\n    count: {}\n    gpu: {{model: A100-PCIE-40GB, count: 8}}\n    cuda: \"11.8\"\n"
      "    topology: pcie\n",
      "  - name: l40s\n    count: {}\n    gpu: {{model: L40S, count: 8}}\n    cuda: \"12.4\"\n    topology: "
      "pcie\n"};
  for (const char* pool : pools) out << fmt::format(fmt::runtime(pool), nodes / 4);
}

/// Three past runs of every GPU unit as the history CSV.
void write_history(const fs::path& path, long count) {
  std::ofstream out(path, std::ios::binary);
  out << "label,shard,seconds,peak_vram_mib\n";
  for (int run = 0; run < 3; ++run)
    for (long i = 0; i < count; ++i) {
      Shape s = shape(i);
      if (!is_gpu(s)) continue;
      for (int shard = 0; shard < std::max(1, s.shards); ++shard)
        out << fmt::format("//{}:{},{},{}.{},{}\n", s.package, s.name, s.shards ? std::to_string(shard) : "",
                           30 + (i * 7 + run) % 600, run, 1000 + i % 30000);
    }
}

/// A fleet of `nodes` pools of one named node each, as `fleet import` writes a node (its GPUs'
/// UUIDs listed) and as a fleet made by concatenating the imports of every machine reads.
void write_imported_fleet(const fs::path& path, long nodes) {
  std::ofstream out(path, std::ios::binary);
  out << "version: 1\npools:\n";
  std::string text;
  for (long i = 0; i < nodes; ++i) {
    text.clear();
    fmt::format_to(std::back_inserter(text),
                   "  - name: h100-{0:05}\n    nodes: [gpu-{0:05}]\n    gpu:\n      model: H100-SXM-80GB\n"
                   "      count: 8\n      uuids:\n",
                   i);
    for (int gpu = 0; gpu < 8; ++gpu)
      fmt::format_to(std::back_inserter(text), "        - GPU-{:08x}-0000-0000-0000-{:012x}\n", i, gpu);
    text += "    cuda: \"12.4\"\n    driver: \"550.54.15\"\n    topology: nvswitch\n";
    out << text;
  }
}

using gpuplan::bench::Run;

/// Runs `command` with /bin/sh in a fresh process; wall time, its CPU time and peak RSS (wait4).
Run run_once(const std::string& command) {
  Run run = gpuplan::bench::run_child([&] {
    execl("/bin/sh", "sh", "-c", ("exec " + command).c_str(), nullptr);
    _exit(127);
  });
  if (!WIFEXITED(run.status) || (WEXITSTATUS(run.status) != 0 && WEXITSTATUS(run.status) != 3)) {
    fmt::print(stderr, "commands_bench: `{}` failed (status {})\n", command, run.status);
    std::exit(2);
  }
  return run;
}

/// The median of the runs (wall and CPU each), and the largest peak RSS.
Run summarize(const std::vector<Run>& all) {
  auto median = [&](double Run::*field) {
    std::vector<double> values;
    for (const auto& r : all) values.push_back(r.*field);
    std::sort(values.begin(), values.end());
    return values[values.size() / 2];
  };
  Run result;
  result.seconds = median(&Run::seconds);
  result.cpu_seconds = median(&Run::cpu_seconds);
  for (const auto& r : all) result.peak_rss_kib = std::max(result.peak_rss_kib, r.peak_rss_kib);
  return result;
}

Run measure(const std::string& command, int runs) {
  std::vector<Run> all;
  for (int i = 0; i < runs; ++i) all.push_back(run_once(command));
  return summarize(all);
}

/// Two commands run in turn, `runs` times each, and each one's summary: for a ratio between
/// them, which this machine's drift from minute to minute (up to 50% for memory-heavy commands,
/// less for xmllint) would distort if each were measured in its own minutes.
std::pair<Run, Run> measure_in_turn(const std::string& first, const std::string& second, int runs) {
  std::vector<Run> firsts, seconds;
  for (int i = 0; i < runs; ++i) {
    firsts.push_back(run_once(first));
    seconds.push_back(run_once(second));
  }
  return {summarize(firsts), summarize(seconds)};
}

/// The label and node of a unit in the middle of the plan's assignments, read line by line.
std::pair<std::string, std::string> planned_unit(const fs::path& plan, long units) {
  std::ifstream in(plan);
  std::string line, label, node;
  bool in_assignments = false;
  long seen = 0;
  auto value = [](const std::string& text) {
    auto colon = text.find("\": \"");
    return text.substr(colon + 4, text.rfind('"') - colon - 4);
  };
  while (std::getline(in, line)) {
    if (line.starts_with("  \"assignments\"")) in_assignments = true;
    if (!in_assignments) continue;
    if (line.starts_with("      \"label\": ")) label = value(line);
    if (line.starts_with("      \"node\": ") && ++seen >= units / 2) return {label, value(line)};
  }
  return {label, node};
}

struct Check {
  std::string what;
  bool ok;
};

}  // namespace

int main(int argc, char** argv) {
  std::vector<long> sizes{10'000, 150'000, 1'000'000};
  int runs = 3;
  constexpr int launch_runs = 21;  ///< at least, for the run-under launch
  bool keep = false;
  std::vector<std::string> only;  ///< --only's words: a row that names one of them runs
  std::string gpuplan = GPUPLAN_BINARY;
  fs::path dir = fs::temp_directory_path() / fmt::format("gpuplan-commands-bench-{}", getpid());
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    if (arg == "--quick") sizes = {10'000, 150'000};
    if (arg == "--keep") keep = true;
    if (arg.starts_with("--dir=")) {
      dir = std::string(arg.substr(6));
      keep = true;
    }
    if (arg.starts_with("--runs=")) runs = std::max(1, std::atoi(argv[i] + 7));
    if (arg.starts_with("--gpuplan=")) gpuplan = std::string(arg.substr(10));
    if (arg.starts_with("--only="))
      for (std::size_t at = 7; at <= arg.size();) {
        std::size_t bar = std::min(arg.find('|', at), arg.size());
        only.emplace_back(arg.substr(at, bar - at));
        at = bar + 1;
      }
    if (arg.starts_with("--sizes=")) {
      sizes.clear();
      std::string list(arg.substr(8));
      for (std::size_t at = 0; at <= list.size();) {
        std::size_t comma = std::min(list.find(',', at), list.size());
        sizes.push_back(std::atol(list.substr(at, comma - at).c_str()));
        at = comma + 1;
      }
    }
  }
  fs::create_directories(dir);
  fs::path fleet_small = dir / "fleet-1000.yaml", fleet_big = dir / "fleet-10000.yaml";
  write_fleet(fleet_small, 1000);
  write_fleet(fleet_big, 10000);
  fmt::print("commands_bench: {} ({} runs each, the median; peak RSS the largest); files in {}\n", gpuplan,
             runs, dir.string());
  fmt::print("fleets: 1,000 and 10,000 nodes of 8 GPUs\n\n");
  fmt::print(
      "| tests | GPU units | command | input MB | wall s | CPU s | peak RSS MiB | bytes/test | bytes/GPU "
      "unit |\n");
  fmt::print("|---:|---:|---|---:|---:|---:|---:|---:|---:|\n");
  std::vector<Check> checks;
  for (long tests : sizes) {
    fs::path xml = dir / "query.xml", heavy = dir / "query-heavy.xml", jsonproto = dir / "query.jsonl",
             history = dir / "history.csv", plan = dir / "plan.json", plan_big = dir / "plan-big.json",
             summary = dir / "summary.json";
    write_xml(xml, tests, false);
    write_xml(heavy, tests, true);
    write_streamed_jsonproto(jsonproto, tests);
    write_history(history, tests);
    long units = gpu_units(tests);
    std::map<std::string, Run> results;
    std::map<std::string, std::string> commands;
    auto selected = [&](std::string_view name) {
      return only.empty() || std::any_of(only.begin(), only.end(), [&](const std::string& word) {
               return name.find(word) != std::string_view::npos;
             });
    };
    // The commands below that read the plan come with jq reshaping it, once, before the first of them.
    std::string p = "'" + plan.string() + "'";
    bool plan_anchor = false;
    std::function<void(const std::string&, const std::string&, const fs::path&)> row;
    row = [&](const std::string& name, const std::string& command, const fs::path& input) {
      bool anchor = name.starts_with("xmllint") || name.starts_with("jq");
      if (!anchor && !selected(name)) return;
      if (plan_anchor && input == plan) {
        plan_anchor =
            false;  // jq grouping the plan's units by node, which show, render and the exports do first
        row("jq: the plan's units by node",
            fmt::format("jq -c '[.assignments[] | {{node, \"label\": .label}}] | group_by(.node) | "
                        "map({{node: .[0].node, units: length}})' {} >/dev/null",
                        p),
            plan);
      }
      Run r = measure(command, runs);
      results[name] = r;
      commands[name] = command;
      double bytes = static_cast<double>(r.peak_rss_kib) * 1024;
      fmt::print("| {} | {} | {} | {:.0f} | {:.2f} | {:.2f} | {:.0f} | {:.0f} | {:.0f} |\n", tests, units,
                 name, static_cast<double>(fs::file_size(input)) / 1e6, r.seconds, r.cpu_seconds,
                 bytes / 1048576, bytes / static_cast<double>(tests), bytes / static_cast<double>(units));
      std::fflush(stdout);
    };
    auto g = [&](const std::string& args) { return fmt::format("'{}' {}", gpuplan, args); };
    std::string x = "'" + xml.string() + "'", j = "'" + jsonproto.string() + "'",
                h = "'" + heavy.string() + "'";
    std::string f1 = "'" + fleet_small.string() + "'", f10 = "'" + fleet_big.string() + "'";
    row("xmllint --stream --noout (xml)", fmt::format("xmllint --stream --noout {} 2>/dev/null", x), xml);
    row("jq -c . (streamed_jsonproto)", fmt::format("jq -c . {} >/dev/null", j), jsonproto);
    row("xmllint --stream --noout (xml, rule-input heavy)",
        fmt::format("xmllint --stream --noout {} 2>/dev/null", h), heavy);
    row("targets (xml, table)", g(fmt::format("targets {} >/dev/null", x)), xml);
    row("targets --json (xml)", g(fmt::format("targets {} --json >/dev/null", x)), xml);
    row("targets --json (xml, rule-input heavy)", g(fmt::format("targets {} --json >/dev/null", h)), heavy);
    row("targets --json (streamed_jsonproto)", g(fmt::format("targets {} --json >/dev/null", j)), jsonproto);
    row("classify (xml, text)", g(fmt::format("classify {} >/dev/null 2>&1", x)), xml);
    row("classify --json (xml)", g(fmt::format("classify {} --json >/dev/null", x)), xml);
    row("plan (xml, 1,000 nodes)",
        g(fmt::format("plan {} --fleet {} -o '{}' 2>/dev/null", x, f1, plan.string())), xml);
    row("plan (streamed_jsonproto, 1,000 nodes)",
        g(fmt::format("plan {} --fleet {} -o '{}' 2>/dev/null", j, f1, plan.string())), jsonproto);
    row("plan (xml, 10,000 nodes)",
        g(fmt::format("plan {} --fleet {} -o '{}' 2>/dev/null", x, f10, plan_big.string())), xml);
    row("plan --history (xml, 1,000 nodes)",
        g(fmt::format("plan {} --fleet {} --history '{}' -o '{}' 2>/dev/null", x, f1, history.string(),
                      plan.string())),
        xml);
    // Every unit shares its GPU at a memory of its own (the history's peaks): without rounding the
    // sizes, the list scheduler's work grew with units × sizes, and this ran for minutes.
    row("plan --policy pack --history (xml, 1,000 nodes)",
        g(fmt::format("plan {} --fleet {} --policy pack --history '{}' -o '{}' 2>/dev/null", x, f1,
                      history.string(), (dir / "plan-pack.json").string())),  // -o refuses /dev/null
        xml);
    if (!fs::exists(plan))  // --only left the plan rows out: the launches still need their plan
      measure(g(fmt::format("plan {} --fleet {} -o '{}' 2>/dev/null", x, f1, plan.string())), 1);
    auto [label, node] = planned_unit(plan, units);
    fs::path locks = dir / "locks";
    fs::create_directory(locks);  // run-under never creates its lock directory
    auto launch = g(fmt::format("run-under --plan '{}' --node '{}' --lock-dir '{}' true", plan.string(), node,
                                locks.string()));
    setenv("TEST_TARGET", label.c_str(), 1);
    // A launch as on a GPU node: NVML's stand-in counts its 8 GPUs (without a GPU here, run-under
    // would refuse the test in a few milliseconds, which is no launch).
    setenv("GPUPLAN_NVML_LIBRARY", GPUPLAN_FAKE_NVML, 1);
    {  // a launch takes milliseconds, and one hiccup of the machine is as long: more runs
      int kept = runs;
      runs = std::max(runs, launch_runs);
      row("run-under (one launch, PLAN.index)", launch, plan);
      runs = kept;
    }
    if (tests < 1'000'000) {  // the whole plan, as before the index (one run: it writes the index again)
      int kept = runs;
      runs = 1;
      fs::remove(plan.string() + ".index");
      row("run-under (one launch, whole plan)", launch, plan);
      runs = kept;
    }
    row("verify (plan, 1,000 nodes)", g(fmt::format("verify '{}' --fleet {} >/dev/null", plan.string(), f1)),
        plan);
    row("compare --json (exact, whole-node)",
        g(fmt::format("compare {} --fleet {} --policies exact,whole-node --json >/dev/null", x, f1)), xml);
    row("history summarize (3 runs)",
        g(fmt::format("history summarize '{}' -o '{}' 2>/dev/null", history.string(), summary.string())),
        history);
    // One test's runs out of the whole history: read through, only that test's held.
    Shape first = shape(0);
    for (long i = 1; !is_gpu(first); ++i) first = shape(i);
    row("history show (one test)",
        g(fmt::format("history show '//{}:{}' --history '{}' >/dev/null 2>&1", first.package, first.name,
                      history.string())),
        history);
    // The commands that read the plan, as users run them, beside jq reshaping the same plan.
    plan_anchor = true;
    row("show (plan, text)", g(fmt::format("show {} >/dev/null", p)), plan);
    row("show --summary (plan)", g(fmt::format("show {} --summary >/dev/null", p)), plan);
    for (const char* format : {"svg", "html", "trace"})
      row(fmt::format("render (plan, {})", format),
          g(fmt::format("render {} --format {} -o '{}'", p, format, (dir / "chart").string())), plan);
    row("export slurm (plan, 1,000 nodes)",
        g(fmt::format("export slurm {} -o '{}' >/dev/null 2>&1", p, (dir / "slurm").string())), plan);
    row("export kubernetes (plan, 1,000 nodes, with the fleet)",
        g(fmt::format("export kubernetes {} --fleet {} --image img -o '{}' >/dev/null 2>&1", p, f1,
                      (dir / "k8s").string())),
        plan);
    row("export gitlab (plan, 1,000 nodes, with the fleet)",
        g(fmt::format("export gitlab {} --fleet {} -o '{}' 2>/dev/null", p, f1,
                      (dir / "gitlab.yml").string())),
        plan);
    // A GitHub Actions matrix takes at most 256 jobs (and 1 MB: without the unit lists, which the
    // jobs read from the plan) and a Buildkite upload 500 steps: the same tests planned on 200
    // nodes, as a user of those would split the fleet.
    const char *github = "export github-matrix --no-units (plan, 200 nodes, with the fleet)",
               *buildkite = "export buildkite (plan, 200 nodes, with the fleet)";
    if (selected(github) || selected(buildkite)) {
      fs::path fleet_200 = dir / "fleet-200.yaml", plan_200 = dir / "plan-200.json";
      write_fleet(fleet_200, 200);
      measure(g(fmt::format("plan {} --fleet '{}' -o '{}' 2>/dev/null", x, fleet_200.string(),
                            plan_200.string())),
              1);
      std::string p200 = "'" + plan_200.string() + "'", f200 = "'" + fleet_200.string() + "'";
      row(github, g(fmt::format("export github-matrix {} --fleet {} --no-units >/dev/null 2>&1", p200, f200)),
          plan_200);
      row(buildkite, g(fmt::format("export buildkite {} --fleet {} >/dev/null 2>&1", p200, f200)), plan_200);
    }
    row("simulate --runs 3 (plan, 1,000 nodes)",
        g(fmt::format("simulate {} --fleet {} --runs 3 >/dev/null", p, f1)), plan);
    row("explain LABEL (xml)",
        g(fmt::format("explain '//{}:{}' {} >/dev/null 2>&1", first.package, first.name, x)), xml);
    row("history suggest (CSV, plan, fleet)",
        g(fmt::format("history suggest --history '{}' --plan {} --fleet {} >/dev/null 2>&1", history.string(),
                      p, f1)),
        history);
    fs::path imported = dir / "fleet-imported-10000.yaml";
    const char* fleet_check = "fleet check (10,000 imported nodes, a pool each)";
    if (selected(fleet_check)) write_imported_fleet(imported, 10'000);
    row(fleet_check, g(fmt::format("fleet check '{}' >/dev/null", imported.string())), imported);
    row("fleet import (one node of 8 GPUs)",
        g(fmt::format(
            "fleet import --query-gpu '{0}/h100-hgx-8x.query.csv' --topo '{0}/h100-hgx-8x.topo.txt' "
            ">/dev/null 2>&1",
            GPUPLAN_NVIDIA_SMI)),
        fs::path(GPUPLAN_NVIDIA_SMI) / "h100-hgx-8x.topo.txt");
    fmt::print("\n");
    if (tests >= 150'000) {
      auto ran = [&](std::initializer_list<const char*> names) {
        return std::all_of(names.begin(), names.end(), [&](const char* n) { return results.count(n) > 0; });
      };
      auto cpu = [&](const char* name) { return results[name].cpu_seconds; };
      auto rss = [&](const char* name) { return static_cast<double>(results[name].peak_rss_kib) * 1024; };
      auto n = static_cast<double>(tests);
      auto u = static_cast<double>(units);
      const char *plan_xml = "plan (xml, 1,000 nodes)", *plan_json = "plan (streamed_jsonproto, 1,000 nodes)",
                 *plan_big = "plan (xml, 10,000 nodes)", *xmllint = "xmllint --stream --noout (xml)",
                 *jq = "jq -c . (streamed_jsonproto)", *launch_row = "run-under (one launch, PLAN.index)";
      // The two ratios are timed again with their commands in turn, not from the table's rows.
      auto check_in_turn = [&](const char* first, const char* second, const char* first_words,
                               const char* second_words, double limit) {
        auto [a, b] = measure_in_turn(commands[first], commands[second], runs);
        double ratio = a.cpu_seconds / b.cpu_seconds;
        checks.push_back(
            {fmt::format("{} tests: {} {:.2f}x the CPU of {}, in turn ({:.2f} s against {:.2f} s; "
                         "target <= {}x)",
                         tests, first_words, ratio, second_words, a.cpu_seconds, b.cpu_seconds, limit),
             ratio <= limit});
      };
      if (ran({plan_xml})) {
        check_in_turn(plan_xml, xmllint, "plan from xml", "xmllint --stream", 3);
        checks.push_back({fmt::format("{} tests: plan peak RSS {:.0f} bytes a GPU unit (target < 1024)",
                                      tests, rss(plan_xml) / u),
                          rss(plan_xml) / u < 1024});
      }
      if (ran({plan_json})) {
        double jq_ratio = cpu(plan_json) / cpu(jq);
        checks.push_back(
            {fmt::format("{} tests: plan from streamed_jsonproto {:.2f}x the CPU of jq -c . (target < 1x)",
                         tests, jq_ratio),
             jq_ratio < 1});
      }
      for (const char* name :
           {"targets (xml, table)", "targets --json (xml)", "classify (xml, text)", "classify --json (xml)"})
        if (ran({name}))
          checks.push_back({fmt::format("{} tests: {} peak RSS {:.0f} bytes a test (target < 400)", tests,
                                        name, rss(name) / n),
                            rss(name) / n < 400});
      if (ran({plan_xml, plan_big})) check_in_turn(plan_big, plan_xml, "10,000 nodes", "1,000 nodes", 2);
      if (ran({launch_row})) {
        const auto& launch = results[launch_row];
        checks.push_back(
            {fmt::format("{} tests: a run-under launch {:.1f} ms, {:.1f} MiB (target < 20 ms, 20 MB)", tests,
                         launch.seconds * 1000, static_cast<double>(launch.peak_rss_kib) / 1024),
             launch.seconds < 0.02 && launch.peak_rss_kib * 1024 < 20'000'000});
      }
      if (const char* show = "history show (one test)"; ran({show}))
        checks.push_back(
            {fmt::format("{} tests: history show of one test, peak RSS {:.1f} MiB (target < 20 MB, "
                         "whatever the history's size)",
                         tests, rss(show) / 1048576),
             rss(show) < 20'000'000});
      if (tests >= 1'000'000 && ran({plan_xml}))
        checks.push_back(
            {fmt::format("{} tests planned in {:.1f} s CPU (target < 20 s)", tests, cpu(plan_xml)),
             cpu(plan_xml) < 20});
    }
  }
  bool all = true;
  for (const auto& c : checks) {
    fmt::print("{} {}\n", c.ok ? "ok    " : "MISSED", c.what);
    all = all && c.ok;
  }
  if (!keep) fs::remove_all(dir);
  return all ? 0 : 1;
}
