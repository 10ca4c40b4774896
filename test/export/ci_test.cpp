#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include "gpuplan/export.hpp"

using namespace gpuplan;

namespace {
Plan two_nodes() {
  Plan plan;
  for (auto [node, end] : {std::pair{"b-0", 90.0}, std::pair{"a-0", 600.0}}) {
    Assignment a;
    a.unit.label = a.unit.id = std::string("//t:") + node;
    a.node = node;
    a.gpus = {0};
    a.end_s = end;
    plan.assignments.push_back(a);
  }
  return plan;
}

/// two_nodes()' fleet: a-0 and b-0, one GPU each, with no labels.
Fleet two_nodes_fleet() {
  Fleet fleet;
  for (const auto* name : {"a-0", "b-0"}) {
    Node node;
    node.name = name;
    node.gpus.resize(1);
    fleet.nodes.push_back(node);
  }
  return fleet;
}

/// A plan of `count` nodes n-0, n-1, ..., each running one 60-second unit on GPU 0.
Plan plan_of_nodes(int count) {
  Plan plan;
  for (int n = 0; n < count; ++n) {
    Assignment a;
    a.node = "n-" + std::to_string(n);
    a.unit.label = a.unit.id = "//t:n-" + std::to_string(n);
    a.gpus = {0};
    a.end_s = 60;
    plan.assignments.push_back(a);
  }
  return plan;
}
}  // namespace

TEST_CASE("the GitHub matrix has one entry per node with its runner labels, timeout and command") {
  CiOptions o;
  o.node_tag = "node";
  o.tags = {"self-hosted"};
  auto matrix = nlohmann::json::parse(github_matrix(two_nodes(), nullptr, o));
  REQUIRE(matrix["include"].size() == 2);
  auto first = matrix["include"][0];
  CHECK(first["node"] == "a-0");
  CHECK(first["runs-on"] == nlohmann::json::array({"self-hosted", "a-0"}));
  CHECK(first["timeout-minutes"] == 20);  // 600 s × 1.5 + 300 s of startup (checkout, build)
  auto flaky = two_nodes();
  flaky.assignments[1].unit.flaky = true;  // a-0's, of 600 s: Bazel may run it twice more
  flaky.assignments[1].unit.duration_s = 600;
  CHECK(nlohmann::json::parse(github_matrix(flaky, nullptr, o))["include"][0]["timeout-minutes"] == 50);
  auto no_startup = o;
  no_startup.startup_s = 0;
  CHECK(nlohmann::json::parse(
            github_matrix(two_nodes(), nullptr, no_startup))["include"][0]["timeout-minutes"] == 15);
  // The job makes the results file's directory, which a fresh checkout lacks and exec does not make:
  // before, every job stopped at its start (exit 2, "cannot write the results file").
  CHECK(first["command"] ==
        "mkdir -p gpuplan-results && gpuplan exec plan.json --node a-0 --results gpuplan-results/a-0.csv");
  CHECK(first["units"] == nlohmann::json::array({"//t:a-0"}));
  o.bazel_args = {"--config=cuda", "--define=x=a b"};  // the team's options for exec's bazel test
  CHECK(nlohmann::json::parse(github_matrix(two_nodes(), nullptr, o))["include"][0]["command"] ==
        "mkdir -p gpuplan-results && gpuplan exec plan.json --node a-0 --results gpuplan-results/a-0.csv -- "
        "--config=cuda '--define=x=a b'");
  // exec's --lock-dir (the runner's, shared with its other users) and --missing-gpus=warn, which
  // no job could be given before (--command replaces only what exec runs).
  o.lock_dir = "/var/lock/gpu plan";
  o.warn_missing_gpus = true;
  CHECK(nlohmann::json::parse(github_matrix(two_nodes(), nullptr, o))["include"][0]["command"] ==
        "mkdir -p gpuplan-results && gpuplan exec plan.json --node a-0 --results gpuplan-results/a-0.csv "
        "--lock-dir '/var/lock/gpu plan' --missing-gpus=warn -- --config=cuda '--define=x=a b'");
  o.lock_dir = "/var/lock/gpuplan";
  CHECK_THAT(gitlab_pipeline(two_nodes(), nullptr, o),
             Catch::Contains("--lock-dir /var/lock/gpuplan --missing-gpus=warn -- --config=cuda"));
  CHECK_THAT(buildkite_pipeline(two_nodes(), nullptr, o),
             Catch::Contains("--lock-dir /var/lock/gpuplan --missing-gpus=warn -- --config=cuda"));
  // A relative one is each job's checkout's own: it shares the GPUs with nobody.
  o.lock_dir = "locks";
  CHECK_THROWS_WITH(github_matrix(two_nodes(), nullptr, o), Catch::Contains("\"locks\" is relative"));
}

