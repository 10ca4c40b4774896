// Which nodes reach GPU code: one breadth-first pass over the reverse graph from every GPU dep,
// so each node's `next` is its first step on a shortest path to one.
#include <fmt/format.h>

#include <algorithm>

#include "gpuplan/graph.hpp"

namespace gpuplan {

namespace {

bool is_external(std::string_view text) {
  return text.starts_with('@') && !text.starts_with("@//") && !text.starts_with("@@//");
}

/// What every main-repository label that `pattern` (of the main repository) matches begins
/// with: "//" and its package up to the first `*` or "..." ("//third_party/gpus" for
/// "//third_party/gpus/..."). A cheap test that passes most labels over unparsed.
std::string literal_start(std::string_view pattern) {
  if (pattern.starts_with('@')) pattern.remove_prefix(pattern.starts_with("@@") ? 2 : 1);
  pattern = pattern.substr(0, pattern.find(':'));
  pattern = pattern.substr(0, std::min(pattern.find('*'), pattern.find("...")));
  if (pattern.size() > 2 && pattern.ends_with('/')) pattern.remove_suffix(1);
  return std::string(pattern);
}

/// Patterns split by whether each is another repository's, worked out once, not once per label.
struct PatternList {
  const std::vector<std::string>& patterns;
  std::vector<std::size_t> main;      ///< indices of the main repository's patterns, in order
  std::vector<std::size_t> external;  ///< indices of other repositories' patterns, in order
  std::vector<std::string> start;     ///< literal_start() of each pattern of `main`
  explicit PatternList(const std::vector<std::string>& list) : patterns(list) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (is_external(list[i])) {
        external.push_back(i);
      } else {
        main.push_back(i);
        start.push_back(literal_start(list[i]));
      }
    }
  }
};

/// The index of the first pattern in `list` that `label` matches, or -1. A pattern of
/// another repository ("@..." against "//...", or the other way) is never tried: most labels
/// of a large graph are the main repository's, most built-in patterns are not.
long first_match(const PatternList& list, std::string_view label) {
  if (is_external(label)) {
    for (std::size_t i : list.external)
      if (gpu_pattern_matches(list.patterns[i], label)) return static_cast<long>(i);
    return -1;
  }
  for (std::size_t k = 0; k < list.main.size(); ++k)
    if (label.starts_with(list.start[k]) && gpu_pattern_matches(list.patterns[list.main[k]], label))
      return static_cast<long>(list.main[k]);
  return -1;
}

}  // namespace

GpuReach::GpuReach(const DepGraph& graph, const GpuDepPatterns& patterns)
    : graph_(graph), next_(graph.node_count(), unreached), patterns_(patterns.gpu_deps) {
  // gpu_free nodes and configuration rules are walls: never a GPU dep, never passed through.
  std::vector<bool> wall(graph.node_count(), false);
  std::vector<DepGraph::Node> queue;
  PatternList gpu_free(patterns.gpu_free), gpu_deps(patterns.gpu_deps);
  for (DepGraph::Node node = 0; node < graph.node_count(); ++node) {
    std::string_view label = graph.label(node);
    if (is_configuration_rule(graph.rule_class(node)) || first_match(gpu_free, label) >= 0) {
      wall[node] = true;
      continue;
    }
    long pattern = first_match(gpu_deps, label);
    if (pattern < 0) continue;
    sources_.emplace(node, static_cast<std::size_t>(pattern));
    next_[node] = is_source;
    queue.push_back(node);
  }
  walk(graph, wall, queue, next_);
  // The same from every label the input only named: what cannot be ruled out.
  undeclared_next_.assign(graph.node_count(), unreached);
  queue.clear();
  for (DepGraph::Node node = 0; node < graph.node_count(); ++node) {
    if (graph.declared(node) || wall[node]) continue;
    undeclared_next_[node] = is_source;
    queue.push_back(node);
  }
  walk(graph, wall, queue, undeclared_next_);
}

void GpuReach::walk(const DepGraph& graph, const std::vector<bool>& wall, std::vector<DepGraph::Node>& queue,
                    std::vector<DepGraph::Node>& next) {
  for (std::size_t head = 0; head < queue.size(); ++head) {
    DepGraph::Node node = queue[head];
    for (DepGraph::Node dependent : graph.dependents(node)) {
      if (next[dependent] != unreached || wall[dependent]) continue;
      next[dependent] = node;
      queue.push_back(dependent);
    }
  }
}

DepGraph::Node GpuReach::first_undeclared(DepGraph::Node node) const {
  while (undeclared_next_[node] != is_source && undeclared_next_[node] != unreached)
    node = undeclared_next_[node];
  return node;
}

std::vector<DepGraph::Node> GpuReach::path(DepGraph::Node node) const {
  std::vector<DepGraph::Node> path;
  if (!reaches(node)) return path;
  for (path.push_back(node); next_[node] != is_source; node = next_[node]) path.push_back(next_[node]);
  return path;
}

std::string GpuReach::path_text(DepGraph::Node node) const {
  std::string text;
  for (DepGraph::Node step : path(node))
    text += (text.empty() ? "" : " → ") + std::string(graph_.label(step));
  return text;
}

const std::string& GpuReach::matched_pattern(DepGraph::Node node) const {
  static const std::string none;
  auto found = sources_.find(node);
  return found == sources_.end() ? none : patterns_[found->second];
}

}  // namespace gpuplan
