#include "plan/plan_index.hpp"

#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "gpuplan/run.hpp"
#include "rich_plan.hpp"

using namespace gpuplan;

namespace {

/// The plan's file text, and the index made from it as `gpuplan plan -o` makes it.
struct Written {
  std::string text;
  std::string index;
  PlanFileIdentity identity;
};

Written write(const Plan& plan, std::int64_t mtime_ns = 7) {
  Written w;
  PlanRecords records =
      write_plan_json_noting_records(plan, [&](std::string_view piece) { w.text += piece; });
  auto span = std::min(fingerprint_span, w.text.size());
  w.identity = {w.text.size(), mtime_ns,
                plan_fingerprint(std::string_view(w.text).substr(0, span),
                                 std::string_view(w.text).substr(w.text.size() - span))};
  w.index = make_plan_index(plan, records, w.identity);
  return w;
}

ReadAt reader(const std::string& bytes) {
  return [&bytes](std::uint64_t at, std::size_t n) {
    return at >= bytes.size() ? std::string() : bytes.substr(at, n);
  };
}

std::optional<Plan> slice(const Written& w, std::string_view node, std::string_view label) {
  return plan_slice(reader(w.index), reader(w.text), w.identity, node, label, "plan.json");
}

/// Three nodes, a sharded test spread over two of them, a test planned twice on one node by
/// hand, CPU, skipped and unschedulable tests, and labels spelled with and without "@".
Plan many_nodes() {
  Plan plan = rich_plan();
  plan.policy = Policy::exact;
  auto add = [&](std::string label, std::optional<int> shard, const char* node, std::vector<int> gpus) {
    Assignment a;
    a.unit.label = label;
    a.unit.id = shard ? fmt::format("{}#shard-{}-of-4", label, *shard) : label;
    a.unit.shard_index = shard;
    a.unit.shard_count = shard ? 4 : 1;
    a.unit.requirement.edit().gpus = {static_cast<int>(gpus.size()), "tag"};
    a.node = node;
    a.gpus = gpus;
    a.end_s = 10;
    plan.assignments.push_back(a);
  };
  for (int shard = 0; shard < 4; ++shard) add("//s:sharded", shard, shard % 2 ? "n2" : "n1", {shard});
  add("@//t:twice", std::nullopt, "n1", {5});
  add("//t:twice", std::nullopt, "n1", {6, 7});
  for (int i = 0; i < 50; ++i) add(fmt::format("//many:t{}", i), std::nullopt, "n3", {i % 3});
  add("@rules_foo//x:gpu_test", std::nullopt, "n2", {3});  // as Bazel 7's default query prints it
  return plan;
}

}  // namespace

TEST_CASE("plan slice: every launch is placed as with the whole plan", "[plan_index]") {
  Plan plan = many_nodes();
  Written w = write(plan);
  std::vector<std::string> labels{"//s:sharded", "//t:twice", "@//t:twice", "//ml:train", "//a:b", "//a:c",
                                  "//a:manual_test", "//big:t", "//many:t7", "//nowhere:x",
                                  "@repo//tools:lint_gpu_test",
                                  // TEST_TARGET of Bazel 7 and 8 (the canonical repository name)
                                  "@@rules_foo~//x:gpu_test", "@@rules_foo+//x:gpu_test"};
  std::vector<std::string> nodes{"n1", "n2", "n3", "h100-0", "l4-3", "not-a-node"};
  for (const auto& node : nodes)
    for (const auto& label : labels)
      for (std::optional<int> shard : {std::optional<int>(), std::optional<int>(1), std::optional<int>(2)}) {
        INFO(node << " " << label << " shard " << shard.value_or(-1));
        auto part = slice(w, node, label);
        REQUIRE(part);
        auto whole = place_test(plan, node, label, shard);
        auto sliced = place_test(*part, node, label, shard);
        CHECK(sliced.kind == whole.kind);
        CHECK(sliced.reason == whole.reason);
        REQUIRE(sliced.assignment.has_value() == whole.assignment.has_value());
        if (whole.assignment) {
          CHECK(sliced.assignment->unit.id == whole.assignment->unit.id);
          CHECK(sliced.assignment->gpus == whole.assignment->gpus);
          CHECK(holds_whole_node(*sliced.assignment, part->policy) ==
                holds_whole_node(*whole.assignment, plan.policy));
        }
        CHECK(planned_gpu_count(*part, node) == planned_gpu_count(plan, node));
        if (label.starts_with("@@rules_foo") && node == "n2")
          CHECK(sliced.kind == TestPlacement::Kind::planned);
        CHECK(part->assignments.size() <= 5 + (node == "not-a-node" ? 5 : 0));
      }
}

