#pragma once
// Each subcommand lives in its own cmd_*.cpp and registers itself here.
// A command's callback stores its exit code in `status`; errors in input are thrown
// as InputError and turned into exit code 2 by main.
#include <CLI/CLI.hpp>

namespace gpuplan::cli {

void add_targets_command(CLI::App& app, int& status);
void add_classify_command(CLI::App& app, int& status);
void add_explain_command(CLI::App& app, int& status);
void add_fleet_command(CLI::App& app, int& status);
void add_plan_command(CLI::App& app, int& status);
void add_show_command(CLI::App& app, int& status);
void add_render_command(CLI::App& app, int& status);
void add_verify_command(CLI::App& app, int& status);
void add_compare_command(CLI::App& app, int& status);
void add_history_command(CLI::App& app, int& status);
void add_run_under_command(CLI::App& app, int& status);
void add_exec_command(CLI::App& app, int& status);
void add_export_command(CLI::App& app, int& status);
void add_audit_command(CLI::App& app, int& status);
/// kubernetes, github-matrix, buildkite, gitlab under `export` (cmd_export_targets.cpp).
void add_export_targets(CLI::App& export_command, int& status);
void add_simulate_command(CLI::App& app, int& status);

/// The exports' positional options after --, which each job's exec passes to its bazel test.
inline constexpr const char* export_bazel_options_help =
    "after --: options for the jobs' default bazel test, passed to exec (-- --config=cuda)";

/// The exports' --strict: what the fleet had to guess (its warnings) refuses the export, exit 2.
inline constexpr const char* strict_fleet_help =
    "the fleet's warnings (values read as guesses) are errors: exit 2, nothing written";

/// exec's and run-under's --missing-gpus=fail|warn (cmd_exec.cpp): what to do when this machine
/// lacks a GPU the node's units are given (missing_gpus), or what they need (unmet_here). The
/// exports take it too, with `help` saying so, for each job's exec.
void add_missing_gpus_option(CLI::App& command, bool& warn, const char* help = nullptr);

/// The exports' --missing-gpus: passed on to each job's exec.
inline constexpr const char* export_missing_gpus_help =
    "passed to each job's gpuplan exec: where its node lacks a GPU the plan gives the units, or NVML "
    "says a GPU or the driver fails a unit's constraint, refuse to run them (default) or warn and run them";

}  // namespace gpuplan::cli
