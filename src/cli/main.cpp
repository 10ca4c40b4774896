// gpuplan: plans GPU tests from Bazel query output onto a GPU fleet.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <new>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "cli/commands.hpp"
#include "cli/io.hpp"
#include "cli/progress.hpp"
#include "core/utf8.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/version.hpp"
#include "gpuplan_commit.hpp"
#include "util/suggest.hpp"

namespace {

/// Runs this program again, at once, with glibc's malloc asked for transparent huge pages
/// (GLIBC_TUNABLES=glibc.malloc.hugetlb=1, which glibc reads only at start): a big query's
/// hundreds of MB then fault in 2 MiB at a time instead of 4 KiB. Measured on the 2-core machine
/// (a virtual machine, where a page fault is dear): `plan` of 150k tests 1.95–2.3 → 1.2–1.45 s
/// of CPU, 53,000 → 3,500 page faults, peak RSS 2% more (README "Whole commands"). Not for `run-under` and
/// `exec`, which launch tests and must stay milliseconds, nor `classify`, whose aim is memory (under 400
/// bytes a test: it holds ~390, and 2 MiB pages round its peak up by up to 17 more at 150k tests); not when
/// GLIBC_TUNABLES already sets hugetlb (set glibc.malloc.hugetlb=0 to run without, e.g. under
/// valgrind). The rerun puts GLIBC_TUNABLES back as it was, so the processes it starts see the
/// environment the user gave.
void rerun_with_huge_pages(int argc, char** argv) {
  static constexpr char saved_name[] = "GPUPLAN_SAVED_GLIBC_TUNABLES";  // "-": it was unset; "+VALUE"
  auto restore = [](const char* saved) {
    if (saved[0] == '+')
      setenv("GLIBC_TUNABLES", saved + 1, 1);
    else
      unsetenv("GLIBC_TUNABLES");
    unsetenv(saved_name);
  };
  if (const char* saved = std::getenv(saved_name)) return restore(saved);  // this is the rerun
  std::string_view command = argc < 2 ? "" : argv[1];
  if (command.empty() || command == "run-under" || command == "exec" || command == "classify") return;
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  std::string value = tunables ? tunables : "";
  if (value.find("glibc.malloc.hugetlb") != std::string::npos) return;
  std::string saved = tunables ? "+" + value : "-";
  setenv(saved_name, saved.c_str(), 1);
  setenv("GLIBC_TUNABLES", (value.empty() ? value : value + ":").append("glibc.malloc.hugetlb=1").c_str(), 1);
  execv("/proc/self/exe", argv);
  restore(saved.c_str());  // no /proc, say: go on as this process, with the environment as it was
}

/// `gpuplan run-under [OPTIONS] -- COMMAND...`, as its help has it: CLI11 gives a prefix
/// command's "--" to the top-level app, which refused what followed. The "--" before the command
/// is dropped; one after the command's first word is the command's own (a test's args).
void drop_command_separator(const CLI::App& command, std::vector<char*>& args) {
  for (size_t i = 2; i < args.size(); ++i) {
    std::string_view token = args[i];
    if (token == "--") {
      args.erase(args.begin() + static_cast<std::ptrdiff_t>(i));
      return;
    }
    if (!token.starts_with("-")) return;  // the command begins
    if (token.find('=') != std::string_view::npos) continue;
    const CLI::Option* option = command.get_option_no_throw(std::string(token));
    if (option && option->get_type_size() != 0) ++i;  // its value
  }
}

/// Every option value given to the command about to run, before it runs: an empty one (an unset
/// shell variable) had been taken as not given (`-o ""` wrote to standard output, `--fleet ""`
/// read standard input); and `export` writes each value into a script, manifest or pipeline file,
/// whose YAML and JSON carry only UTF-8 (a byte that is not had become U+FFFD, another command).
void check_option_values(const CLI::App& command, bool exporting) {
  exporting = exporting || command.get_name() == "export";
  for (const CLI::Option* option : command.get_options()) {
    if (option->get_type_size_max() == 0) continue;  // a flag
    for (const auto& value : option->results()) {
      if (value.empty())
        throw CLI::ValidationError(option->get_name(), "an empty value (an unset shell variable?)");
      if (auto problem = gpuplan::utf8_problem(value); exporting && !problem.empty())
        throw CLI::ValidationError(option->get_name(),
                                   problem + ": export writes text files, which carry UTF-8");
    }
  }
  for (const CLI::App* sub : command.get_subcommands()) check_option_values(*sub, exporting);
}

/// The exit code of --help or --version: theirs, or 2 when the text could not be written (a
/// full disk, a closed pipe), which a script that saves it would otherwise take for success.
int help_written(int code) {
  try {
    gpuplan::cli::check_standard_output();
  } catch (const gpuplan::InputError& e) {
    std::cerr << "gpuplan: " << e.what() << '\n';
    return gpuplan::exit_bad_input;
  }
  return code;
}

/// For "A subcommand is required": the word given instead, if any, and the commands there are
/// (before, `gpuplan plna` and `gpuplan fleet` said only that a subcommand was required).
std::string missing_command(const CLI::App& app, const CLI::Error& e) {
  if (dynamic_cast<const CLI::RequiredError*>(&e) == nullptr ||
      std::string_view(e.what()).find("ubcommand") == std::string_view::npos)
    return "";
  const CLI::App* at = &app;  // the deepest command given: `gpuplan fleet` needs one of fleet's
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (const auto* sub : at->get_subcommands())
      if (!sub->get_subcommands({}).empty()) at = sub, deeper = true;
  }
  std::vector<std::string> names;
  for (const auto* sub : at->get_subcommands({})) names.push_back(sub->get_name());
  std::vector<std::string_view> known(names.begin(), names.end());
  std::string said;
  if (auto rest = at->remaining(); !rest.empty() && !rest.front().starts_with("-")) {
    said = fmt::format(": \"{}\" is no {}command", rest.front(), at == &app ? "" : at->get_name() + " ");
    if (auto meant = gpuplan::util::closest_match(rest.front(), known))
      said += fmt::format(" (did you mean {}?)", *meant);
  }
  return fmt::format("{}; {} are: {}", said, at == &app ? "the commands" : at->get_name() + "'s commands",
                     fmt::join(names, ", "));
}

