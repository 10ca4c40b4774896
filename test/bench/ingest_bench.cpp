// Ingest benchmark (issue 2): 1,000,000 test targets as Bazel's xml (with the rule-inputs
// Bazel prints) and as streamed_jsonproto, read by gpuplan and, for scale, by
// `xmllint --stream --noout` and `jq -c .rule.name`. Each reader runs in a child process
// so its peak RSS is its own. Usage: ingest_bench [TARGETS] (default 1000000).
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>

#include "child_run.hpp"
#include "gpuplan/ingest.hpp"

using gpuplan::bench::Run;

namespace {

namespace fs = std::filesystem;

/// The implicit inputs Bazel 4 lists for every sh_test/py_test (from test/data/bazel/all.query.xml).
constexpr const char* implicit_inputs[] = {
    "@bazel_tools//tools/launcher:launcher",       "@bazel_tools//tools/test:collect_cc_coverage",
    "@bazel_tools//tools/test:collect_coverage",   "@bazel_tools//tools/test:coverage_report_generator",
    "@bazel_tools//tools/test:coverage_support",   "@bazel_tools//tools/test:runtime",
    "@bazel_tools//tools/test:test_setup",         "@bazel_tools//tools/test:test_wrapper",
    "@bazel_tools//tools/test:test_xml_generator", "@bazel_tools//tools/test:xml_writer",
};

struct Shape {
  std::string package, name, tag;
  int line, shards;
};

Shape shape(long i) {
  static const char* tags[] = {"gpu", "gpu:2", "requires-gpu-nvidia", "cpu-only", "gpu-mem:40GiB"};
  return {fmt::format("team{}/models/m{}", i % 97, i / 100), fmt::format("case_{}_test", i), tags[i % 5],
          static_cast<int>(i % 100) * 7 + 1, i % 10 == 0 ? 4 : 0};
}

void write_xml(const fs::path& path, long count) {
  std::ofstream out(path, std::ios::binary);
  out << "<?xml version=\"1.1\" encoding=\"UTF-8\" standalone=\"no\"?>\n<query version=\"2\">\n";
  for (long i = 0; i < count; ++i) {
    Shape s = shape(i);
    out << fmt::format(
        "    <rule class=\"sh_test\" location=\"/home/ci/monorepo/{0}/BUILD:{2}:8\" name=\"//{0}:{1}\">\n"
        "        <string name=\"name\" value=\"{1}\"/>\n"
        "        <list name=\"tags\">\n            <string value=\"{3}\"/>\n            <string "
        "value=\"team-ml\"/>\n"
        "        </list>\n        <list name=\"srcs\">\n            <label value=\"//{0}:{1}.sh\"/>\n        "
        "</list>\n"
        "        <string name=\"size\" value=\"large\"/>\n",
        s.package, s.name, s.line, s.tag);
    if (s.shards) out << fmt::format("        <int name=\"shard_count\" value=\"{}\"/>\n", s.shards);
    out << fmt::format("        <rule-input name=\"//{}:{}.sh\"/>\n", s.package, s.name);
    for (const char* input : implicit_inputs) out << "        <rule-input name=\"" << input << "\"/>\n";
    out << "    </rule>\n";
  }
  out << "</query>\n";
}

void write_streamed_jsonproto(const fs::path& path, long count) {
  std::ofstream out(path, std::ios::binary);
  for (long i = 0; i < count; ++i) {
    Shape s = shape(i);
    out << fmt::format(
        R"({{"type":"RULE","rule":{{"name":"//{0}:{1}","ruleClass":"sh_test","location":"/home/ci/monorepo/{0}/BUILD:{2}:8","attribute":[)"
        R"({{"name":"flaky","type":"BOOLEAN","intValue":0,"stringValue":"false","explicitlySpecified":false,"booleanValue":false}},)"
        R"({{"name":"shard_count","type":"INTEGER","intValue":{4},"explicitlySpecified":{5}}},)"
        R"({{"name":"size","type":"STRING","stringValue":"large","explicitlySpecified":true,"nodep":false}},)"
        R"({{"name":"srcs","type":"LABEL_LIST","stringListValue":["//{0}:{1}.sh"],"explicitlySpecified":true,"nodep":false}},)"
        R"({{"name":"tags","type":"STRING_LIST","stringListValue":["{3}","team-ml"],"explicitlySpecified":true,"nodep":false}},)"
        R"({{"name":"timeout","type":"STRING","stringValue":"long","explicitlySpecified":false,"nodep":false}}],"ruleInput":["//{0}:{1}.sh")",
        s.package, s.name, s.line, s.tag, s.shards ? s.shards : -1, s.shards ? "true" : "false");
    for (const char* input : implicit_inputs) out << ",\"" << input << '"';
    out << "]}}\n";
  }
}

/// This benchmark's children.
Run measure(const std::function<void()>& body) { return gpuplan::bench::measure("ingest_bench", body); }

/// Reads FILE in FORMAT as gpuplan does and exits; run as `ingest_bench --read FORMAT FILE COUNT` in a
/// fresh process, so that its peak RSS is the reader's alone.
[[noreturn]] void read_only(const char* format, const char* path, long expected) {
  std::ifstream in(path, std::ios::binary);
  gpuplan::TargetList list = gpuplan::read_targets(in, path, gpuplan::parse_input_format(format));
  _exit(static_cast<long>(list.tests.size()) == expected ? 0 : 3);  // the list is read: skip freeing it
}

Run run_gpuplan(const fs::path& path, const char* format, long expected) {
  std::string count = std::to_string(expected);
  return measure([&] {
    execl("/proc/self/exe", "ingest_bench", "--read", format, path.c_str(), count.c_str(), nullptr);
    _exit(5);
  });
}

Run run_tool(const std::string& command) {
  return measure([&] {
    execl("/bin/sh", "sh", "-c", command.c_str(), nullptr);
    _exit(5);
  });
}

void report(const char* what, const fs::path& path, long targets, const Run& run) {
  double megabytes = static_cast<double>(fs::file_size(path)) / 1e6;
  fmt::print("  {:<28} {:6.2f} s cpu ({:6.2f} s wall) {:7.1f} MB/s {:9.0f} targets/s  peak RSS {:6.1f} MiB\n",
             what, run.cpu_seconds, run.seconds, megabytes / run.cpu_seconds,
             static_cast<double>(targets) / run.cpu_seconds, run.peak_rss_kib / 1024.0);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string_view(argv[1]) == "--read") read_only(argv[2], argv[3], std::atol(argv[4]));
  long count = argc > 1 ? std::atol(argv[1]) : 1'000'000;
  fs::path dir = fs::temp_directory_path() / fmt::format("gpuplan-ingest-bench-{}", getpid());
  fs::create_directories(dir);
  fs::path xml = dir / "tests.xml";
  fs::path json = dir / "tests.streamed_jsonproto";
  fmt::print("ingest_bench: {} test targets, written to {}\n", count, dir.string());
  write_xml(xml, count);
  write_streamed_jsonproto(json, count);
  fmt::print("  xml {:.0f} MB, streamed_jsonproto {:.0f} MB\n", fs::file_size(xml) / 1e6,
             fs::file_size(json) / 1e6);

