#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <istream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <streambuf>
#include <string_view>
#include <tuple>
#include <vector>

#include "gpuplan/error.hpp"
#include "gpuplan/limits.hpp"
#include "gpuplan/plan.hpp"
#include "gpuplan/rules.hpp"
#include "gpuplan/units.hpp"
#include "plan/json_parts.hpp"
#include "plan/plan_index.hpp"
#include "util/fingerprint.hpp"
#include "util/json_locate.hpp"
#include "util/json_writer.hpp"
#include "util/rounding.hpp"
#include "util/text.hpp"

namespace gpuplan {

using nlohmann::json;
using nlohmann::ordered_json;

std::string_view to_string(Policy policy) {
  switch (policy) {
    case Policy::whole_node: return "whole-node";
    case Policy::exact: return "exact";
    case Policy::pack: return "pack";
  }
  return "exact";
}

std::optional<Policy> parse_policy(std::string_view name) {
  if (name == "whole-node") return Policy::whole_node;
  if (name == "exact") return Policy::exact;
  if (name == "pack") return Policy::pack;
  return std::nullopt;
}

namespace {

using util::JsonWriter;

/// Seconds rounded to milliseconds; whole numbers are written without a fraction.
void seconds(JsonWriter& out, double value) {
  double rounded = util::json_seconds(value);
  if (rounded == std::floor(rounded) && std::abs(rounded) < 9e15)
    out.value(static_cast<std::int64_t>(rounded));
  else
    out.value(rounded);
}

void ratio(JsonWriter& out, double value) { out.value(util::json_ratio(value)); }

void optional_int(JsonWriter& out, const std::optional<std::int64_t>& value) {
  if (value)
    out.value(*value);
  else
    out.null();
}

void unit_fields(JsonWriter& out, const Unit& unit) {
  out.key("unit").value(unit.id);
  out.key("label").value(unit.label);
  out.key("shard_index");
  if (unit.shard_index)
    out.value(*unit.shard_index);
  else
    out.null();
  out.key("shard_count").value(unit.shard_count);
}

void constraints(JsonWriter& out, const std::vector<Sourced<VersionConstraint>>& list) {
  if (list.empty()) return out.null();
  std::vector<VersionConstraint> plain;
  plain.reserve(list.size());
  for (const auto& c : list) plain.push_back(c.value);
  out.value(to_string(plain));
}

/// The text of each requirement the units share, as write_requirements writes it at a depth:
/// a million units share a few dozen, so each is written once and then copied.
class RequirementTexts {
 public:
  /// Its text as `in` would write it next.
  std::string_view of(const Requirement& r, const JsonWriter& in) {
    auto [it, added] = texts_.try_emplace({&r, in.depth(), in.indent()});
    if (added) {
      JsonWriter out([&text = it->second](std::string_view piece) { text += piece; }, in.indent(),
                     in.depth());
      write_requirements(out, r);
      out.flush();
    }
    return it->second;
  }
  /// A plan read from a file has a requirement per unit: past this many, write them as they come.
  bool full() const { return texts_.size() >= 4096; }

 private:
  std::map<std::tuple<const Requirement*, std::size_t, int>, std::string> texts_;
};

void unit_details(JsonWriter& out, const Unit& unit, RequirementTexts& texts) {
  out.key("duration_s");
  seconds(out, unit.duration_s);
  out.key("duration_source").value(unit.duration_source.str());
  out.key("vram_mib");
  optional_int(out, unit.vram_mib);
  out.key("size").value(unit.size.str());
  out.key("timeout");
  if (unit.timeout.empty())
    out.null();
  else
    out.value(unit.timeout.str());
  out.key("flaky").value(unit.flaky);
  out.key("requirements");
  if (texts.full())
    write_requirements(out, unit.requirement);
  else
    out.value_text(texts.of(unit.requirement, out));
}

/// Writes the records of one of the plan's four lists, each an object, noting where each one
/// lies when asked to (PlanRecords: the plan index's input).
class RecordWriter {
 public:
  RecordWriter(JsonWriter& out, PlanRecords* records) : out_(out), records_(records) {}
  void begin() {
    out_.begin_object();
    begun_ = out_.written() - 1;
  }
  void end(PlanSection section) {
    out_.end_object();
    if (records_)
      records_->of[static_cast<std::size_t>(section)].push_back(
          {begun_, static_cast<std::uint32_t>(out_.written() - begun_)});
  }

