// Graph benchmark (issue 16): a generated `bazel query 'deps(tests(//...))'` output of RULES rules
// (a test in twenty, the rest libraries) with twenty rule-inputs each, as xml and as
// streamed_jsonproto. Each is read three times, each in a fresh process: plain ingest (tests
// only), every label read but none kept, and with the dependency graph, then the reachability pass. Reports
// CPU time, peak RSS, the graph's bytes per edge beyond its label text, and checks the targets. Usage:
// graph_bench [RULES...] (default 100000 1000000). Times are CPU seconds. `graph_bench --write
// xml|streamed_jsonproto FILE RULES` writes one input, and `graph_bench --read plain|labels|graph FORMAT FILE
// RULES` reads it as the benchmark does (to profile one reading; the benchmark runs it with
// GLIBC_TUNABLES=glibc.malloc.hugetlb=1, as gpuplan runs its commands).
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "child_run.hpp"
#include "gpuplan/graph.hpp"

using gpuplan::bench::Run;

namespace {

namespace fs = std::filesystem;

constexpr long inputs_per_rule = 20;

/// Rule i: a test when i % 20 == 0, else a library; packages of 50 rules.
std::string label_of(long i) {
  return fmt::format("//services/team{}/pkg{}:{}_{}", i % 31, i / 50, i % 20 == 0 ? "case_test" : "lib", i);
}

/// The inputs of rule i: its own source file, libraries declared before it (so the query's
/// order, dependencies first, is kept), and for one library in a thousand the torch wheel.
std::vector<std::string> inputs_of(long i) {
  std::vector<std::string> inputs{fmt::format("//services/team{}/pkg{}:src_{}.py", i % 31, i / 50, i)};
  std::uint64_t state = static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull + 1;
  for (long k = 1; k < inputs_per_rule && i > 0; ++k) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    long span = std::min<long>(i, k < 15 ? 200 : 100000);  // mostly near, some far
    long dep = i - 1 - static_cast<long>(state % static_cast<std::uint64_t>(span));
    if (dep % 20 == 0) dep = dep > 0 ? dep - 1 : 1;  // tests are nobody's input
    inputs.push_back(label_of(dep));
  }
  if (i % 1000 == 7) inputs.back() = "@pypi//torch:pkg";
  return inputs;
}

const char* class_of(long i) { return i % 20 == 0 ? "py_test" : "py_library"; }

void write_xml(const fs::path& path, long rules) {
  std::ofstream out(path, std::ios::binary);
  out << "<?xml version=\"1.1\" encoding=\"UTF-8\" standalone=\"no\"?>\n<query version=\"2\">\n";
  out << "    <rule class=\"py_library\" location=\"/ext/pypi/torch/BUILD:1:1\" "
         "name=\"@pypi//torch:pkg\"/>\n";
  for (long i = 0; i < rules; ++i) {
    std::string label = label_of(i);
    out << fmt::format("    <rule class=\"{}\" location=\"/home/ci/monorepo/BUILD:{}:8\" name=\"{}\">\n",
                       class_of(i), i % 500 + 1, label);
    if (i % 20 == 0)
      out << "        <list name=\"tags\">\n            <string value=\"gpu\"/>\n        </list>\n";
    for (const auto& input : inputs_of(i)) out << "        <rule-input name=\"" << input << "\"/>\n";
    out << "    </rule>\n";
    out << fmt::format("    <source-file location=\"/home/ci/monorepo/BUILD:1:1\" name=\"{}\"/>\n",
                       inputs_of(i)[0]);
  }
  out << "</query>\n";
}

