// Which nodes reach GPU code, and each node's first step on a shortest path to one: worked out
// over the forward edges (Bazel's graph is acyclic), with the reverse graph's breadth-first walk
// kept for the inputs where that does not hold.
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

/// A label's or pattern's repository and package text: "@@a~b//p/q:n" → {"a~b", "p/q"}.
struct RepoAndPackage {
  std::string_view repo, package;
};

RepoAndPackage repo_and_package(std::string_view text) {
  text.remove_prefix(text.starts_with("@@") ? 2 : 1);
  auto slashes = text.find("//");
  if (slashes == std::string_view::npos) return {text, {}};
  auto rest = text.substr(slashes + 2);
  return {text.substr(0, slashes), rest.substr(0, rest.find(':'))};
}

/// The longest run of `glob` without a `*` or a `#` (a built-in pattern's digit): every text the
/// glob matches holds it, and so does every canonical name whose apparent name it matches (the
/// apparent name is part of it).
std::string longest_literal(std::string_view glob) {
  if (glob == "..." || glob.ends_with("/...")) glob.remove_suffix(glob == "..." ? 3 : 4);
  std::string_view longest;
  for (std::size_t begin = 0; begin <= glob.size();) {
    auto end = std::min(glob.find_first_of("*#", begin), glob.size());
    if (end - begin > longest.size()) longest = glob.substr(begin, end - begin);
    begin = end + 1;
  }
  return std::string(longest);
}

/// Patterns split by whether each is another repository's, worked out once, not once per label.
struct PatternList {
  const std::vector<std::string>& patterns;
  std::vector<std::size_t> main;      ///< indices of the main repository's patterns, in order
  std::vector<std::size_t> external;  ///< indices of other repositories' patterns, in order
  std::vector<std::string> start;     ///< literal_start() of each pattern of `main`
  /// Of each pattern of `external`: the text its label's repository and package must hold.
  std::vector<std::string> repo_literal, package_literal;
  explicit PatternList(const std::vector<std::string>& list) : patterns(list) {
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (is_external(list[i])) {
        external.push_back(i);
        auto parts = repo_and_package(list[i]);
        repo_literal.push_back(longest_literal(parts.repo));
        package_literal.push_back(longest_literal(parts.package));
      } else {
        main.push_back(i);
        start.push_back(literal_start(list[i]));
      }
    }
  }
};

/// The index of the first pattern in `list` that `label` matches, or -1. A pattern of
/// another repository ("@..." against "//...", or the other way) is never tried: most labels
/// of a large graph are the main repository's, most built-in patterns are not. Nor is one whose
/// literal text the label's repository or package lacks: an external label is tried against
/// hundreds of wheel patterns ("@*_torch//:*", "@*//torch:*", ...), nearly all of which it fails.
long first_match(const PatternList& list, std::string_view label) {
  if (is_external(label)) {
    auto parts = repo_and_package(label);
    for (std::size_t k = 0; k < list.external.size(); ++k)
      if (parts.repo.find(list.repo_literal[k]) != std::string_view::npos &&
          parts.package.find(list.package_literal[k]) != std::string_view::npos &&
          gpu_pattern_matches(list.patterns[list.external[k]], label))
        return static_cast<long>(list.external[k]);
    return -1;
  }
  for (std::size_t k = 0; k < list.main.size(); ++k)
    if (label.starts_with(list.start[k]) && gpu_pattern_matches(list.patterns[list.main[k]], label))
      return static_cast<long>(list.main[k]);
  return -1;
}

}  // namespace

std::vector<std::string> unmatched_patterns(const DepGraph& graph, const std::vector<std::string>& patterns) {
  PatternList list(patterns);
  std::vector<bool> matched(patterns.size(), false);
  std::size_t left = patterns.size();
  auto try_pattern = [&](std::size_t i, std::string_view label) {
    if (matched[i] || !gpu_pattern_matches(patterns[i], label)) return;
    matched[i] = true;
    --left;
  };
  for (DepGraph::Node node = 0; node < graph.node_count() && left > 0; ++node) {
    std::string_view label = graph.label(node);
    if (is_external(label)) {
      for (std::size_t i : list.external) try_pattern(i, label);
    } else {
      for (std::size_t k = 0; k < list.main.size(); ++k)
        if (label.starts_with(list.start[k])) try_pattern(list.main[k], label);
    }
  }
  std::vector<std::string> unmatched;
  for (std::size_t i = 0; i < patterns.size(); ++i)
    if (!matched[i]) unmatched.push_back(patterns[i]);
  return unmatched;
}

