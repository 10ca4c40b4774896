// The plan index: a fixed header, then a table of entries sorted by key (the FNV-1a hash of a
// node's name, then of a canonical label), each pointing at one record of the plan file.
//
//   header (64 bytes): magic "gpuplix2", plan size, plan mtime (ns), plan fingerprint, policy,
//                      node entries, label entries, 0     (eight little-endian 64-bit words)
//   entries (24 bytes each, node entries first): key (u64), offset (u64), length (u32), section (u32)
#include "plan/plan_index.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <map>
#include <stdexcept>
#include <tuple>

#include "gpuplan/error.hpp"
#include "gpuplan/target.hpp"
#include "util/text.hpp"

namespace gpuplan {

namespace {

constexpr char magic[8] = {'g', 'p', 'u', 'p', 'l', 'i', 'x', '2'};  // 2: keys by label_identity
constexpr std::size_t header_size = 64;
constexpr std::size_t entry_size = 24;

struct Entry {
  std::uint64_t key = 0;
  std::uint64_t offset = 0;
  std::uint32_t length = 0;
  std::uint32_t section = 0;
};

/// The hash of label_identity(label), making that string only for another repository's label.
std::uint64_t label_key(std::string_view label) {
  if (label.starts_with("@@//"))
    label.remove_prefix(2);
  else if (label.starts_with("@//"))
    label.remove_prefix(1);
  else if (label.starts_with('@'))
    return util::fnv1a(label_identity(label));
  return util::fnv1a(label);
}
std::uint64_t node_key(std::string_view node) { return util::fnv1a(node, 0x6e6f6465ULL); }

void put64(std::string& out, std::uint64_t value) {
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}
void put32(std::string& out, std::uint32_t value) {
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((value >> (8 * i)) & 0xff));
}
std::uint64_t get(std::string_view bytes, std::size_t at, int width) {
  std::uint64_t value = 0;
  for (int i = width - 1; i >= 0; --i) value = (value << 8) | static_cast<unsigned char>(bytes[at + i]);
  return value;
}

Entry entry_at(std::string_view bytes, std::size_t at) {
  return {get(bytes, at, 8), get(bytes, at + 8, 8), static_cast<std::uint32_t>(get(bytes, at + 16, 4)),
          static_cast<std::uint32_t>(get(bytes, at + 20, 4))};
}

/// The entries of a table (`count` entries from byte `first`) whose key is `key`; nullopt when
/// the index is shorter than its header says.
std::optional<std::vector<Entry>> find(const ReadAt& index, std::uint64_t first, std::uint64_t count,
                                       std::uint64_t key) {
  std::uint64_t low = 0, high = count;  // the first entry whose key is not below `key`
  while (low < high) {
    std::uint64_t middle = low + (high - low) / 2;
    auto bytes = index(first + middle * entry_size, entry_size);
    if (bytes.size() != entry_size) return std::nullopt;
    if (entry_at(bytes, 0).key < key)
      low = middle + 1;
    else
      high = middle;
  }
  std::vector<Entry> found;
  for (std::uint64_t i = low; i < count; i += 8) {  // eight entries a read: a test's shards are neighbours
    auto bytes = index(first + i * entry_size, entry_size * std::min<std::uint64_t>(8, count - i));
    if (bytes.size() % entry_size != 0 || bytes.empty()) return std::nullopt;
    for (std::size_t at = 0; at < bytes.size(); at += entry_size) {
      Entry e = entry_at(bytes, at);
      if (e.key != key) return found;
      found.push_back(e);
    }
  }
  return found;
}

constexpr const char* section_names[] = {"cpu_tests", "skipped_tests", "assignments", "unschedulable"};

/// The bytes the scanner acts on; it only counts the others, most of a plan's text.
constexpr std::array<bool, 256> structural = [] {
  std::array<bool, 256> table{};
  for (char c : std::string_view("\"\\{}[]")) table[static_cast<unsigned char>(c)] = true;
  return table;
}();

/// Whether any of the 8 bytes at `at` may be structural: false means none is. With bit 0x20
/// set in every byte, '[' '\\' ']' become '{' '|' '}', so four zero-byte tests cover the six
/// (and let a few other bytes through, which the byte-by-byte test then passes over).
bool may_be_structural(const char* at) {
  constexpr std::uint64_t ones = 0x0101010101010101, highs = 0x8080808080808080;
  auto has_zero = [](std::uint64_t v) { return ((v - ones) & ~v & highs) != 0; };
  std::uint64_t word = 0;
  std::memcpy(&word, at, 8);
  word |= 0x20 * ones;
  return has_zero(word ^ ('"' * ones)) || has_zero(word ^ ('{' * ones)) || has_zero(word ^ ('|' * ones)) ||
         has_zero(word ^ ('}' * ones));
}

}  // namespace

