#pragma once
// The plan's lookup index (PLAN.index, next to the plan file): where each record of the plan
// file lies, found by the hash of its label, so that `run-under`, launched once per test, reads a
// few hundred bytes of a plan of a million units instead of parsing the whole file.
//
// An index belongs to one version of one plan file: it names the file's size, modification time
// and a fingerprint of its first and last 4 KiB, and every record it points to must name the
// label (or node) it was looked up by. Anything else (a plan replaced or edited since, a damaged
// or foreign index) is a miss, and the caller reads the whole plan as before.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/plan.hpp"

namespace gpuplan {

/// The four lists of a plan file whose records the index points into.
enum class PlanSection : std::uint32_t { cpu_tests, skipped_tests, assignments, unschedulable };

/// Where one record (a JSON object) of a plan list lies in the file.
struct RecordExtent {
  std::uint64_t offset = 0;
  std::uint32_t length = 0;
};

/// Where the records of a plan file's four lists lie, list by list, in file order.
struct PlanRecords {
  std::vector<RecordExtent> of[4];
  const std::vector<RecordExtent>& extents(PlanSection section) const {
    return of[static_cast<std::size_t>(section)];
  }
};

/// write_plan_json, noting where it writes each record of the four lists: what the index of
/// a plan file that `plan` writes needs, with no second look at its text.
PlanRecords write_plan_json_noting_records(const Plan& plan,
                                           const std::function<void(std::string_view)>& write);

/// Finds the byte extents of the records of a plan file's four lists while its text goes by,
/// piece by piece, as it is read back. Keeps only the extents.
class PlanRecordScanner {
 public:
  void feed(std::string_view text);
  const PlanRecords& records() const { return records_; }

 private:
  PlanRecords records_;
  std::uint64_t offset_ = 0;
  std::uint64_t record_begin_ = 0;
  int depth_ = 0;
  int section_ = -1;  ///< the list being read at depth 2, -1 for none of the four
  bool in_string_ = false;
  bool escaped_ = false;
  std::string key_;  ///< the last string read at depth 1: a key of the plan object
};

/// One version of a plan file: an index is only used for the very file it was made from.
struct PlanFileIdentity {
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::uint64_t fingerprint = 0;  ///< plan_fingerprint of its first and last fingerprint_span bytes
  bool operator==(const PlanFileIdentity&) const = default;
};

/// How many bytes at each end of the plan file its fingerprint covers.
constexpr std::size_t fingerprint_span = 4096;

/// FNV-1a of the first and the last fingerprint_span bytes of a file (the whole file when shorter).
std::uint64_t plan_fingerprint(std::string_view head, std::string_view tail);

/// The index file's bytes for `plan`, whose file's records lie where `records` says. Throws
/// std::logic_error when `records` has another number of records than the plan has.
std::string make_plan_index(const Plan& plan, const PlanRecords& records, const PlanFileIdentity& identity);

/// Reads `length` bytes at `offset` of a file; fewer at its end.
using ReadAt = std::function<std::string(std::uint64_t offset, std::size_t length)>;

/// Whether the index `index` reads was made from the plan file `identity` describes.
bool index_describes(const ReadAt& index, const PlanFileIdentity& identity);

/// The records of the plan a launch of `label` (any shard) on `node` looks at, as a plan that
/// place_test, planned_gpu_count and holds_whole_node answer exactly as for the whole plan: the
/// plan's policy; every cpu, skipped, assigned and unschedulable record of the label, in plan
/// order; the assignment of `node` on its highest GPU (all nodes' when `node` has none, for the
/// message that lists them). nullopt when the index is not of the file `identity` describes, is
/// damaged, or points at a record that does not name what it was found by. `name` names the plan.
std::optional<Plan> plan_slice(const ReadAt& index, const ReadAt& plan, const PlanFileIdentity& identity,
                               std::string_view node, std::string_view label, const std::string& name);

}  // namespace gpuplan