void write_streamed_jsonproto(const fs::path& path, long rules) {
  std::ofstream out(path, std::ios::binary);
  out << R"({"type":"RULE","rule":{"name":"@pypi//torch:pkg","ruleClass":"py_library"}})" << '\n';
  for (long i = 0; i < rules; ++i) {
    out << fmt::format(
        R"({{"type":"RULE","rule":{{"name":"{}","ruleClass":"{}","location":"/home/ci/monorepo/BUILD:{}:8")",
        label_of(i), class_of(i), i % 500 + 1);
    if (i % 20 == 0)
      out << R"(,"attribute":[{"name":"tags","type":"STRING_LIST","stringListValue":["gpu"],"explicitlySpecified":true}])";
    out << ",\"ruleInput\":[";
    auto inputs = inputs_of(i);
    for (std::size_t k = 0; k < inputs.size(); ++k) out << (k ? ",\"" : "\"") << inputs[k] << '"';
    out << "]}}\n";
    out << fmt::format(R"({{"type":"SOURCE_FILE","sourceFile":{{"name":"{}"}}}})", inputs[0]) << '\n';
  }
}

/// This benchmark's children.
Run measure(const std::function<void()>& body) { return gpuplan::bench::measure("graph_bench", body); }

/// CPU seconds this process has used: the machine may be shared.
double cpu_now() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9;
}

/// `graph_bench --read MODE FORMAT FILE RULES`: one reading in a fresh process. MODE "plain"
/// reads the tests only; "labels" also reads every label of the graph and hands it over to a
/// sink that keeps none (what any graph costs before it keeps anything); "graph" keeps the
/// graph and runs the reachability pass, and prints the graph's own numbers on one line for
/// the parent.
[[noreturn]] void read_only(std::string_view mode, const char* format, const char* path, long rules) {
  std::ifstream in(path, std::ios::binary);
  long tests = (rules + 19) / 20;
  if (mode == "plain") {
    auto list = gpuplan::read_targets(in, path, gpuplan::parse_input_format(format));
    _exit(static_cast<long>(list.tests.size()) == tests ? 0 : 3);
  }
  if (mode == "labels") {  // every label read and handed over, none kept: the floor of any graph
    struct Discard final : gpuplan::GraphSink {
      std::size_t bytes = 0;
      void rule(std::string_view label, std::string_view) override { bytes += label.size(); }
      void input(std::string_view label) override { bytes += label.size(); }
      void generated_file(std::string_view label, std::string_view) override { bytes += label.size(); }
      void leaf(std::string_view label) override { bytes += label.size(); }
    } discard;
    auto list = gpuplan::read_targets(in, path, gpuplan::parse_input_format(format), &discard);
    _exit(discard.bytes == 0 ? 4 : static_cast<long>(list.tests.size()) == tests ? 0 : 3);
  }
  auto graph = std::make_unique<gpuplan::DepGraph>();
  auto list = gpuplan::read_targets(in, path, gpuplan::parse_input_format(format), graph.get());
  auto start = cpu_now();
  gpuplan::GpuReach reach(*graph, gpuplan::GpuDepPatterns::defaults());
  long reaching = 0;
  for (auto test : graph->tests()) reaching += reach.reaches(test) ? 1 : 0;
  double reach_seconds = cpu_now() - start;
  std::size_t text = 0;
  for (gpuplan::DepGraph::Node n = 0; n < graph->node_count(); ++n) text += graph->label(n).size();
  fmt::print("{} {} {} {} {} {:.3f} {}\n", graph->node_count(), graph->edge_count(), graph->memory_bytes(),
             text, reaching, reach_seconds, list.tests.size());
  std::fflush(stdout);
  _exit(static_cast<long>(list.tests.size()) == tests ? 0 : 3);
}

/// The readers run as `gpuplan audit` and `gpuplan targets` run them: with glibc's malloc on
/// transparent huge pages (main.cpp's rerun), unless GLIBC_TUNABLES already sets hugetlb.
void tunables_as_gpuplan() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  std::string value = tunables ? tunables : "";
  if (value.find("glibc.malloc.hugetlb") != std::string::npos) return;
  setenv("GLIBC_TUNABLES", (value.empty() ? value : value + ":").append("glibc.malloc.hugetlb=1").c_str(), 1);
}

