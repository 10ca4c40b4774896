#pragma once
// Reading a plan file for the commands that take one (show, render, verify), its lookup
// index (PLAN.index) for `run-under`, which runs once per test launch, and the launchers' node
// from --fleet.
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/fleet.hpp"
#include "gpuplan/plan.hpp"
#include "gpuplan/rules.hpp"
#include "plan/plan_index.hpp"
#include "run/claims.hpp"
#include "util/json_locate.hpp"

namespace gpuplan::cli {

/// Reads and checks the plan at `path` ("-" or "": standard input). Throws InputError
/// with the line and column of bad JSON, or the JSON path of a bad field.
Plan read_plan(const std::string& path);

/// Puts the units of each node in the order gpuplan writes them and exec runs them (by start,
/// first GPU, unit id), the nodes in the fleet's order when there is one, else in the order the
/// plan first names them, so that `show` and `render` draw a plan whose units another tool
/// listed in another order as they draw ours. After every check that names a unit by its place
/// in the file.
void order_as_written(Plan& plan, const Fleet* fleet);

/// Where the index of the plan file at `path` lives: next to it, "PATH.index".
std::string plan_index_path(const std::string& path);

/// Writes PATH.index for the plan file just written at `path`, whose text `records` scanned.
/// A failure is one warning line on stderr: run-under then reads the whole plan, as it may.
void write_plan_index(const std::string& path, const Plan& plan, const PlanRecords& records);

/// The text of that index, for a plan file staged in a FolderOutput (a file renamed keeps what
/// the index knows it by); nullopt after the warning when the file cannot be read back.
std::optional<std::string> plan_index_text(const std::string& path, const Plan& plan,
                                           const PlanRecords& records);

/// Where a launch keeps the index of the plan file at `path` when the plan's folder takes none (a
/// plan on a read-only share): in `dir`, a launch's lock directory, named by the plan's path.
std::string spare_index_path(const std::string& path, const std::string& dir);

/// The plan file at `path` read whole and checked, as read_plan does, with an index of this very
/// file written for the launches to come unless one is there already: PATH.index, or where its
/// folder takes none, spare_index_path(path, spare_dir) (none when `spare_dir` is empty).
Plan read_plan_indexed(const std::string& path, const std::string& spare_dir);

/// What `run-under` needs of the plan at `path` to launch `label` on `node` (plan_slice): read
/// through PATH.index, or the spare index in `spare_dir`, when the index was made from this very
/// file, in a few small reads. Else (no index, a plan replaced, edited or copied since, standard
/// input) read_plan_indexed.
Plan read_plan_for_launch(const std::string& path, std::string_view node, std::string_view label,
                          const std::string& spare_dir);

/// Makes `claims` those of the plan at `path`, told from others as its index does, by its size
/// and a fingerprint of its first and last 4 KiB (nothing for standard input): throws
/// InputError when its directory holds another plan's, and warns, naming `command`, when this
/// node's --lease is not the directory's, which it then uses.
void belong_to_plan(os::Claims& claims, const std::string& path, double lease_s, std::string_view command);

/// `rules` with the pack knobs `plan` was made with, where it says (vram_headroom,
/// max_tests_per_gpu): what verify and simulate check a plan against when given no rules file.
/// Without them a pack plan made with vram_headroom: 0.05 was invalid (exit 4).
void take_pack_knobs(const Plan& plan, Rules& rules);

/// For the exports: what every job's `exec` would refuse at run time, refused now (exit 2, nothing
/// written): a unit planned twice, on no GPU, on one GPU twice, on fewer than it needs, no label.
void check_exportable(const Plan& plan, const std::string& path);

/// For the exports given --fleet: a node of the plan whose units use a GPU the fleet's node lacks
/// (a plan made for another fleet), which every job's `exec --fleet` would refuse at run time,
/// refused now naming plan, node, GPU and fleet. Nodes the fleet lacks are left to export_nodes.
void check_fits_fleet(const Plan& plan, const Fleet& fleet, const std::string& plan_path,
                      const std::string& fleet_path);

/// For show and render given --fleet: a unit on a node the fleet lacks, or on a GPU its node
/// lacks (a plan made for another fleet), refused as `simulate` refuses it (InputError at the
/// unit's line in `plan_path`, naming the unit, the node and the fleet; exit 2). Before, the chart
/// mixed both fleets' nodes silently.
void check_plan_on_fleet(const Plan& plan, const std::string& plan_path, const Fleet& fleet);

/// `check()`, whose JsonValueError about a plan file read whole (check_planned_once's, ...) is
/// thrown again at the line and column of the value in that file, read once more for it: only
/// on an error, so that a valid plan costs nothing for it. Standard input, a pipe, a file gone:
/// the error as it is, naming the JSON path.
void at_plan_lines(const std::function<void()>& check);

/// at_plan_lines for `run-under`, which checks only its test's records of the plan at `path`
/// (`slice`: some of the file's assignments, in its order, numbered in the slice): a
/// JsonValueError of `check()` about slice.assignments[N] is thrown again at that record's line in
/// the file, which is read whole for it, only then. The slice keeps the file's order, so its k-th
/// record of a unit id is the file's k-th. Before, run-under's refusal of a broken plan named the
/// file alone.
void at_slice_lines(const Plan& slice, const std::string& path, const std::function<void()>& check);

/// Where each record named by `json_paths` ("assignments[3]", "unschedulable[0]"; any other
/// path, none) begins in the plan file at `path`, read once more for the lot: verify's thousand
/// violations cost one pass, not a thousand. None for each when the file cannot be read again
/// (standard input, a pipe, a file gone) or lacks the record.
std::vector<std::optional<util::TextSpot>> locate_plan_records(const std::string& path,
                                                               const std::vector<std::string>& json_paths);

/// For the default bazel test of exec and the exports: a stderr warning naming the tests whose
/// shards the plan puts on several nodes (tests_split_over_nodes), among `node`'s or all.
/// Returns how many warnings it printed (0 or 1), for the totals line.
long warn_split_tests(const Plan& plan, std::string_view node, const std::string& path);

/// For the exports: one stderr warning when the plan has unschedulable units, which are in no
/// job and never run (naming a few and the plan), so that a launcher's green run is not read as
/// every GPU test passing. Returns how many warnings it printed (0 or 1).
long warn_unschedulable(const Plan& plan, const std::string& path);

/// The warnings and notes an export printed on standard error, for its totals line.
struct ExportRemarks {
  long warnings = 0;
  long notes = 0;
};

/// An export's last line on standard error, the totals of what it said above it, as every
/// command's totals line counts them: "gpuplan: 1 warning, 0 notes".
void print_export_totals(const ExportRemarks& said);

/// `node` in the fleet file at `fleet_path` (exec's and run-under's --fleet); nullopt when the
/// path is empty. Throws InputError naming the file when the fleet has no such node.
std::optional<Node> read_fleet_node(const std::string& fleet_path, std::string_view node);

}  // namespace gpuplan::cli
