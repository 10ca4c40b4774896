#include <catch2/catch.hpp>

#include "gpuplan/run.hpp"

using namespace gpuplan;

TEST_CASE("a results record is a history CSV line with the run's details") {
  RunRecord r{"//ml:train_test", 1, 12.3456, "ws-0", {0, 1}, 1796036126.12, 0, std::nullopt, std::nullopt};
  REQUIRE(results_header() == "label,shard,seconds,peak_vram_mib,node,gpus,start,exit_status,gpu_touched\n");
  REQUIRE(to_csv(r) == "//ml:train_test,1,12.346,,ws-0,\"0,1\",2026-11-30T10:55:26.120Z,0,\n");
}

TEST_CASE("an unsharded test has an empty shard, and one GPU needs no quotes") {
  RunRecord r{"//a:b", std::nullopt, 1, "n", {3}, 0, 143, std::nullopt, std::nullopt};
  REQUIRE(to_csv(r) == "//a:b,,1.000,,n,3,1970-01-01T00:00:00.000Z,143,\n");
}

TEST_CASE("a measured unit records its peak GPU memory and whether it touched a GPU") {
  RunRecord r{"//a:b", std::nullopt, 1, "n", {3}, 0, 0, 3075, true};
  REQUIRE(to_csv(r) == "//a:b,,1.000,3075,n,3,1970-01-01T00:00:00.000Z,0,true\n");
  RunRecord idle{"//a:c", std::nullopt, 1, "n", {3}, 0, 0, std::nullopt, false};
  REQUIRE(to_csv(idle) == "//a:c,,1.000,,n,3,1970-01-01T00:00:00.000Z,0,false\n");
}

TEST_CASE("a label with a comma or a quote is quoted the CSV way") {
  RunRecord r{"//a:x,\"y\"", std::nullopt, 1, "n", {}, 0, 0, std::nullopt, std::nullopt};
  REQUIRE(to_csv(r).starts_with("\"//a:x,\"\"y\"\"\",,1.000,,n,,"));
}