 private:
  JsonWriter& out_;
  PlanRecords* records_;
  std::uint64_t begun_ = 0;
};

void listed(JsonWriter& out, RecordWriter& record, const std::vector<ListedTest>& tests,
            PlanSection section) {
  out.begin_array();
  for (const auto& t : tests) {
    record.begin();
    out.key("label").value(t.label);
    out.key("reason").value(t.reason);
    record.end(section);
  }
  out.end_array();
}

/// How many assignments ahead of the one being written prefetch() asks for.
constexpr std::size_t prefetch_distance = 8;

/// Asks for the heap blocks an assignment's record reads (its strings, requirement and env)
/// before they are needed: they lie all over the heap, made in label order while the plan lists
/// units by node and start, and waiting for each one in turn was most of the writer's time.
void prefetch(const Assignment& a) {
  __builtin_prefetch(a.unit.id.data());
  __builtin_prefetch(a.unit.label.data());
  __builtin_prefetch(a.gpus.data());
  __builtin_prefetch(a.unit.requirement.operator->());  // shared by the units of the same needs
  if (a.env && !a.env->empty()) __builtin_prefetch(&*a.env->begin());
}

/// `written`: of what `out` has written, for the plan's last field.
void plan_document(JsonWriter& out, const Plan& plan, PlanRecords* records,
                   const util::Fingerprint& written) {
  RecordWriter record(out, records);
  if (records) {  // exactly the records to come: grown by doubling, they held up to twice that
    auto reserve = [&](PlanSection section, std::size_t count) {
      records->of[static_cast<std::size_t>(section)].reserve(count);
    };
    reserve(PlanSection::cpu_tests, plan.cpu_tests.size());
    reserve(PlanSection::skipped_tests, plan.skipped_tests.size());
    reserve(PlanSection::assignments, plan.assignments.size());
    reserve(PlanSection::unschedulable, plan.unschedulable.size());
  }
  RequirementTexts requirements;
  out.begin_object();
  out.key("schema_version").value(plan.schema_version);
  out.key("generator").begin_object();
  out.key("name").value("gpuplan");
  out.key("version").value(plan.generator_version);
  out.end_object();
  out.key("policy").value(to_string(plan.policy));
  out.key("fleet").value(plan.fleet);
  const auto& s = plan.summary;
  out.key("summary").begin_object();
  out.key("tests").value(static_cast<std::int64_t>(s.tests));
  out.key("cpu_tests").value(static_cast<std::int64_t>(s.cpu_tests));
  out.key("gpu_tests").value(static_cast<std::int64_t>(s.gpu_tests));
  out.key("skipped_tests").value(static_cast<std::int64_t>(s.skipped_tests));
  out.key("gpu_units").value(static_cast<std::int64_t>(s.gpu_units));
  out.key("scheduled_units").value(static_cast<std::int64_t>(s.scheduled_units));
  out.key("unschedulable_units").value(static_cast<std::int64_t>(s.unschedulable_units));
  out.key("makespan_s");
  seconds(out, s.makespan_s);
  out.key("lower_bound_s");
  seconds(out, s.lower_bound_s);
  out.key("gap");
  if (s.lower_bound_s > 0)
    ratio(out, s.makespan_s / s.lower_bound_s - 1);
  else
    out.value(0);
  out.key("gpu_utilization");
  ratio(out, s.gpu_utilization);
  out.key("pack_slowdown");
  ratio(out, s.pack_slowdown);
  if (s.vram_headroom) out.key("vram_headroom").value(*s.vram_headroom);  // as given: verify checks with it
  if (s.max_tests_per_gpu)
    out.key("max_tests_per_gpu").value(static_cast<std::int64_t>(*s.max_tests_per_gpu));
  out.end_object();
  out.key("cpu_tests");
  listed(out, record, plan.cpu_tests, PlanSection::cpu_tests);
  out.key("skipped_tests");
  listed(out, record, plan.skipped_tests, PlanSection::skipped_tests);
  out.key("assignments").begin_array();
  for (std::size_t i = 0; i < plan.assignments.size(); ++i) {
    if (i + prefetch_distance < plan.assignments.size()) prefetch(plan.assignments[i + prefetch_distance]);
    const auto& a = plan.assignments[i];
    record.begin();
    unit_fields(out, a.unit);
    out.key("node").value(a.node.str());
    out.key("gpus").begin_array();
    for (int gpu : a.gpus) out.value(gpu);
    out.end_array();
    out.key("start_s");
    seconds(out, a.start_s);
    out.key("end_s");
    seconds(out, a.end_s);
    unit_details(out, a.unit, requirements);
    out.key("env").begin_object();
    auto variable = [&](std::string_view name, std::string_view value) { out.key(name).value(value); };
    if (a.env)
      for (const auto& [name, value] : *a.env) variable(name, value);
    else
      for_each_planned_env(a, shares_gpu(a.unit, plan.policy), variable);
    out.end_object();
    record.end(PlanSection::assignments);
  }
  out.end_array();
  out.key("unschedulable").begin_array();
  for (const auto& u : plan.unschedulable) {
    record.begin();
    unit_fields(out, u.unit);
    out.key("reason").value(u.reason);
    unit_details(out, u.unit, requirements);
    record.end(PlanSection::unschedulable);
  }
  out.end_array();
  out.key("diagnostics");
  write_diagnostics(out, plan.diagnostics);
  out.flush();  // last, so that the file's last 4 KiB, which tell plans apart, hold it
  out.key("content_fingerprint").value(fmt::format("{:016x}", written.value()));
  out.end_object();
}

/// The most MiB a plan may reserve on one GPU (a petabyte).
constexpr long max_mib = 1L << 30;

/// The same JSON, types included: nlohmann's == takes 1 and 1.0 for equal, where the reader
/// accepts only the first as a GPU count.
bool identical(const json& a, const json& b) {
  if (a.type() != b.type() || a.size() != b.size()) return false;
  if (a.is_object())
    return std::equal(
        a.items().begin(), a.items().end(), b.items().begin(),
        [](const auto& x, const auto& y) { return x.key() == y.key() && identical(x.value(), y.value()); });
  if (a.is_array()) return std::equal(a.begin(), a.end(), b.begin(), identical);
  return a == b;
}

/// Whether `env` is exactly planned_env(a, false), as in every plan gpuplan writes for a unit
/// that does not share its GPU: the assignment then holds none (a map for each of a million
/// assignments was about 200 bytes a unit). The policy may come later in the file:
/// keep_sharing_env sees to the units that share.
bool is_planned_env(const json& env, const Assignment& a) {
  if (!env.is_object()) return false;
  auto it = env.begin();
  bool same = true;
  for_each_planned_env(a, false, [&](std::string_view name, std::string_view value) {
    same = same && it != env.end() && it.key() == name && it->is_string() &&
           it->get_ref<const std::string&>() == value;
    if (same) ++it;
  });
  return same && it == env.end();
}

/// A field of the plan that is wrong: the message names its JSON path, which parse_plan turns
/// into the line it is on once there is an error (nothing is kept of where fields lie while
/// the plan is read: that cost every valid plan).
class FieldError : public InputError {
 public:
  FieldError(Position position, std::string path, std::string what)
      : InputError(position, fmt::format("{}: {}", path, what)),
        path_(std::move(path)),
        what_(std::move(what)) {}
  const std::string& path() const { return path_; }
  /// The same error at a line and column of its file.
  FieldError at(long line, long column) const {
    return {Position{position().file, line, column}, path_, what_};
  }