TEST_CASE("nodes whose runner labels differ only in case are refused: GitHub compares labels without case") {
  Plan plan = two_nodes();
  plan.assignments[0].node = "GPU-1";
  plan.assignments[1].node = "gpu-1";
  CiOptions o;
  o.node_tag = "node";
  o.tags = {"self-hosted"};
  CHECK_THROWS_WITH(
      github_matrix(plan, nullptr, o),
      Catch::Contains("nodes \"GPU-1\" and \"gpu-1\" get the runner labels [self-hosted, gpu-1], which "
                      "GitHub compares without case"));
}

TEST_CASE("more nodes than a GitHub matrix or a Buildkite upload takes are refused, not written") {
  // GitHub makes at most 256 jobs of a matrix, Buildkite's pipeline upload takes at most 500 steps:
  // before, the export wrote them and the run failed after planning.
  CiOptions o;
  o.node_tag = "node";
  CHECK_NOTHROW(github_matrix(plan_of_nodes(256), nullptr, o));
  CHECK_THROWS_WITH(
      github_matrix(plan_of_nodes(257), nullptr, o),
      Catch::Contains("the plan uses 257 nodes, and a GitHub Actions matrix makes at most 256 jobs"));
  CHECK_NOTHROW(buildkite_pipeline(plan_of_nodes(498), nullptr, o));
  CHECK_THROWS_WITH(buildkite_pipeline(plan_of_nodes(499), nullptr, o), Catch::Contains("at most 500 steps"));
}

TEST_CASE("Buildkite gets a step per node on its agent, then a wait that lets failures through and a merge") {
  CiOptions o;
  o.node_tag = "hostname";
  o.tags = {"queue=gpu"};
  auto steps = YAML::Load(buildkite_pipeline(two_nodes(), nullptr, o))["steps"];
  REQUIRE(steps.size() == 4);
  CHECK(steps[0]["agents"]["hostname"].as<std::string>() == "a-0");
  CHECK(steps[0]["agents"]["queue"].as<std::string>() == "gpu");
  CHECK(steps[1]["timeout_in_minutes"].as<int>() == 8);  // 90 s × 1.5 + 300 s: a job that builds first
  CHECK(steps[2]["continue_on_failure"].as<bool>());
  CHECK(steps[3]["key"].as<std::string>() == "gpuplan-merge");
  // No node uploaded a result (none got as far): the download's failure does not fail the merge.
  CHECK_THAT(steps[3]["command"][0].as<std::string>(),
             Catch::EndsWith("|| echo 'gpuplan: no results were uploaded'"));
  // pipeline upload replaces $VAR with the uploading job's value; $$ leaves a $ for the step.
  o.command = "bazel test {label} --test_env=SCRATCH=$TMPDIR";
  auto escaped = YAML::Load(buildkite_pipeline(two_nodes(), nullptr, o))["steps"];
  CHECK_THAT(escaped[0]["command"][1].as<std::string>(), Catch::Contains("--test_env=SCRATCH=$$TMPDIR'"));
}

// A node named merge got the merge job's name: GitLab kept one of the two, its units never ran,
// and the pipeline passed; Buildkite's upload refused the repeated key after planning.
TEST_CASE("a node whose job would take the merge job's name is refused") {
  Plan plan = two_nodes();
  plan.assignments[0].node = "merge";
  CiOptions o;
  o.node_tag = "node";
  CHECK_THROWS_WITH(gitlab_pipeline(plan, nullptr, o),
                    Catch::Contains("node \"merge\": its job would be named gpuplan-merge"));
  CHECK_THROWS_WITH(buildkite_pipeline(plan, nullptr, o), Catch::Contains("rename the node in the fleet"));
  plan.assignments[0].node = "merge-0";
  CHECK_NOTHROW(gitlab_pipeline(plan, nullptr, o));
}

