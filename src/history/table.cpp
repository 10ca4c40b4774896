// The simple history table a team writes itself (and `gpuplan run-under`/`exec` append to):
// CSV with a header, or JSON rows (an array, or one object a line), with the columns
// label, seconds and optionally shard, peak_vram_mib, start, exit_status, node, gpu_touched,
// peak_up_front, shard_count, gpus, filtered, gpus_asked; columns are found by name and unknown ones
// ignored. Also the file `gpuplan history summarize` writes.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <simdjson.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <istream>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/utf8.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/history.hpp"
#include "gpuplan/limits.hpp"
#include "gpuplan/result.hpp"
#include "gpuplan/target.hpp"
#include "history/bad_rows.hpp"
#include "history/time.hpp"
#include "util/head_then_rest.hpp"
#include "util/text.hpp"

namespace gpuplan {

namespace {

/// The columns (CSV) or keys (JSON) a history row is read from; others are ignored.
constexpr std::string_view row_columns[] = {
    "label",       "seconds",       "shard",       "peak_vram_mib", "start",    "exit_status", "node",
    "gpu_touched", "peak_up_front", "shard_count", "gpus",          "filtered", "gpus_asked"};

/// The most GPUs a row may say its test asked for (gpus_asked): the most a test may ask for (a
/// count beyond any node's, whose unit the plan lists as unschedulable, may still have run).
constexpr int max_gpus_asked = max_gpu_index + 1;

/// The largest peak a row may give: half the most a plan reserves on one GPU (2^30 MiB), so that
/// with the VRAM headroom (under 100%) the reservation a plan writes is one a plan may hold
/// (a peak of 10^9 MiB had made a plan that every command reading it refused).
constexpr std::int64_t max_peak_mib = std::int64_t{1} << 29;

bool is_row_column(std::string_view name) {
  return std::find(std::begin(row_columns), std::end(row_columns), name) != std::end(row_columns);
}

/// A row's cells by column name, only those of row_columns (so a few, however wide the row):
/// the last cell of a name wins, as when a header or an object names a column twice. (A
/// std::map of every cell was a dozen allocations a row.)
class Fields {
 public:
  void set(std::string_view name, std::string value) {
    if (!is_row_column(name)) return;
    for (auto& [known, cell] : cells_)
      if (known == name) {
        cell = std::move(value);
        return;
      }
    cells_.emplace_back(std::string(name), std::move(value));
  }
  std::optional<std::string_view> get(std::string_view name) const {
    for (const auto& [known, cell] : cells_)
      if (known == name) return cell;
    return std::nullopt;
  }

 private:
  std::vector<std::pair<std::string, std::string>> cells_;
};

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front()))) text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.remove_suffix(1);
  return text;
}

std::string_view field(const Fields& fields, std::string_view name) {
  auto cell = fields.get(name);
  return cell ? trim(*cell) : std::string_view();
}

/// One row: a sample of a unit.
struct Row {
  SampleKey key;
  Sample sample;
  int shard_count = 0;  ///< of the test when it ran (results records' shard_count); 0: not said
};