 private:
  std::string path_, what_;
};

// Reading: every accessor names the JSON path of what it looks at.
struct Reader {
  const std::string& name;
  static constexpr std::size_t max_seen_requirements = 64;
  mutable std::vector<std::pair<json, SharedRequirement>> seen_requirements;  ///< the first 64 distinct

  [[noreturn]] void fail(const std::string& path, const std::string& what) const {
    throw FieldError(Position{name, 0, 0}, path, what);
  }
  const json& field(const json& object, const std::string& path, const char* key) const {
    if (!object.is_object()) fail(path, "expected an object");
    auto it = object.find(key);
    if (it == object.end()) fail(path, fmt::format("missing \"{}\"", key));
    return *it;
  }
  const json* optional_field(const json& object, const char* key) const {
    auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
  }
  std::string string(const json& object, const std::string& path, const char* key) const {
    const auto& v = field(object, path, key);
    if (!v.is_string()) fail(path + "." + key, "expected a string");
    return v.get<std::string>();
  }
  double number(const json& object, const std::string& path, const char* key, double low = 0,
                double high = max_plan_time_s) const {
    return in_range(field(object, path, key), path + "." + key, low, high);
  }
  /// A number from `low` to `high`: beyond them it would wrap or overflow where it is used.
  double in_range(const json& v, const std::string& path, double low, double high) const {
    if (!v.is_number()) fail(path, "expected a number");
    double value = v.get<double>();
    if (!(value >= low && value <= high))  // NaN fails too
      fail(path, fmt::format("{} is outside {} to {} (README \"Limits\")", v.dump(), low, high));
    return value;
  }
  long integer(const json& object, const std::string& path, const char* key, long low, long high) const {
    return integer_in(field(object, path, key), path + "." + key, low, high);
  }
  long integer_in(const json& v, const std::string& path, long low, long high) const {
    if (!v.is_number_integer()) fail(path, "expected an integer");
    if (v.is_number_unsigned() ? v.get<std::uint64_t>() > static_cast<std::uint64_t>(high)
                               : v.get<std::int64_t>() < low || v.get<std::int64_t>() > high)
      fail(path, fmt::format("{} is outside {} to {} (README \"Limits\")", v.dump(), low, high));
    return static_cast<long>(v.get<std::int64_t>());
  }
  const json& array(const json& object, const std::string& path, const char* key) const {
    const auto& v = field(object, path, key);
    if (!v.is_array()) fail(path + "." + key, "expected an array");
    return v;
  }

  Requirement requirement(const json& j, const std::string& path) const {
    Requirement r;
    const std::string source = "plan";
    r.gpus = {static_cast<int>(integer(j, path, "gpus", 0, max_gpus_per_test)), source};
    if (auto* v = optional_field(j, "gpu_mem_mib"))
      r.gpu_mem_mib = Sourced<std::int64_t>{integer_in(*v, path + ".gpu_mem_mib", 0, max_mib), source};
    for (const char* key : {"cuda", "compute_capability"}) {
      auto* v = optional_field(j, key);
      if (!v) continue;
      if (!v->is_string()) fail(path + "." + key, "expected a string such as \">=12.4\" or null");
      auto parsed = parse_constraints(v->get<std::string>());
      if (!parsed)
        fail(path + "." + key, fmt::format("\"{}\" is not a version constraint", v->get<std::string>()));
      auto& target = std::string_view(key) == "cuda" ? r.cuda : r.compute_capability;
      for (auto& c : *parsed) target.push_back({c, source});
    }
    if (auto* v = optional_field(j, "gpu_models")) {
      if (!v->is_array()) fail(path + ".gpu_models", "expected an array of strings or null");
      std::vector<std::string> models;
      for (const auto& m : *v) {
        if (!m.is_string()) fail(path + ".gpu_models", "expected an array of strings");
        models.push_back(m.get<std::string>());
      }
      r.gpu_models = Sourced<std::vector<std::string>>{models, source};
    }
    for (const char* key : {"nvlink", "exclusive", "every_node_gpu"}) {
      auto* v = optional_field(j, key);
      if (!v) continue;
      if (!v->is_boolean()) fail(path + "." + key, "expected true or false");
      auto& target = std::string_view(key) == "nvlink"      ? r.nvlink
                     : std::string_view(key) == "exclusive" ? r.exclusive
                                                            : r.every_node_gpu;
      target = Sourced<bool>{v->get<bool>(), source};
    }
    if (auto* v = optional_field(j, "vendor")) {
      if (!v->is_string() || (*v != "nvidia" && *v != "amd" && *v != "intel"))
        fail(path + ".vendor", "expected \"nvidia\", \"amd\", \"intel\" or null");
      r.vendor = Sourced<std::string>{v->get<std::string>(), source};
    }
    // A floor history set, not a gpu-mem tag (absent in plans before it was written: declared).
    if (auto* v = optional_field(j, "gpu_mem_measured")) {
      if (!v->is_boolean()) fail(path + ".gpu_mem_measured", "expected true or false");
      if (v->get<bool>() && !r.gpu_mem_mib) fail(path + ".gpu_mem_measured", "true without a gpu_mem_mib");
      if (v->get<bool>()) r.gpu_mem_mib->source = memory_floor_source;
    }
    return r;
  }