TEST_CASE("GitLab gets a job per node with runner tags and a merge job that runs even after failures") {
  CiOptions o;
  o.node_tag = "node";
  auto pipeline = YAML::Load(gitlab_pipeline(two_nodes(), nullptr, o));
  CHECK(pipeline["gpuplan-b-0"]["tags"][0].as<std::string>() == "b-0");
  CHECK(pipeline["gpuplan-b-0"]["needs"][0]["job"].as<std::string>() == "gpuplan-plan");
  CHECK(pipeline["gpuplan-b-0"]["timeout"].as<std::string>() == "8 minutes");
  CHECK(pipeline["gpuplan-merge"]["when"].as<std::string>() == "always");
  // A later stage waits for every job of the earlier one and gets its artifacts; needs: would cap
  // the nodes at GitLab's 50.
  CHECK(pipeline["gpuplan-merge"]["stage"].as<std::string>() == "gpu-merge");
  CHECK_FALSE(pipeline["gpuplan-merge"]["needs"]);
}

// A job output holds at most 1 MB: a matrix of long unit lists was written, exit 0, and the
// workflow failed after planning.
TEST_CASE("a GitHub matrix over a job output's 1 MB is refused, pointing to --no-units") {
  Plan plan;
  for (int n = 0; n < 200; ++n)
    for (int u = 0; u < 80; ++u) {
      Assignment a;
      a.node = "n-" + std::to_string(n);
      a.unit.label = a.unit.id =
          fmt::format("//very/long/package/path/for/unit/{}:test_{}_{}", std::string(40, 'x'), n, u);
      a.gpus = {0};
      a.end_s = 60;
      plan.assignments.push_back(a);
    }
  CiOptions o;
  o.node_tag = "node";
  CHECK_THROWS_WITH(
      github_matrix(plan, nullptr, o),
      Catch::Contains("a GitHub Actions job output holds at most 1 MB") && Catch::Contains("--no-units"));
  o.with_units = false;
  CHECK(github_matrix(plan, nullptr, o).size() < 1000 * 1000);
}

// A plan without GPU units: the merge ran `history summarize gpuplan-results/*.csv` on no file and
// failed the pipeline, and Buildkite's download of no artifact failed before it.
TEST_CASE("a plan without GPU units gives a pipeline whose merge step merges nothing and passes") {
  CiOptions o;
  o.node_tag = "node";
  auto pipeline = YAML::Load(gitlab_pipeline(Plan{}, nullptr, o));
  CHECK(pipeline.size() == 2);  // stages and the merge job
  auto script = pipeline["gpuplan-merge"]["script"][0].as<std::string>();
  CHECK_THAT(script, Catch::Contains("if [ -e \"$1\" ]") && Catch::Contains("no results to merge"));
  auto steps = YAML::Load(buildkite_pipeline(Plan{}, nullptr, o))["steps"];
  REQUIRE(steps.size() == 1);
  REQUIRE(steps[0]["command"].size() == 1);
  CHECK_THAT(steps[0]["command"][0].as<std::string>(), !Catch::Contains("artifact download"));
}

// The fleet takes node names of up to 253 characters; "gpuplan-" made a GitLab job name over its
// 255, and GitLab refused the whole child pipeline.
TEST_CASE("a GitLab job name over 255 characters is refused naming the node") {
  Plan plan = two_nodes();
  plan.assignments[0].node = std::string(247, 'n');  // gpuplan- and it: 255
  CiOptions o;
  o.node_tag = "node";
  CHECK_NOTHROW(gitlab_pipeline(plan, nullptr, o));
  plan.assignments[0].node = std::string(248, 'n');
  CHECK_THROWS_WITH(gitlab_pipeline(plan, nullptr, o),
                    Catch::Contains("would have 256 characters, and GitLab takes at most 255"));
}