/// One row's fields, as text, into a sample of a unit.
Result<Row> to_row(const Fields& fields) {
  Row row;
  std::string_view label = field(fields, "label");
  if (label.empty()) return Problem{"no label"};
  if (auto problem = utf8_problem(label); !problem.empty())
    return Problem{fmt::format("the label is not UTF-8 text: {}", problem)};
  row.key.label = label_identity(label);
  std::string_view seconds = field(fields, "seconds");
  auto value = history::parse_number(seconds);
  if (!value) return Problem{fmt::format("{}: seconds \"{}\" is not a number", label, seconds)};
  if (*value < 0) return Problem{fmt::format("{}: seconds {} is a negative time", label, seconds)};
  if (*value > max_duration_s)
    return Problem{fmt::format("{}: seconds {} is longer than a year (gpuplan's limit)", label, seconds)};
  row.sample.seconds = *value;
  if (std::string_view shard = field(fields, "shard"); !shard.empty()) {
    auto index = history::parse_number(shard);
    if (!index || *index < 0 || *index != std::floor(*index) || *index >= max_shard_count)
      return Problem{fmt::format("{}: shard \"{}\" is not a 0-based shard index", label, shard)};
    row.key.shard = static_cast<int>(*index);
  }
  if (std::string_view count = field(fields, "shard_count"); !count.empty()) {
    auto shards = history::parse_number(count);
    if (!shards || *shards < 1 || *shards != std::floor(*shards) || *shards > max_shard_count ||
        (row.key.shard && *row.key.shard >= *shards))
      return Problem{fmt::format("{}: shard_count \"{}\" is not a shard count{}", label, count,
                                 row.key.shard ? fmt::format(" above shard {}", *row.key.shard) : "")};
    row.shard_count = static_cast<int>(*shards);
  }
  if (std::string_view vram = field(fields, "peak_vram_mib"); !vram.empty()) {
    auto mib = history::parse_number(vram);
    if (!mib || *mib < 0 || *mib > static_cast<double>(max_peak_mib))
      return Problem{
          fmt::format("{}: peak_vram_mib \"{}\" is not a number of MiB from 0 to {} (gpuplan's limit)", label,
                      vram, max_peak_mib)};
    row.sample.peak_vram_mib = static_cast<std::int64_t>(std::ceil(*mib));
  }
  if (std::string_view up_front = field(fields, "peak_up_front"); !up_front.empty()) {
    if (util::equal_ignoring_case(up_front, "true") || up_front == "1")
      row.sample.peak_up_front = row.sample.peak_vram_mib.has_value();
    else if (!util::equal_ignoring_case(up_front, "false") && up_front != "0")
      return Problem{fmt::format("{}: peak_up_front \"{}\" is neither true nor false", label, up_front)};
  }
  if (std::string_view start = field(fields, "start"); !start.empty()) {
    if (auto epoch = history::parse_number(start))
      row.sample.start_ms = history::epoch_seconds_to_ms(*epoch);
    else
      row.sample.start_ms = history::parse_timestamp_ms(start);
    if (!row.sample.start_ms)
      return Problem{fmt::format(
          "{}: start \"{}\" is neither epoch seconds nor an ISO 8601 time from 1970 to 9999", label, start)};
  }
  // An exit code, or a word: "stopped" (gpuplan's record of a unit killed when it was stopped)
  // and Bazel's TIMEOUT mark a run cut short, whose time is a lower bound; Bazel's PASSED,
  // FAILED and FLAKY a run that ended. A status that measured nothing is a bad row.
  bool failed = false;
  if (std::string_view ending = field(fields, "exit_status"); !ending.empty()) {
    if (auto code = history::parse_number(ending)) {
      if (*code != std::floor(*code))
        return Problem{fmt::format("{}: exit_status \"{}\" is not a whole exit code", label, ending)};
      failed = *code != 0;
    } else {
      failed = util::equal_ignoring_case(ending, "FAILED");
      auto outcome = util::equal_ignoring_case(ending, "stopped") ? history::Outcome::lower_bound
                                                                  : history::outcome_of(ending);
      if (outcome == history::Outcome::none)
        return Problem{fmt::format(
            "{}: exit_status \"{}\" is neither an exit code, stopped, nor a Bazel status that measured a "
            "time (PASSED, FAILED, FLAKY, TIMEOUT)",
            label, ending)};
      row.sample.timed_out = outcome == history::Outcome::lower_bound;
    }
  }
  if (std::string_view touched = field(fields, "gpu_touched"); !touched.empty()) {
    if (util::equal_ignoring_case(touched, "true") || touched == "1")
      row.sample.gpu_touched = true;
    else if (util::equal_ignoring_case(touched, "false") || touched == "0")
      row.sample.gpu_touched = false;
    else
      return Problem{fmt::format("{}: gpu_touched \"{}\" is neither true nor false", label, touched)};
  }
  // A run that failed or was cut short may have ended before its GPU work: touching no GPU, it
  // says nothing of whether the test needs one (history suggest, audit --history).
  row.sample.failed = failed;
  if (row.sample.gpu_touched == false && !row.sample.ran_through()) row.sample.gpu_touched.reset();
  // Nor does a run given no GPU (results records' gpus empty: run-under's --unplanned=warn ran it
  // with CUDA_VISIBLE_DEVICES empty): it could not touch one, whatever it needs. Records written
  // before run-under left such runs unmeasured say false. Unless it used a GPU all the same, its
  // time is not a GPU test's either (estimates of GPU tests leave it out).
  if (std::string_view gpus = field(fields, "gpus"); fields.get("gpus") && (gpus.empty() || gpus == "[]")) {
    if (row.sample.gpu_touched == false) row.sample.gpu_touched.reset();
    row.sample.given_no_gpu = row.sample.gpu_use() != true;
    row.sample.gpus_given = 0;
  } else if (fields.get("gpus")) {
    // How many it was given ("0,1", or a JSON row's "[0,1]"): fewer than its test needs, and
    // its multi-GPU work was skipped or shrunk (--missing-gpus=warn).
    if (gpus.starts_with('[') && gpus.ends_with(']')) gpus = gpus.substr(1, gpus.size() - 2);
    int count = 0;
    for (std::size_t from = 0; from <= gpus.size(); ++count) {
      const std::size_t comma = std::min(gpus.find(',', from), gpus.size());
      if (trim(gpus.substr(from, comma - from)).empty())
        return Problem{fmt::format("{}: gpus \"{}\" is not a list of GPUs", label, util::excerpt(gpus, 40))};
      from = comma + 1;
    }
    row.sample.gpus_given = count;
  }
  // How many its test asked for then (results records' gpus_asked): beside `gpus`, a run of the
  // test's older count is told from one on a machine short of GPUs.
  if (std::string_view asked = field(fields, "gpus_asked"); !asked.empty()) {
    auto count = history::parse_number(asked);
    if (!count || *count < 0 || *count != std::floor(*count) || *count > max_gpus_asked)
      return Problem{
          fmt::format("{}: gpus_asked \"{}\" is not a count of GPUs", label, util::excerpt(asked, 40))};
    row.sample.gpus_asked = static_cast<int>(*count);
  }
  if (std::string_view filtered = field(fields, "filtered"); !filtered.empty()) {
    if (util::equal_ignoring_case(filtered, "true") || filtered == "1")
      row.sample.filtered = true;
    else if (!util::equal_ignoring_case(filtered, "false") && filtered != "0")
      return Problem{fmt::format("{}: filtered \"{}\" is neither true nor false", label, filtered)};
  }

  if (std::string_view node = field(fields, "node"); !node.empty()) {
    if (auto problem = utf8_problem(node); !problem.empty())
      return Problem{fmt::format("{}: the node is not UTF-8 text: {}", label, problem)};
    row.sample.node = node;
  }
  return row;
}

