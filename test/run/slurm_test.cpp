#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "gpuplan/error.hpp"
#include "gpuplan/run.hpp"

using namespace gpuplan;

namespace {
Plan plan_on(std::vector<std::pair<std::string, double>> nodes_and_ends) {
  Plan plan;
  for (const auto& [node, end] : nodes_and_ends) {
    Assignment a;
    a.unit.label = a.unit.id = "//a:t";
    a.node = node;
    a.gpus = {0, 3};
    a.end_s = end;
    plan.assignments.push_back(a);
  }
  return plan;
}
SlurmOptions options() {
  SlurmOptions o;
  o.plan_path = "/shared/run 1/plan.json";
  o.startup_s = 0;  // the time tests below are of the margin and the reruns; the startup's own is apart
  return o;
}
}  // namespace

TEST_CASE("each node gets a job that takes the whole node and runs gpuplan exec") {
  auto files = slurm_scripts(plan_on({{"h100-1", 600}, {"h100-0", 100}}), options());
  REQUIRE(files.size() == 3);
  const auto& script = files.at("h100-0.sbatch");
  CHECK_THAT(script, Catch::Contains("#SBATCH --nodelist=h100-0\n"));
  CHECK_THAT(script, Catch::Contains("#SBATCH --exclusive\n"));
  CHECK_THAT(script, Catch::Contains("#SBATCH --gres=gpu:4\n"));
  CHECK_THAT(script, Catch::EndsWith("exec gpuplan exec '/shared/run 1/plan.json' --node h100-0\n"));
  CHECK_THAT(files.at("submit.sh"), Catch::Contains("job=$(sbatch --parsable $(clipped h100-0 ") &&
                                        Catch::Contains(" h100-0.sbatch) || {"));
  CHECK_THAT(files.at("submit.sh"), Catch::Contains("printf '%s %s\\n' h100-0 \"$job\"\n"));
}

// exec --fleet hands out any GPU of the node (dynamic execution takes units planned elsewhere):
// a job that asked only for those the plan uses would not have the rest, and inside its cgroup
// CUDA_VISIBLE_DEVICES=5 of four GPUs is no GPU at all, so a test that skips without one passes.
TEST_CASE("with the fleet, each job asks for every GPU of its node") {
  Fleet fleet;
  fleet.source = "fleet.yaml";
  Node node;
  node.name = "h100-0";
  node.gpus.resize(8);
  fleet.nodes.push_back(node);
  auto plan = plan_on({{"h100-0", 100}});
  CHECK_THAT(slurm_scripts(plan, options(), &fleet).at("h100-0.sbatch"),
             Catch::Contains("#SBATCH --gres=gpu:8\n"));
  CHECK_THAT(slurm_scripts(plan, options()).at("h100-0.sbatch"), Catch::Contains("#SBATCH --gres=gpu:4\n"));
  CHECK_THROWS_WITH(slurm_scripts(plan_on({{"h100-9", 100}}), options(), &fleet),
                    Catch::Contains("node \"h100-9\", which this fleet does not have"));
}

TEST_CASE("the time limit is the node's planned end with the margin, in whole minutes") {
  auto o = options();
  CHECK_THAT(slurm_scripts(plan_on({{"n", 100}}), o).at("n.sbatch"), Catch::Contains("--time=0-00:03:00\n"));
  o.time_margin = 2;
  CHECK_THAT(slurm_scripts(plan_on({{"n", 90000}}), o).at("n.sbatch"),
             Catch::Contains("--time=2-02:00:00\n"));
  CHECK_THAT(slurm_scripts(plan_on({{"n", 0}}), o).at("n.sbatch"), Catch::Contains("--time=0-00:01:00\n"));
}