// GitLab refuses a child pipeline with a job timeout over a month (Project::MAX_BUILD_TIMEOUT):
// the export wrote it, exit 0, and none of its nodes' jobs ran.
TEST_CASE("a GitLab job timeout over a month is refused naming the node") {
  Plan plan = two_nodes();
  CiOptions o;
  o.node_tag = "node";
  o.startup_s = 0;
  plan.assignments[1].end_s = 20.0 * 86400;  // 20 days × 1.5: 30 days, the most GitLab takes
  CHECK(YAML::Load(gitlab_pipeline(plan, nullptr, o))["gpuplan-a-0"]["timeout"].as<std::string>() ==
        "43200 minutes");
  plan.assignments[1].end_s = 20.0 * 86400 + 60;
  CHECK_THROWS_WITH(gitlab_pipeline(plan, nullptr, o),
                    Catch::Contains("node \"a-0\": its job's timeout would be 43202 minutes") &&
                        Catch::Contains("GitLab takes at most a month (43200 minutes)"));
}

// GitHub ends a self-hosted runner's job after 5 days: a node planned for more never finished.
TEST_CASE("a GitHub matrix of a node with more planned work than a job may run is refused") {
  Plan plan = two_nodes();
  CiOptions o;
  o.node_tag = "node";
  plan.assignments[1].end_s = 5 * 86400;  // it may finish in time, though its timeout is longer
  CHECK_NOTHROW(github_matrix(plan, nullptr, o));
  plan.assignments[1].end_s = 5 * 86400 + 1;
  CHECK_THROWS_WITH(
      github_matrix(plan, nullptr, o),
      Catch::Contains("node \"a-0\" has 432001 s of planned work, and GitHub ends a self-hosted "
                      "runner's job after 5 days"));
}

// --no-node-tag was refused by github-matrix and accepted by GitLab and Buildkite, whose node jobs
// then ran on any runner with the static tags, on GPUs the plan gave another node's units.
TEST_CASE("every CI export refuses two nodes whose jobs would ask for the same tags") {
  CiOptions o;
  o.tags = {"gpu"};  // --no-node-tag: no node_tag
  CHECK_THROWS_WITH(gitlab_pipeline(two_nodes(), nullptr, o),
                    Catch::Contains("nodes \"a-0\" and \"b-0\" get the tags [gpu], so either job may run on "
                                    "either machine: leave out --no-node-tag"));
  o.tags = {"queue=gpu"};
  CHECK_THROWS_WITH(buildkite_pipeline(two_nodes(), nullptr, o), Catch::Contains("get the tags [queue=gpu]"));
  CHECK_THROWS_WITH(github_matrix(two_nodes(), nullptr, o),
                    Catch::Contains("get the runner labels [queue=gpu], so"));
  // Fleet labels that tell the nodes apart, or one node alone, are fine.
  Fleet fleet;
  for (const char* name : {"a-0", "b-0"}) {
    Node node;
    node.name = name;
    node.gpus.resize(1);
    node.labels = {{"box", std::string("box-") + name}};
    fleet.nodes.push_back(node);
  }
  o.fleet_tags = {"box"};
  CHECK_NOTHROW(gitlab_pipeline(two_nodes(), &fleet, o));
  CHECK_NOTHROW(buildkite_pipeline(two_nodes(), &fleet, o));
  CHECK_NOTHROW(github_matrix(two_nodes(), &fleet, o));
}

// Buildkite's agents are a map: --tag hostname=other was silently replaced by the node's.
TEST_CASE("a Buildkite --tag of the node tag's key is refused, not dropped") {
  CiOptions o;
  o.node_tag = "hostname";
  o.tags = {"hostname=other"};
  CHECK_THROWS_WITH(buildkite_pipeline(two_nodes(), nullptr, o),
                    Catch::Contains("\"hostname=other\": the tag hostname names the node (--node-tag)"));
  o.tags = {"queue=gpu"};
  CHECK_NOTHROW(buildkite_pipeline(two_nodes(), nullptr, o));
}

