// gpuplan: plans GPU tests from Bazel query output onto a GPU fleet.
#include <CLI/CLI.hpp>
#include <exception>
#include <iostream>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "cli/commands.hpp"
#include "cli/io.hpp"
#include "cli/progress.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/version.hpp"
#include "gpuplan_commit.hpp"

int main(int argc, char** argv) {
  using namespace gpuplan;
#if defined(__GLIBC__) && defined(M_MXFAST)
  // No fast bins: glibc keeps freed small blocks there and merges them all (malloc_consolidate)
  // before each larger allocation; with the hundreds of thousands of small blocks of a big
  // query freed while vectors are still being made, that merging was 4-6% of `plan`'s CPU
  // (150k tests, the same peak RSS; targets and classify neither gain nor lose).
  mallopt(M_MXFAST, 0);
#endif
  CLI::App app{"gpuplan: plans Bazel GPU tests onto a GPU fleet and writes a plan launchers run."};
  app.set_version_flag("--version",
                       std::string("gpuplan ") + program_version() + " (commit " GPUPLAN_COMMIT ")");
  app.require_subcommand(1);
  int status = exit_ok;
  cli::add_targets_command(app, status);
  cli::add_classify_command(app, status);
  cli::add_explain_command(app, status);
  cli::add_fleet_command(app, status);
  cli::add_plan_command(app, status);
  cli::add_show_command(app, status);
  cli::add_render_command(app, status);
  cli::add_verify_command(app, status);
  cli::add_compare_command(app, status);
  cli::add_history_command(app, status);
  cli::add_run_under_command(app, status);
  cli::add_exec_command(app, status);
  cli::add_export_command(app, status);
  cli::add_simulate_command(app, status);
  cli::add_audit_command(app, status);
  try {
    app.parse(argc, argv);
    cli::progress::finish();
    cli::check_standard_output();
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return exit_bad_input;
  } catch (const InputError& e) {
    cli::progress::finish();
    std::cerr << "gpuplan: " << e.what() << '\n';
    return exit_bad_input;
  } catch (const std::exception& e) {
    cli::progress::finish();
    std::cerr << "gpuplan: internal error: " << e.what() << '\n';
    return exit_internal;
  }
  return status;
}