  Unit unit(const json& j, const std::string& path) const {
    Unit u;
    u.id = string(j, path, "unit");
    u.label = string(j, path, "label");
    u.shard_count = static_cast<int>(integer(j, path, "shard_count", 0, max_shard_count));
    if (auto* v = optional_field(j, "shard_index"))
      u.shard_index =
          static_cast<int>(integer_in(*v, path + ".shard_index", 0, std::max(0, u.shard_count - 1)));
    if (optional_field(j, "duration_s")) u.duration_s = number(j, path, "duration_s", 0, max_duration_s);
    if (optional_field(j, "duration_source")) u.duration_source = string(j, path, "duration_source");
    if (auto* v = optional_field(j, "vram_mib")) u.vram_mib = integer_in(*v, path + ".vram_mib", 0, max_mib);
    if (optional_field(j, "size")) u.size = string(j, path, "size");
    if (optional_field(j, "timeout")) u.timeout = string(j, path, "timeout");
    if (auto* v = optional_field(j, "flaky")) u.flaky = v->is_boolean() && v->get<bool>();
    if (auto* v = optional_field(j, "requirements"))
      u.requirement = shared_requirement(*v, path + ".requirements");
    return u;
  }

  /// requirement(), held once for the units whose "requirements" are the same JSON: a plan has a
  /// few dozen distinct ones, and a Requirement of its own for each of a million units took
  /// about 200 bytes a unit of a plan read back.
  SharedRequirement shared_requirement(const json& j, const std::string& path) const {
    for (const auto& [seen, shared] : seen_requirements)
      if (identical(seen, j)) return shared;
    SharedRequirement shared = requirement(j, path);
    if (seen_requirements.size() < max_seen_requirements) seen_requirements.emplace_back(j, shared);
    return shared;
  }

  Assignment assignment(const json& item, const std::string& path) const {
    Assignment a;
    a.unit = unit(item, path);
    a.node = string(item, path, "node");
    for (const auto& g : array(item, path, "gpus")) {
      if (!g.is_number_integer()) fail(path + ".gpus", "expected GPU indices (integers)");
      a.gpus.push_back(static_cast<int>(integer_in(g, path + ".gpus", 0, max_gpu_index)));
    }
    a.start_s = number(item, path, "start_s");
    a.end_s = number(item, path, "end_s");
    auto* env = optional_field(item, "env");
    if (env && is_planned_env(*env, a)) return a;  // as a plan made here: no map of its own
    a.env.emplace();  // a file's env as it is, even when absent: verify says what is missing
    if (env) {
      if (!env->is_object()) fail(path + ".env", "expected an object of strings");
      for (const auto& [k, v] : env->items()) {
        if (!v.is_string()) fail(fmt::format("{}.env.{}", path, k), "expected a string");
        (*a.env)[k] = v.get<std::string>();
      }
    }
    return a;
  }

  UnschedulableUnit unschedulable(const json& item, const std::string& path) const {
    return {unit(item, path), string(item, path, "reason")};
  }

  std::vector<ListedTest> listed(const json& j, const char* key) const {
    std::vector<ListedTest> tests;
    const auto* v = optional_field(j, key);
    if (!v) return tests;
    if (!v->is_array()) fail(key, "expected an array");
    for (size_t i = 0; i < v->size(); ++i) {
      auto path = fmt::format("{}[{}]", key, i);
      tests.push_back({string((*v)[i], path, "label"), string((*v)[i], path, "reason")});
    }
    return tests;
  }
};

}  // namespace

void write_diagnostics(util::JsonWriter& out, const Diagnostics& diagnostics) {
  out.begin_array();
  for (const auto& d : diagnostics) {
    out.begin_object();
    out.key("severity").value(to_string(d.severity));
    out.key("label").value(d.label);
    out.key("source").value(d.source);
    out.key("message").value(d.message);
    out.end_object();
  }
  out.end_array();
}

void write_requirements(util::JsonWriter& out, const Requirement& r) {
  out.begin_object();
  out.key("gpus").value(r.gpus.value);
  out.key("gpu_mem_mib");
  optional_int(out, r.gpu_mem_mib ? std::optional<std::int64_t>(r.gpu_mem_mib->value) : std::nullopt);
  out.key("cuda");
  constraints(out, r.cuda);
  out.key("gpu_models");
  if (r.gpu_models) {
    out.begin_array();
    for (const auto& model : r.gpu_models->value) out.value(model);
    out.end_array();
  } else {
    out.null();
  }
  out.key("compute_capability");
  constraints(out, r.compute_capability);
  out.key("nvlink").value(r.needs_nvlink());
  out.key("exclusive").value(r.is_exclusive());
  if (r.vendor) out.key("vendor").value(r.vendor->value);
  if (r.takes_every_node_gpu()) out.key("every_node_gpu").value(true);
  if (gpu_mem_measured(r)) out.key("gpu_mem_measured").value(true);
  out.end_object();
}

namespace {

void write_plan(const Plan& plan, const std::function<void(std::string_view)>& write, PlanRecords* records) {
  util::Fingerprint written;
  JsonWriter out([&](std::string_view piece) {
    written.add(piece);
    write(piece);
  });
  plan_document(out, plan, records, written);
  out.raw("\n");
  out.flush();
}

}  // namespace

void write_plan_json(const Plan& plan, const std::function<void(std::string_view)>& write) {
  write_plan(plan, write, nullptr);
}

PlanRecords write_plan_json_noting_records(const Plan& plan,
                                           const std::function<void(std::string_view)>& write) {
  PlanRecords records;
  write_plan(plan, write, &records);
  return records;
}

ordered_json to_json(const Plan& plan) {
  std::string text;
  write_plan_json(plan, [&](std::string_view piece) { text += piece; });
  return ordered_json::parse(text);
}

namespace {

/// Text already in memory, as a stream buffer.
class ViewBuffer : public std::streambuf {
 public:
  explicit ViewBuffer(std::string_view text) {
    char* begin = const_cast<char*>(text.data());  // a get area is read, never written
    setg(begin, begin, begin + text.size());
  }