/// Counts lines up to positions that only move forward.
class LineCounter {
 public:
  explicit LineCounter(std::string_view text) : text_(text) {}
  long line_at(const char* position) {
    auto offset = static_cast<std::size_t>(
        std::clamp<std::ptrdiff_t>(position - text_.data(), 0, static_cast<std::ptrdiff_t>(text_.size())));
    if (offset > offset_) {
      line_ += std::count(text_.begin() + offset_, text_.begin() + offset, '\n');
      offset_ = offset;
    }
    return line_;
  }

 private:
  std::string_view text_;
  std::size_t offset_ = 0;
  long line_ = 1;
};

void add(History& history, Row row, const LabelFilter& keep) {
  if (!keep.keeps(row.key.label)) return;  // read and checked, not held
  // A row of another shard count than the rows before it: the older runs' count is left out.
  if (row.key.shard && row.shard_count > 1 &&
      !history.set_shard_count(row.key.label, row.shard_count, row.sample.start_ms))
    return;
  history.samples[std::move(row.key)].push_back(row.sample);
}

// --- CSV -------------------------------------------------------------------------------------

/// RFC 4180 records: commas, "quoted ""fields""" that may hold commas and newlines. Read from a
/// stream as they come: a file of any size is never held whole.
class CsvRecords {
 public:
  explicit CsvRecords(std::streambuf& in) : in_(in) {}

  /// The next record and the line it starts on; false at the end. An unterminated quote
  /// leaves `problem` set.
  bool next(std::vector<std::string>& record, long& line, std::string& problem) {
    using traits = std::streambuf::traits_type;
    while (!traits::eq_int_type(in_.sgetc(), traits::eof())) {
      record.assign(1, std::string());
      line = line_;
      bool quoted = false;
      bool blank = true;
      for (auto got = in_.sbumpc(); !traits::eq_int_type(got, traits::eof()); got = in_.sbumpc()) {
        const char c = traits::to_char_type(got);
        if (quoted) {
          if (c == '"' && in_.sgetc() == '"') {
            record.back() += '"';
            in_.sbumpc();
          } else if (c == '"') {
            quoted = false;
          } else {
            if (c == '\n') ++line_;
            record.back() += c;
          }
          continue;
        }
        if (c == '\n') {
          ++line_;
          break;
        }
        if (c == '\r') continue;
        blank = false;
        if (c == '"')
          quoted = true;
        else if (c == ',')
          record.emplace_back();
        else
          record.back() += c;
      }
      if (quoted) {
        problem = "a quoted field is never closed";
        return true;
      }
      if (!blank) return true;
    }
    return false;
  }

 private:
  std::streambuf& in_;
  long line_ = 1;
};

/// The columns every results file of run-under and exec begins with, since the first.
constexpr std::string_view results_columns[] = {"label", "shard", "seconds",     "peak_vram_mib", "node",
                                                "gpus",  "start", "exit_status", "gpu_touched"};

