// `gpuplan show --format markdown`: a plan as a CI job summary or a PR comment.
#include "util/markdown.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "gpuplan/emit.hpp"
#include "util/spans.hpp"
#include "util/text.hpp"

namespace gpuplan {

namespace {

using util::markdown::code;
using util::markdown::text;

/// Under 10 s to a tenth, as the text view's format_seconds: a node whose units took 0.3 s said it
/// was busy 0s, where `show` said 0.3s.
std::string duration(double s) {
  if (s < 10 && std::round(s) != s) return fmt::format("{:.1f}s", s);
  long total = std::lround(s);
  if (total >= 3600) return fmt::format("{}h {:02}m {:02}s", total / 3600, total / 60 % 60, total % 60);
  if (total >= 60) return fmt::format("{}m {:02}s", total / 60, total % 60);
  return fmt::format("{}s", total);
}

/// At most this many labels a group lists; the rest is counted.
constexpr std::size_t listed_per_group = 20;

void list_group(std::string& out, const std::string& heading, const std::vector<std::string>& items) {
  out += fmt::format("<details><summary>{} ({})</summary>\n\n", heading, items.size());
  for (std::size_t i = 0; i < items.size() && i < listed_per_group; ++i)
    out += fmt::format("- {}\n", items[i]);
  if (items.size() > listed_per_group)
    out += fmt::format("- … and {} more\n", items.size() - listed_per_group);
  out += "\n</details>\n\n";
}

}  // namespace

std::string render_markdown(const Plan& plan) {
  const auto& s = plan.summary;
  std::string out = "## GPU test plan\n\n";
  out += "| | |\n|---|---|\n";
  out += fmt::format("| policy | {} |\n", to_string(plan.policy));
  out += fmt::format("| tests | {} ({} GPU, {} CPU, {} skipped) |\n", s.tests, s.gpu_tests, s.cpu_tests,
                     s.skipped_tests);
  out += fmt::format("| GPU units | {} scheduled, {} unschedulable |\n", s.scheduled_units,
                     s.unschedulable_units);
  // As the text view: a plan with no bound (0) says none, not "0.0% above it".
  if (s.lower_bound_s > 0)
    out += fmt::format("| makespan | {} (lower bound {}, {:.1f}% above it) |\n", duration(s.makespan_s),
                       duration(s.lower_bound_s), (s.makespan_s / s.lower_bound_s - 1) * 100);
  else
    out += fmt::format("| makespan | {} |\n", duration(s.makespan_s));
  out += fmt::format("| GPU utilisation | {:.1f}% |\n\n", s.gpu_utilization * 100);

  if (!plan.unschedulable.empty()) {
    const auto groups = unschedulable_by_reason(plan);
    out += fmt::format("### :warning: {} unschedulable unit{}, {} reason{}\n\n", plan.unschedulable.size(),
                       util::plural(plan.unschedulable.size()), groups.size(), util::plural(groups.size()));
    for (const auto& [reason, units] : groups) {
      std::vector<std::string> ids;
      for (const auto* u : units) ids.push_back(code(u->unit.id));
      list_group(out, text(reason), ids);
    }
  }

  if (!plan.diagnostics.empty()) {
    std::map<std::pair<int, std::string>, std::vector<std::string>> by_kind;
    for (const auto& d : plan.diagnostics)
      by_kind[{-static_cast<int>(d.severity), fmt::format("{}: {}", to_string(d.severity), d.message)}]
          .push_back(d.label.empty() ? text(d.source)
                                     : fmt::format("{} ({})", code(d.label), text(d.source)));
    out += fmt::format("### Diagnostics ({}, {} kind(s))\n\n", plan.diagnostics.size(), by_kind.size());
    for (const auto& [kind, items] : by_kind) list_group(out, text(kind.second), items);
  }

  struct Load {
    std::map<int, std::vector<std::pair<double, double>>> gpus;  // GPU → its units' spans
    long units = 0;
    double busy = 0;
    double end = 0;
  };
  std::map<std::string, Load> nodes;
  for (const auto& a : plan.assignments) {
    auto& load = nodes[std::string(a.node)];
    for (int gpu : a.gpus) load.gpus[gpu].emplace_back(a.start_s, a.end_s);
    load.units++;
    load.end = std::max(load.end, a.end_s);
  }
  // Units that share a GPU (pack) keep it busy once: summed, a shared GPU was busy 300%.
  for (auto& [name, load] : nodes)
    for (const auto& [gpu, spans] : load.gpus) load.busy += util::covered(spans);
  if (!nodes.empty()) {
    out +=
        "### Load per node\n\n| node | GPUs used | units | busy GPU time | last unit ends | busy until "
        "makespan |\n";
    out += "|---|--:|--:|--:|--:|--:|\n";
    for (const auto& [name, load] : nodes) {
      double capacity = static_cast<double>(load.gpus.size()) * s.makespan_s;
      out += fmt::format("| {} | {} | {} | {} | {} | {:.0f}% |\n", text(name), load.gpus.size(), load.units,
                         duration(load.busy), duration(load.end),
                         capacity > 0 ? load.busy / capacity * 100 : 0.0);
    }
    out += '\n';
  }
  return out;
}

}  // namespace gpuplan
