// The dependency graph as it streams in: labels interned into one text buffer behind an
// open-addressing table of node numbers, each rule's inputs appended as 32-bit node numbers.
#include <algorithm>
#include <functional>
#include <stdexcept>

#include "gpuplan/graph.hpp"

namespace gpuplan {

namespace {

/// "@//a:b" and "@@//a:b" are "//a:b"; other labels as they are (no allocation, unlike canonical_label).
std::string_view main_repo_spelling(std::string_view label) {
  if (label.starts_with("@@//")) return label.substr(2);
  if (label.starts_with("@//")) return label.substr(1);
  return label;
}

std::size_t hash_of(std::string_view label) { return std::hash<std::string_view>{}(label); }

/// What a slot of the label table keeps of a label's hash: its high 32 bits (the low ones pick the slot).
std::uint64_t tag_of(std::size_t hash) { return static_cast<std::uint64_t>(hash) >> 32; }

/// A slot of the label table: the hash's tag above, node + 1 below (0: an empty slot).
std::uint64_t slot_of(DepGraph::Node node, std::size_t hash) {
  return tag_of(hash) << 32 | (node + std::uint64_t{1});
}

DepGraph::Node node_in(std::uint64_t slot) { return static_cast<DepGraph::Node>((slot & 0xffffffffu) - 1); }

}  // namespace

std::optional<DepGraph::Node> DepGraph::find(std::string_view label) const {
  if (slots_.empty()) return std::nullopt;
  label = main_repo_spelling(label);
  std::size_t hash = hash_of(label);
  std::size_t mask = slots_.size() - 1;
  for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
    std::uint64_t slot = slots_[i];
    if (slot == 0) return std::nullopt;
    if (slot >> 32 == tag_of(hash) && this->label(node_in(slot)) == label) return node_in(slot);
  }
}

void DepGraph::grow_table() {
  std::vector<std::uint64_t> bigger(std::max<std::size_t>(1024, slots_.size() * 2), 0);
  std::size_t mask = bigger.size() - 1;
  for (Node node = 0; node < node_count(); ++node) {
    std::size_t hash = hash_of(label(node));
    std::size_t i = hash & mask;
    while (bigger[i] != 0) i = (i + 1) & mask;
    bigger[i] = slot_of(node, hash);
  }
  slots_.swap(bigger);
}

DepGraph::Node DepGraph::intern(std::string_view label) {
  label = main_repo_spelling(label);
  if ((node_count() + 1) * 2 > slots_.size()) grow_table();  // at most half full
  std::size_t hash = hash_of(label);
  std::size_t mask = slots_.size() - 1;
  std::size_t i = hash & mask;
  // The hash's high bits in the slot: a probe past another label costs no look at its text,
  // which lies anywhere in memory (most of the time of reading a large graph went there).
  for (; slots_[i] != 0; i = (i + 1) & mask)
    if (slots_[i] >> 32 == tag_of(hash) && this->label(node_in(slots_[i])) == label)
      return node_in(slots_[i]);
  if (node_count() >= 0xfffffff0u) throw std::length_error("more than 4 billion labels in one graph");
  auto node = static_cast<Node>(node_count());
  text_.insert(text_.end(), label.begin(), label.end());
  label_start_.push_back(text_.size());
  class_of_.push_back(0);
  declared_.push_back(false);
  slots_[i] = slot_of(node, hash);
  return node;
}

void DepGraph::rule(std::string_view label, std::string_view rule_class) {
  Node node = intern(label);
  auto known = class_index_.find(rule_class);
  if (known == class_index_.end()) {
    if (classes_.size() > 0xffff) throw std::length_error("more than 65535 rule classes in one graph");
    classes_.emplace_back(rule_class);
    known =
        class_index_.emplace(classes_.back().str(), static_cast<std::uint16_t>(classes_.size() - 1)).first;
  }
  class_of_[node] = known->second;
  declared_[node] = true;
  rules_.push_back({node, edges_.size()});
  reverse_start_.clear();
}

void DepGraph::input(std::string_view label) {
  if (rules_.empty()) return;  // an input before any rule: the readers never send one
  edges_.push_back(intern(label));
}

void DepGraph::generated_file(std::string_view label, std::string_view generating_rule) {
  Node file = intern(label);
  Node maker = intern(generating_rule);
  declared_[file] = true;
  rules_.push_back({file, edges_.size()});
  edges_.push_back(maker);
  reverse_start_.clear();
}

void DepGraph::leaf(std::string_view label) { declared_[intern(label)] = true; }

std::vector<DepGraph::Node> DepGraph::tests() const {
  std::vector<Node> tests;
  std::vector<bool> seen(node_count(), false);
  for (const auto& entry : rules_) {
    if (seen[entry.node] || !is_test_rule_class(rule_class(entry.node))) continue;
    seen[entry.node] = true;
    tests.push_back(entry.node);
  }
  return tests;
}

void DepGraph::build_reverse() const {
  // Counting sort of the edges by their input: two passes over the rules, no per-node vectors.
  std::vector<std::uint32_t> start(node_count() + 1, 0);
  for (Node input : edges_) ++start[input + 1];
  for (std::size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
  std::vector<Node> reverse(edges_.size());
  std::vector<std::uint32_t> fill(start.begin(), start.end() - 1);
  for (std::size_t r = 0; r < rules_.size(); ++r) {
    std::uint64_t end = r + 1 < rules_.size() ? rules_[r + 1].first_edge : edges_.size();
    for (std::uint64_t e = rules_[r].first_edge; e < end; ++e) reverse[fill[edges_[e]]++] = rules_[r].node;
  }
  reverse_.swap(reverse);
  reverse_start_.swap(start);
}

std::span<const DepGraph::Node> DepGraph::dependents(Node node) const {
  if (reverse_start_.empty()) build_reverse();
  return {reverse_.data() + reverse_start_[node], reverse_start_[node + 1] - reverse_start_[node]};
}

std::size_t DepGraph::memory_bytes() const {
  return text_.capacity() + label_start_.capacity() * sizeof(std::uint64_t) +
         class_of_.capacity() * sizeof(std::uint16_t) + declared_.capacity() / 8 +
         slots_.capacity() * sizeof(std::uint64_t) + rules_.capacity() * sizeof(RuleEntry) +
         edges_.capacity() * sizeof(Node) + reverse_start_.capacity() * sizeof(std::uint32_t) +
         reverse_.capacity() * sizeof(Node);
}

bool is_configuration_rule(std::string_view rule_class) {
  return rule_class == "config_setting" || rule_class == "constraint_value" ||
         rule_class == "constraint_setting" || rule_class == "platform" || rule_class == "toolchain_type" ||
         rule_class == "bool_flag" || rule_class == "string_flag" || rule_class == "int_flag" ||
         rule_class == "bool_setting" || rule_class == "string_setting";
}

}  // namespace gpuplan
