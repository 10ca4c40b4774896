#include <fmt/format.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "gpuplan/run.hpp"

using namespace gpuplan;

namespace {

/// A workspace with rc files of its own, removed at the end.
struct RcFiles {
  std::filesystem::path root =
      std::filesystem::temp_directory_path() / fmt::format("gpuplan-bazelrc-{}", ::getpid());
  RcFiles() {
    std::filesystem::create_directories(root / "tools");
    std::ofstream(root / "tools/ci.bazelrc") << "build:ci --config=asan\n";
    std::ofstream(root / "home.bazelrc") << "common:prof --run_under nsys\n";
  }
  ~RcFiles() { std::filesystem::remove_all(root); }
  void write(const std::string& text) const { std::ofstream(root / ".bazelrc") << text; }
  /// "FILE:LINE CONFIG VALUE" of the --run_under bazel test gets, or "none".
  std::string run_under(const std::vector<std::string>& args) const {
    auto rc = rc_option(
        {(root / ".bazelrc").string(), (root / "absent.bazelrc").string(), (root / "home.bazelrc").string()},
        root.string(), args, "run_under");
    return rc ? fmt::format("{}:{} {} {}", std::filesystem::path(rc->file).filename().string(), rc->line,
                            rc->config, rc->value)
              : "none";
  }
};

}  // namespace

TEST_CASE("the --run_under a bazel test gets from rc files is the last Bazel applies, with its line") {
  RcFiles rc;
  rc.write(
      "test --run_under=valgrind  # every test\n"
      "build --run_under=never-applied\n"  // build's lines come before test's
      "test:asan --run_under=\"/tools/asan wrap\"\n"
      "query --run_under=not-a-test-option\n"
      "try-import %workspace%/tools/ci.bazelrc\n"
      "try-import %workspace%/tools/absent.bazelrc\n"
      "test:linux \\\n"
      "  --run_under=//tools:on_linux\n");
  CHECK(rc.run_under({}) == ".bazelrc:1  valgrind");
  // A config named by another, in an imported file; a config's lines where it is named.
  CHECK(rc.run_under({"--config=ci"}) == ".bazelrc:3 asan /tools/asan wrap");
  // One in a later rc file, its value a word apart; a continued line of the host's config.
  CHECK(rc.run_under({"--config=prof"}) == "home.bazelrc:1 prof nsys");
  CHECK(rc.run_under({"--enable_platform_specific_config"}) == ".bazelrc:7 linux //tools:on_linux");
}

TEST_CASE("a config named in an rc line expands where it stands, before the lines after it") {
  RcFiles rc;
  rc.write("build --config=d\nbuild:d --run_under=wrapper\ntest --run_under=\n");
  CHECK(rc.run_under({}) == ".bazelrc:3  ");  // reset by test's empty one, as Bazel does
  rc.write("test --run_under=//t:w#x\ntest --run_under='a\\'b'  \"\"\n");
  CHECK(rc.run_under({}) == ".bazelrc:2  a'b");  // `#` ends a line; a backslash escapes in quotes
}

TEST_CASE("gpuplan's own run-under is told from a wrapper named like it") {
  CHECK(is_gpuplan_run_under("'/opt/bin/gpuplan' run-under --plan p.json"));
  CHECK(is_gpuplan_run_under("gpuplan run-under --plan p.json --node-file /tmp/node"));
  CHECK_FALSE(is_gpuplan_run_under("//tools:asan-run-under"));
  CHECK_FALSE(is_gpuplan_run_under("valgrind gpuplan run-under"));
}
