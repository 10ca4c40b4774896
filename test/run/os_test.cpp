#include "run/os.hpp"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace gpuplan;

namespace {
std::string scratch_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("gpuplan-os-test-" + name);
  std::filesystem::remove_all(dir);
  return dir.string();
}
}  // namespace

TEST_CASE("a GPU held by one lock holder cannot be taken by another until released") {
  auto dir = scratch_dir("locks");
  {
    auto first = os::GpuLocks::take(dir, {2, 0}, true);
    REQUIRE(first);
    REQUIRE_FALSE(os::GpuLocks::take(dir, {1, 2}, false));
    REQUIRE(os::GpuLocks::take(dir, {1, 3}, false));  // other GPUs are free
  }
  REQUIRE(os::GpuLocks::take(dir, {0, 1, 2}, false));
  std::filesystem::remove_all(dir);
}

TEST_CASE("appending to a results file writes the header once") {
  auto dir = scratch_dir("results");
  std::filesystem::create_directories(dir);
  auto path = dir + "/results.csv";
  os::append_locked(path, "h\n", "a\n");
  os::append_locked(path, "h\n", "b\n");
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  REQUIRE(content.str() == "h\na\nb\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("a record appended to a results file whose last line has no newline starts a line of its own") {
  auto dir = scratch_dir("results-newline");
  std::filesystem::create_directories(dir);
  auto path = dir + "/results.csv";
  std::ofstream(path) << "h\na";
  os::append_locked(path, "h\n", "b\n");
  std::ifstream in(path);
  std::stringstream content;
  content << in.rdbuf();
  REQUIRE(content.str() == "h\na\nb\n");
  std::filesystem::remove_all(dir);
}

TEST_CASE("a results file under another header is refused before anything runs, naming both headers") {
  auto dir = scratch_dir("results-header");
  std::filesystem::create_directories(dir);
  auto path = dir + "/results.csv";
  std::ofstream(path) << "label,shard,seconds,peak_vram_mib\n//a:b,,5,100\n";
  REQUIRE_THROWS_WITH(os::check_appendable(path, "label,shard,seconds,peak_vram_mib,node\n"),
                      Catch::StartsWith(path + ": its header is \"label,shard,seconds,peak_vram_mib\", not "
                                               "\"label,shard,seconds,peak_vram_mib,node\""));
  std::ofstream(path) << "label,shard,seconds,peak_vram_mib,node\r\n";
  REQUIRE_NOTHROW(os::check_appendable(path, "label,shard,seconds,peak_vram_mib,node\n"));
  std::ofstream(path)
      << "label,shard,seconds,peak_vram_mib,node";  // the header alone, cut short of its newline
  REQUIRE_NOTHROW(os::check_appendable(path, "label,shard,seconds,peak_vram_mib,node\n"));
  std::ofstream(path).close();
  REQUIRE_NOTHROW(os::check_appendable(path, "label,shard,seconds,peak_vram_mib,node\n"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a GPU lock file that is a symbolic link is refused, not followed") {
  auto dir = scratch_dir("symlink");
  std::filesystem::create_directories(dir);
  std::filesystem::create_symlink(dir + "/elsewhere", dir + "/gpu-0.lock");
  REQUIRE_THROWS_WITH(os::GpuLocks::take(dir, {0}, false), Catch::Contains("symbolic link"));
  REQUIRE_FALSE(std::filesystem::exists(dir + "/elsewhere"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a lock directory every user may write to is refused") {
  auto dir = scratch_dir("world");
  std::filesystem::create_directories(dir);
  std::filesystem::permissions(dir, std::filesystem::perms::all);
  REQUIRE_THROWS_WITH(os::GpuLocks::take(dir, {0}, false), Catch::Contains("writable by every user"));
  auto link = scratch_dir("link");
  std::filesystem::create_directory_symlink(dir, link);
  REQUIRE_THROWS_WITH(os::GpuLocks::take(link, {0}, false), Catch::Contains("is a symbolic link"));
  std::filesystem::remove_all(dir);
  std::filesystem::remove(link);
}

TEST_CASE("the default lock directory is this user's own") {
  REQUIRE(os::default_lock_dir() == "/tmp/gpuplan-locks-" + std::to_string(::geteuid()));
}

TEST_CASE("a unit's process keeps its GPUs locked after exec let go, until it ends") {
  auto dir = scratch_dir("inherit");
  os::SystemRunner runner;
  int id = 0;
  {
    auto locks = os::GpuLocks::take(dir, {0}, false);
    REQUIRE(locks);
    id = runner.start("sleep 0.3", {}, locks->fds());
  }
  REQUIRE_FALSE(os::GpuLocks::take(dir, {0}, false));
  std::vector<ProcessExit> exits;
  while (exits.empty()) exits = runner.wait(runner.now() + 5);
  REQUIRE(exits.front().id == id);
  REQUIRE(os::GpuLocks::take(dir, {0}, false));
  std::filesystem::remove_all(dir);
}

TEST_CASE("the system runner gives a unit its environment and reports its exit status") {
  os::SystemRunner runner;
  int id = runner.start("test \"$GPUPLAN_TEST_X\" = 'a b' && exit 3", {{"GPUPLAN_TEST_X", "a b"}}, {});
  std::vector<ProcessExit> exits;
  while (exits.empty()) exits = runner.wait(runner.now() + 5);
  REQUIRE(exits.front().id == id);
  REQUIRE(exits.front().exit_status == 3);
}

TEST_CASE("a results file that cannot be written is found before anything runs") {
  REQUIRE_THROWS_WITH(os::check_appendable("/nonexistent-dir/results.csv", "h\n"),
                      Catch::Contains("results file"));
}