/// A results file (its header begins with run-under's columns) with columns this gpuplan does not
/// know was written by a newer one, whose column may mark a run as partial (as `filtered` did):
/// read without it, such a run would set the test's duration. A warning naming them.
void newer_results_columns(const std::vector<std::string>& header, long line, history::BadRows& bad) {
  if (header.size() <= std::size(results_columns) ||
      !std::equal(std::begin(results_columns), std::end(results_columns), header.begin()))
    return;
  std::vector<std::string_view> unknown;
  for (const auto& name : header)
    if (!is_row_column(name)) unknown.push_back(name);
  if (unknown.empty()) return;
  bad.warn(line, fmt::format("a results file of a newer gpuplan: its header has {} {}, which this gpuplan "
                             "does not read; its runs are read without {}, so a run they mark as partial "
                             "would count as whole. Read it with that gpuplan (or a newer one)",
                             unknown.size() == 1 ? "the column" : "the columns",
                             util::excerpt(fmt::format("{}", fmt::join(unknown, ",")), 200),
                             unknown.size() == 1 ? "it" : "them"));
}

void read_csv(std::streambuf& text, History& history, history::BadRows& bad, const LabelFilter& keep) {
  CsvRecords records(text);
  std::vector<std::string> header;
  std::vector<std::string> record;
  long line = 0;
  std::string problem;
  if (!records.next(header, line, problem)) return;
  for (auto& name : header) name = std::string(trim(name));
  // SPEC section 3's `label[,shard],seconds[,peak_vram_mib]` may come without a header: a first
  // cell that is a label ("//…", "@repo//…") in a line with no "label" column starts the rows.
  // Before, that row was taken for a header without "label", and the whole file was one bad row.
  // (`@timestamp`, a log export's first column, is a header's.)
  const bool headerless = !header.empty() && header[0].find("//") != std::string::npos &&
                          (header[0].starts_with("//") || header[0].starts_with('@')) &&
                          std::find(header.begin(), header.end(), "label") == header.end();
  if (headerless) {
    if (header.size() != 2 && header.size() != 4) {
      bad.add(line, fmt::format("{} columns and no header: without one, a row is label,seconds or "
                                "label,shard,seconds,peak_vram_mib; name the columns in a first line",
                                header.size()));
      return;
    }
    record = std::move(header);
    header = record.size() == 2 ? std::vector<std::string>{"label", "seconds"}
                                : std::vector<std::string>{"label", "shard", "seconds", "peak_vram_mib"};
  } else {
    newer_results_columns(header, line, bad);
    for (std::string_view required : {"label", "seconds"}) {
      if (std::find(header.begin(), header.end(), required) == header.end()) {
        bad.add(line,
                fmt::format("the CSV header has no \"{}\" column (it needs label and seconds)", required));
        return;
      }
    }
  }
  auto take = [&] {
    if (record.size() != header.size()) {
      bad.add(line, fmt::format("{} columns where the {} has {}", record.size(),
                                headerless ? "first row" : "header", header.size()));
      return;
    }
    Fields fields;
    for (std::size_t i = 0; i < header.size(); ++i) fields.set(header[i], std::move(record[i]));
    if (auto row = to_row(fields))
      add(history, *std::move(row), keep);
    else
      bad.add(line, row.problem());
  };
  if (headerless) take();
  while (records.next(record, line, problem)) {
    if (!problem.empty()) {
      bad.add(line, problem);
      return;
    }
    take();
  }
}

// --- JSON ------------------------------------------------------------------------------------

namespace od = simdjson::ondemand;

/// A JSON value as the text a CSV cell would hold; false for arrays and objects.
bool as_text(od::value value, std::string& text) {
  od::json_type type;
  if (value.type().get(type)) return false;
  switch (type) {
    case od::json_type::null: text.clear(); return true;
    case od::json_type::number: text = std::string(trim(value.raw_json_token())); return true;
    case od::json_type::boolean: {
      bool flag = false;
      if (value.get_bool().get(flag)) return false;
      text = flag ? "true" : "false";
      return true;
    }
    case od::json_type::string: {
      std::string_view view;
      if (value.get_string().get(view)) return false;
      text = std::string(view);
      return true;
    }
    default: return false;
  }
}

/// One row object.
Result<Row> read_row_object(od::value value) {
  od::object object;
  if (value.get_object().get(object)) return Problem{"a row is not a JSON object"};
  Fields fields;
  for (auto member : object) {
    std::string_view key;
    od::value field_value;
    if (member.unescaped_key().get(key) || member.value().get(field_value)) return Problem{"not valid JSON"};
    std::string text;
    if (!as_text(field_value, text)) {
      if (is_row_column(key)) return Problem{fmt::format("\"{}\" is not a plain value", key)};
      continue;
    }
    fields.set(key, std::move(text));
  }
  return to_row(fields);
}

