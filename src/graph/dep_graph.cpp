// The dependency graph as it streams in: labels interned into one text buffer behind an
// open-addressing table of node numbers, each rule's inputs appended as 32-bit node numbers.
#include <algorithm>
#include <bit>
#include <cstring>
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

/// One 64-bit multiply, both halves folded: mixes every bit of `a` into the high bits.
std::uint64_t fold_multiply(std::uint64_t a, std::uint64_t b) {
  __extension__ using Wide = unsigned __int128;
  Wide product = static_cast<Wide>(a) * b;
  return static_cast<std::uint64_t>(product) ^ static_cast<std::uint64_t>(product >> 64);
}

/// A label's hash, eight bytes at a time (std::hash's byte-wise murmur was 4% of reading a
/// large graph). Its high bits pick the slot; the text decides, so it need not be strong.
std::size_t hash_of(std::string_view label) {
  auto word = [](const char* at) {
    std::uint64_t value = 0;
    std::memcpy(&value, at, sizeof value);
    return value;
  };
  const char* at = label.data();
  std::size_t left = label.size();
  std::uint64_t hash = 0x9e3779b97f4a7c15ull ^ left;
  for (; left > 8; at += 8, left -= 8) hash = fold_multiply(hash ^ word(at), 0xbf58476d1ce4e5b9ull);
  std::uint64_t last = 0;
  if (label.size() >= 8)
    last = word(label.data() + label.size() - 8);
  else
    std::memcpy(&last, at, left);
  return fold_multiply(fold_multiply(hash ^ last, 0x94d049bb133111ebull), 0x2545f4914f6cdd1dull);
}

/// What a slot of the label table keeps of a label's hash: its high 32 bits, whose top bits
/// also pick the slot (DepGraph::home), so that growing the table needs no label's text.
std::uint32_t tag_of(std::size_t hash) {
  return static_cast<std::uint32_t>(static_cast<std::uint64_t>(hash) >> 32);
}

/// The longest label a slot gives the length of; a longer one is measured by its node.
constexpr std::uint64_t long_label = 0xffff;

}  // namespace

DepGraph::Slot DepGraph::slot_of(Node node, std::size_t hash, std::uint64_t start, std::size_t length) {
  return {tag_of(hash), node + 1, start << 16 | std::min<std::uint64_t>(length, long_label)};
}

std::size_t DepGraph::home(std::size_t hash) const { return tag_of(hash) >> home_shift_; }

bool DepGraph::holds(const Slot& slot, std::string_view label, std::size_t hash) const {
  if (slot.tag != tag_of(hash)) return false;
  std::uint64_t length = slot.text & long_label;
  if (length == long_label) return this->label(slot.node - 1) == label;
  return length == label.size() && std::string_view(text_.data() + (slot.text >> 16), length) == label;
}

std::optional<DepGraph::Node> DepGraph::find(std::string_view label) const {
  if (slots_.empty()) return std::nullopt;
  label = main_repo_spelling(label);
  std::size_t hash = hash_of(label);
  std::size_t mask = slots_.size() - 1;
  for (std::size_t i = home(hash); slots_[i].node != 0; i = (i + 1) & mask)
    if (holds(slots_[i], label, hash)) return slots_[i].node - 1;
  return std::nullopt;
}

void DepGraph::grow_table() {
  if (slots_.size() >= std::size_t{1} << 32)
    throw std::length_error("more than 2 billion labels in one graph");
  BigArray<Slot> bigger(std::max<std::size_t>(1024, slots_.size() * 2));
  bigger.populate();  // a quarter full once the slots are in, every page holds some
  home_shift_ = 32 - std::countr_zero(bigger.size());
  std::size_t mask = bigger.size() - 1;
  // The old slots in order land in the new table in order (but for the few that wrapped round).
  for (const Slot& slot : slots_) {
    if (slot.node == 0) continue;
    std::size_t i = slot.tag >> home_shift_;
    while (bigger[i].node != 0) i = (i + 1) & mask;
    bigger[i] = slot;
  }
  slots_.swap(bigger);
}

DepGraph::Node DepGraph::intern(std::string_view label) {
  label = main_repo_spelling(label);
  return intern(label, hash_of(label));
}

