#include "gpuplan/bazelrc.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
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
  void write(const std::string& text, const std::string& name = ".bazelrc") const {
    std::ofstream(root / name) << text;
  }
  std::vector<std::string> files() const {
    return {(root / ".bazelrc").string(), (root / "absent.bazelrc").string(),
            (root / "home.bazelrc").string()};
  }
  /// "FILE:LINE CONFIG VALUE" of the --run_under bazel test gets, or "none".
  std::string run_under(const std::vector<std::string>& args) const {
    auto rc = rc_option(files(), root.string(), args, "run_under");
    return rc ? fmt::format("{}:{} {} {}", std::filesystem::path(rc->file).filename().string(), rc->line,
                            rc->config, rc->value)
              : "none";
  }
  /// What Bazel refuses, each with the workspace's path left out.
  std::vector<std::string> refusals(const std::vector<std::string>& args = {}) const {
    auto all = rc_refusals(files(), root.string(), args);
    for (auto& r : all)
      for (auto at = r.find(root.string() + "/"); at != std::string::npos; at = r.find(root.string() + "/"))
        r.erase(at, root.string().size() + 1);
    return all;
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
  CHECK(rc.run_under({}) == ".bazelrc:3  ");  // an empty one, which Bazel refuses (rc_refusals)
  rc.write("test --run_under=//t:w#x\ntest --run_under='a\\'b'  \"\"\n");
  CHECK(rc.run_under({}) == ".bazelrc:2  a'b");  // `#` ends a line; a backslash escapes in quotes
}

TEST_CASE("gpuplan's own run-under is told from a wrapper named like it") {
  CHECK(is_gpuplan_run_under("'/opt/bin/gpuplan' run-under --plan p.json"));
  CHECK(is_gpuplan_run_under("gpuplan run-under --plan p.json --node-file /tmp/node"));
  CHECK_FALSE(is_gpuplan_run_under("//tools:asan-run-under"));
  CHECK_FALSE(is_gpuplan_run_under("valgrind gpuplan run-under"));
}

// Each verdict below is Bazel 4.2.3's (Debian's bazel-bootstrap), read from the canonical command
// line of `bazel test --announce_rc --nobuild` with the same rc file.
TEST_CASE("the host's config applies where the last --enable_platform_specific_config stands") {
  RcFiles rc;
  // TensorFlow's pattern: enabled for every build, turned off by a cross-compiling config.
  rc.write(
      "build --enable_platform_specific_config\n"
      "build:android --noenable_platform_specific_config\n"
      "test:linux --run_under=//tools:gpu_wrap\n");
  CHECK(rc.run_under({}) == ".bazelrc:3 linux //tools:gpu_wrap");
  CHECK(rc.run_under({"--config=android"}) == "none");  // before, //tools:gpu_wrap, which Bazel never ran
  CHECK(rc.run_under({"--noenable_platform_specific_config"}) == "none");
  // Enabled by an early line, the host's lines come before the later test lines, which win.
  rc.write(
      "common --enable_platform_specific_config\n"
      "test:linux --run_under=/bin/linux\n"
      "test --run_under=/bin/plain\n"
      "build:ci --enable_platform_specific_config\n");
  CHECK(rc.run_under({}) == ".bazelrc:3  /bin/plain");  // before, /bin/linux
  // Enabled on the command line, or by a config named there, they come after every rc line.
  CHECK(rc.run_under({"--enable_platform_specific_config"}) == ".bazelrc:2 linux /bin/linux");
  CHECK(rc.run_under({"--config=ci"}) == ".bazelrc:2 linux /bin/linux");
}

TEST_CASE("what Bazel refuses in the rc files is named with its line") {
  RcFiles rc;
  rc.write("test:loop --config=loop2\ntest:loop2 --config=loop\nimport %workspace%/.bazelrc\n",
           "tools.bazelrc");
  rc.write(
      "import %workspace%/absent.bazelrc\n"
      "try-import %workspace%/also-absent.bazelrc\n"
      "import %workspace%/tools.bazelrc extra\n"
      "import %workspace%/tools.bazelrc\n"
      "test --run_under=\n"
      "test:nope_user --config=nope\n");
  auto refused = rc.refusals();
  REQUIRE(refused.size() == 4);
  CHECK(refused[0] ==
        ".bazelrc:1: imports absent.bazelrc, which cannot be read ('Unexpected error reading .blazerc file'; "
        "try-import skips a missing file)");
  CHECK(refused[1] == ".bazelrc:3: import takes one file, not 2 words ('Invalid import declaration')");
  CHECK(refused[2] == "tools.bazelrc:3: imports .bazelrc, which is importing it ('Import loop detected')");
  CHECK(refused[3] ==
        ".bazelrc:5: --run_under=, which Bazel refuses ('While parsing option --run_under=: Empty command') "
        "even "
        "where a later one replaces it");
  refused = rc.refusals({"--config=loop", "--config=nope_user"});
  REQUIRE(refused.size() == 6);
  CHECK(refused[3] ==
        "tools.bazelrc:2: --config=loop names itself (loop > loop2 > loop; 'Config expansion has a cycle')");
  CHECK(refused[4] ==
        ".bazelrc:6: --config=nope is not defined for bazel test in any rc file ('Config value 'nope' is not "
        "defined in any .rc file')");
  CHECK(refused[5].starts_with(".bazelrc:5: --run_under=, which Bazel refuses"));
  rc.write("try-import %workspace%/absent.bazelrc\ntest --run_under=/bin/t\n");
  CHECK(rc.refusals().empty());
  // Bazel splits a --run_under as a shell would, and refuses what it cannot split.
  rc.write("test --run_under='/bin/a\\'b'\ntest --run_under=/bin/wrap\\\\ \ntest --run_under=\" \"\n");
  refused = rc.refusals();
  REQUIRE(refused.size() == 3);
  CHECK(refused[0] ==
        ".bazelrc:1: --run_under=/bin/a'b, which Bazel refuses ('While parsing option --run_under=/bin/a'b: "
        "Not a valid command prefix unterminated quotation') even where a later one replaces it");
  CHECK(
      refused[1].ends_with("--run_under=/bin/wrap\\: Not a valid command prefix backslash at end of string') "
                           "even where a later one replaces it"));
  CHECK(
      refused[2].starts_with(".bazelrc:3: --run_under= , which Bazel refuses ('While parsing option "
                             "--run_under= : Empty command')"));
  rc.write("test --run_under='/bin/wrap --flag \"x\"'\ntest --run_under=\"/bin/a \\\\\\\"b\\\\\\\"\"\n");
  CHECK(rc.refusals().empty());
}

