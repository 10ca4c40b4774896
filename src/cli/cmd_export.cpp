// gpuplan export slurm: a batch script per node and a submit.sh, for a Slurm cluster.
#include <fmt/format.h>

#include <filesystem>
#include <functional>
#include <iostream>
#include <streambuf>
#include <string_view>
#include <vector>

#include "cli/commands.hpp"
#include "cli/earlier_exports.hpp"
#include "cli/io.hpp"
#include "cli/number_options.hpp"
#include "cli/plan_input.hpp"
#include "cli/query_input.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/limits.hpp"
#include "gpuplan/run.hpp"

namespace gpuplan::cli {

namespace {

struct SlurmExportOptions {
  std::string plan;
  std::string out;
  SlurmOptions slurm;
  std::string command;
  std::string results;
  std::string claims;
  std::string fleet;
  bool strict = false;  ///< the fleet's guesses (warnings) are errors
};

/// The bytes of `from` as the plan's parser reads them, each chunk also handed to `copy`: the
/// plan is read, copied and scanned in one pass and never held whole (a 150k-unit plan is
/// 113 MB). Seeking back (a field error's line is found by reading again) ends the copy.
class CopyingBuffer : public std::streambuf {
 public:
  CopyingBuffer(std::streambuf& from, std::function<void(std::string_view)> copy)
      : from_(from), copy_(std::move(copy)), chunk_(std::size_t{1} << 20) {}

  /// Reads what the parser left after the plan through to the end, for the copy.
  void drain() {
    while (underflow() != traits_type::eof()) setg(eback(), egptr(), egptr());
  }

 protected:
  int_type underflow() override {
    if (gptr() < egptr()) return traits_type::to_int_type(*gptr());
    std::streamsize got = from_.sgetn(chunk_.data(), static_cast<std::streamsize>(chunk_.size()));
    if (got <= 0) return traits_type::eof();
    if (copying_) copy_(std::string_view(chunk_.data(), static_cast<std::size_t>(got)));
    setg(chunk_.data(), chunk_.data(), chunk_.data() + got);
    return traits_type::to_int_type(*gptr());
  }
  pos_type seekpos(pos_type at, std::ios_base::openmode which) override {
    copying_ = false;
    setg(chunk_.data(), chunk_.data(), chunk_.data());
    return from_.pubseekpos(at, which);
  }