 protected:
  /// To its start again: a field error's line is found by reading the text once more.
  pos_type seekpos(pos_type at, std::ios_base::openmode) override {
    if (at < 0 || at > egptr() - eback()) return pos_type(off_type(-1));
    setg(eback(), eback() + at, egptr());
    return at;
  }
};

/// The bytes of `from` as nlohmann reads them, a chunk at a time, counting the lines that go by
/// and keeping the last two chunks, where an error lies: its line and column without the whole
/// text in memory (a 1M-unit plan is 750 MB).
class LineCountingBuffer : public std::streambuf {
 public:
  explicit LineCountingBuffer(std::streambuf& from) : from_(from) {}

  /// The line and column (1-based) of the byte at `offset` from the start; {0, 0} when it lies
  /// before the two chunks kept.
  std::pair<long, long> position(std::uint64_t offset) const {
    offset = std::min(offset, current_start_ + current_size_);
    if (offset < previous_start_) return {0, 0};
    long lines = 1 + newlines_before_previous_;
    std::int64_t last = last_newline_before_previous_;  // -1: none yet
    // Counted, not walked byte by byte: the parser asks this of each top-level member it keeps.
    auto scan = [&](const char* chunk, std::uint64_t start, std::uint64_t size) {
      if (offset <= start) return;
      std::string_view before(chunk, static_cast<std::size_t>(std::min(size, offset - start)));
      lines += static_cast<long>(std::count(before.begin(), before.end(), '\n'));
      if (auto newline = before.rfind('\n'); newline != std::string_view::npos)
        last = static_cast<std::int64_t>(start + newline);
    };
    scan(previous_.get(), previous_start_, previous_size_);
    scan(current_.get(), current_start_, current_size_);
    return {lines, static_cast<long>(static_cast<std::int64_t>(offset) - last)};
  }
  /// How many bytes have been read.
  std::uint64_t offset() const { return current_start_ + static_cast<std::uint64_t>(gptr() - eback()); }
  /// The bytes read from `from` on, when the two chunks kept still hold them.
  std::optional<std::string> kept_since(std::uint64_t from) const {
    if (from < previous_start_ || from > offset()) return std::nullopt;
    std::string text;
    if (from < current_start_) text.append(previous_.get() + (from - previous_start_), current_start_ - from);
    auto in_current = std::max(from, current_start_) - current_start_;
    text.append(current_.get() + in_current, offset() - current_start_ - in_current);
    return text;
  }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    if (ended_) return traits_type::eof();  // asked again: keep the last chunk where it is
    std::string_view previous(previous_.get(), previous_size_);
    if (auto newline = previous.rfind('\n'); newline != std::string_view::npos)
      last_newline_before_previous_ = static_cast<std::int64_t>(previous_start_ + newline);
    newlines_before_previous_ += std::count(previous.begin(), previous.end(), '\n');
    previous_.swap(current_);
    previous_start_ = current_start_;
    previous_size_ = current_size_;
    current_start_ += current_size_;
    // Left uninitialised: zeroing 1 MiB cost a short read (a run-under launch's few records)
    // 256 page faults it never used.
    if (!current_) current_ = std::make_unique_for_overwrite<char[]>(chunk);
    current_size_ =
        static_cast<std::uint64_t>(std::max<std::streamsize>(0, from_.sgetn(current_.get(), chunk)));
    setg(current_.get(), current_.get(), current_.get() + current_size_);
    ended_ = current_size_ == 0;
    return ended_ ? traits_type::eof() : traits_type::to_int_type(*gptr());
  }