// Buildkite refused the upload for a step key over 100 characters or with a character its
// schema (buildkite/pipeline-schema, definitions.key) does not take.
TEST_CASE("a Buildkite step key is the node's name where Buildkite takes it, else made with a hash") {
  auto keys_of = [](const Plan& plan) {
    CiOptions o;
    o.node_tag = "hostname";
    std::vector<std::string> keys;
    for (const auto& step : YAML::Load(buildkite_pipeline(plan, nullptr, o))["steps"])
      if (step["key"]) keys.push_back(step["key"].as<std::string>());
    return keys;
  };
  Plan plan = two_nodes();
  plan.assignments[0].node = "gpu-1.dc.example.com";  // a dotted host name is a key as it is
  plan.assignments[1].node = std::string(92, 'x');    // "gpuplan-" and 92: 100 characters
  CHECK(keys_of(plan) == std::vector<std::string>{"gpuplan-gpu-1.dc.example.com",
                                                  "gpuplan-" + plan.assignments[1].node.str(),
                                                  "gpuplan-merge"});
  plan.assignments[0].node = "GPU_Box@1";
  plan.assignments[1].node = std::string(93, 'x');
  auto keys = keys_of(plan);
  REQUIRE(keys.size() == 3);
  CHECK_THAT(keys[0], Catch::Matches("gpuplan-gpu-box-1-[0-9a-f]{8}"));
  CHECK(keys[1].size() == 100);
  CHECK_THAT(keys[1], Catch::Matches("gpuplan-x+-[0-9a-f]{8}"));
  // The agent tag still names the node as it is: only the key changes.
  CiOptions o;
  o.node_tag = "hostname";
  CHECK(
      YAML::Load(buildkite_pipeline(plan, nullptr, o))["steps"][0]["agents"]["hostname"].as<std::string>() ==
      "GPU_Box@1");
  // A node already named as another's made key is refused, not given the same key.
  plan.assignments[1].node = keys[0].substr(std::string("gpuplan-").size());
  CHECK_THROWS_WITH(keys_of(plan), Catch::Contains("would both get the step key " + keys[0]));
}

// A hand-edited plan's node "a/b" left its results in gpuplan-results/a/b.csv, which the merge
// job's gpuplan-results/*.csv never read; "../x" wrote outside the folder, ".x" a file the glob
// skips, "g[1]" an artifact glob that matched gpuplan-results/g1.csv. Every CI export wrote them, exit 0.
TEST_CASE("a node whose results file the merge job would not read is refused by every CI export") {
  CiOptions o;
  o.node_tag = "node";
  for (const std::string bad : {"a/b", "../x", ".x", "g[1]", "n*", "a\\b"}) {
    INFO(bad);
    Plan plan = two_nodes();
    plan.assignments[0].node = bad;
    auto refused = Catch::Contains("would not reach the merge job");
    CHECK_THROWS_WITH(github_matrix(plan, nullptr, o), refused);
    CHECK_THROWS_WITH(gitlab_pipeline(plan, nullptr, o), refused);
    CHECK_THROWS_WITH(buildkite_pipeline(plan, nullptr, o), refused);
  }
  Plan plan = two_nodes();
  plan.assignments[0].node = "GPU_Box@1";  // no fleet's, but its results reach the merge job
  CHECK_NOTHROW(github_matrix(plan, nullptr, o));
  CHECK_NOTHROW(gitlab_pipeline(plan, nullptr, o));
  CHECK_NOTHROW(buildkite_pipeline(plan, nullptr, o));
}

TEST_CASE(
    "a tag no runner or agent can carry is refused naming the option, not written for a job that waits") {
  // Runners register their labels from a comma-separated list, split at commas and trimmed: a job
  // asking for "a,b" or " a" waited forever for a runner that never came, after exit 0.
  Plan plan = two_nodes();
  Fleet fleet = two_nodes_fleet();
  for (auto& node : fleet.nodes) node.labels["zone"] = "a,b";
  CiOptions o;
  o.node_tag = "node";
  o.fleet_tags = {"zone"};
  CHECK_THROWS_WITH(
      github_matrix(plan, &fleet, o),
      Catch::Contains("node \"a-0\"'s fleet label zone (--fleet-tag zone) gives the tag \"a,b\", "
                      "whose value has a comma") &&
          Catch::Contains("wait forever"));
  CHECK_THROWS_WITH(gitlab_pipeline(plan, &fleet, o), Catch::Contains("has a comma"));
  auto bk = o;
  bk.node_tag = "hostname";
  CHECK_THROWS_WITH(buildkite_pipeline(plan, &fleet, bk), Catch::Contains("gives the tag \"zone=a,b\""));
  for (auto& node : fleet.nodes) node.labels["zone"] = " a";
  CHECK_THROWS_WITH(gitlab_pipeline(plan, &fleet, o), Catch::Contains("begins or ends with a space"));
  o.fleet_tags.clear();
  o.tags = {"x,y"};
  CHECK_THROWS_WITH(github_matrix(plan, nullptr, o), Catch::Contains("--tag \"x,y\" gives the tag"));
  bk.fleet_tags.clear();
  bk.tags = {"queue=gpu,cpu"};
  CHECK_THROWS_WITH(buildkite_pipeline(plan, nullptr, bk), Catch::Contains("has a comma"));
  bk.tags = {"queue=gpu"};
  CHECK_NOTHROW(buildkite_pipeline(plan, nullptr, bk));
  plan.assignments[0].node = "c,d";  // a plan edited by hand: its node name is the tag
  o.tags = {"self-hosted"};
  CHECK_THROWS_WITH(github_matrix(plan, nullptr, o),
                    Catch::Contains("node \"c,d\"'s name (--node-tag node)"));
}