 private:
  std::streambuf& from_;
  std::function<void(std::string_view)> copy_;
  std::vector<char> chunk_;
  bool copying_ = true;
};

int export_slurm(SlurmExportOptions o) {
  namespace fs = std::filesystem;
  auto input = open_input(o.plan);
  auto plan_copy = fs::absolute(fs::path(o.out) / "plan.json").lexically_normal();
  // The jobs read a copy of the plan, the same bytes, staged as the plan is read. The folder is
  // made first, and goes again with the copy on any error below: a bad plan, fleet, node name or
  // option leaves no directory behind, and the scripts, the plan and its index appear together
  // or not at all (a full disk had left some scripts, the plan and no submit.sh).
  FolderOutput folder(o.out);
  PlanRecordScanner scanner;
  Plan plan;
  auto staged_plan =
      folder.write(plan_copy.filename().string(), [&](const std::function<void(std::string_view)>& put) {
        CopyingBuffer copying(*input.in().rdbuf(), [&](std::string_view chunk) {
          put(chunk);
          scanner.feed(chunk);
        });
        std::istream in(&copying);
        plan = parse_plan(in, input.name);
        copying.drain();
      });
  check_exportable(plan, input.name);
  ExportRemarks said;
  if (o.command.empty()) said.warnings += warn_split_tests(plan, "", input.name);
  if (!o.claims.empty() && o.command.empty())  // the job's exec would refuse it at run time
    throw InputError(Position{"--claims"},
                     "dynamic execution in the jobs needs --command (exec's one bazel test per node cannot "
                     "hand units over; inside Bazel, pass --claims to run-under in --run_under instead)");
  o.slurm.plan_path = plan_copy.string();
  if (!o.command.empty()) o.slurm.command = o.command;
  check_bazel_args(o.slurm.bazel_args, !o.command.empty());
  if (!o.results.empty()) o.slurm.results = fs::absolute(o.results).lexically_normal().string();
  if (!o.claims.empty()) o.slurm.claims = fs::absolute(o.claims).lexically_normal().string();
  std::optional<Fleet> fleet;
  if (!o.fleet.empty()) {
    o.slurm.fleet = fs::absolute(o.fleet).lexically_normal().string();
    auto fleet_input = open_input(o.fleet);
    fleet = load_fleet(fleet_input.in(), fleet_input.name);
    said.warnings += print_fleet_warnings(*fleet, o.strict);
    check_fits_fleet(plan, *fleet, input.name, fleet_input.name);
  }
  auto files = slurm_scripts(plan, o.slurm, fleet ? &*fleet : nullptr);
  // Its index too: else the first launches on every node would each read the whole copy to make one.
  if (auto index = plan_index_text(staged_plan, plan, scanner.records()))
    folder.write(fs::path(plan_index_path(plan_copy.string())).filename().string(), *index);
  else
    ++said.warnings;  // plan_index_text's
  for (const auto& [name, content] : files) folder.write(name, content, true);
  folder.commit();
  std::cout << fmt::format("wrote {} job script(s), submit.sh and plan.json to {}\n", files.size() - 1,
                           o.out);
  // submit.sh submits only this plan's nodes, but a loop over DIR/*.sbatch would run an earlier
  // plan's too.
  remove_earlier_exports(o.out, files, ".sbatch", slurm_script_mark, "job script(s)");
  said.warnings += warn_unschedulable(plan, input.name);
  print_export_totals(said);
  return exit_ok;
}

}  // namespace

void add_export_command(CLI::App& app, int& status) {
  auto* command = app.add_subcommand("export", "Turn a plan into what a launcher runs");
  command->require_subcommand(1);
  auto options = std::make_shared<SlurmExportOptions>();
  auto* slurm =
      command->add_subcommand("slurm", "One sbatch script per node (running gpuplan exec) and a submit.sh");
  slurm->add_option("plan", options->plan, "the plan (JSON)")->required();
  slurm->add_option("-o,--output", options->out, "the directory to write into")->required();
  slurm->add_option("--partition", options->slurm.partition, "#SBATCH --partition");
  slurm->add_option("--account", options->slurm.account, "#SBATCH --account");
  slurm
      ->add_option(
          "--time-margin", options->slurm.time_margin,
          "--time is the node's planned end, with two more runs of its flaky units, times this, plus "
          "--startup, in whole minutes")
      ->check(finite_number(1, 100))
      ->capture_default_str();
  slurm
      ->add_option("--startup", options->slurm.startup_s,
                   "seconds added to --time for the job's bazel test to build before its first test")
      ->transform(whole_number(0, static_cast<std::uint64_t>(max_duration_s)))
      ->capture_default_str();
  slurm->add_option("--gres-extra", options->slurm.gres_extra,
                    "more generic resources for each job, after its GPUs: --gres=gpu:N,THIS (lscratch:200)");
  slurm->add_option("--sbatch-line", options->slurm.sbatch_lines,
                    "an extra #SBATCH line (repeatable); not one of the options the job's own lines set");
  slurm->add_option("--gpuplan", options->slurm.gpuplan, "the gpuplan binary on the cluster")
      ->capture_default_str();
  slurm->add_option("--command", options->command, "the command template the jobs pass to gpuplan exec");
  slurm->add_option("--results", options->results,
                    "the results file the jobs append to (shared file system)");
  slurm->add_option(
      "--claims", options->claims,
      "dynamic execution: the claims directory the jobs share (shared file system; see exec --claims)");
  slurm->add_option("--lease", options->slurm.lease_s, "passed to exec --lease")->check(lease_seconds());
  slurm->add_option("--fleet", options->fleet,
                    "passed to exec --fleet: with --claims, nodes take units planned on others");
  add_missing_gpus_option(*slurm, options->slurm.warn_missing_gpus, export_missing_gpus_help);
  slurm->add_flag("--strict", options->strict, strict_fleet_help);
  slurm->add_option("bazel-options", options->slurm.bazel_args, export_bazel_options_help);
  slurm->callback([options, &status] { status = export_slurm(*options); });
  add_export_targets(*command, status);
}

}  // namespace gpuplan::cli