void PlanRecordScanner::feed(std::string_view text) {
  const char* p = text.data();
  const char* end = p + text.size();
  while (p < end) {
    if (!escaped_ && !(in_string_ && depth_ == 1)) {  // skip to the next byte that matters
      const char* next = p;
      while (end - next >= 8 && !may_be_structural(next)) next += 8;
      while (next < end && !structural[static_cast<unsigned char>(*next)]) ++next;
      offset_ += static_cast<std::uint64_t>(next - p);
      p = next;
      if (p == end) break;
    }
    char c = *p++;
    if (in_string_) {
      if (escaped_)
        escaped_ = false;
      else if (c == '\\')
        escaped_ = true;
      else if (c == '"')
        in_string_ = false;
      if (in_string_ && depth_ == 1) key_.push_back(c);
    } else if (c == '"') {
      in_string_ = true;
      if (depth_ == 1) key_.clear();
    } else if (c == '{' || c == '[') {
      ++depth_;
      if (depth_ == 2 && c == '[') {
        section_ = -1;
        for (int s = 0; s < 4; ++s)
          if (key_ == section_names[s]) section_ = s;
      }
      if (depth_ == 3 && section_ >= 0) record_begin_ = offset_;
    } else if (c == '}' || c == ']') {
      if (depth_ == 3 && section_ >= 0)
        records_.of[section_].push_back(
            {record_begin_, static_cast<std::uint32_t>(offset_ + 1 - record_begin_)});
      if (depth_ == 2) section_ = -1;
      --depth_;
    }
    ++offset_;
  }
}

std::uint64_t plan_fingerprint(std::string_view head, std::string_view tail) {
  return util::fnv1a(tail, util::fnv1a(head));
}

