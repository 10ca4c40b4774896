#include "run/os.hpp"

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
