// Fuzz target: a workspace's .bazelrc as exec reads it (rc_refusals, rc_option): lines, words,
// configs and imports. The input up to a line "----" is the .bazelrc, the rest the file
// `%workspace%/user.bazelrc`, which it may import; an import of another path reads what is
// there (paths under /dev, /proc and /sys are left out: the fuzzer must not read the machine).
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "fuzz.hpp"
#include "gpuplan/bazelrc.hpp"
#include "gpuplan/run.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuplan;
  static const struct Workspace {  // removed when the fuzzer exits
    std::filesystem::path dir =
        std::filesystem::temp_directory_path() / ("gpuplan-fuzz-bazelrc-" + std::to_string(::getpid()));
    Workspace() { std::filesystem::create_directories(dir); }
    ~Workspace() {
      std::error_code ignored;
      std::filesystem::remove_all(dir, ignored);
    }
  } scratch;
  const auto& workspace = scratch.dir;
  const auto [rc, user] = fuzz::split_two(fuzz::text(data, size));
  for (const char* machine : {"/dev", "/proc", "/sys"})
    if (rc.find(machine) != std::string::npos || user.find(machine) != std::string::npos) return 0;
  std::ofstream(workspace / ".bazelrc", std::ios::binary | std::ios::trunc) << rc;
  std::ofstream(workspace / "user.bazelrc", std::ios::binary | std::ios::trunc) << user;
  const std::vector<std::string> files{(workspace / ".bazelrc").string()};
  const std::vector<std::string> args{"--config=gpu", "--enable_platform_specific_config"};
  return fuzz::expect_input_errors([&] {
    (void)rc_refusals(files, workspace.string(), args);
    (void)rc_option(files, workspace.string(), args, "run_under");
  });
}