GpuReach::GpuReach(const DepGraph& graph, const GpuDepPatterns& patterns)
    : graph_(graph), next_(graph.node_count(), unreached), patterns_(patterns.gpu_deps) {
  // gpu_free nodes and configuration rules are walls: never a GPU dep, never passed through.
  std::vector<bool> wall(graph.node_count(), false);
  for (DepGraph::Node node = 0; node < graph.node_count(); ++node)
    wall[node] = is_configuration_rule(graph.rule_class(node));
  // Skylib's selects.config_setting_group(match_any = ...) is an alias of config_settings.
  for (std::size_t entry = 0; entry < graph.rule_count(); ++entry) {
    auto inputs = graph.rule_inputs(entry);
    if (graph.rule_class(graph.rule_node(entry)) == "alias" && !inputs.empty() &&
        std::all_of(inputs.begin(), inputs.end(), [&](DepGraph::Node input) { return wall[input]; }))
      wall[graph.rule_node(entry)] = true;
  }
  std::vector<DepGraph::Node> queue;
  PatternList gpu_free(patterns.gpu_free), gpu_deps(patterns.gpu_deps);
  const std::vector<bool> untaken = graph.untaken_branches();
  for (DepGraph::Node node = 0; node < graph.node_count(); ++node) {
    std::string_view label = graph.label(node);
    if (untaken[node] || wall[node] || first_match(gpu_free, label) >= 0) {
      wall[node] = true;
      continue;
    }
    // A label only named, never declared, may be a select() key (a config_setting under
    // @local_config_cuda) or a library: it makes its dependents unknown (below), not GPU code.
    if (!graph.declared(node)) continue;
    long pattern = first_match(gpu_deps, label);
    std::size_t source = static_cast<std::size_t>(pattern);
    if (pattern < 0) {
      if (std::count(patterns.gpu_rule_classes.begin(), patterns.gpu_rule_classes.end(),
                     graph.rule_class(node)))
        source = by_class;
      else if (!gpu_file_kind(label).empty())  // a .cu file, libcudart.so: in a repository of any name
        source = by_file_name;
      else if (!graph.gpu_linkopt(node).empty())  // the machine's CUDA: linkopts = ["-lcudart"]
        source = by_linkopt;
      else
        continue;
    }
    sources_.emplace(node, source);
    next_[node] = is_source;
    queue.push_back(node);
  }
  if (!queue.empty() && !descend(graph, wall, next_)) walk(graph, wall, queue, next_);
  // The same from every label the input only named: what cannot be ruled out.
  undeclared_next_.assign(graph.node_count(), unreached);
  queue.clear();
  for (DepGraph::Node node = 0; node < graph.node_count(); ++node) {
    if (graph.declared(node) || wall[node]) continue;
    undeclared_next_[node] = is_source;
    queue.push_back(node);
  }
  if (!queue.empty() && !descend(graph, wall, undeclared_next_)) walk(graph, wall, queue, undeclared_next_);
}