DepGraph::Node DepGraph::intern(std::string_view label, std::size_t hash) {
  Slot& recent = recent_slot(hash);
  if (recent.node != 0 && holds(recent, label, hash)) return recent.node - 1;
  if ((node_count() + 1) * 2 > slots_.size()) grow_table();  // at most half full
  std::size_t mask = slots_.size() - 1;
  std::size_t i = home(hash);
  // The slot holds the hash's high bits and where the text is: a probe past another label
  // does not look at its text, and the one that matches reads the text without a look at
  // label_start_ (each a cache miss, which was most of the time of reading a large graph).
  for (; slots_[i].node != 0; i = (i + 1) & mask) {
    if (holds(slots_[i], label, hash)) {
      recent = slots_[i];
      return slots_[i].node - 1;
    }
  }
  if (node_count() >= 0xfffffff0u) throw std::length_error("more than 4 billion labels in one graph");
  if (text_.size() + label.size() >= std::uint64_t{1} << 48)
    throw std::length_error("more than 256 TiB of labels in one graph");
  auto node = static_cast<Node>(node_count());
  slots_[i] = slot_of(node, hash, text_.size(), label.size());
  recent = slots_[i];
  text_.append(label.data(), label.size());
  label_start_.push_back(text_.size());
  class_of_.push_back(0);
  declared_.push_back(false);
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

void DepGraph::inputs(std::span<const std::string_view> labels) {
  if (rules_.empty()) return;
  while ((node_count() + labels.size()) * 2 > slots_.size()) grow_table();  // none grows it midway
  // Most of the time of reading a large graph goes to cache misses: on a label's slot, then on
  // its text. Looked up one by one, each waits for the one before; here all of a rule's slots
  // are fetched first, then the text of each candidate, so that the misses overlap. The
  // prefetches only warm the caches: intern() decides as before.
  batch_.clear();
  std::size_t mask = slots_.size() - 1;
  for (std::string_view label : labels) {
    label = main_repo_spelling(label);
    std::size_t hash = hash_of(label);
    batch_.emplace_back(label, hash);
    if (recent_slot(hash).tag != tag_of(hash)) __builtin_prefetch(&slots_[home(hash)]);
  }
  for (const auto& [label, hash] : batch_) {
    if (recent_slot(hash).tag == tag_of(hash)) continue;
    for (std::size_t i = home(hash); slots_[i].node != 0; i = (i + 1) & mask) {
      if (slots_[i].tag == tag_of(hash)) {
        const char* text = text_.data() + (slots_[i].text >> 16);
        __builtin_prefetch(text);
        __builtin_prefetch(text + std::max<std::size_t>(label.size(), 1) - 1);  // it may straddle two lines
        break;
      }
    }
  }
  for (const auto& [label, hash] : batch_) edges_.push_back(intern(label, hash));
}

void DepGraph::coming(std::string_view label) {
  if (slots_.empty()) return;
  std::size_t hash = hash_of(main_repo_spelling(label));
  if (recent_slot(hash).tag != tag_of(hash)) __builtin_prefetch(&slots_[home(hash)]);
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

void DepGraph::linkopt(std::string_view flag) {
  if (!rules_.empty() && !gpu_linkopt_kind(flag).empty()) gpu_linkopts_.try_emplace(rules_.back().node, flag);
}

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
  BigArray<std::uint32_t> start(node_count() + 1);
  for (Node input : edges_) ++start[input + 1];
  for (std::size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
  BigArray<Node> reverse(edges_.size());
  BigArray<std::uint32_t> fill;
  fill.append(start.data(), start.size() - 1);
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
         slots_.capacity() * sizeof(Slot) + rules_.capacity() * sizeof(RuleEntry) +
         edges_.capacity() * sizeof(Node) + reverse_start_.capacity() * sizeof(std::uint32_t) +
         reverse_.capacity() * sizeof(Node) + recent_.capacity() * sizeof(Slot);
}

std::vector<bool> DepGraph::untaken_branches() const {
  std::vector<bool> untaken(node_count(), false);
  if (!configured_closure_ || configured_inputs_) return untaken;
  std::vector<bool> expanded(node_count(), false);  // named by a rule without a select()
  for (std::size_t entry = 0; entry < rule_count(); ++entry) {
    auto inputs = rule_inputs(entry);
    // A select()'s keys; not the build settings and toolchain types rules name by implicit
    // attributes (rules_python's _precompile_flag, a string_flag), which no select() needs.
    const bool selects = std::any_of(inputs.begin(), inputs.end(), [&](Node input) {
      return declared(input) &&
             (rule_class(input) == "config_setting" || rule_class(input) == "constraint_value");
    });
    for (Node input : inputs)
      if (!declared(input)) (selects ? untaken : expanded)[input] = true;
  }
  for (Node node = 0; node < node_count(); ++node)
    if (expanded[node]) untaken[node] = false;
  return untaken;
}

bool is_configuration_rule(std::string_view rule_class) {
  return rule_class == "config_setting" || rule_class == "constraint_value" ||
         rule_class == "constraint_setting" || rule_class == "platform" || rule_class == "toolchain_type" ||
         rule_class == "bool_flag" || rule_class == "string_flag" || rule_class == "int_flag" ||
         rule_class == "string_list_flag" || rule_class == "bool_setting" || rule_class == "string_setting" ||
         rule_class == "int_setting" || rule_class == "string_list_setting";
}

}  // namespace gpuplan
