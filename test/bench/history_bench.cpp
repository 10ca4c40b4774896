// Reads and summarises 1,000,000 BEP testResult events (the shape Bazel writes, with their
// output files and execution info) from a temporary file: the cost `--history` adds to a plan
// on a large monorepo's CI history. Prints events/s and MB/s; the target is under 2 s on one core.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "gpuplan/history.hpp"

int main() {
  using namespace gpuplan;
  constexpr int events = 1'000'000;
  constexpr int tests = 5000;
  auto path =
      std::filesystem::temp_directory_path() / fmt::format("gpuplan-history-bench-{}.json", ::getpid());
  {
    std::ofstream out(path, std::ios::binary);
    std::string line;
    for (int i = 0; i < events; ++i) {
      int test = i % tests;
      int shard = 1 + (i / tests) % 4;
      std::string label = fmt::format("//pkg{}/sub:test_{}", test % 97, test);
      line = fmt::format(
          R"({{"id":{{"testResult":{{"label":"{0}","run":1,"shard":{1},"attempt":1,"configuration":{{"id":"2bdbd21eab27a6d89cc37531d1470a6247e917321bca2fed8d220f31e37ba4f2"}}}}}},)"
          R"("testResult":{{"testActionOutput":[{{"name":"test.log","uri":"file:///bazel/out/testlogs/pkg/test_{2}/shard_{1}_of_4/test.log"}},)"
          R"({{"name":"test.xml","uri":"file:///bazel/out/testlogs/pkg/test_{2}/shard_{1}_of_4/test.xml"}}],)"
          R"("testAttemptDurationMillis":"{3}","status":"{4}","cachedLocally":{5},"testAttemptStartMillisEpoch":"{6}",)"
          R"("executionInfo":{{"strategy":"linux-sandbox","hostname":"ci-7"}}}}}})"
          "\n",
          label, shard, test, 1000 + static_cast<long long>(i) * 7919 % 600000,
          i % 97 == 0 ? "TIMEOUT" : "PASSED", i % 10 == 0 ? "true" : "false", 1714557600000LL + i);
      out << line;
    }
  }
  auto bytes = std::filesystem::file_size(path);
  auto start = std::chrono::steady_clock::now();
  std::clock_t cpu_start = std::clock();
  std::ifstream in(path, std::ios::binary);
  auto read = read_bep(in, path.string(), true);
  std::string summary = summarize(read.history, 20);
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  // CPU time, so that a busy shared machine does not count against it; one thread throughout.
  double seconds = static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
  std::filesystem::remove(path);
  fmt::print(
      "history: {} BEP testResult events ({:.0f} MB) read and summarised in {:.2f} s of CPU ({:.2f} s wall): "
      "{:.2f} M events/s, {:.0f} MB/s; "
      "{} samples of {} units, {} cached ignored, summary {} KB\n",
      events, bytes / 1e6, seconds, wall, events / seconds / 1e6, bytes / 1e6 / seconds,
      read.history.sample_count(), read.history.samples.size(), read.history.cached_results,
      summary.size() / 1000);
  return seconds < 2.0 ? 0 : 1;
}
