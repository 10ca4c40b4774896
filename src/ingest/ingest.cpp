#include "gpuplan/ingest.hpp"

#include <fmt/format.h>

#include <exception>
#include <iterator>
#include <unordered_map>
#include <vector>

#include "gpuplan/error.hpp"
#include "gpuplan/limits.hpp"
#include "ingest/readers.hpp"

namespace gpuplan {

bool may_have_linkopts(std::string_view rule_class) {
  return rule_class.empty() || rule_class.starts_with("cc_") ||
         rule_class.find("cuda") != std::string_view::npos;
}

namespace ingest {

void Collector::add(TargetKind kind, Target&& target) {
  if (kind == TargetKind::rule && keeps(target.rule_class)) {
    keep(std::move(target));
  } else {
    drop(kind, target.rule_class);
  }
}

void Collector::drop(TargetKind kind, std::string_view rule_class) {
  switch (kind) {
    case TargetKind::rule:
      ++(rule_class == "test_suite" ? dropped_.test_suites : dropped_.non_test_rules);
      break;
    case TargetKind::source_file: ++dropped_.source_files; break;
    case TargetKind::generated_file: ++dropped_.generated_files; break;
    case TargetKind::other: ++dropped_.other; break;
  }
}

void Collector::keep(Target&& target) {
  if (static_cast<long>(size_) >= max_tests)
    throw InputError(Position{name_}, fmt::format("more than {} tests: gpuplan's limit for one input "
                                                  "(see README \"Limits\"); split the query",
                                                  max_tests));
  if (tests) {
    ++size_;
    // The readers call this from inside their parsers (expat's C frames): an exception must not
    // unwind through them, so it waits for finish().
    if (failed_) return;
    try {
      tests->test(std::move(target));
    } catch (...) {
      failed_ = std::current_exception();
    }
    return;
  }
  if (size_ % block_size == 0) {
    blocks_.emplace_back();
    blocks_.back().reserve(block_size);
  }
  blocks_.back().push_back(std::move(target));
  ++size_;
}

TargetList Collector::finish(InputFormat format) {
  if (failed_) std::rethrow_exception(failed_);
  TargetList list;
  list.format = std::string(to_string(format));
  list.dropped = dropped_;
  if (!tests) list.tests.reserve(size_);  // handed over as read, none kept
  for (auto& block : blocks_) {  // freeing each block once moved keeps one copy of the list at a time
    std::move(block.begin(), block.end(), std::back_inserter(list.tests));
    std::vector<Target>().swap(block);
  }
  return list;
}

}  // namespace ingest

namespace {

TargetList read_into(std::istream& in, const std::string& name, std::optional<InputFormat> forced,
                     GraphSink* graph, TargetSink* tests) {
  using namespace ingest;
  Source source(in, name);
  if (is_blank(source)) return TargetList{};
  InputFormat format = forced ? *forced : detect_format(source);
  Collector collector(name);
  collector.graph = graph;
  if (tests) tests->start(format);
  // cquery's JSON names a test's configuration after the test (and the configurations last):
  // its tests are handed over once the whole input is read.
  bool whole_first = format == InputFormat::cquery_jsonproto;
  if (!whole_first) collector.tests = tests;
  switch (format) {
    case InputFormat::xml: read_xml(source, collector); break;
    case InputFormat::label:
    case InputFormat::label_kind:
    case InputFormat::cquery_label:
    case InputFormat::cquery_label_kind: read_label_lines(source, format, collector); break;
    case InputFormat::streamed_jsonproto: read_streamed_jsonproto(source, collector); break;
    case InputFormat::jsonproto: read_jsonproto(source, collector); break;
    case InputFormat::cquery_jsonproto: read_cquery_jsonproto(source, collector); break;
  }
  TargetList list = collector.finish(format);
  if (tests && whole_first) {
    for (Target& target : list.tests) tests->test(std::move(target));
    std::vector<Target>().swap(list.tests);
  }
  return list;
}

}  // namespace

TargetList read_targets(std::istream& in, const std::string& name, std::optional<InputFormat> forced,
                        GraphSink* graph) {
  return read_into(in, name, forced, graph, nullptr);
}

TargetList read_targets(std::istream& in, const std::string& name, std::optional<InputFormat> forced,
                        GraphSink* graph, TargetSink& tests) {
  return read_into(in, name, forced, graph, &tests);
}

void join_attributes(TargetList& targets, const TargetList& attributes) {
  // Every listing of a label: one the attributes list twice (cquery's configurations) is
  // handed over twice, so that the classifier chooses between them as it does for any input
  // (the listing that needs GPUs); the first listing alone had sent GPU tests to CPU runners.
  std::unordered_map<std::string, std::vector<const Target*>> by_label;
  for (const Target& target : attributes.tests) by_label[canonical_label(target.label)].push_back(&target);
  std::vector<Target> joined;
  joined.reserve(targets.tests.size());
  for (Target& target : targets.tests) {
    auto found = target.has_attributes ? by_label.end() : by_label.find(canonical_label(target.label));
    if (found == by_label.end()) {
      joined.push_back(std::move(target));
      continue;
    }
    for (const Target* listing : found->second) {
      Target with = *listing;
      with.label = target.label;
      if (!target.configuration.empty()) with.configuration = target.configuration;
      joined.push_back(std::move(with));
    }
  }
  targets.tests = std::move(joined);
}

}  // namespace gpuplan
