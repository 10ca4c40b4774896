#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>

#include "gpuplan/error.hpp"
#include "gpuplan/run.hpp"

using namespace gpuplan;

namespace {

Assignment unit(const std::string& label, std::vector<int> gpus, std::optional<int> shard = std::nullopt) {
  Assignment a;
  a.unit.label = label;
  a.unit.id = shard ? label + "#shard-" + std::to_string(*shard) + "-of-4" : label;
  a.unit.shard_index = shard;
  a.unit.shard_count = shard ? 4 : 1;
  a.node = "ws-0";
  a.gpus = std::move(gpus);
  return a;
}

/// What /bin/sh prints for `command`.
std::string shell_output(const std::string& command) {
  std::string output;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe);
  char buffer[256];
  while (size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) output.append(buffer, n);
  ::pclose(pipe);
  return output;
}

}  // namespace

TEST_CASE("plain labels and paths are left as they are") {
  REQUIRE(shell_quote("//ml:train_test") == "//ml:train_test");
  REQUIRE(shell_quote("0,1") == "0,1");
  REQUIRE(shell_quote("") == "''");
}

TEST_CASE("a hostile label reaches the shell as itself and runs nothing") {
  auto marker = std::filesystem::temp_directory_path() / "gpuplan-quote-test-pwned";
  std::filesystem::remove(marker);
  const std::string touch = "touch " + marker.string();
  for (const std::string& label :
       std::vector<std::string>{"//a:x$(" + touch + ")", "//a:x;" + touch, "//a:it's", "//a:\"q\"",
                                "//a:`" + touch + "`", "//a:x\\ny", "//a:x\ny"}) {
    auto command = expand_command("printf '%s' {label}", unit(label, {0}));
    CHECK(shell_output(command) == label);
  }
  REQUIRE_FALSE(std::filesystem::exists(marker));
}

TEST_CASE("a template gets the unit's GPUs and shard, quoted") {
  auto a = unit("//ml:train_test", {0, 1}, 2);
  REQUIRE(expand_command("run {unit} on {gpus} shard {shard_index}/{shard_count}", a) ==
          "run '//ml:train_test#shard-2-of-4' on 0,1 shard 2/4");
  REQUIRE(expand_command("echo {{}} {label}", a) == "echo {} //ml:train_test");
}

TEST_CASE("an unsharded unit has an empty shard index") {
  REQUIRE(expand_command("x {shard_index}", unit("//a:b", {0})) == "x ''");
}

TEST_CASE("an unknown placeholder is an error naming it") {
  REQUIRE_THROWS_WITH(expand_command("echo {lable}", unit("//a:b", {0})),
                      Catch::Contains("--command") && Catch::Contains("unknown placeholder {lable}"));
  REQUIRE_THROWS_AS(expand_command("echo {label", unit("//a:b", {0})), InputError);
  REQUIRE_THROWS_AS(expand_command("echo label}", unit("//a:b", {0})), InputError);
}

TEST_CASE("the default command runs bazel test with the GPUs, and one shard of a sharded test") {
  REQUIRE(default_command(unit("//ml:inference_test", {2})) ==
          "bazel test --test_env=CUDA_VISIBLE_DEVICES=2 -- //ml:inference_test");
  REQUIRE(default_command(unit("//ml:train_test", {0, 1}, 1)) ==
          "bazel test --test_env=CUDA_VISIBLE_DEVICES=0,1 --test_sharding_strategy=disabled "
          "--run_under='env TEST_TOTAL_SHARDS=4 TEST_SHARD_INDEX=1' -- //ml:train_test");
}
