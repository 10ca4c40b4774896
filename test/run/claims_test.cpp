#include "run/claims.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <memory>
#include <thread>

#include "run/os.hpp"
#include "util/text.hpp"

using namespace gpuplan;
using State = os::Claims::State;

namespace {
/// A claims directory of this process's own: CTest runs each test case as a process of its own,
/// two at once, and a second copy of the suite (another checkout's) may run beside it.
std::string claims_dir(const std::string& name) {
  auto dir =
      std::filesystem::temp_directory_path() / fmt::format("gpuplan-claims-test-{}-{}", name, ::getpid());
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
  // A node judges others' claims by its own lease: b's short one lets it take over; c and the dead
  // node judge b's fresh claim by a long one, which a loaded machine's pause cannot outlast (with
  // 0.2 s, c once saw b's claim expire too).
  os::Claims dead(dir, "dead", 60), b(dir, "b", 0.2), c(dir, "c", 60);
  REQUIRE(dead.claim("//t:x"));
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  REQUIRE(b.state("//t:x") == State::expired);
  REQUIRE(b.claim("//t:x"));
  REQUIRE_FALSE(c.claim("//t:x"));
  REQUIRE(dead.state("//t:x") == State::held);
  std::filesystem::remove_all(dir);
}

TEST_CASE("renewing keeps a claim alive past the lease; abandoning ends it at once") {
  auto dir = claims_dir("renew");
  // A lease of 1 s, renewed past it: b judges a's claim a moment after a renewal, and a loaded
  // machine's pause between the two must not outlast the lease (with 0.3 s it could).
  os::Claims a(dir, "a", 1), b(dir, "b", 1);
  REQUIRE(a.claim("//t:x"));
  for (int i = 0; i < 12; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    a.renew();
  }
  REQUIRE_FALSE(b.claim("//t:x"));
  a.abandon("//t:x");
  REQUIRE(b.claim("//t:x"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a claims directory of one plan refuses another plan, whose done units would not run") {
  auto dir = claims_dir("plan");
  os::Claims first(dir, "n1", 60), again(dir, "n2", 60), other(dir, "n1", 60);
  first.belong_to("100 bytes, ends 00000000000000aa", "/shared/a.json");
  first.done("//t:x");
  // The same plan, copied; judged and renewed by the first node's lease, whatever this one's.
  os::Claims shorter(dir, "n3", 10);
  REQUIRE(shorter.belong_to("100 bytes, ends 00000000000000aa", "/copy/a.json") == 60);
  REQUIRE(shorter.lease_s() == 60);
  REQUIRE_FALSE(again.belong_to("100 bytes, ends 00000000000000aa", "/copy/a.json"));
  REQUIRE_THROWS_WITH(other.belong_to("120 bytes, ends 00000000000000bb", "b.json"),
                      Catch::Contains("holds the claims of another plan (/shared/a.json, 100 bytes") &&
                          Catch::Contains("this run's plan: b.json, 120 bytes") && Catch::Contains(dir) &&
                          Catch::Contains("--claims DIR/$RUN_ID"));
  std::filesystem::remove_all(dir);
}

TEST_CASE("a node live in the claims directory cannot be held by a second exec of it") {
  auto dir = claims_dir("node-twice");
  os::Claims first(dir, "n1", 60), second(dir, "n1", 60), other(dir, "n2", 60);
  first.hold_node();
  REQUIRE_THROWS_WITH(second.hold_node(), Catch::Contains("node n1 is already live") &&
                                              Catch::Contains(dir) &&
                                              Catch::Contains("process " + std::to_string(::getpid())));
  other.hold_node();  // another node's name is its own
  std::filesystem::remove_all(dir);
}

TEST_CASE("a node's hold of a gone process is taken over only within one PID namespace") {
  auto dir = claims_dir("node-pidns");
  std::filesystem::create_directories(dir);
  pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ::waitpid(child, nullptr, 0);  // a PID no process has now
  char own[64] = {};
  REQUIRE(::readlink("/proc/self/ns/pid", own, sizeof own - 1) > 0);
  auto hold = fmt::format("{}/node-{:016x}.0", dir, util::fnv1a("n1"));
  auto write_hold = [&](const std::string& pids) {
    std::filesystem::remove(hold);
    std::ofstream(hold) << fmt::format("n1 {} {} {}\n", os::host_name(), child, pids);
  };
  write_hold("pid:[1]");  // a container sharing the host's name: its PID names another process
  os::Claims other_namespace(dir, "n1", 60);
  REQUIRE_THROWS_WITH(other_namespace.hold_node(), Catch::Contains("node n1 is already live"));
  write_hold(own);  // this namespace's: the exec is gone, a restart takes over at once
  os::Claims restarted(dir, "n1", 60);
  restarted.hold_node();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  write_hold("");  // written by a gpuplan before namespaces: taken as this one's, as then
  os::Claims upgraded(dir, "n1", 60);
  upgraded.hold_node();
  std::filesystem::remove_all(dir);
}

TEST_CASE("a node's hold older than the lease is taken over; one given up is free at once") {
  auto dir = claims_dir("node-stale");
  // `early` judges the fresh hold by a lease no pause of a loaded machine outlasts.
  os::Claims silent(dir, "n1", 0.2), early(dir, "n1", 60), next(dir, "n1", 0.2);
  silent.hold_node();
  REQUIRE_THROWS(early.hold_node());
  std::this_thread::sleep_for(std::chrono::milliseconds(400));
  next.hold_node();
  {
    os::Claims renewed(dir, "n3", 1), late(dir, "n3", 1);  // 1 s: as in the test of renewing claims
    renewed.hold_node();
    for (int i = 0; i < 12; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      renewed.renew();
    }
    REQUIRE_THROWS(late.hold_node());
  }
  os::Claims after(dir, "n3", 60);
  after.hold_node();
  std::filesystem::remove_all(dir);
}

TEST_CASE("nodes racing for the same units each get a unit at most once between them") {
  // Each claim() judges a unit free (or expired) and then links the next claim number. A node
  // that counted the claims again before linking linked past one made meanwhile, and two
  // nodes ran the unit (claims_test.sh caught it once in CI). Racing threads show it.
  auto dir = claims_dir("race");
  constexpr int nodes = 6, units = 1500;
  std::vector<std::vector<int>> won(nodes);
  // Each node lives until every node has raced: one that ends gives its claims up (~Claims).
  std::vector<std::unique_ptr<os::Claims>> live;
  for (int k = 0; k < nodes; ++k)
    live.push_back(std::make_unique<os::Claims>(dir, "n" + std::to_string(k), 60));
  std::vector<std::thread> threads;
  for (int k = 0; k < nodes; ++k)
    threads.emplace_back([&, k] {
      for (int u = 0; u < units; ++u)
        if (live[k]->claim("//t:u" + std::to_string(u))) won[k].push_back(u);
    });
  for (auto& t : threads) t.join();
  std::vector<int> winners(units, 0);
  for (const auto& list : won)
    for (int u : list) ++winners[u];
  CHECK(std::count(winners.begin(), winners.end(), 1) == units);
  std::filesystem::remove_all(dir);
}

TEST_CASE("a node that ends holding a claim gives it up for another node at once") {
  // exec stopped while a unit it claimed waited for a GPU lock: the unit never ran there.
  auto dir = claims_dir("ended");
  {
    os::Claims gone(dir, "n0", 60);
    REQUIRE(gone.claim("//t:a"));
    os::Claims other(dir, "n1", 60);
    CHECK(other.state("//t:a") == os::Claims::State::held);
  }
  os::Claims taker(dir, "n1", 60);
  CHECK(taker.state("//t:a") == os::Claims::State::expired);
  CHECK(taker.claim("//t:a"));
  std::filesystem::remove_all(dir);
}