std::string make_plan_index(const Plan& plan, const PlanRecords& records, const PlanFileIdentity& identity) {
  // One vector for the four lists' entries, appended in turn (a vector a list, then joined,
  // held them twice: 26 MB more at the end of `plan` at 1M units).
  std::vector<Entry> entries;
  entries.reserve(plan.cpu_tests.size() + plan.skipped_tests.size() + plan.assignments.size() +
                  plan.unschedulable.size());
  auto add_entries = [&](PlanSection section, std::size_t count, auto&& label_of) {
    const auto& extents = records.extents(section);
    if (extents.size() != count)
      throw std::logic_error(fmt::format("plan index: {} records of {} in the text, {} in the plan",
                                         extents.size(), section_names[static_cast<int>(section)], count));
    for (std::size_t i = 0; i < count; ++i) {
      // The labels lie all over the heap, in label order, and the records come by node: ask for
      // the ones a few records ahead before they are needed.
      if (i + 8 < count) __builtin_prefetch(label_of(i + 8).data());
      entries.push_back({label_key(label_of(i)), extents[i].offset, extents[i].length,
                         static_cast<std::uint32_t>(section)});
    }
  };
  add_entries(PlanSection::cpu_tests, plan.cpu_tests.size(),
              [&](std::size_t i) -> const std::string& { return plan.cpu_tests[i].label; });
  add_entries(PlanSection::skipped_tests, plan.skipped_tests.size(),
              [&](std::size_t i) -> const std::string& { return plan.skipped_tests[i].label; });
  add_entries(PlanSection::assignments, plan.assignments.size(),
              [&](std::size_t i) -> const std::string& { return plan.assignments[i].unit.label; });
  add_entries(PlanSection::unschedulable, plan.unschedulable.size(),
              [&](std::size_t i) -> const std::string& { return plan.unschedulable[i].unit.label; });

  // Each node's assignment on its highest GPU, the first in plan order.
  std::map<std::string_view, std::pair<int, std::size_t>> highest;
  const auto& assigned = records.extents(PlanSection::assignments);
  auto it = highest.end();
  for (std::size_t i = 0; i < plan.assignments.size(); ++i) {
    const auto& a = plan.assignments[i];
    int gpu = a.gpus.empty() ? -1 : *std::max_element(a.gpus.begin(), a.gpus.end());
    // Assignments come by node: look the node up only when it changes.
    if (i == 0 || !(a.node == plan.assignments[i - 1].node)) {
      bool added = false;
      std::tie(it, added) = highest.try_emplace(a.node.str(), gpu, i);
      if (added) continue;
    }
    if (gpu > it->second.first) it->second = {gpu, i};
  }
  std::vector<Entry> nodes;
  nodes.reserve(highest.size());
  for (const auto& [node, best] : highest)
    nodes.push_back({node_key(node), assigned[best.second].offset, assigned[best.second].length,
                     static_cast<std::uint32_t>(PlanSection::assignments)});

  auto by_key = [](const Entry& x, const Entry& y) {
    return std::tie(x.key, x.offset) < std::tie(y.key, y.offset);
  };
  std::sort(nodes.begin(), nodes.end(), by_key);
  std::sort(entries.begin(), entries.end(), by_key);
  std::string out;
  out.reserve(header_size + entry_size * (nodes.size() + entries.size()));
  out.append(magic, sizeof magic);
  put64(out, identity.size);
  put64(out, static_cast<std::uint64_t>(identity.mtime_ns));
  put64(out, identity.fingerprint);
  put64(out, static_cast<std::uint64_t>(plan.policy));
  put64(out, nodes.size());
  put64(out, entries.size());
  put64(out, 0);
  for (const auto* table : {&nodes, &entries})
    for (const auto& e : *table) {
      put64(out, e.key);
      put64(out, e.offset);
      put32(out, e.length);
      put32(out, e.section);
    }
  return out;
}

bool index_describes(const ReadAt& index, const PlanFileIdentity& identity) {
  auto header = index(0, header_size);
  if (header.size() != header_size || std::memcmp(header.data(), magic, sizeof magic) != 0) return false;
  PlanFileIdentity indexed{get(header, 8, 8), static_cast<std::int64_t>(get(header, 16, 8)),
                           get(header, 24, 8)};
  return indexed == identity;
}