TEST_CASE("configs that double at each step are expanded up to gpuplan's limit, not for ever") {
  // Found reading the code (2026-12-06), a timeout of fuzz_bazelrc: each config naming the next
  // twice, 41 lines were 2^41 expansions, each line doubling the time exec spent at its .bazelrc.
  auto doubling = [](int levels, const std::string& last) {
    std::string text = "test:gpu --run_under=/bin/first --config=c0 --config=c0\n";
    for (int i = 0; i < levels; ++i)
      text += fmt::format("test:c{} --config=c{} --config=c{}\n", i, i + 1, i + 1);
    return text + last;
  };
  RcFiles rc;
  rc.write(doubling(40, fmt::format("test:c40 --test_output=errors\n")));
  const auto limit = Catch::Contains(
      "the --config expansions pass 2 MiB of options, gpuplan's limit: a config that names another twice "
      "doubles its options, as Bazel expands a --config each time it is named");
  CHECK_THROWS_WITH(rc.refusals({"--config=gpu"}),
                    Catch::StartsWith(rc.root.string() + "/.bazelrc:") && limit);
  CHECK_THROWS_WITH(rc.run_under({"--config=gpu"}), limit);
  // The last config left undefined: each expansion was one more refusal, all compared with one another.
  rc.write(doubling(40, ""));
  CHECK_THROWS_WITH(rc.refusals({"--config=gpu"}), limit);
  // 17 such lines, 2^17 options (2.6 MiB), pass it; 14, 2^14 options, are read as before.
  rc.write(doubling(16, "test:c16 --test_output=errors\n"));
  CHECK_THROWS_WITH(rc.refusals({"--config=gpu"}), limit);
  rc.write(doubling(13, "test:c13 --test_output=errors\n"));
  CHECK(rc.refusals({"--config=gpu"}).empty());
  CHECK(rc.run_under({"--config=gpu"}) == ".bazelrc:1 gpu /bin/first");
  rc.write(doubling(13, ""));
  auto refused = rc.refusals({"--config=gpu"});
  REQUIRE(refused.size() == 1);
  CHECK(refused[0] ==
        ".bazelrc:14: --config=c13 is not defined for bazel test in any rc file ('Config value 'c13' is not "
        "defined in any .rc file')");
}

TEST_CASE("an import of what is not a regular file is refused as Bazel refuses it, without reading it") {
  RcFiles rc;
  const auto fifo = rc.root / "fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // Bazel 4: "Unexpected error reading .blazerc file" for the directory, and a try-import skips it;
  // it reads /dev/zero for ever. gpuplan read the directory as an empty file (no word that Bazel
  // would stop), ran out of memory on /dev/zero and waited for ever at the FIFO.
  rc.write(
      "import %workspace%/tools\n"
      "try-import %workspace%/tools\n"
      "test --run_under=/bin/t\n");
  auto refused = rc.refusals();
  REQUIRE(refused.size() == 1);
  CHECK(refused[0].starts_with(".bazelrc:1: imports tools, which cannot be read ('Unexpected error reading"));
  CHECK(rc.run_under({}) == ".bazelrc:3  /bin/t");
  // Bazel would hang at these rather than refuse them, so exec stops (exit 2) before it starts Bazel.
  const auto hangs = Catch::Contains(
      ": not a file but a device, FIFO or socket, which Bazel would read or wait at for ever, and so would "
      "bazel test; import a file");
  rc.write("test --run_under=/bin/t\nimport /dev/zero\n");
  CHECK_THROWS_WITH(rc.refusals(), Catch::StartsWith(rc.root.string() + "/.bazelrc:2") &&
                                       Catch::Contains("import /dev/zero") && hangs);
  rc.write("try-import %workspace%/fifo\n");
  CHECK_THROWS_WITH(rc.run_under({}), Catch::Contains("try-import " + fifo.string()) && hangs);
}

TEST_CASE("a line's words end as Bazel ends them") {
  RcFiles rc;
  rc.write("test --run_under=/bin/eof\\");  // a backslash that ends the file escapes nothing
  CHECK(rc.run_under({}) == ".bazelrc:1  /bin/eof");
  rc.write("test: --run_under=/bin/colon\n");  // a config named "", only --config= applies it
  CHECK(rc.run_under({}) == "none");
  CHECK(rc.run_under({"--config="}) == ".bazelrc:1  /bin/colon");
}
