#include <fmt/format.h>

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

// Inside the template's own quotes the '…' gpuplan put around a label was literal there: in
// "label={label}" a $(…) in the label ran, and the unit passed with its label cut short.
TEST_CASE("a label inside the template's own quotes stays the label and runs nothing") {
  auto marker = std::filesystem::temp_directory_path() / "gpuplan-quote-test-pwned-quoted";
  std::filesystem::remove(marker);
  const std::string touch = "touch " + marker.string();
  for (const std::string& label :
       std::vector<std::string>{"//a:x$(" + touch + ")", "//a:it's", "//a:\"q\"", "//a:`" + touch + "`",
                                "//a:x\\y", "//a:a!b", "//a:x\ny", "//ml:train_test"}) {
    INFO(label);
    auto a = unit(label, {0, 1});
    CHECK(shell_output(expand_command("printf '%s' \"label={label}\"", a)) == "label=" + label);
    CHECK(shell_output(expand_command("printf '%s' 'label={label}'", a)) == "label=" + label);
    // Quotes the template escapes, or that sit inside the other kind, open nothing.
    CHECK(shell_output(expand_command("printf '%s' \\\" {label} \"it's\" \\'", a)) == "\"" + label + "it's'");
    CHECK(shell_output(expand_command("printf '%s' \"{label} on {gpus}\"", a)) == label + " on 0,1");
    // In a command substitution, inside "…" or not, the shell is in the open again.
    CHECK(shell_output(expand_command("printf '%s' \"[$(printf '%s' {label})]\"", a)) == "[" + label + "]");
    CHECK(shell_output(expand_command("printf '%s' \"[`printf '%s' {label}`]\"", a)) == "[" + label + "]");
    // A subshell or an arithmetic expansion inside one ends it no earlier than its own ")".
    CHECK(shell_output(expand_command("printf '%s' \"[$( (printf '%s' $((1+1))) ; printf '%s' {label})]\"",
                                      a)) == "[2" + label + "]");
    // A quote in a comment opens nothing.
    CHECK(shell_output(expand_command("printf '%s' {label} # don't\n", a)) == label);
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

TEST_CASE("the default command is one bazel test of the node's labels with a fixed --run_under") {
  BazelRun r;
  r.gpuplan = "/opt/gpuplan";
  r.plan = "/shared/plan.json";
  r.node_file = "/etc/gpuplan node";
  r.lock_dir = "/tmp/gpuplan-locks-1";
  r.jobs = 4;
  auto command = bazel_node_command({unit("//ml:train_test", {0, 1}, 1), unit("//ml:inference_test", {2}),
                                     unit("@//ml:train_test", {2, 3}, 0)},
                                    r)
                     .command;
  REQUIRE(
      command ==
      "bazel test --run_under='/opt/gpuplan run-under --plan /shared/plan.json --node-file '\\''/etc/gpuplan "
      "node'\\'' --lock-dir /tmp/gpuplan-locks-1' --sandbox_writable_path=/tmp/gpuplan-locks-1 "
      "--local_test_jobs=4 --test_tag_filters= --test_size_filters= --test_timeout_filters= "
      "--test_lang_filters= -- "
      "//ml:inference_test //ml:train_test");
  r.results = "/shared/out/results.csv";
  REQUIRE_THAT(
      bazel_node_command({unit("//a:b", {0})}, r).command,
      Catch::Contains("--results /shared/out/results.csv' --sandbox_writable_path=/tmp/gpuplan-locks-1 "
                      "--sandbox_writable_path=/shared/out "));
  r.build_events = "/tmp/gpuplan-locks-1/build-events-7.json";  // exec's --junit is made from them
  REQUIRE_THAT(
      bazel_node_command({unit("//a:b", {0})}, r).command,
      Catch::Contains("--sandbox_writable_path=/shared/out "
                      "--build_event_json_file=/tmp/gpuplan-locks-1/build-events-7.json --local_test_jobs"));
  r.fleet = "/shared/fleet.yaml";  // a unit that holds the node holds the GPUs the plan leaves idle
  REQUIRE_THAT(bazel_node_command({unit("//a:b", {0})}, r).command,
               Catch::Contains("--results /shared/out/results.csv --fleet /shared/fleet.yaml'"));
  // exec --missing-gpus=warn reaches each run-under: before, exec warned that it ran the units
  // anyway, and run-under refused every test on a GPU the machine lacks.
  r.warn_missing_gpus = true;
  REQUIRE_THAT(bazel_node_command({unit("//a:b", {0})}, r).command,
               Catch::Contains("--fleet /shared/fleet.yaml --missing-gpus=warn'"));
  r.warn_missing_gpus = false;
  // The team's options come first: a --config's --run_under or test filters cannot undo gpuplan's.
  r.bazel_args = {"--config=cuda", "--copt=-DX=a b"};
  REQUIRE_THAT(bazel_node_command({unit("//a:b", {0})}, r).command,
               Catch::StartsWith("bazel test --config=cuda '--copt=-DX=a b' --run_under="));
  // A node of 1,700 long labels made a command over Linux's 128 KiB an argument, and /bin/sh
  // never started ("Argument list too long"): the labels go to a target pattern file instead.
  std::vector<Assignment> many;
  for (int i = 0; i < 1700; ++i)
    many.push_back(
        unit(fmt::format("//xla/service/gpu/tests:kernel_tiling_test_variant_{:04}_long_suffix", i), {0}));
  auto [command_line, file, labels] = bazel_node_command(many, r);
  CHECK(command_line.size() < max_command_line);
  // Named by its labels: two execs sharing the lock directory (two checkouts' CI jobs on one host)
  // no longer overwrite each other's, so neither runs the other's tests.
  CHECK_THAT(file, Catch::Matches("/tmp/gpuplan-locks-1/targets-[0-9a-f]{16}"));
  CHECK_THAT(command_line, Catch::EndsWith(" --test_lang_filters= --target_pattern_file=" + file));
  auto other = many;
  other.pop_back();
  CHECK(bazel_node_command(other, r).target_file != file);
  CHECK(bazel_node_command(many, r).target_file == file);
  CHECK_THAT(labels,
             Catch::StartsWith("//xla/service/gpu/tests:kernel_tiling_test_variant_0000_long_suffix\n"
                               "//xla/service/gpu/tests:kernel_tiling_test_variant_0001_long_suffix\n"));
  CHECK(std::count(labels.begin(), labels.end(), '\n') == 1700);
  many.resize(1000);  // 73 KB of labels still go on the line
  CHECK(bazel_node_command(many, r).target_file_text.empty());
}

TEST_CASE("a test whose shards are on several nodes is warned of for the default bazel test, naming them") {
  // Bazel runs every shard of a test it is named; run-under refuses those planned elsewhere, so
  // each node fails the test at run time (the others run). Before, nothing said so until then.
  Plan plan;
  for (int shard : {0, 1, 2, 3}) plan.assignments.push_back(unit("//ml:train_test", {shard % 2}, shard));
  plan.assignments[2].node = plan.assignments[3].node = "ws-1";
  plan.assignments.push_back(unit("//ml:inference_test", {0}));
  CHECK_THAT(
      tests_split_over_nodes(plan, ""),
      Catch::StartsWith("the plan puts the shards of //ml:train_test (shards 0, 1 on ws-0; 2, 3 on ws-1) on "
                        "several nodes") &&
          Catch::Contains("Give --command") && Catch::Contains("--shards=whole"));
  CHECK_FALSE(tests_split_over_nodes(plan, "ws-1").empty());
  plan.assignments.push_back(unit("//ml:other_test", {0}));
  plan.assignments.back().node = "ws-2";
  CHECK(tests_split_over_nodes(plan, "ws-2").empty());  // not ws-2's test
  for (auto& a : plan.assignments) a.node = "ws-0";
  CHECK(tests_split_over_nodes(plan, "").empty());
}

TEST_CASE("options for the default bazel test are options only, and never beside a command template") {
  CHECK_NOTHROW(check_bazel_args({}, true));
  CHECK_NOTHROW(
      check_bazel_args({"--config=cuda", "--compilation_mode=opt", "--nocache_test_results"}, false));
  CHECK_THROWS_WITH(check_bazel_args({"-c", "opt"}, false),
                    Catch::StartsWith("opt: only bazel test options"));
  CHECK_THROWS_WITH(check_bazel_args({"--config=cuda"}, true),
                    Catch::Contains("with --command, write them into"));
  CHECK_THROWS_WITH(check_bazel_args({"--config=cuda", "//extra:test"}, false),
                    Catch::StartsWith("//extra:test: only bazel test options may follow --"));
  CHECK_THROWS_WITH(check_bazel_args({"--", "//extra:test"}, false),
                    Catch::StartsWith("--: only bazel test"));
  // Bazel 4.2.3: "Unrecognized option: --bazelrc=/tmp/extra.bazelrc" after `test`, its exit 2.
  for (const char* startup : {"--bazelrc=/tmp/extra.bazelrc", "--nohome_rc", "--noworkspace_rc",
                              "--nosystem_rc", "--ignore_all_rc_files"})
    CHECK_THROWS_WITH(check_bazel_args({"--config=cuda", startup}, false),
                      Catch::StartsWith(std::string(startup) + ": a Bazel startup option"));
  CHECK_NOTHROW(check_bazel_args({"--bazelrc_like_option=1", "--home_rc_extra"}, false));
}

// A container does not inherit exec's environment: `docker run --gpus all` gives each test every
// GPU of the node, and CUDA_VISIBLE_DEVICES never reaches it.
TEST_CASE(
    "a template that starts a container without the unit's GPUs is found; one that hands them over is not") {
  CHECK(container_without_unit_gpus("docker run --rm --gpus all ci:1 bazel-bin/{label}") == "docker");
  CHECK(container_without_unit_gpus("/usr/bin/podman container run img t") == "podman");
  CHECK(container_without_unit_gpus("sudo nerdctl run --gpus all img t") == "nerdctl");
  CHECK_FALSE(container_without_unit_gpus("docker run --gpus '\"device={gpus}\"' img t"));
  CHECK_FALSE(container_without_unit_gpus("docker run -e CUDA_VISIBLE_DEVICES img t"));
  // exec sets no NVIDIA_VISIBLE_DEVICES per unit: naming it hands the container every GPU, or the
  // caller's `all` (before, it kept the warning away).
  CHECK(container_without_unit_gpus("docker run -e NVIDIA_VISIBLE_DEVICES=all img t") == "docker");
  CHECK(container_without_unit_gpus("docker run --runtime=nvidia -e NVIDIA_VISIBLE_DEVICES img t") ==
        "docker");
  CHECK_FALSE(container_without_unit_gpus("tools/run_gpu_test.sh {label} {gpus}"));
  CHECK_FALSE(container_without_unit_gpus("docker exec builder t"));
  // A pack plan's shared units also need the variables that keep TensorFlow and JAX from taking the GPU.
  CHECK(container_without_sharing_env("docker run --gpus '\"device={gpus}\"' img t") == "docker");
  CHECK_FALSE(
      container_without_sharing_env("docker run --gpus '\"device={gpus}\"' -e TF_FORCE_GPU_ALLOW_GROWTH -e "
                                    "XLA_PYTHON_CLIENT_PREALLOCATE img t"));
  CHECK_FALSE(container_without_sharing_env("tools/run_gpu_test.sh {label}"));
  CHECK_FALSE(container_without_unit_gpus("echo docker"));
}

// The template is read as the shell reads it (before, split at blanks with its quotes kept): a
// container started by a `sh -c '…'` script or a quoted program name was missed, and a "docker run"
// inside a quoted message was taken for one.
TEST_CASE("a container is found where the shell would start one, and only there") {
  CHECK(container_without_unit_gpus("sh -c 'docker run --gpus all img bazel-bin/{label}'") == "docker");
  CHECK(container_without_unit_gpus("bash -lc \"cd /src && docker run --gpus all img t\"") == "docker");
  CHECK(container_without_unit_gpus("\"docker\" run --gpus all img t") == "docker");
  CHECK_FALSE(container_without_unit_gpus("echo 'no docker run here' && tools/run_gpu_test.sh {label}"));
  CHECK_FALSE(container_without_unit_gpus("tools/t.sh --note \"see docker run docs\" {label}"));
}
