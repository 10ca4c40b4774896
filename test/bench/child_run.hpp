#pragma once
// Timing a reader, a planner case or a command in a child process of its own, so its peak RSS is its alone.
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>

namespace gpuplan::bench {

struct Run {
  double seconds = 0;      ///< wall time
  double cpu_seconds = 0;  ///< user + system time: what the ratios use, as the machine may be shared
  long peak_rss_kib = 0;
  int status = 0;  ///< how the child ended, as wait4 tells it
};

/// Runs `body` in a child process, which exits 0 when `body` returns (or execs what it times);
/// its wall time, CPU time, peak RSS and wait status.
inline Run run_child(const std::function<void()>& body) {
  auto start = std::chrono::steady_clock::now();
  std::fflush(stdout);  // or the child would print what the parent buffered
  pid_t child = fork();
  if (child == 0) {
    body();
    _exit(0);
  }
  int status = 0;
  rusage usage{};
  wait4(child, &status, 0, &usage);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  auto cpu = [](const timeval& t) {
    return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
  };
  return {seconds, cpu(usage.ru_utime) + cpu(usage.ru_stime), usage.ru_maxrss, status};
}

/// run_child for a reader: one that fails ends the benchmark, naming `bench`.
inline Run measure(const char* bench, const std::function<void()>& body) {
  Run run = run_child(body);
  if (!WIFEXITED(run.status) || WEXITSTATUS(run.status) != 0) {
    fmt::print(stderr, "{}: a reader failed (status {})\n", bench, run.status);
    std::exit(1);
  }
  return run;
}

}  // namespace gpuplan::bench