std::optional<Plan> plan_slice(const ReadAt& index, const ReadAt& plan, const PlanFileIdentity& identity,
                               std::string_view node, std::string_view label, const std::string& name) {
  if (!index_describes(index, identity)) return std::nullopt;
  auto header = index(0, header_size);
  std::uint64_t policy = get(header, 32, 8), node_count = get(header, 40, 8),
                entry_count = get(header, 48, 8);
  if (policy > static_cast<std::uint64_t>(Policy::pack) || node_count > identity.size ||
      entry_count > identity.size)
    return std::nullopt;
  const std::uint64_t nodes_at = header_size, entries_at = header_size + node_count * entry_size;

  const std::uint64_t wanted_label = label_key(label), wanted_node = node_key(node);
  auto records = find(index, entries_at, entry_count, wanted_label);
  auto node_records = find(index, nodes_at, node_count, wanted_node);
  if (!records || !node_records) return std::nullopt;
  const bool all_nodes = node_records->empty();
  if (all_nodes) {  // not a node of the plan: every node's record, for the message naming them
    node_records->clear();
    for (std::uint64_t i = 0; i < node_count; i += 1024) {
      auto bytes =
          index(nodes_at + i * entry_size, entry_size * std::min<std::uint64_t>(1024, node_count - i));
      if (bytes.empty() || bytes.size() % entry_size != 0) return std::nullopt;
      for (std::size_t at = 0; at < bytes.size(); at += entry_size)
        node_records->push_back(entry_at(bytes, at));
    }
  }
  // Found by the label (section < 4) or by the node (section + 4), each record once, in plan order.
  for (auto e : *node_records) {
    e.section += 4;
    records->push_back(e);
  }
  std::sort(records->begin(), records->end(), [](const Entry& x, const Entry& y) {
    return std::tie(x.offset, x.section) < std::tie(y.offset, y.section);
  });
  std::vector<Entry> unique;  // by offset; section: the list; length's top bits: found by label 1, node 2
  std::vector<int> found_by;
  for (const auto& e : *records) {
    int by = e.section >= 4 ? 2 : 1;
    std::uint32_t section = e.section % 4;
    if (!unique.empty() && unique.back().offset == e.offset) {
      found_by.back() |= by;
      continue;
    }
    unique.push_back({e.key, e.offset, e.length, section});
    found_by.push_back(by);
  }
  std::vector<std::size_t> order(unique.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t x, std::size_t y) { return unique[x].section < unique[y].section; });
  std::vector<Entry> sorted;
  std::vector<int> sorted_by;
  for (auto i : order) {
    sorted.push_back(unique[i]);
    sorted_by.push_back(found_by[i]);
  }
  *records = std::move(sorted);

  // The records as a small plan document, read by the same reader as a whole plan.
  std::string lists[4];
  for (const auto& r : *records) {
    if (r.section > 3 || r.offset + r.length > identity.size) return std::nullopt;
    auto record = plan(r.offset, r.length);
    if (record.size() != r.length || record.front() != '{' || record.back() != '}') return std::nullopt;
    lists[r.section] += lists[r.section].empty() ? "" : ",";
    lists[r.section] += record;
  }
  std::string text = R"({"schema_version":1,"policy":")";
  text += to_string(static_cast<Policy>(policy));
  text += '"';
  for (int s = 0; s < 4; ++s) text += fmt::format(R"(,"{}":[{}])", section_names[s], lists[s]);
  text += "}";
  Plan slice;
  try {
    slice = parse_plan(text, name);
  } catch (const InputError&) {
    return std::nullopt;  // not the records the index promised: the whole plan says what is wrong
  }
  // Every record names what it was found by (a hash shared by two labels is harmless: run-under
  // compares labels itself), else the index is not of this file after all.
  auto ours = [&](std::string_view record_label) { return label_key(record_label) == wanted_label; };
  std::size_t at = 0;
  for (const auto& t : slice.cpu_tests)
    if (!ours(t.label) || sorted_by[at++] != 1) return std::nullopt;
  for (const auto& t : slice.skipped_tests)
    if (!ours(t.label) || sorted_by[at++] != 1) return std::nullopt;
  for (const auto& a : slice.assignments) {
    int by = sorted_by[at++];
    if (((by & 1) && !ours(a.unit.label)) ||
        ((by & 2) && node_key(a.node.str()) != wanted_node && !all_nodes))
      return std::nullopt;
  }
  for (const auto& u : slice.unschedulable)
    if (!ours(u.unit.label) || sorted_by[at++] != 1) return std::nullopt;
  if (at != sorted_by.size()) return std::nullopt;
  return slice;
}

}  // namespace gpuplan