 private:
  static constexpr std::streamsize chunk = std::streamsize{1} << 20;
  std::streambuf& from_;
  std::unique_ptr<char[]> previous_, current_;
  std::uint64_t previous_start_ = 0, previous_size_ = 0, current_start_ = 0, current_size_ = 0;
  long newlines_before_previous_ = 0;
  std::int64_t last_newline_before_previous_ = -1;
  bool ended_ = false;
};

/// The elements of one of the plan's two large arrays, converted as parse_plan reads them.
template <typename T>
struct Streamed {
  std::vector<T> items;
  std::optional<FieldError> error;  ///< the first bad element's, thrown where plan_from_json would
};

struct StreamedUnits {
  Streamed<Assignment> assignments;
  Streamed<UnschedulableUnit> unschedulable;
};

/// The plan's top-level members other than the two large arrays (policy, summary, cpu_tests,
/// ...), each kept as its text with where it begins, while the two chunks read last still hold
/// it: a wrong field in one gets its line from a pipe too, which cannot be read again for it.
/// A few KiB for a plan gpuplan wrote, its test lists aside (about 50 bytes a CPU test).
class KeptMembers {
 public:
  /// The line and column (1-based) where the value at `path` begins ("summary.makespan_s",
  /// "$.policy", "$": the plan's object); none when it lies outside what was kept.
  std::optional<std::pair<long, long>> find(std::string_view path) const {
    if (path.starts_with('$')) path.remove_prefix(path.starts_with("$.") ? 2 : 1);
    if (path.empty()) return top_;
    auto end = path.find_first_of(".[");
    auto member = members_.find(std::string(path.substr(0, end)));
    if (member == members_.end()) return std::nullopt;
    auto rest = end == std::string_view::npos ? std::string_view() : path.substr(end);
    if (rest.starts_with('.')) rest.remove_prefix(1);
    ViewBuffer text(member->second.text);
    auto spot = util::locate_json_path(text, rest);
    if (!spot) return std::nullopt;
    const Member& m = member->second;
    return std::pair{m.line + spot->line - 1, spot->line == 1 ? m.column + spot->column - 1 : spot->column};
  }
  void keep_top(long line, long column) { top_ = std::pair{line, column}; }
  /// A key given twice: the last one, as the document takes it.
  void keep(const std::string& key, std::string text, long line, long column) {
    members_[key] = Member{std::move(text), line, column};
  }
  /// Whether members are still kept. Finding a member's line scans the chunks kept, so a plan of
  /// 100,000 top-level members took minutes; past 64 (a plan gpuplan writes has about 10) none is
  /// kept, and a wrong field outside the units gets its path only, as before, from a pipe.
  bool keeping() {
    if (giving_up_) return false;
    if (++seen_ <= 64) return true;
    members_.clear();
    giving_up_ = true;
    return false;
  }

 private:
  struct Member {
    std::string text;  ///< from the value's first byte on
    long line, column;
  };
  std::optional<std::pair<long, long>> top_;
  std::map<std::string, Member, std::less<>> members_;
  long seen_ = 0;
  bool giving_up_ = false;
};

/// nlohmann's SAX events built into documents: the plan's top level, in which the top-level
/// arrays "assignments" and "unschedulable" stay empty, and each element of those on its own,
/// converted into `streamed` as soon as it ends. So a plan of a million units is never one
/// document: as one it took 4.7 GB for a 750 MB plan. The documents are made by nlohmann's own
/// SAX-to-DOM builder, as json::parse makes them.
class PlanSax {
 public:
  using Builder = nlohmann::detail::json_sax_dom_parser<json>;
  PlanSax(json& top, const Reader& reader, StreamedUnits& streamed, KeptMembers& kept,
          const LineCountingBuffer& text)
      : top_(top), reader_(reader), streamed_(streamed), kept_(kept), text_(text) {}

  bool null() {
    return value([](Builder& b) { return b.null(); });
  }
  bool boolean(bool v) {
    return value([&](Builder& b) { return b.boolean(v); });
  }
  bool number_integer(json::number_integer_t v) {
    return value([&](Builder& b) { return b.number_integer(v); });
  }
  bool number_unsigned(json::number_unsigned_t v) {
    return value([&](Builder& b) { return b.number_unsigned(v); });
  }
  bool number_float(json::number_float_t v, const json::string_t& text) {
    return value([&](Builder& b) { return b.number_float(v, text); });
  }
  bool string(json::string_t& v) {
    return value([&](Builder& b) { return b.string(v); });
  }
  bool binary(json::binary_t& v) {
    return value([&](Builder& b) { return b.binary(v); });
  }
  bool key(json::string_t& k) {
    if (depth_ == 1) {
      key_ = k;
      member_start_ = text_.offset();  // just past the key: its value follows ':'
      member_streamed_ = false;
    }
    return builder().key(k);
  }
  bool start_object(std::size_t n) {
    if (depth_ == 0) {
      top_is_object_ = true;
      auto [line, column] = text_.position(text_.offset() - std::min<std::uint64_t>(1, text_.offset()));
      if (line > 0) kept_.keep_top(line, column);
    }
    return open([&](Builder& b) { return b.start_object(n); });
  }
  bool end_object() {
    return close([](Builder& b) { return b.end_object(); });
  }
  bool start_array(std::size_t n) {
    if (depth_ == 1 && top_is_object_ && (key_ == "assignments" || key_ == "unschedulable")) {
      streaming_ = key_;
      index_ = 0;
      if (streaming_ == "assignments")  // a key given twice: the last one counts, as in a document
        streamed_.assignments = {};
      else
        streamed_.unschedulable = {};
      member_streamed_ = true;
    }
    return open([&](Builder& b) { return b.start_array(n); });
  }
  bool end_array() {
    if (depth_ == 2 && !streaming_.empty()) streaming_.clear();
    return close([](Builder& b) { return b.end_array(); });
  }
  template <class Exception>
  bool parse_error(std::size_t position, const std::string& token, const Exception& error) {
    error_start_ = position - std::min(position, token.size());
    throw error;  // parse_plan turns it into a message with the line and column
  }
  /// Where the token that failed began: for a number beyond a double, where the number does.
  std::size_t error_start() const { return error_start_; }