/// One unit of the summarize file: {"label","shard","shard_count","seconds":[…],
/// "peak_vram_mib":[…],"timed_out":[…],"failed":[…],"peak_up_front":[…],"gpu_touched":[…],
/// "given_no_gpu":[…],"gpus":[…],"gpus_asked":[…],"filtered":[…],"node":[…]},
/// its fields as read
/// (phase one); the columns have one entry per sample, "seconds" the sample itself.
struct SummaryUnit {
  SampleKey key;
  int shard_count = 0;
  std::vector<Sample> samples;
  std::vector<std::optional<std::int64_t>> vram;
  std::vector<bool> timed_out;
  std::vector<bool> failed;
  std::vector<bool> up_front;
  std::vector<std::optional<bool>> touched;
  std::vector<bool> no_gpu;
  std::vector<std::optional<int>> gpus;
  std::vector<std::optional<int>> gpus_asked;
  std::vector<bool> filtered;
  std::vector<Symbol> nodes;
  std::vector<std::optional<std::int64_t>> starts;
};

Result<std::string> read_label(od::value field) {
  std::string_view label;
  if (field.get_string().get(label) || label.empty()) return Problem{"\"label\" is not a label"};
  if (auto problem = utf8_problem(label); !problem.empty())
    return Problem{"\"label\" is not UTF-8 text: " + problem};
  return label_identity(label);
}

/// A shard index, or nullopt for null.
Result<std::optional<int>> read_shard(od::value field) {
  bool null = false;
  if (field.is_null().get(null)) return Problem{"not valid JSON"};
  if (null) return std::optional<int>();
  int64_t shard = 0;
  if (field.get_int64().get(shard) || shard < 0 || shard >= max_shard_count)
    return Problem{"\"shard\" is not a 0-based shard index"};
  return std::optional<int>(static_cast<int>(shard));
}

Result<int> read_shard_count(od::value field) {
  int64_t count = 0;
  if (field.get_int64().get(count) || count < 1 || count > max_shard_count)
    return Problem{"\"shard_count\" is not a shard count"};
  return static_cast<int>(count);
}

/// One column, an array read item by item by `read_item` (an od::value to a Result).
template <class ReadItem>
auto read_column(od::value field, std::string_view name, ReadItem read_item)
    -> Result<std::vector<typename decltype(read_item(std::declval<od::value>()))::value_type>> {
  std::vector<typename decltype(read_item(std::declval<od::value>()))::value_type> column;
  od::array array;
  if (field.get_array().get(array)) return Problem{fmt::format("\"{}\" is not an array", name)};
  for (auto element : array) {
    od::value item;
    if (element.get(item)) return Problem{"not valid JSON"};
    auto value = read_item(item);
    if (!value) return Problem{value.problem()};
    column.push_back(*std::move(value));
  }
  return column;
}

Result<Sample> read_seconds(od::value item) {
  double seconds = 0;
  if (item.get_double().get(seconds) || !std::isfinite(seconds))
    return Problem{"\"seconds\" holds something other than numbers"};
  if (seconds < 0) return Problem{fmt::format("\"seconds\" holds a negative time: {}", seconds)};
  if (seconds > max_duration_s)
    return Problem{fmt::format("\"seconds\" holds {}, longer than a year (gpuplan's limit)", seconds)};
  return Sample{seconds, false, std::nullopt, std::nullopt, std::nullopt, {}};
}

Result<std::optional<std::int64_t>> read_vram(od::value item) {
  int64_t mib = 0;
  bool null = false;
  if (item.is_null().get(null)) return Problem{"not valid JSON"};
  if (null) return std::optional<std::int64_t>();
  if (item.get_int64().get(mib) || mib < 0 || mib > max_peak_mib)
    return Problem{
        fmt::format("\"peak_vram_mib\" holds something other than MiB from 0 to {} or null", max_peak_mib)};
  return std::optional<std::int64_t>(mib);
}

/// A start time in ms since the epoch ("start_ms"), or null.
Result<std::optional<std::int64_t>> read_start(od::value item) {
  int64_t ms = 0;
  bool null = false;
  if (item.is_null().get(null)) return Problem{"not valid JSON"};
  if (null) return std::optional<std::int64_t>();
  if (item.get_int64().get(ms) || ms < 0 || ms > std::int64_t{253402300799999})  // 9999-12-31
    return Problem{"\"start_ms\" holds something other than ms since 1970 or null"};
  return std::optional<std::int64_t>(ms);
}

/// A column of true or false ("timed_out", "failed").
Result<bool> read_flag(od::value item, std::string_view name) {
  bool flag = false;
  if (item.get_bool().get(flag))
    return Problem{fmt::format("\"{}\" holds something other than true or false", name)};
  return flag;
}