  Run gpuplan_xml = run_gpuplan(xml, "xml", count);
  Run xmllint = run_tool(fmt::format("xmllint --stream --noout '{}' 2>/dev/null", xml.string()));
  Run gpuplan_json = run_gpuplan(json, "streamed_jsonproto", count);
  Run jq = run_tool(fmt::format("jq -c .rule.name '{}' >/dev/null", json.string()));
  report("gpuplan xml", xml, count, gpuplan_xml);
  report("xmllint --stream --noout", xml, count, xmllint);
  report("gpuplan streamed_jsonproto", json, count, gpuplan_json);
  report("jq -c .rule.name", json, count, jq);

  double xml_ratio = xmllint.cpu_seconds / gpuplan_xml.cpu_seconds;
  double json_ratio = jq.cpu_seconds / gpuplan_json.cpu_seconds;
  long peak = std::max(gpuplan_xml.peak_rss_kib, gpuplan_json.peak_rss_kib) * 1024;
  double per_target = static_cast<double>(peak - (20L << 20)) / static_cast<double>(count);
  bool ok_xml = xml_ratio >= 0.8, ok_json = json_ratio >= 3.0, ok_rss = per_target < 400;
  fmt::print("  xml: {:.2f}x the speed of xmllint --stream (target >= 0.8x) {}\n", xml_ratio,
             ok_xml ? "ok" : "MISSED");
  fmt::print("  streamed_jsonproto: {:.2f}x the speed of jq (target >= 3x) {}\n", json_ratio,
             ok_json ? "ok" : "MISSED");
  fmt::print("  peak RSS: 20 MiB + {:.0f} bytes a test target (target < 400) {}\n", per_target,
             ok_rss ? "ok" : "MISSED");
  fs::remove_all(dir);
  return ok_xml && ok_json && ok_rss ? 0 : 1;
}