// GitLab stores and matches runner tags with case (ActsAsTaggableOn.strict_case_match = true in its
// config/initializers/0_acts_as_taggable.rb), unlike GitHub's runner labels: nodes GPU-1 and gpu-1
// reach their own runners there, and are written.
TEST_CASE("GitLab tags that differ only in case are told apart, as GitLab tells them apart") {
  Plan plan = two_nodes();
  plan.assignments[0].node = "GPU-1";
  plan.assignments[1].node = "gpu-1";
  CiOptions o;
  o.node_tag = "node";
  auto pipeline = YAML::Load(gitlab_pipeline(plan, nullptr, o));
  CHECK(pipeline["gpuplan-GPU-1"]["tags"][0].as<std::string>() == "GPU-1");
  CHECK(pipeline["gpuplan-gpu-1"]["tags"][0].as<std::string>() == "gpu-1");
  // Buildkite's agent targeting is case-sensitive too (buildkite/frontend#366 made the agents
  // page's tag search so "in the same way the step agent targeting rules are"): each node's step
  // asks for its own name as it is, and neither is refused.
  o.node_tag = "hostname";
  std::vector<std::string> hostnames;
  for (const auto& step : YAML::Load(buildkite_pipeline(plan, nullptr, o))["steps"])
    if (step["agents"]) hostnames.push_back(step["agents"]["hostname"].as<std::string>());
  CHECK(hostnames == std::vector<std::string>{"GPU-1", "gpu-1"});
}

// GitLab refuses a CI file whose parsed YAML takes more memory than max_yaml_size_bytes (2 MB by
// default), counted by Gitlab::Utils::DeepSize: far more than the file's bytes.
TEST_CASE("a GitLab pipeline's parsed size is at least what GitLab's DeepSize counts of it") {
  CiOptions o;
  o.node_tag = "node";
  std::size_t parsed = 0;
  const auto small = gitlab_pipeline(plan_of_nodes(1), nullptr, o, &parsed);
  // Every key and short value is a 40-byte Ruby object, every hash at least 160: short lines weigh more.
  CHECK(parsed > 3 * small.size());
  const auto big = gitlab_pipeline(plan_of_nodes(2000), nullptr, o, &parsed);
  CHECK(big.size() < gitlab_default_max_yaml_bytes);
  CHECK(parsed > gitlab_default_max_yaml_bytes);
}

