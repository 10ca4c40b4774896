// The line run-under writes to a test's log where the test waited for its GPUs, and reading it back.
#include <fmt/format.h>

#include <cmath>
#include <ctime>

#include "gpuplan/history.hpp"
#include "history/time.hpp"

namespace gpuplan {

namespace {

constexpr std::string_view head = "gpuplan run-under: waited ";
constexpr std::string_view launched = " (launched ";

}  // namespace

std::string launch_wait_line(const LaunchWait& wait, std::string_view label, std::string_view gpus) {
  const std::time_t seconds = static_cast<std::time_t>(wait.launched_ms / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return fmt::format(
      "{}{:.3f} s for GPU{} {}{}{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z) before {} started; Bazel's time "
      "for "
      "the test (its test.xml, build events) counts that wait, and gpuplan history takes it out",
      head, wait.seconds, gpus.find(',') == std::string_view::npos ? "" : "s", gpus, launched,
      utc.tm_year + 1900, utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
      wait.launched_ms % 1000, label);
}

std::optional<LaunchWait> find_launch_wait(std::string_view log) {
  for (auto at = log.find(head); at != std::string_view::npos; at = log.find(head, at + 1)) {
    if (at > 0 && log[at - 1] != '\n') continue;
    auto line = log.substr(at + head.size());
    line = line.substr(0, line.find('\n'));
    const auto unit = line.find(" s for GPU");
    const auto open = line.find(launched);
    if (unit == std::string_view::npos || open == std::string_view::npos || open < unit) continue;
    const auto close = line.find(')', open);
    if (close == std::string_view::npos) continue;
    const auto seconds = history::parse_number(line.substr(0, unit));
    const auto start =
        history::parse_timestamp_ms(line.substr(open + launched.size(), close - open - launched.size()));
    if (!seconds || !start || *seconds < 0 || !std::isfinite(*seconds)) continue;
    return LaunchWait{*seconds, *start};
  }
  return std::nullopt;
}

}  // namespace gpuplan