 private:
  Builder& builder() { return element_builder_ ? *element_builder_ : top_builder_; }
  /// An element of a streamed array begins with this event.
  bool starts_element() const { return depth_ == 2 && !streaming_.empty() && !element_builder_; }
  void begin_element() {
    element_start_ =
        text_.offset() - std::min<std::uint64_t>(1, text_.offset());  // its '{', '[' or last byte
    element_json_ = json();
    element_builder_.emplace(element_json_);
  }
  void end_element() {
    element_builder_.reset();
    auto path = fmt::format("{}[{}]", streaming_, index_++);
    if (streaming_ == "assignments")
      take(streamed_.assignments, path, [&] { return reader_.assignment(element_json_, path); });
    else
      take(streamed_.unschedulable, path, [&] { return reader_.unschedulable(element_json_, path); });
  }
  /// The converted element, or its error if it is the array's first: at its line, found in the
  /// text still kept, which holds the element just read unless it is longer than a chunk.
  template <typename T, typename Convert>
  void take(Streamed<T>& into, const std::string& element_path, Convert convert) {
    if (into.error) return;
    try {
      into.items.push_back(convert());
    } catch (const FieldError& error) {
      into.error = error;
      std::string_view inside = error.path();
      if (!inside.starts_with(element_path)) return;
      inside.remove_prefix(element_path.size());
      if (inside.starts_with('.')) inside.remove_prefix(1);
      auto kept = text_.kept_since(element_start_);
      if (!kept) return;
      ViewBuffer element(*kept);
      if (auto spot = util::locate_json_path(element, inside)) {
        auto [line, column] = text_.position(element_start_ + spot->offset);
        if (line > 0) into.error = error.at(line, column);
      }
    }
  }
  /// A top-level member just read (not one of the streamed arrays): its text, for its line.
  void end_member() {
    if (!top_is_object_ || member_streamed_ || !kept_.keeping()) return;
    auto kept = text_.kept_since(member_start_);
    if (!kept) return;  // longer than the chunks kept
    auto first = kept->find_first_not_of(" \t\r\n:");
    if (first == std::string::npos) return;
    auto [line, column] = text_.position(member_start_ + first);
    if (line == 0) return;
    kept->erase(0, first);
    kept_.keep(key_, std::move(*kept), line, column);
  }
  template <typename Event>
  bool value(Event event) {
    bool whole = starts_element();
    if (whole) begin_element();
    bool ok = event(builder());
    if (whole) end_element();
    if (depth_ == 1) end_member();
    return ok;
  }
  template <typename Event>
  bool open(Event event) {
    if (starts_element()) begin_element();
    ++depth_;
    return event(builder());
  }
  template <typename Event>
  bool close(Event event) {
    --depth_;
    bool ok = event(builder());
    if (depth_ == 2 && element_builder_) end_element();
    if (depth_ == 1) end_member();
    return ok;
  }

  json& top_;
  Builder top_builder_{top_};
  const Reader& reader_;
  StreamedUnits& streamed_;
  KeptMembers& kept_;
  const LineCountingBuffer& text_;
  std::uint64_t element_start_ = 0;  ///< the offset of the element being read
  std::uint64_t member_start_ = 0;   ///< the offset just past the key of the top-level member read
  bool member_streamed_ = false;     ///< that member is one of the two streamed arrays
  int depth_ = 0;                    ///< containers open
  bool top_is_object_ = false;
  std::string key_;        ///< the last key of the top-level object
  std::string streaming_;  ///< "assignments" or "unschedulable" while in that array
  std::size_t index_ = 0;
  json element_json_;
  std::optional<Builder> element_builder_;
  std::size_t error_start_ = 0;
};

/// Once the policy is known: a unit that shares its GPU holds the file's env unless it is
/// the planned one, sharing's variables included (is_planned_env left out those).
void keep_sharing_env(Plan& plan) {
  if (plan.policy != Policy::pack) return;
  for (auto& a : plan.assignments) {
    if (!shares_gpu(a.unit, plan.policy)) continue;
    if (!a.env)
      a.env = planned_env(a, false);
    else if (*a.env == planned_env(a, true))
      a.env = {};
  }
}

/// plan_from_json; with `streamed`, the two large arrays' elements come from there.
Plan plan_from_document(const json& j, const std::string& name, StreamedUnits* streamed) {
  Reader r{name, {}};
  Plan plan;
  if (!j.is_object()) r.fail("$", "a plan is a JSON object");
  plan.schema_version = static_cast<int>(r.integer(j, "$", "schema_version", 0, 1000000));
  if (plan.schema_version != 1)
    r.fail("schema_version",
           fmt::format("version {} is not supported (this gpuplan reads 1)", plan.schema_version));
  if (auto* g = r.optional_field(j, "generator");
      g && g->is_object() && g->contains("version") && (*g)["version"].is_string())
    plan.generator_version = (*g)["version"].get<std::string>();
  auto policy = parse_policy(r.string(j, "$", "policy"));
  if (!policy) r.fail("policy", "expected \"whole-node\", \"exact\" or \"pack\"");
  plan.policy = *policy;
  if (r.optional_field(j, "fleet")) plan.fleet = r.string(j, "$", "fleet");
  if (auto* s = r.optional_field(j, "summary")) {
    auto get = [&](const char* key, double high = static_cast<double>(max_plan_count)) -> double {
      auto* v = r.optional_field(*s, key);
      if (!v) return 0;
      return r.in_range(*v, std::string("summary.") + key, 0, high);
    };
    auto& sum = plan.summary;
    sum.tests = static_cast<long>(get("tests"));
    sum.cpu_tests = static_cast<long>(get("cpu_tests"));
    sum.gpu_tests = static_cast<long>(get("gpu_tests"));
    sum.skipped_tests = static_cast<long>(get("skipped_tests"));
    sum.gpu_units = static_cast<long>(get("gpu_units"));
    sum.scheduled_units = static_cast<long>(get("scheduled_units"));
    sum.unschedulable_units = static_cast<long>(get("unschedulable_units"));
    sum.makespan_s = get("makespan_s", max_plan_time_s);
    sum.lower_bound_s = get("lower_bound_s", max_plan_time_s);
    sum.gpu_utilization = get("gpu_utilization", 1000);
    if (r.optional_field(*s, "pack_slowdown")) sum.pack_slowdown = get("pack_slowdown", 1000);
    if (r.optional_field(*s, "vram_headroom")) sum.vram_headroom = get("vram_headroom", 1);
    if (r.optional_field(*s, "max_tests_per_gpu"))
      sum.max_tests_per_gpu = static_cast<int>(r.integer(*s, "summary", "max_tests_per_gpu", 1, 1000));
  }
  plan.cpu_tests = r.listed(j, "cpu_tests");
  plan.skipped_tests = r.listed(j, "skipped_tests");
  const auto& assignments = r.array(j, "$", "assignments");
  if (streamed) {
    if (streamed->assignments.error) throw *streamed->assignments.error;
    plan.assignments = std::move(streamed->assignments.items);
  }
  for (size_t i = 0; i < assignments.size(); ++i)
    plan.assignments.push_back(r.assignment(assignments[i], fmt::format("assignments[{}]", i)));
  keep_sharing_env(plan);
  if (auto* unschedulable = r.optional_field(j, "unschedulable")) {
    if (!unschedulable->is_array()) r.fail("unschedulable", "expected an array");
    if (streamed) {
      if (streamed->unschedulable.error) throw *streamed->unschedulable.error;
      plan.unschedulable = std::move(streamed->unschedulable.items);
    }
    for (size_t i = 0; i < unschedulable->size(); ++i)
      plan.unschedulable.push_back(r.unschedulable((*unschedulable)[i], fmt::format("unschedulable[{}]", i)));
  }
  if (auto* diagnostics = r.optional_field(j, "diagnostics")) {
    if (!diagnostics->is_array()) r.fail("diagnostics", "expected an array");
    for (size_t i = 0; i < diagnostics->size(); ++i) {
      auto path = fmt::format("diagnostics[{}]", i);
      const auto& d = (*diagnostics)[i];
      auto severity = r.string(d, path, "severity");
      Diagnostic diag;
      diag.severity = severity == "error"  ? Severity::error
                      : severity == "note" ? Severity::note
                                           : Severity::warning;
      diag.label = r.string(d, path, "label");
      diag.source = r.string(d, path, "source");
      diag.message = r.string(d, path, "message");
      plan.diagnostics.push_back(std::move(diag));
    }
  }
  return plan;
}

}  // namespace

