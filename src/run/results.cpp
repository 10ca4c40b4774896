// Results records: the history CSV, one line per finished unit.
#include <fmt/format.h>

#include <cmath>
#include <ctime>

#include "gpuplan/run.hpp"

namespace gpuplan {

namespace {

std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\r\n") == std::string::npos) return value;
  std::string quoted = "\"";
  for (char c : value) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  return quoted + "\"";
}

std::string iso8601_utc(double epoch_s) {
  auto millis = static_cast<long long>(std::llround(epoch_s * 1000));
  std::time_t seconds = static_cast<std::time_t>(millis / 1000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900, utc.tm_mon + 1,
                     utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec, millis % 1000);
}

}  // namespace

std::string_view results_header() {
  return "label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched\n";
}

std::string to_csv(const RunRecord& r) {
  return fmt::format("{},{},{:.3f},{},{},{},{},{},{}\n", csv_field(r.label),
                     r.shard_index ? std::to_string(*r.shard_index) : "", r.seconds,
                     r.peak_vram_mib ? std::to_string(*r.peak_vram_mib) : "", csv_field(r.node),
                     csv_field(gpu_list(r.gpus)), iso8601_utc(r.start_epoch_s), r.exit_status,
                     r.gpu_touched ? (*r.gpu_touched ? "true" : "false") : "");
}

}  // namespace gpuplan
