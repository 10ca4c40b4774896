// Results records: the history CSV, one line per finished unit.
#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <ctime>

#include "gpuplan/error.hpp"
#include "gpuplan/run.hpp"
#include "run/os.hpp"

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

/// One CSV line split into fields, quotes per RFC 4180 undone; empty when the quoting is broken.
std::optional<std::vector<std::string>> csv_fields(std::string_view line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c != '"')
        fields.back() += c;
      else if (i + 1 < line.size() && line[i + 1] == '"')
        fields.back() += '"', ++i;
      else
        quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  if (quoted) return std::nullopt;
  return fields;
}

template <typename T>
bool parse_number(const std::string& text, T& value) {
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  return error == std::errc() && end == text.data() + text.size();
}

}  // namespace

std::vector<RunRecord> parse_results_csv(std::string_view text, const std::string& name) {
  std::vector<RunRecord> records;
  int line_number = 0;
  while (!text.empty()) {
    auto end = text.find('\n');
    auto line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (++line_number == 1 || line.empty() || line == "\r") continue;  // the header
    auto bad = [&](const std::string& what) {
      return InputError(Position{name, line_number, 1}, "results record: " + what);
    };
    auto fields = csv_fields(line);
    if (!fields) throw bad("a quoted field does not end");
    if (fields->size() != 9 && fields->size() != 11 && fields->size() != 12 && fields->size() != 13)
      throw bad(fmt::format(
          "{} fields, not 13 (or 12 before gpus_asked, 11 before filtered, 9 before peak_up_front and "
          "shard_count)",
          fields->size()));
    const auto& f = *fields;
    RunRecord r;
    r.label = f[0];
    if (!f[1].empty()) {
      int shard = 0;
      if (!parse_number(f[1], shard)) throw bad(fmt::format("shard '{}' is not a number", f[1]));
      r.shard_index = shard;
    }
    if (!parse_number(f[2], r.seconds)) throw bad(fmt::format("seconds '{}' is not a number", f[2]));
    r.node = f[4];
    std::string_view gpus = f[5];
    while (!gpus.empty()) {
      auto comma = gpus.find(',');
      int gpu = 0;
      if (!parse_number(std::string(gpus.substr(0, comma)), gpu)) throw bad(fmt::format("gpus '{}'", f[5]));
      r.gpus.push_back(gpu);
      gpus = comma == std::string_view::npos ? std::string_view() : gpus.substr(comma + 1);
    }
    if (f[7] == "timeout")
      r.end = RunEnd::timed_out;
    else if (f[7] == "stopped")
      r.end = RunEnd::stopped;
    else if (!parse_number(f[7], r.exit_status))
      throw bad(fmt::format("exit_status '{}' is neither a number nor timeout or stopped", f[7]));
    if (f[8] == "true" || f[8] == "false")
      r.gpu_touched = f[8] == "true";
    else if (!f[8].empty())
      throw bad(fmt::format("gpu_touched '{}' is neither true, false nor empty", f[8]));
    if (f.size() >= 11 && !f[10].empty() && !parse_number(f[10], r.shard_count))
      throw bad(fmt::format("shard_count '{}' is not a number", f[10]));
    if (f.size() >= 12 && f[11] != "true" && !f[11].empty())
      throw bad(fmt::format("filtered '{}' is neither true nor empty", f[11]));
    r.filtered = f.size() >= 12 && f[11] == "true";
    if (f.size() == 13 && !f[12].empty()) {
      int asked = 0;
      if (!parse_number(f[12], asked) || asked < 0)
        throw bad(fmt::format("gpus_asked '{}' is not a count of GPUs", f[12]));
      r.gpus_asked = asked;
    }
    records.push_back(std::move(r));
  }
  return records;
}

std::string untouched_gpus_warning(const std::vector<RunRecord>& records) {
  long measured = 0;
  for (const auto& r : records) {
    // A unit stopped (Ctrl-C, Slurm's time limit) may not have reached its GPU code yet.
    if (!r.gpu_touched || r.seconds < 1 || r.end == RunEnd::stopped) continue;
    if (*r.gpu_touched) return {};
    ++measured;
  }
  if (measured == 0) return {};
  return fmt::format(
      "none of the {} GPU units NVML measured for a second or more touched a GPU: they passed or failed "
      "without one. If they use GPUs, their build may lack CUDA (give the team's --config=cuda after --) or "
      "their GPUs may be hidden from them; gpuplan history suggest lists such tests run by run",
      measured);
}

std::string_view results_header() {
  return "label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched,peak_up_front,shard_"
         "count,filtered,gpus_asked\n";
}

std::string_view results_header_before_gpus_asked() {
  return "label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched,peak_up_front,shard_"
         "count,filtered\n";
}

std::string_view results_header_before_filtered() {
  return "label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched,peak_up_front,shard_"
         "count\n";
}

std::string_view results_header_before_new_columns() {
  return "label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched\n";
}

ResultsColumns check_results_file(const std::string& path) {
  switch (
      os::check_appendable(path, {results_header(), results_header_before_gpus_asked(),
                                  results_header_before_filtered(), results_header_before_new_columns()})) {
    case 0: return ResultsColumns::thirteen;
    case 1: return ResultsColumns::twelve;
    case 2: return ResultsColumns::eleven;
    default: return ResultsColumns::nine;
  }
}

std::string results_columns_note(const std::string& path) {
  return fmt::format(
      "{} was begun by an earlier gpuplan: its records go on in its nine columns, without peak_up_front and "
      "shard_count (memory JAX or TensorFlow took up front, a test's shard count); give --results a new file "
      "to record them",
      path);
}

std::string to_csv(const RunRecord& r, ResultsColumns columns) {
  std::string ending = r.end == RunEnd::timed_out ? "timeout"
                       : r.end == RunEnd::stopped ? "stopped"
                                                  : std::to_string(r.exit_status);
  auto number = [](const std::optional<std::int64_t>& mib) { return mib ? std::to_string(*mib) : ""; };
  // Each column only in a file that has it: never a row with more fields than its header.
  std::string later;
  if (columns != ResultsColumns::nine)
    later = fmt::format(",{},{}", r.peak_vram_mib ? (r.peak_up_front ? "true" : "false") : "",
                        r.shard_index ? std::to_string(r.shard_count) : "");
  if (columns == ResultsColumns::twelve || columns == ResultsColumns::thirteen)
    later += r.filtered ? ",true" : ",";
  if (columns == ResultsColumns::thirteen) later += "," + (r.gpus_asked ? std::to_string(*r.gpus_asked) : "");
  return fmt::format("{},{},{:.3f},{},{},{},{},{},{}{}\n", csv_field(r.label),
                     r.shard_index ? std::to_string(*r.shard_index) : "", r.seconds, number(r.peak_vram_mib),
                     csv_field(r.node), csv_field(gpu_list(r.gpus)), iso8601_utc(r.start_epoch_s), ending,
                     r.gpu_touched ? (*r.gpu_touched ? "true" : "false") : "", later);
}

}  // namespace gpuplan