bool GpuReach::descend(const DepGraph& graph, const std::vector<bool>& wall,
                       std::vector<DepGraph::Node>& next) {
  using Node = DepGraph::Node;
  constexpr std::uint32_t none = 0xffffffffu;
  std::size_t nodes = graph.node_count();
  if (graph.rule_count() >= none) return false;
  // Each node's entry among the rules; a node listed twice (cquery's configurations) is left
  // to the breadth-first walk, whose order of equal paths depends on every entry.
  std::vector<std::uint32_t> entry_of(nodes, none);
  for (std::size_t entry = 0; entry < graph.rule_count(); ++entry) {
    Node node = graph.rule_node(entry);
    if (entry_of[node] != none) return false;
    entry_of[node] = static_cast<std::uint32_t>(entry);
  }

  // Distances: 0 at a source, 1 + the least of its inputs' elsewhere, by an iterative
  // depth-first walk that finishes each node's inputs before the node. Walls and labels
  // without inputs are `far` unless sources.
  constexpr std::uint32_t unvisited = none, open = none - 1, far = none - 2;
  std::vector<std::uint32_t> dist(nodes);
  for (Node node = 0; node < nodes; ++node)
    dist[node] = next[node] == is_source ? 0 : wall[node] || entry_of[node] == none ? far : unvisited;
  struct Frame {
    Node node;
    std::uint32_t best;
    const Node* input;
    const Node* end;
  };
  std::vector<Frame> stack;
  auto open_node = [&](Node node) {
    dist[node] = open;
    auto inputs = graph.rule_inputs(entry_of[node]);
    stack.push_back({node, far, inputs.data(), inputs.data() + inputs.size()});
  };
  std::uint32_t deepest = 0;
  for (std::size_t entry = 0; entry < graph.rule_count(); ++entry) {
    if (dist[graph.rule_node(entry)] != unvisited) continue;
    open_node(graph.rule_node(entry));
    while (!stack.empty()) {
      Frame& frame = stack.back();
      for (; frame.input != frame.end; ++frame.input) {
        std::uint32_t d = dist[*frame.input];
        if (d >= open && *frame.input != frame.node) break;  // a rule its own input: no shorter path
        frame.best = std::min(frame.best, d);
      }
      if (frame.input != frame.end) {
        if (dist[*frame.input] == open) return false;  // a cycle: left to the breadth-first walk
        open_node(*frame.input);
        continue;
      }
      std::uint32_t d = frame.best == far ? far : frame.best + 1;
      dist[frame.node] = d;
      if (d != far) deepest = std::max(deepest, d);
      stack.pop_back();
    }
  }

  // The step among equal paths: the input one closer with the smallest label, so that the path
  // is the graph's, whatever the order of the input's rules (before, the breadth-first walk's
  // order of the nodes, which is the input's, chose it).
  for (std::size_t entry = 0; entry < graph.rule_count(); ++entry) {
    Node node = graph.rule_node(entry);
    std::uint32_t d = dist[node];
    if (d == 0 || d > deepest) continue;
    for (Node input : graph.rule_inputs(entry)) {
      if (dist[input] != d - 1) continue;
      if (next[node] == unreached || graph.label(input) < graph.label(next[node])) next[node] = input;
    }
  }
  return true;
}

void GpuReach::walk(const DepGraph& graph, const std::vector<bool>& wall, std::vector<DepGraph::Node>& queue,
                    std::vector<DepGraph::Node>& next) {
  // Each node's distance, to take among its inputs one closer the smallest label, as descend() does.
  std::vector<std::uint32_t> dist(graph.node_count(), 0);
  for (std::size_t head = 0; head < queue.size(); ++head) {
    DepGraph::Node node = queue[head];
    for (DepGraph::Node dependent : graph.dependents(node)) {
      if (wall[dependent]) continue;
      if (next[dependent] == unreached) {
        next[dependent] = node;
        dist[dependent] = dist[node] + 1;
        queue.push_back(dependent);
      } else if (next[dependent] != is_source && dist[dependent] == dist[node] + 1 &&
                 graph.label(node) < graph.label(next[dependent])) {
        next[dependent] = node;
      }
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
  return found == sources_.end() || found->second == by_class || found->second == by_file_name ||
                 found->second == by_linkopt
             ? none
             : patterns_[found->second];
}

std::string_view GpuReach::linkopt(DepGraph::Node node) const {
  auto found = sources_.find(node);
  return found != sources_.end() && found->second == by_linkopt ? graph_.gpu_linkopt(node)
                                                                : std::string_view();
}

std::string_view GpuReach::file_kind(DepGraph::Node node) const {
  auto found = sources_.find(node);
  return found != sources_.end() && found->second == by_file_name ? gpu_file_kind(graph_.label(node))
                                                                  : std::string_view();
}

}  // namespace gpuplan