/// " (ulimit -u is 40 processes and threads, ulimit -v is 100 MiB)": those of `limits` that are
/// set, else "". All of them: a thread's stack that does not fit under ulimit -v fails as EAGAIN,
/// as ulimit -u does.
std::string limit_said(std::initializer_list<std::pair<decltype(RLIMIT_AS), const char*>> limits) {
  std::vector<std::string> said;
  for (const auto& [resource, name] : limits)
    if (struct rlimit limit{}; ::getrlimit(resource, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
      said.push_back(resource == RLIMIT_NPROC
                         ? fmt::format("{} is {} processes and threads", name, limit.rlim_cur)
                         : fmt::format("{} is {} MiB", name, limit.rlim_cur >> 20));
  return said.empty() ? "" : fmt::format(" ({})", fmt::join(said, ", "));
}

/// The message for an exception a limit of the machine caused, "" for any other: out of memory
/// (a std::bad_alloc), or no thread or process to be had (std::system_error's EAGAIN, from
/// std::thread). Before, `gpuplan: internal error: std::bad_alloc`, or `terminate called` and a core.
std::string limit_reached(std::exception_ptr error) {
  try {
    std::rethrow_exception(std::move(error));
  } catch (const std::bad_alloc&) {
    std::string text = "out of memory";
    if (const char* stage = gpuplan::cli::progress::current_stage(); *stage)
      text += fmt::format(" while {}", stage);
    return text + limit_said({{RLIMIT_AS, "ulimit -v"}, {RLIMIT_DATA, "ulimit -d"}}) +
           "; give gpuplan more memory";
  } catch (const std::system_error& e) {
    if (e.code() != std::errc::resource_unavailable_try_again) return "";
    return fmt::format("cannot start a thread: {}{}", std::strerror(EAGAIN),
                       limit_said({{RLIMIT_NPROC, "ulimit -u"}, {RLIMIT_AS, "ulimit -v"}}));
  } catch (...) {
  }
  return "";
}

std::terminate_handler default_terminate = nullptr;

/// For what escapes a thread, or a function that may not throw: out of memory and no thread
/// said as in main, the files being written removed, exit 1 (was `terminate called`, a core).
[[noreturn]] void on_terminate() {
  std::string said;
  if (auto error = std::current_exception()) try {
      said = limit_reached(error);
    } catch (...) {  // no memory for the message either: one made without any
      char text[160] = "out of memory";
      if (struct rlimit limit{}; ::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY)
        std::snprintf(text, sizeof text, "out of memory (ulimit -v is %llu MiB); give gpuplan more memory",
                      static_cast<unsigned long long>(limit.rlim_cur >> 20));
      (void)!::write(STDERR_FILENO, "gpuplan: ", 9);
      (void)!::write(STDERR_FILENO, text, std::strlen(text));
      (void)!::write(STDERR_FILENO, "\n", 1);
      gpuplan::cli::remove_temporary_files();
      std::_Exit(gpuplan::exit_internal);
    }
  if (said.empty()) {  // a bug: its message ("terminate called after ...") and core are wanted
    if (default_terminate) default_terminate();
    std::abort();
  }
  (void)!::write(STDERR_FILENO, "gpuplan: ", 9);
  (void)!::write(STDERR_FILENO, said.data(), said.size());
  (void)!::write(STDERR_FILENO, "\n", 1);
  gpuplan::cli::remove_temporary_files();
  std::_Exit(gpuplan::exit_internal);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace gpuplan;
  rerun_with_huge_pages(argc, argv);
  cli::hold_closed_standard_streams();
  default_terminate = std::set_terminate(on_terminate);
  // A write past ulimit -f fails (EFBIG) and is reported, exit 2, instead of SIGXFSZ ending the
  // process without a word (exit 153): standard output redirected to a file, exec's results
  // record (which it had left half written). The processes exec and run-under start get it back.
  std::signal(SIGXFSZ, SIG_IGN);
  cli::note_arguments(argc, argv);
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
  // A usage error reads as every other error does: "gpuplan: --fleet: 1 required TEXT missing".
  app.failure_message([](const CLI::App* failing, const CLI::Error& e) {
    return std::string("gpuplan: ") + e.what() + missing_command(*failing, e) +
           "\nRun with --help for more information.\n";
  });
  int status = exit_ok;
  using Add = void (*)(CLI::App&, int&);
  static constexpr std::pair<std::string_view, Add> commands[] = {
      {"targets", cli::add_targets_command},     {"classify", cli::add_classify_command},
      {"explain", cli::add_explain_command},     {"fleet", cli::add_fleet_command},
      {"plan", cli::add_plan_command},           {"show", cli::add_show_command},
      {"render", cli::add_render_command},       {"verify", cli::add_verify_command},
      {"compare", cli::add_compare_command},     {"history", cli::add_history_command},
      {"run-under", cli::add_run_under_command}, {"exec", cli::add_exec_command},
      {"export", cli::add_export_command},       {"simulate", cli::add_simulate_command},
      {"audit", cli::add_audit_command},
  };
  // Only the command asked for, when it is named first: `run-under` starts once per test, and
  // making every command's options was 54 of a launch's 330 page faults. Anything else (no
  // command, an option first, a misspelt command) gets them all, for help and messages.
  std::string_view first = argc < 2 ? "" : argv[1];
  auto named =
      std::find_if(std::begin(commands), std::end(commands), [&](auto& c) { return c.first == first; });
  if (named != std::end(commands))
    named->second(app, status);
  else
    for (const auto& command : commands) command.second(app, status);
  app.parse_complete_callback([&app] { check_option_values(app, false); });
  std::vector<char*> args(argv, argv + argc);
  if (first == "run-under") drop_command_separator(*app.get_subcommand("run-under"), args);
  try {
    app.parse(static_cast<int>(args.size()), args.data());
    cli::progress::finish();
    cli::check_standard_output();
  } catch (const CLI::CallForHelp& e) {
    return help_written(app.exit(e));
  } catch (const CLI::CallForAllHelp& e) {
    return help_written(app.exit(e));
  } catch (const CLI::CallForVersion& e) {
    return help_written(app.exit(e));
  } catch (const CLI::ExtrasError& e) {
    app.exit(e);
    if (first == "exec" || first == "export")  // `--config=cuda` given without the `--` before it
      std::cerr << "Options for the default bazel test go after --: gpuplan " << first
                << " ... -- --config=cuda\n";
    return exit_bad_input;
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return exit_bad_input;
  } catch (const InputError& e) {
    cli::progress::finish();
    std::cerr << "gpuplan: " << e.what() << '\n';
    return exit_bad_input;
  } catch (const std::exception& e) {
    cli::progress::finish();
    const std::string limit = limit_reached(std::current_exception());
    std::cerr << "gpuplan: " << (limit.empty() ? std::string("internal error: ") + e.what() : limit) << '\n';
    return exit_internal;
  }
  return status;
}