Plan plan_from_json(const json& j, const std::string& name) { return plan_from_document(j, name, nullptr); }

namespace {

Plan parse_plan_from(std::streambuf& from, const std::string& name) {
  LineCountingBuffer counted(from);
  std::istream in(&counted);
  json parsed;
  StreamedUnits streamed;
  KeptMembers kept;
  Reader r{name, {}};
  PlanSax sax(parsed, r, streamed, kept, counted);
  auto fail_at = [&](std::uint64_t offset, const std::string& what) {
    auto [line, column] = counted.position(offset);
    throw InputError(Position{name, line, column}, what);
  };
  try {
    json::sax_parse(in, &sax);
  } catch (const json::out_of_range&) {  // a number beyond a double: 1e400
    fail_at(sax.error_start(), "a number beyond the range of a double (README \"Limits\")");
  } catch (const json::parse_error& e) {
    // What the parser found ("unexpected end of input; expected string literal"), which tells a
    // plan cut short from a compressed or binary file.
    std::string_view found = e.what();
    auto dash = found.find(" - ");
    found = dash == std::string_view::npos ? std::string_view() : found.substr(dash + 3);
    // nlohmann says "missing closing quote" only of a string the input ends in.
    const bool cut_short = found.find("end of input") != std::string_view::npos ||
                           found.find("missing closing quote") != std::string_view::npos;
    if (e.byte <= 1 && cut_short)
      fail_at(0, "the file is empty; a plan is the JSON object `gpuplan plan` writes");
    if (e.byte <= 1 && found.find("'<U+001F>'") != std::string_view::npos)  // gzip's first byte
      fail_at(0, "gzip-compressed data: decompress it first (in bash: <(zcat FILE))");
    fail_at(e.byte > 0 ? e.byte - 1 : 0,
            fmt::format("not valid JSON{}{}{}; a plan is the JSON object `gpuplan plan` writes",
                        found.empty() ? "" : ": ", util::excerpt(found, 120),
                        cut_short ? " (the file ends too soon: cut short?)" : ""));
  }
  try {
    return plan_from_document(parsed, name, &streamed);
  } catch (const FieldError& e) {
    if (e.position().line > 0) throw;
    // Outside the units: from the members kept as they were read, a pipe's too.
    if (auto spot = kept.find(e.path())) throw e.at(spot->first, spot->second);
    // Else its line from the text read again where it can be (a file, text in memory; not a
    // pipe): only now, so that reading a valid plan costs nothing for it.
    if (from.pubseekpos(0, std::ios::in) != std::streampos(0)) throw;
    auto spot = util::locate_json_path(from, e.path());
    if (!spot) throw;
    throw e.at(spot->line, spot->column);
  }
}

}  // namespace

Plan parse_plan(std::string_view json_text, const std::string& name) {
  ViewBuffer text(json_text);
  return parse_plan_from(text, name);
}

Plan parse_plan(std::istream& in, const std::string& name) { return parse_plan_from(*in.rdbuf(), name); }

}  // namespace gpuplan