// Bazel runs a failing flaky test up to three times: a limit of the planned end alone killed the
// job in the test's second run, where Bazel would have passed it as FLAKY.
TEST_CASE("the time limit leaves each flaky unit two more runs") {
  auto plan = plan_on({{"n", 100}, {"n", 100}});
  plan.assignments[0].unit.duration_s = 100;
  plan.assignments[0].unit.flaky = true;
  plan.assignments[1].unit.duration_s = 100;
  CHECK_THAT(slurm_scripts(plan, options()).at("n.sbatch"), Catch::Contains("--time=0-00:08:00\n"));
  // Reruns on other GPUs run beside these: the GPU with the most reruns says, not their sum.
  plan.assignments[1].unit.flaky = true;
  plan.assignments[1].gpus = {1};
  CHECK_THAT(slurm_scripts(plan, options()).at("n.sbatch"), Catch::Contains("--time=0-00:08:00\n"));
  plan.assignments[1].gpus = {3};
  CHECK_THAT(slurm_scripts(plan, options()).at("n.sbatch"), Catch::Contains("--time=0-00:13:00\n"));
  // A unit on GPUs 0 and 1 after a flaky one on GPU 0 passes its delay on to GPU 1's next unit.
  Plan chain;
  for (auto [gpus, start, flaky] :
       {std::tuple{std::vector<int>{0}, 0.0, true}, std::tuple{std::vector<int>{0, 1}, 100.0, false},
        std::tuple{std::vector<int>{1}, 200.0, true}}) {
    Assignment a;
    a.unit.label = a.unit.id = "//a:t" + std::to_string(start);
    a.unit.flaky = flaky;
    a.unit.duration_s = 100;
    a.node = "n";
    a.gpus = gpus;
    a.start_s = start;
    a.end_s = start + 100;
    chain.assignments.push_back(a);
  }
  CHECK_THAT(slurm_scripts(chain, options()).at("n.sbatch"),
             Catch::Contains("--time=0-00:18:00\n"));  // (300 + 400) × 1.5 s
}

TEST_CASE("the time limit leaves the job's bazel test 5 minutes to build before its first test") {
  // Before, a node planned for 60 s had 2 minutes in all, and a slow build ended in TIMEOUT.
  SlurmOptions o;
  o.plan_path = "/p.json";
  CHECK_THAT(slurm_scripts(plan_on({{"n", 60}}), o).at("n.sbatch"), Catch::Contains("--time=0-00:07:00\n"));
  o.startup_s = 600;
  CHECK_THAT(slurm_scripts(plan_on({{"n", 60}}), o).at("n.sbatch"), Catch::Contains("--time=0-00:12:00\n"));
}

TEST_CASE("an extra line that would undo the job's own lines is refused, naming why") {
  // sbatch takes the last of an option given twice: --array=0-3 ran each of the node's units 4
  // times, and -w another node ran them there, with exit 0.
  for (auto [line, why] : {std::pair{"--array=0-3", "each array task would run every unit of the node again"},
                           std::pair{"#SBATCH -w other", "the job runs on its node"},
                           std::pair{"--nodelist=other", "the job runs on its node"},
                           std::pair{"--gres=gpu:1", "the job asks for the GPUs its units are planned on"},
                           std::pair{"-t5", "give --time-margin or --startup"},
                           std::pair{"--oversubscribe", "the job takes its node whole"}}) {
    auto o = options();
    o.sbatch_lines = {line};
    CHECK_THROWS_WITH(slurm_scripts(plan_on({{"n", 60}}), o),
                      Catch::StartsWith(fmt::format(
                          "--sbatch-line: \"{}\" would undo the job's own #SBATCH lines: ", line)) &&
                          Catch::Contains(why));
  }
  auto o = options();
  o.sbatch_lines = {"--gres-flags=enforce-binding", "--time-min=5", "-J name"};  // not the job's own
  CHECK_NOTHROW(slurm_scripts(plan_on({{"n", 60}}), o));
  // More GRES (node-local scratch) go after the job's GPUs, on its own line.
  o.gres_extra = "lscratch:200";
  CHECK_THAT(slurm_scripts(plan_on({{"n", 60}}), o).at("n.sbatch"),
             Catch::Contains("#SBATCH --gres=gpu:4,lscratch:200\n"));
}

TEST_CASE("partition, account and extra lines become #SBATCH lines") {
  auto o = options();
  o.partition = "gpu";
  o.account = "ml-team";
  o.sbatch_lines = {"--qos=high", "#SBATCH --mail-type=END"};
  auto script = slurm_scripts(plan_on({{"n", 60}}), o).at("n.sbatch");
  CHECK_THAT(script, Catch::Contains("#SBATCH --partition=gpu\n#SBATCH --account=ml-team\n"
                                     "#SBATCH --qos=high\n#SBATCH --mail-type=END\n"));
}

