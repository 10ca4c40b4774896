#include "cli/progress.hpp"

#include <fmt/format.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <new>
#include <system_error>
#include <thread>

namespace gpuplan::cli::progress {

namespace {

using Clock = std::chrono::steady_clock;

bool quiet = false;
/// The stage under way, for out of memory's message (copying a std::string then could fail too).
char stage_now[256] = "";

/// Bytes this process has read so far (Linux /proc/self/io, "rchar"); -1 when unknown.
long long bytes_read() {
  std::ifstream io("/proc/self/io");
  std::string key;
  long long value = 0;
  while (io >> key >> value)
    if (key == "rchar:") return value;
  return -1;
}

std::string megabytes(long long bytes) { return fmt::format("{:.0f} MB", static_cast<double>(bytes) / 1e6); }

/// The line and the thread that redraws it every 200 ms once the command has run a second.
class Line {
 public:
  void stage(std::string text, long long input_bytes) {
    std::lock_guard lock(mutex_);
    if (!started_) start();
    const std::size_t length = std::min(text.size(), sizeof stage_now - 1);
    std::memcpy(stage_now, text.data(), length);
    stage_now[length] = '\0';
    text_ = std::move(text);
    input_bytes_ = input_bytes;
    read_at_start_ = input_bytes > 0 ? bytes_read() : 0;
    written_ = 0;
  }
  void wrote(long long bytes) { written_ += bytes; }
  void finish() {
    {
      std::lock_guard lock(mutex_);
      if (!started_ || stopping_) return;
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
    if (shown_) (void)!::write(STDERR_FILENO, "\r\033[K", 4);
  }
  ~Line() { finish(); }

 private:
  void start() {
    started_ = true;
    const char* ci = std::getenv("CI");
    enabled_ = !quiet && ::isatty(STDERR_FILENO) && !(ci && *ci);
    // Tests set the delay to 0 so that a short command shows its line.
    if (const char* after = std::getenv("GPUPLAN_PROGRESS_AFTER_MS"))
      delay_ = std::chrono::milliseconds(std::atol(after));
    began_ = Clock::now();
    if (!enabled_) return;  // nothing to draw: no thread
    // The thread starts with the stop signals blocked, so they reach the main thread only:
    // Output blocks them there while it makes and registers a temporary file, and one taken by
    // this thread in between would end the process before the handler knew the file (seen in CI).
    sigset_t stops, previous;
    sigemptyset(&stops);
    for (int signal : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&stops, signal);
    ::pthread_sigmask(SIG_BLOCK, &stops, &previous);
    try {
      thread_ = std::thread([this] { run(); });
    } catch (const std::system_error&) {
      // No thread to be had (ulimit -u, or no memory for its stack): the command runs without
      // its progress line. Before, it ended with `terminate called` and a core as it exited.
      enabled_ = false;
    }
    ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  }

  void run() try {
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      wake_.wait_for(lock, std::clamp<Clock::duration>(delay_, std::chrono::milliseconds(20),
                                                       std::chrono::milliseconds(200)));
      if (stopping_ || !enabled_ || Clock::now() - began_ < delay_) continue;
      double seconds = std::chrono::duration<double>(Clock::now() - began_).count();
      std::string line = fmt::format("gpuplan: {}", text_);
      if (input_bytes_ > 0) {
        long long done = std::max(0LL, bytes_read() - read_at_start_);
        line +=
            fmt::format(": {}% of {}", std::min(100LL, done * 100 / input_bytes_), megabytes(input_bytes_));
      } else if (written_ > 0) {
        line += fmt::format(": {}", megabytes(written_));
      }
      line = fmt::format("\r\033[K{} ({:.0f} s)", line, seconds);
      (void)!::write(STDERR_FILENO, line.data(), line.size());
      shown_ = true;
    }
  } catch (const std::bad_alloc&) {
    // Out of memory while drawing: the line stops; the command goes on (or says so itself).
    // Left to escape the thread, it ended the process with `terminate called`.
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::thread thread_;
  bool started_ = false;
  bool stopping_ = false;
  bool enabled_ = false;
  bool shown_ = false;
  Clock::time_point began_;
  Clock::duration delay_ = std::chrono::seconds(1);
  std::string text_;
  long long input_bytes_ = 0;
  long long read_at_start_ = 0;
  std::atomic<long long> written_ = 0;
};

Line& line() {
  static Line instance;
  return instance;
}

}  // namespace

void add_quiet_flag(CLI::App& command) {
  command.add_flag("-q,--quiet", quiet, "no progress line on standard error (it shows only on a terminal)");
}

void stage(std::string text, long long input_bytes) { line().stage(std::move(text), input_bytes); }

void wrote(long long bytes) { line().wrote(bytes); }

void finish() { line().finish(); }

const char* current_stage() { return stage_now; }

}  // namespace gpuplan::cli::progress