Result<std::optional<bool>> read_touched(od::value item) {
  bool null = false;
  bool flag = false;
  if (item.is_null().get(null)) return Problem{"not valid JSON"};
  if (!null && item.get_bool().get(flag))
    return Problem{"\"gpu_touched\" holds something other than true, false or null"};
  return null ? std::nullopt : std::optional<bool>(flag);
}

/// A count of GPUs a run was given ("gpus") or asked for ("gpus_asked"), at most `most`, or null.
Result<std::optional<int>> read_gpu_count(od::value item, std::string_view name, int most) {
  int64_t count = 0;
  bool null = false;
  if (item.is_null().get(null)) return Problem{"not valid JSON"};
  if (null) return std::optional<int>();
  if (item.get_int64().get(count) || count < 0 || count > most)
    return Problem{fmt::format("\"{}\" holds something other than counts of GPUs or null", name)};
  return std::optional<int>(static_cast<int>(count));
}

Result<Symbol> read_node(od::value item) {
  bool null = false;
  std::string_view node;
  if (item.is_null().get(null)) return Problem{"not valid JSON"};
  if (!null && item.get_string().get(node))
    return Problem{"\"node\" holds something other than names or null"};
  if (auto problem = utf8_problem(node); !problem.empty())
    return Problem{"\"node\" is not UTF-8 text: " + problem};
  return Symbol(null ? std::string_view() : node);
}

/// Phase one: the unit's fields as they are written (a field given twice: its columns add up).
Result<SummaryUnit> read_unit_fields(od::value value) {
  od::object object;
  if (value.get_object().get(object)) return Problem{"a unit is not a JSON object"};
  SummaryUnit unit;
  std::optional<Problem> problem;
  auto append = [&problem](auto column, auto& to) {
    if (!column)
      problem = Problem{column.problem()};
    else if (to.empty())
      to = *std::move(column);
    else
      to.insert(to.end(), column->begin(), column->end());
  };
  for (auto member : object) {
    std::string_view name;
    od::value field;
    if (member.unescaped_key().get(name) || member.value().get(field)) return Problem{"not valid JSON"};
    if (name == "label") {
      auto label = read_label(field);
      if (!label) return Problem{label.problem()};
      unit.key.label = *std::move(label);
    } else if (name == "shard") {
      auto shard = read_shard(field);
      if (!shard) return Problem{shard.problem()};
      if (*shard) unit.key.shard = *shard;
    } else if (name == "shard_count") {
      auto count = read_shard_count(field);
      if (!count) return Problem{count.problem()};
      unit.shard_count = *count;
    } else if (name == "seconds") {
      append(read_column(field, name, read_seconds), unit.samples);
    } else if (name == "peak_vram_mib") {
      append(read_column(field, name, read_vram), unit.vram);
    } else if (name == "timed_out") {
      append(read_column(field, name, [](od::value item) { return read_flag(item, "timed_out"); }),
             unit.timed_out);
    } else if (name == "failed") {
      append(read_column(field, name, [](od::value item) { return read_flag(item, "failed"); }), unit.failed);
    } else if (name == "peak_up_front") {
      append(read_column(field, name, [](od::value item) { return read_flag(item, "peak_up_front"); }),
             unit.up_front);
    } else if (name == "gpu_touched") {
      append(read_column(field, name, read_touched), unit.touched);
    } else if (name == "given_no_gpu") {
      append(read_column(field, name, [](od::value item) { return read_flag(item, "given_no_gpu"); }),
             unit.no_gpu);
    } else if (name == "gpus") {
      append(read_column(field, name,
                         [](od::value item) { return read_gpu_count(item, "gpus", max_gpus_per_node); }),
             unit.gpus);
    } else if (name == "gpus_asked") {
      append(read_column(field, name,
                         [](od::value item) { return read_gpu_count(item, "gpus_asked", max_gpus_asked); }),
             unit.gpus_asked);
    } else if (name == "filtered") {
      append(read_column(field, name, [](od::value item) { return read_flag(item, "filtered"); }),
             unit.filtered);
    } else if (name == "node") {
      append(read_column(field, name, read_node), unit.nodes);
    } else if (name == "start_ms") {
      append(read_column(field, name, read_start), unit.starts);
    }
    if (problem) return *std::move(problem);
  }
  return unit;
}