TEST_CASE("a command template and a results file reach gpuplan exec quoted") {
  auto o = options();
  o.command = "echo {label} $(whoami)";
  o.results = "/shared/it's.csv";
  auto script = slurm_scripts(plan_on({{"n", 60}}), o).at("n.sbatch");
  CHECK_THAT(script,
             Catch::EndsWith("--command 'echo {label} $(whoami)' --results '/shared/it'\\''s.csv'\n"));
  o = options();
  o.bazel_args = {"--config=cuda", "--test_env=A=b c"};  // the team's options for exec's bazel test
  CHECK_THAT(slurm_scripts(plan_on({{"n", 60}}), o).at("n.sbatch"),
             Catch::EndsWith("--node n -- --config=cuda '--test_env=A=b c'\n"));
  // exec's --missing-gpus=warn, before the bazel test's options: no job could be given it before.
  o.warn_missing_gpus = true;
  CHECK_THAT(slurm_scripts(plan_on({{"n", 60}}), o).at("n.sbatch"),
             Catch::EndsWith("--node n --missing-gpus=warn -- --config=cuda '--test_env=A=b c'\n"));
}

TEST_CASE("with a claims directory every job runs gpuplan exec dynamically, sharing it") {
  auto o = options();
  o.claims = "/shared/claims dir";
  o.lease_s = 30;
  o.fleet = "/shared/fleet.yaml";
  auto files = slurm_scripts(plan_on({{"a", 60}, {"b", 60}}), o);
  for (const auto& [name, script] : files)
    if (name != "submit.sh")
      CHECK_THAT(script, Catch::EndsWith(" --claims '/shared/claims dir'/\"${1:-}\" --lease 30 --fleet "
                                         "/shared/fleet.yaml\n"));
  // Each submission gets a directory of its own: one an earlier submission left would run nothing.
  CHECK_THAT(files.at("submit.sh"), Catch::Contains("\nsubmission=${1:-$(date -u +%Y%m%dT%H%M%SZ)-$$}\n") &&
                                        Catch::Contains(" a.sbatch \"$submission\")"));
}

TEST_CASE("a node name Slurm cannot take, or an option that would break a line, is refused") {
  REQUIRE_THROWS_WITH(slurm_scripts(plan_on({{"n;rm -rf /", 60}}), options()),
                      Catch::Contains("not a name Slurm accepts"));
  auto o = options();
  o.partition = "gpu\n#SBATCH --uid=0";
  REQUIRE_THROWS_AS(slurm_scripts(plan_on({{"n", 60}}), o), InputError);
  o = options();
  o.sbatch_lines = {"--qos=high\nrm -rf /"};
  REQUIRE_THROWS_AS(slurm_scripts(plan_on({{"n", 60}}), o), InputError);
  o = options();
  o.time_margin = 0.5;
  REQUIRE_THROWS_AS(slurm_scripts(plan_on({{"n", 60}}), o), InputError);
}

// A job whose --time is over its partition's limit pends for ever (PartitionTimeLimit) while
// submit.sh exited 0: it checks every job against sinfo's limit before the first sbatch (the
// checks themselves run in test/integration/exports_test.sh and slurm_test.sh).
TEST_CASE("submit.sh checks each job's time against the partition's limit before submitting any") {
  auto o = options();
  o.partition = "short";
  o.startup_s = 300;
  auto submit = slurm_scripts(plan_on({{"a-0", 1200}, {"b-0", 60}}), o).at("submit.sh");
  CHECK_THAT(submit, Catch::Contains("partition=short\n"));
  CHECK_THAT(submit, Catch::Contains("sinfo -h -p \"$partition\" -o %l"));
  // NODE, in minutes its planned end and startup, its planned end, the startup; the --time it asks
  // for is clipped to the limit in the sbatch line only where those fit (a-0: 35).
  const auto first_check = submit.find("fits a-0 25 20 5\n");
  const auto refusal = submit.find("if [ -n \"$too_long\" ]; then");
  const auto first_sbatch = submit.find("sbatch --parsable");
  CHECK(first_check < submit.find("fits b-0 6 1 5\n"));
  CHECK(submit.find("fits b-0 6 1 5\n") < refusal);
  CHECK(refusal < first_sbatch);
  CHECK_THAT(submit, Catch::Contains("job=$(sbatch --parsable $(clipped a-0 35 20 5) a-0.sbatch) || {"));
}
