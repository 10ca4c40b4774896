// `gpuplan export github-matrix`: the JSON a GitHub Actions `strategy.matrix` takes, one
// entry per node, for `matrix: ${{ fromJSON(needs.plan.outputs.matrix) }}`.
#include <nlohmann/json.hpp>

#include "export/ci.hpp"
#include "gpuplan/export.hpp"

namespace gpuplan {

std::string github_matrix(const Plan& plan, const Fleet* fleet, const CiOptions& o) {
  nlohmann::ordered_json include = nlohmann::ordered_json::array();
  for (const auto& node : export_nodes(plan, fleet)) {
    nlohmann::ordered_json entry;
    entry["node"] = node.name;
    entry["runs-on"] = ci_tags(o, node, false);
    entry["gpus"] = node.gpus;
    entry["unit_count"] = node.units;
    entry["planned_s"] = node.end_s;
    entry["timeout-minutes"] = ci_timeout_minutes(o, node);
    entry["command"] = ci_exec_command(o, node);
    entry["results"] = ci_results_path(node);
    if (o.with_units) entry["units"] = node.unit_ids;
    include.push_back(std::move(entry));
  }
  return nlohmann::ordered_json({{"include", include}}).dump() + "\n";
}

}  // namespace gpuplan