/// Phase two: a unit with a label whose columns have one entry per sample, zipped into its samples.
Result<SummaryUnit> zip_columns(SummaryUnit unit) {
  if (unit.key.label.empty()) return Problem{"a unit without a \"label\""};
  auto n = unit.samples.size();
  if ((!unit.vram.empty() && unit.vram.size() != n) ||
      (!unit.timed_out.empty() && unit.timed_out.size() != n) ||
      (!unit.failed.empty() && unit.failed.size() != n) ||
      (!unit.up_front.empty() && unit.up_front.size() != n) ||
      (!unit.touched.empty() && unit.touched.size() != n) ||
      (!unit.no_gpu.empty() && unit.no_gpu.size() != n) || (!unit.gpus.empty() && unit.gpus.size() != n) ||
      (!unit.gpus_asked.empty() && unit.gpus_asked.size() != n) ||
      (!unit.filtered.empty() && unit.filtered.size() != n) ||
      (!unit.nodes.empty() && unit.nodes.size() != n) || (!unit.starts.empty() && unit.starts.size() != n))
    return Problem{
        "\"peak_vram_mib\", \"timed_out\", \"failed\", \"peak_up_front\", \"gpu_touched\", "
        "\"given_no_gpu\", \"gpus\", \"gpus_asked\", \"filtered\", \"node\" and \"start_ms\" must have "
        "one entry per \"seconds\""};
  for (std::size_t i = 0; i < n; ++i) {
    Sample& sample = unit.samples[i];
    if (!unit.vram.empty()) sample.peak_vram_mib = unit.vram[i];
    if (!unit.timed_out.empty()) sample.timed_out = unit.timed_out[i];
    if (!unit.failed.empty()) sample.failed = unit.failed[i];
    if (!unit.up_front.empty()) sample.peak_up_front = unit.up_front[i] && sample.peak_vram_mib;
    if (!unit.touched.empty() && (unit.touched[i] != false || sample.ran_through()))  // as in a CSV row
      sample.gpu_touched = unit.touched[i];
    if (!unit.no_gpu.empty()) sample.given_no_gpu = unit.no_gpu[i];
    if (!unit.gpus.empty()) sample.gpus_given = unit.gpus[i];
    if (!unit.gpus_asked.empty()) sample.gpus_asked = unit.gpus_asked[i];
    if (!unit.filtered.empty()) sample.filtered = unit.filtered[i];
    if (!unit.nodes.empty()) sample.node = unit.nodes[i];
    if (!unit.starts.empty()) sample.start_ms = unit.starts[i];
  }
  return unit;
}

/// One unit of the summarize file, read and checked.
Result<SummaryUnit> read_summary_unit(od::value value) {
  auto unit = read_unit_fields(value);
  if (!unit) return unit;
  return zip_columns(*std::move(unit));
}

/// Phase three: the unit's samples into the history (its shard count only for a shard of several).
void add(History& history, const SummaryUnit& unit, const LabelFilter& keep) {
  if (!keep.keeps(unit.key.label)) return;
  if (unit.key.shard && unit.shard_count > 1) history.set_shard_count(unit.key.label, unit.shard_count);
  auto& list = history.samples[unit.key];
  list.insert(list.end(), unit.samples.begin(), unit.samples.end());
}

/// A JSON array of rows, or a summarize file. A summarize file is read whole or not at all: the
/// rolling history of a CI (`history summarize history.json new.csv -o history.json`) cut short
/// by a full disk, or written by a newer gpuplan, was a bad row, and the next summary held only
/// the new runs.
void read_json_document(const simdjson::padded_string& json, const std::string& name, History& history,
                        history::BadRows& bad, const LabelFilter& keep) {
  LineCounter lines(std::string_view(json.data(), json.size()));
  od::parser parser;
  od::document document;
  auto where = [&](auto& at) {
    const char* location = nullptr;
    return at.current_location().get(location) ? 0L : lines.line_at(location);
  };
  auto fail = [&](auto& at, std::string_view what) { bad.add(where(at), what); };
  if (parser.iterate(json).get(document)) return bad.add(1, "not valid JSON");
  od::json_type type;
  if (document.type().get(type)) return bad.add(1, "not valid JSON");
  od::array rows;
  if (type == od::json_type::object) {
    auto refuse_at = [&](long line, std::string_view what) {
      throw InputError(
          Position{name, line},
          fmt::format("{}: a gpuplan history is read whole or not at all, so nothing was read or "
                      "written (restore it, or leave it out to start a new one)",
                      what));
    };
    auto refuse = [&](auto& at, std::string_view what) { refuse_at(where(at), what); };
    // Valid JSON first: a file cut short would otherwise give its first units and then stop.
    simdjson::dom::parser validator;
    simdjson::dom::element checked;
    if (auto error = validator.parse(json).get(checked))
      refuse_at(0, fmt::format("not valid JSON ({}), perhaps cut short", simdjson::error_message(error)));
    od::object object;
    int64_t version = 0;
    if (document.get_object().get(object) || object["gpuplan_history"].get_int64().get(version))
      refuse(document, "\"gpuplan_history\" is not a version number");
    if (version != 1 && version != 2)
      refuse(document, fmt::format("gpuplan_history {} is a version this gpuplan does not read (a newer one "
                                   "wrote it; this one reads 1 and 2)",
                                   version));
    if (object["units"].get_array().get(rows)) refuse(document, "\"units\" is not an array");
    for (auto element : rows) {
      od::value unit;
      if (element.get(unit)) refuse(document, "not valid JSON");
      long line = where(unit);
      if (auto read = read_summary_unit(unit))
        add(history, *read, keep);
      else
        bad.add(line, read.problem());
    }
    return;
  }
  if (document.get_array().get(rows)) return fail(document, "neither a JSON array of rows nor a JSON object");
  for (auto element : rows) {
    od::value row_value;
    if (element.get(row_value)) return fail(document, "not valid JSON");
    long line = where(row_value);
    if (auto row = read_row_object(row_value))
      add(history, *std::move(row), keep);
    else
      bad.add(line, row.problem());
  }
}