// GitLab expands CI/CD variables in a job's tags (Gitlab::Ci::Pipeline::Seed::Build#evaluate_runner_tags
// runs each through ExpandVariables.expand_existing, whose VARIABLES_REGEXP in lib/expand_variables.rb is
// $NAME, ${NAME} and %NAME%, with no escape): a fleet label "gpu-$CI_JOB_ID" asked for another tag
// than the node's runner carried, after exit 0. A job of 50 tags or more (Entry::Tags::TAGS_LIMIT)
// or a tag over 255 characters (Ci::Tag's validation) made GitLab refuse the pipeline.
TEST_CASE("GitLab tags that GitLab would rewrite or refuse are refused, naming the option") {
  Plan plan = two_nodes();
  Fleet fleet = two_nodes_fleet();
  CiOptions o;
  o.node_tag = "node";
  o.fleet_tags = {"zone"};
  for (std::string value : {"gpu-$CI_JOB_ID", "${zone}", "50%PATH%", "$_x"}) {
    INFO(value);
    for (auto& node : fleet.nodes) node.labels["zone"] = value;
    CHECK_THROWS_WITH(gitlab_pipeline(plan, &fleet, o),
                      Catch::Contains("node \"a-0\"'s fleet label zone (--fleet-tag zone) gives the tag") &&
                          Catch::Contains("GitLab replaces") && Catch::Contains("lib/expand_variables.rb"));
    // Buildkite's export writes $ as $$, and GitHub's matrix expands nothing: both keep such a value.
    CHECK_NOTHROW(github_matrix(plan, &fleet, o));
  }
  // What no reference reads ($ before a digit or at the end, one %, %NAME without its closing %)
  // stays as it is, quoted where YAML needs it, and comes back from the YAML as written.
  for (std::string value : {"a$", "$1", "100%", "%gpu", "yes", "1.10", "null", "#x", "a: b", "~", "0x1F"}) {
    INFO(value);
    for (auto& node : fleet.nodes) node.labels["zone"] = value;
    auto pipeline = YAML::Load(gitlab_pipeline(plan, &fleet, o));
    CHECK(pipeline["gpuplan-a-0"]["tags"][1].as<std::string>() == value);
    CHECK(pipeline["gpuplan-a-0"]["tags"][1].Tag() == "!");  // quoted: a string, whatever it looks like
  }
  // A --tag may name a variable on purpose ($GPU_RUNNER_TAG set in the project), and is written.
  o.fleet_tags.clear();
  o.tags = {"$GPU_RUNNER_TAG"};
  CHECK_NOTHROW(gitlab_pipeline(plan, nullptr, o));
  o.tags = {std::string(256, 'x')};
  CHECK_THROWS_WITH(gitlab_pipeline(plan, nullptr, o),
                    Catch::Contains("a tag of 256 characters") && Catch::Contains("at most 255"));
  o.tags.clear();
  for (int i = 0; i < 49; ++i) o.tags.push_back("t" + std::to_string(i));
  CHECK_THROWS_WITH(gitlab_pipeline(plan, nullptr, o),
                    Catch::Contains("would ask for 50 runner tags, and GitLab takes fewer than 50"));
  o.tags.pop_back();
  CHECK_NOTHROW(gitlab_pipeline(plan, nullptr, o));
}

// Buildkite's agent targeting reads a tag's value `*`, or none after the `=`, as "any agent with
// that tag" (buildkite/docs pages/agent/v3/cli_start.md, "Agent targeting"): a fleet label
// `box: "*"` sent each node's step to whichever agent had a box tag, exit 0.
TEST_CASE("a Buildkite agent tag that Buildkite reads as a wildcard is refused, naming the label") {
  Plan plan = two_nodes();
  Fleet fleet = two_nodes_fleet();
  CiOptions o;
  o.node_tag = "hostname";
  o.fleet_tags = {"box"};
  for (std::string value : {"*", ""}) {
    INFO(value);
    for (auto& node : fleet.nodes) node.labels["box"] = value;
    CHECK_THROWS_WITH(
        buildkite_pipeline(plan, &fleet, o),
        Catch::Contains(
            "node \"a-0\"'s fleet label box (--fleet-tag box) gives the agent tag \"box=" + value + "\"") &&
            Catch::Contains("matches every agent with that tag"));
  }
  // A partial wildcard is no wildcard ("not yet supported"), and GitHub and GitLab match `*` as it is.
  for (auto& node : fleet.nodes) node.labels["box"] = "gpu*";
  CHECK_NOTHROW(buildkite_pipeline(plan, &fleet, o));
  for (auto& node : fleet.nodes) node.labels["box"] = "*";
  o.node_tag = "node";
  CHECK_NOTHROW(gitlab_pipeline(plan, &fleet, o));
  // A --tag queue=* asks for any queue on purpose.
  o.node_tag = "hostname";
  o.fleet_tags.clear();
  o.tags = {"queue=*"};
  CHECK_NOTHROW(buildkite_pipeline(plan, nullptr, o));
}
