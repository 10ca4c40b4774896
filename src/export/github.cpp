// `gpuplan export github-matrix`: the JSON a GitHub Actions `strategy.matrix` takes, one
// entry per node, for `matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}`.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "export/ci.hpp"
#include "gpuplan/error.hpp"
#include "gpuplan/export.hpp"

namespace gpuplan {

namespace {

/// What a job output holds, as GitHub counts a megabyte.
constexpr std::size_t github_output_limit = 1000 * 1000;

/// "Each job in a workflow can run for up to 5 days of execution time" on a self-hosted runner
/// (GitHub's usage limits): the job is then ended, whatever its timeout-minutes.
constexpr double github_job_limit_s = 5 * 86400;

}  // namespace

std::string github_matrix(const Plan& plan, const Fleet* fleet, const CiOptions& o) {
  nlohmann::ordered_json include = nlohmann::ordered_json::array();
  // GitHub compares runner labels without case: two nodes whose labels differ only in case
  // (GPU-1, gpu-1) would each take the other's runner as readily as their own.
  CiTagsSeen seen;
  const auto nodes = export_nodes(plan, fleet);
  // "A matrix can generate a maximum of 256 jobs per workflow run" (GitHub's docs): the run would
  // fail when it starts, after the plan job.
  if (nodes.size() > 256)
    throw InputError(
        Position{"export github-matrix"},
        fmt::format("the plan uses {} nodes, and a GitHub Actions matrix makes at most 256 jobs: "
                    "split the fleet into several workflows (one plan each), or use another launcher",
                    nodes.size()));
  for (const auto& node : nodes) {
    ci_check_node_name(node, "github-matrix");
    // A node with more planned work than a job may run never finished: GitHub ended its job after
    // 5 days, with the rest of its units not run, after the export exited 0.
    if (node.end_s + node.reruns_s > github_job_limit_s)
      throw InputError(
          Position{"export github-matrix"},
          fmt::format("node \"{}\" has {:.0f} s of planned work, and GitHub ends a self-hosted "
                      "runner's job after 5 days ({:.0f} s): plan over more nodes, or use another "
                      "launcher",
                      node.name, node.end_s + node.reruns_s, github_job_limit_s));
    auto labels = ci_tags(o, node, false);
    ci_check_told_apart(seen, o, node, labels, "github-matrix", true);
    nlohmann::ordered_json entry;
    entry["node"] = node.name;
    entry["runs-on"] = labels;
    entry["gpus"] = node.gpus;
    entry["unit_count"] = node.units;
    entry["planned_s"] = node.end_s;
    entry["timeout-minutes"] = ci_timeout_minutes(o, node);
    entry["command"] = ci_exec_command(o, node);
    entry["results"] = ci_results_path(node);
    if (o.with_units) entry["units"] = node.unit_ids;
    include.push_back(std::move(entry));
  }
  std::string matrix = nlohmann::ordered_json({{"include", include}}).dump() + "\n";
  // "Job outputs ... can be a maximum of 1 MB" (GitHub's docs): the plan job fails to set it,
  // or the matrix job gets a cut one, after planning.
  if (matrix.size() > github_output_limit)
    throw InputError(
        Position{"export github-matrix"},
        fmt::format(
            "the matrix is {} bytes, and a GitHub Actions job output holds at most 1 MB ({} bytes): {}",
            matrix.size(), github_output_limit,
            o.with_units ? "leave the unit lists out with --no-units (the jobs read them from the plan)"
                         : "split the fleet into several workflows (one plan each), or shorten --command"));
  return matrix;
}

}  // namespace gpuplan