TEST_CASE("plan slice: an index of another version of the file is not used", "[plan_index]") {
  Plan plan = many_nodes();
  Written w = write(plan);
  REQUIRE(slice(w, "n1", "//s:sharded"));

  SECTION("another size, time or fingerprint") {
    for (auto changed : {PlanFileIdentity{w.identity.size + 1, w.identity.mtime_ns, w.identity.fingerprint},
                         PlanFileIdentity{w.identity.size, w.identity.mtime_ns + 1, w.identity.fingerprint},
                         PlanFileIdentity{w.identity.size, w.identity.mtime_ns, w.identity.fingerprint ^ 1}})
      CHECK_FALSE(plan_slice(reader(w.index), reader(w.text), changed, "n1", "//s:sharded", "p"));
  }
  SECTION("a plan rewritten with its identity kept: the records it points at name other tests") {
    Plan other = plan;
    std::swap(other.assignments[9].unit, other.assignments[10].unit);  // //many:t1 and t2 trade places
    Written moved = write(other);
    REQUIRE(moved.text.size() == w.text.size());
    REQUIRE(slice(w, "n3", "//many:t1"));
    CHECK_FALSE(plan_slice(reader(w.index), reader(moved.text), w.identity, "n3", "//many:t1", "p"));
  }
  SECTION("a truncated or foreign index") {
    std::string cut = w.index.substr(0, w.index.size() - 30);
    CHECK_FALSE(plan_slice(reader(cut), reader(w.text), w.identity, "n3", "//many:t49", "p"));
    std::string foreign = "{\"not\": \"an index\"}";
    CHECK_FALSE(plan_slice(reader(foreign), reader(w.text), w.identity, "n1", "//s:sharded", "p"));
  }
}

TEST_CASE("plan records: the scanner, whatever the pieces, finds where the writer noted them",
          "[plan_index]") {
  Plan plan = rich_plan();
  std::string text;
  PlanRecords noted = write_plan_json_noting_records(plan, [&](std::string_view piece) { text += piece; });
  PlanRecordScanner whole, bytewise;
  whole.feed(text);
  for (char c : text) bytewise.feed(std::string_view(&c, 1));
  for (auto section : {PlanSection::cpu_tests, PlanSection::skipped_tests, PlanSection::assignments,
                       PlanSection::unschedulable})
    for (const auto* found : {&whole.records(), &bytewise.records()}) {
      REQUIRE(found->extents(section).size() == noted.extents(section).size());
      for (std::size_t i = 0; i < noted.extents(section).size(); ++i) {
        CHECK(found->extents(section)[i].offset == noted.extents(section)[i].offset);
        CHECK(found->extents(section)[i].length == noted.extents(section)[i].length);
      }
    }
  REQUIRE(noted.extents(PlanSection::assignments).size() == 2);
  auto first = noted.extents(PlanSection::assignments)[0];
  CHECK(text.substr(first.offset, 40).starts_with("{\n      \"unit\": \"//ml:train#shard"));
  CHECK(text[first.offset + first.length - 1] == '}');
  CHECK(noted.extents(PlanSection::cpu_tests).size() == 2);
  CHECK(noted.extents(PlanSection::unschedulable).size() == 1);
  // The diagnostics list (with its "label" keys) is no list of the index.
  Plan fewer = plan;
  fewer.cpu_tests.pop_back();
  CHECK_THROWS_AS(make_plan_index(fewer, noted, PlanFileIdentity{}), std::logic_error);
}