Run run_reader(const char* mode, const fs::path& path, const char* format, long rules, const fs::path& out) {
  std::string count = std::to_string(rules);
  return measure([&] {
    if (!freopen(out.c_str(), "w", stdout)) _exit(6);
    tunables_as_gpuplan();
    execl("/proc/self/exe", "graph_bench", "--read", mode, format, path.c_str(), count.c_str(), nullptr);
    _exit(5);
  });
}

/// Both readings of one file, printed; returns whether the targets were met.
bool bench(const fs::path& path, const char* format, long rules, const fs::path& dir) {
  Run plain = run_reader("plain", path, format, rules, dir / "plain.out");
  Run labels = run_reader("labels", path, format, rules, dir / "plain.out");
  Run graph = run_reader("graph", path, format, rules, dir / "graph.out");
  std::ifstream numbers(dir / "graph.out");
  long nodes = 0, edges = 0, bytes = 0, text = 0, reaching = 0, tests = 0;
  double reach_seconds = 0;
  numbers >> nodes >> edges >> bytes >> text >> reaching >> reach_seconds >> tests;
  double rss_extra = static_cast<double>(graph.peak_rss_kib - plain.peak_rss_kib) * 1024;
  double per_edge = (rss_extra - static_cast<double>(text)) / static_cast<double>(edges);
  double held_per_edge = static_cast<double>(bytes - text) / static_cast<double>(edges);
  double slower = graph.cpu_seconds / plain.cpu_seconds;
  double reading_slower = (graph.cpu_seconds - reach_seconds) / plain.cpu_seconds;
  fmt::print("  {} ({:.0f} MB): {} nodes, {} edges, {} tests ({} reach GPU code)\n", format,
             fs::file_size(path) / 1e6, nodes, edges, tests, reaching);
  fmt::print("    plain ingest      {:6.2f} s cpu  peak RSS {:7.1f} MiB\n", plain.cpu_seconds,
             plain.peak_rss_kib / 1024.0);
  fmt::print(
      "    labels, none kept {:6.2f} s cpu  ({:.2f}x the time: reading every label, before any graph)\n",
      labels.cpu_seconds, labels.cpu_seconds / plain.cpu_seconds);
  fmt::print(
      "    with the graph    {:6.2f} s cpu  peak RSS {:7.1f} MiB  ({:.2f}x the time; reachability {:.3f} "
      "s, so reading {:.2f}x)\n",
      graph.cpu_seconds, graph.peak_rss_kib / 1024.0, slower, reach_seconds, reading_slower);
  fmt::print(
      "    graph: {:.1f} MiB held, label text {:.1f} MiB; {:.1f} bytes an edge held beyond the text, {:.1f} "
      "by peak RSS (target < 24) {}\n",
      bytes / 1048576.0, text / 1048576.0, held_per_edge, per_edge, per_edge < 24 ? "ok" : "MISSED");
  return per_edge < 24;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 6 && std::string_view(argv[1]) == "--read")
    read_only(argv[2], argv[3], argv[4], std::atol(argv[5]));
  if (argc == 5 && std::string_view(argv[1]) == "--write") {  // an input to profile a reader on
    (std::string_view(argv[2]) == "xml" ? write_xml : write_streamed_jsonproto)(argv[3], std::atol(argv[4]));
    return 0;
  }
  std::vector<long> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atol(argv[i]));
  if (sizes.empty()) sizes = {100'000, 1'000'000};
  fs::path dir = fs::temp_directory_path() / fmt::format("gpuplan-graph-bench-{}", getpid());
  fs::create_directories(dir);
  bool ok = true;
  for (long rules : sizes) {
    fmt::print("graph_bench: {} rules, {} rule-inputs each\n", rules, inputs_per_rule);
    fs::path xml = dir / "deps.xml";
    write_xml(xml, rules);
    ok = bench(xml, "xml", rules, dir) && ok;
    fs::remove(xml);
    fs::path json = dir / "deps.streamed_jsonproto";
    write_streamed_jsonproto(json, rules);
    ok = bench(json, "streamed_jsonproto", rules, dir) && ok;
    fs::remove(json);
  }
  fs::remove_all(dir);
  return ok ? 0 : 1;
}