/// One row object a line (JSON lines, which a runner can append to), read a line at a time.
void read_json_lines(std::istream& text, History& history, history::BadRows& bad, const LabelFilter& keep) {
  simdjson::dom::parser validator;
  od::parser parser;
  long line = 0;
  std::string whole_line;
  while (std::getline(text, whole_line)) {
    ++line;
    std::string_view content = trim(whole_line);
    if (content.empty()) continue;
    simdjson::padded_string padded(content);
    simdjson::dom::element checked;  // on-demand parsing would not notice trailing junk
    od::document document;
    od::value value;
    if (auto error = validator.parse(padded).get(checked)) {
      bad.add(line, fmt::format("not valid JSON: {}", simdjson::error_message(error)));
      continue;
    }
    if (parser.iterate(padded).get(document) || document.get_value().get(value)) {
      bad.add(line, "not valid JSON");
      continue;
    }
    if (auto row = read_row_object(value))
      add(history, *std::move(row), keep);
    else
      bad.add(line, row.problem());
  }
}

enum class TableKind { csv, json_document, json_lines };

/// What a table is, from its first bytes (a byte order mark taken off): nullopt while they do not
/// tell yet (only space, or "{" and space). `whole`: they are all of it.
std::optional<TableKind> table_kind(std::string_view head, bool whole) {
  std::string_view view = trim(head);
  if (!whole) {
    // The first bytes tell what the whole text does where they hold its first character and,
    // after a "{", its first key: the longest that detect_history_format looks for is 19 bytes.
    auto first = head.find_first_not_of(" \t\n\v\f\r");
    if (first == std::string_view::npos) return std::nullopt;
    if (head[first] == '{') {
      auto key = head.find_first_not_of(" \t\n\v\f\r", first + 1);
      if (key == std::string_view::npos || head.size() - key < 32) return std::nullopt;
    }
  }
  if (detect_history_format(view) != HistoryFormat::json) return TableKind::csv;
  // An array or a summarize file (whose first key is "gpuplan_history") is one document;
  // other objects are rows, one a line (JSON lines, which a runner can append to).
  return view.starts_with('{') && !trim(view.substr(1)).starts_with("\"gpuplan_history\"")
             ? TableKind::json_lines
             : TableKind::json_document;
}

}  // namespace

HistoryRead read_table(std::istream& in, const std::string& name, bool strict, const LabelFilter& keep) {
  // Read as far as its kind shows: a CSV or JSON lines then goes on as a stream, its first bytes
  // put back in front (before, every table was read whole as text first: 13 MB of a monorepo's
  // CSV held beside its rows).
  std::string head;
  std::optional<TableKind> kind;
  bool whole = false;
  while (!kind) {
    constexpr std::size_t chunk = std::size_t{1} << 16;
    const std::size_t had = head.size();
    head.resize(had + chunk);
    const auto got = in.rdbuf()->sgetn(head.data() + had, static_cast<std::streamsize>(chunk));
    head.resize(had + static_cast<std::size_t>(std::max<std::streamsize>(got, 0)));
    whole = head.size() == had;
    if (had == 0 && head.starts_with("\xEF\xBB\xBF")) head.erase(0, 3);  // a byte order mark
    kind = table_kind(head, whole);
  }
  history::BadRows bad(name, strict);
  HistoryRead read;
  if (*kind == TableKind::json_document) {
    std::string text = std::move(head);
    text.append(std::istreambuf_iterator<char>(in), {});
    read_json_document(simdjson::padded_string(text), name, read.history, bad, keep);
  } else {
    util::HeadThenRest rest(std::move(head), *in.rdbuf());
    if (*kind == TableKind::json_lines) {
      std::istream lines(&rest);
      read_json_lines(lines, read.history, bad, keep);
    } else {
      read_csv(rest, read.history, bad, keep);
    }
  }
  read.diagnostics = bad.diagnostics();
  return read;
}

}  // namespace gpuplan
