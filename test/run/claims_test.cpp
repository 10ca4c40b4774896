#include "run/claims.hpp"

#include <catch2/catch.hpp>
#include <filesystem>
#include <thread>

using namespace gpuplan;
using State = os::Claims::State;

namespace {
std::string claims_dir(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("gpuplan-claims-test-" + name);
  std::filesystem::remove_all(dir);
  return dir.string();
}
}  // namespace

TEST_CASE("a unit claimed by one node cannot be claimed by another while its lease runs") {
  auto dir = claims_dir("once");
  os::Claims a(dir, "a", 60), b(dir, "b", 60);
  REQUIRE(a.claim("//t:x"));
  REQUIRE(a.claim("//t:x"));  // already ours
  REQUIRE_FALSE(b.claim("//t:x"));
  REQUIRE(b.state("//t:x") == State::held);
  REQUIRE(b.claim("//t:y#shard-0-of-2"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a unit that ran is never claimed again") {
  auto dir = claims_dir("done");
  os::Claims a(dir, "a", 60), b(dir, "b", 0.01);
  REQUIRE(a.claim("//t:x"));
  a.done("//t:x");
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(b.state("//t:x") == State::done);
  REQUIRE_FALSE(b.claim("//t:x"));
  REQUIRE_FALSE(a.claim("//t:x"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a silent node's claim is taken over after the lease, once, and it knows it lost it") {
  auto dir = claims_dir("lease");
  os::Claims dead(dir, "dead", 0.2), b(dir, "b", 0.2), c(dir, "c", 0.2);
  REQUIRE(dead.claim("//t:x"));
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  REQUIRE(b.state("//t:x") == State::expired);
  REQUIRE(b.claim("//t:x"));
  REQUIRE_FALSE(c.claim("//t:x"));
  REQUIRE(dead.state("//t:x") == State::held);
}

TEST_CASE("renewing keeps a claim alive past the lease; abandoning ends it at once") {
  auto dir = claims_dir("renew");
  os::Claims a(dir, "a", 0.3), b(dir, "b", 0.3);
  REQUIRE(a.claim("//t:x"));
  for (int i = 0; i < 4; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    a.renew();
  }
  REQUIRE_FALSE(b.claim("//t:x"));
  a.abandon("//t:x");
  REQUIRE(b.claim("//t:x"));
  std::filesystem::remove_all(dir);
}
