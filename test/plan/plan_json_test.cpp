#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "gpuplan/error.hpp"
#include "gpuplan/plan.hpp"
#include "gpuplan/units.hpp"
#include "plan/rich_plan.hpp"

using namespace gpuplan;

namespace {
Plan sample_plan() {
  Plan plan;
  plan.policy = Policy::exact;
  Assignment a;
  a.unit.id = "//ml:train#shard-1-of-4";
  a.unit.label = "//ml:train";
  a.unit.shard_index = 1;
  a.unit.shard_count = 4;
  a.unit.duration_s = 300;
  a.unit.duration_source = "history-p90";
  a.unit.vram_mib = 40960;
  a.unit.requirement.edit().gpus = {2, "tag gpu:2"};
  a.unit.requirement.edit().cuda.push_back({*VersionConstraint::parse(">=12.4"), "tag cuda>=12.4"});
  a.unit.requirement.edit().nvlink = Sourced<bool>{true, "tag nvlink"};
  a.node = "h100-0";
  a.gpus = {0, 1};
  a.start_s = 0;
  a.end_s = 300;
  a.env = std::map<std::string, std::string>{
      {"CUDA_VISIBLE_DEVICES", "0,1"}, {"TEST_SHARD_INDEX", "1"}, {"TEST_TOTAL_SHARDS", "4"}};
  plan.assignments.push_back(a);
  plan.cpu_tests.push_back({"//a:b", "no GPU annotation"});
  plan.summary.makespan_s = 300.25;
  return plan;
}
}  // namespace

TEST_CASE("a plan written as JSON reads back the same") {
  auto json = to_json(sample_plan());
  REQUIRE(json["assignments"][0]["requirements"]["cuda"] == ">=12.4");
  REQUIRE(json["assignments"][0]["start_s"].is_number_integer());
  REQUIRE(json["summary"]["makespan_s"] == 300.25);
  auto back = plan_from_json(nlohmann::json::parse(json.dump()), "plan.json");
  REQUIRE(to_json(back).dump() == json.dump());
}

// verify and simulate read them when given no rules file: a pack plan made with
// vram_headroom: 0.05 was invalid to verify without it.
TEST_CASE("a pack plan keeps the knobs it was made with") {
  Plan plan = sample_plan();
  plan.policy = Policy::pack;
  plan.summary.vram_headroom = 0.00005;  // unrounded: verify checks with it
  plan.summary.max_tests_per_gpu = 2;
  auto json = to_json(plan);
  CHECK(json["summary"]["vram_headroom"] == 0.00005);
  CHECK(json["summary"]["max_tests_per_gpu"] == 2);
  auto back = plan_from_json(nlohmann::json::parse(json.dump()), "plan.json");
  CHECK(back.summary.vram_headroom == 0.00005);
  CHECK(back.summary.max_tests_per_gpu == 2);
  CHECK_FALSE(to_json(sample_plan())["summary"].contains("vram_headroom"));
}

// history suggest reads the plan's gpu_mem_mib as the test's gpu-mem tag: a floor history set
// was judged as one ("declared gpu-mem far above use" of a number no one wrote).
TEST_CASE("a plan tells a memory floor history set from a declared gpu-mem") {
  Plan plan = sample_plan();
  plan.assignments.push_back(plan.assignments[0]);
  plan.assignments[0].unit.requirement.edit().gpu_mem_mib = Sourced<std::int64_t>{20000, memory_floor_source};
  plan.assignments[1].unit.requirement.edit().gpu_mem_mib = Sourced<std::int64_t>{40960, "tag gpu-mem:40GiB"};
  auto json = to_json(plan);
  CHECK(json["assignments"][0]["requirements"]["gpu_mem_measured"] == true);
  CHECK_FALSE(json["assignments"][1]["requirements"].contains("gpu_mem_measured"));
  auto back = plan_from_json(nlohmann::json::parse(json.dump()), "plan.json");
  CHECK(gpu_mem_measured(*back.assignments[0].unit.requirement));
  CHECK_FALSE(gpu_mem_measured(*back.assignments[1].unit.requirement));
  CHECK(to_json(back).dump() == json.dump());
  // A plan written before the marker: its gpu_mem_mib reads as declared, as it did.
  json["assignments"][0]["requirements"].erase("gpu_mem_measured");
  CHECK_FALSE(gpu_mem_measured(*plan_from_json(json, "plan.json").assignments[0].unit.requirement));
  json["assignments"][0]["requirements"]["gpu_mem_measured"] = "yes";
  CHECK_THROWS_WITH(plan_from_json(json, "plan.json"),
                    "plan.json: assignments[0].requirements.gpu_mem_measured: expected true or false");
  json["assignments"][0]["requirements"]["gpu_mem_measured"] = true;
  json["assignments"][0]["requirements"]["gpu_mem_mib"] = nullptr;
  CHECK_THROWS_WITH(plan_from_json(json, "plan.json"),
                    Catch::Contains("gpu_mem_measured: true without a gpu_mem_mib"));
}

TEST_CASE("a plan with a field of the wrong type names the field") {
  auto json = nlohmann::json::parse(to_json(sample_plan()).dump());
  json["assignments"][0]["gpus"] = "0,1";
  REQUIRE_THROWS_WITH(plan_from_json(json, "plan.json"), "plan.json: assignments[0].gpus: expected an array");
}

TEST_CASE("a plan that is not JSON is an error with its line and column") {
  REQUIRE_THROWS_WITH(parse_plan("{\n  \"schema_version\": 1,\n  oops\n}", "plan.json"),
                      Catch::StartsWith("plan.json:3:3: "));
}

TEST_CASE("plan numbers beyond gpuplan's limits are errors naming the field, never wrapped") {
  auto error_with = [](const std::string& pointer, const nlohmann::json& value) {
    auto json = nlohmann::json::parse(to_json(sample_plan()).dump());
    json[nlohmann::json::json_pointer(pointer)] = value;
    try {
      plan_from_json(json, "plan.json");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  REQUIRE_THAT(
      error_with("/assignments/0/shard_index", 9223372036854775807LL),
      Catch::StartsWith("plan.json: assignments[0].shard_index: 9223372036854775807 is outside 0 to 3"));
  REQUIRE_THAT(error_with("/assignments/0/gpus/1", 4294967298LL),
               Catch::StartsWith("plan.json: assignments[0].gpus: 4294967298 is outside 0 to 1023"));
  REQUIRE_THAT(error_with("/assignments/0/shard_count", 1u << 31),
               Catch::StartsWith("plan.json: assignments[0].shard_count: 2147483648 is outside 0 to 10000"));
  REQUIRE_THAT(error_with("/assignments/0/duration_s", 1e308),
               Catch::StartsWith("plan.json: assignments[0].duration_s:"));
  REQUIRE_THAT(error_with("/assignments/0/end_s", 1e300),
               Catch::StartsWith("plan.json: assignments[0].end_s:"));
  REQUIRE_THAT(error_with("/summary/tests", 1e300), Catch::StartsWith("plan.json: summary.tests:"));
  REQUIRE_THAT(error_with("/summary/makespan_s", -1), Catch::StartsWith("plan.json: summary.makespan_s:"));
  REQUIRE(error_with("/assignments/0/shard_index", 3) == "(no error)");
}

TEST_CASE("a number beyond a double in a plan is an error at its line, not an internal error") {
  REQUIRE_THROWS_WITH(parse_plan("{\n  \"schema_version\": 1,\n  \"x\": [\"1e999\", 1e999]\n}", "plan.json"),
                      Catch::StartsWith("plan.json:3:18: a number beyond the range of a double"));
}

TEST_CASE("the streamed plan is byte for byte the plan JSON gpuplan wrote before streaming") {
  std::ifstream in(GPUPLAN_SOURCE_DIR "/test/data/plans/rich_plan.json", std::ios::binary);
  std::string expected((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  REQUIRE(!expected.empty());
  std::string text;
  std::size_t pieces = 0;
  write_plan_json(rich_plan(), [&](std::string_view piece) {
    text += piece;
    ++pieces;
  });
  CHECK(text == expected);
  CHECK(to_json(rich_plan()).dump(2) + "\n" == expected);
}

TEST_CASE("a plan's last 4 KiB tell it from another of the same size: its content fingerprint") {
  // A claims directory knows its plan by size and ends; a plan made again with one label of the
  // same length changed in its middle passed for the plan whose units were marked done there.
  auto written = [](const Plan& plan) {
    std::string text;
    write_plan_json(plan, [&](std::string_view piece) { text += piece; });
    return text;
  };
  Plan plan = sample_plan();
  plan.assignments.resize(200, plan.assignments.front());
  auto before = written(plan);
  plan.assignments[100].unit.label = "//ml:trane";
  auto after = written(plan);
  REQUIRE(before.size() == after.size());
  REQUIRE(before.substr(0, 4096) == after.substr(0, 4096));
  REQUIRE_THAT(after.substr(after.size() - 45),
               Catch::Matches(".*\"content_fingerprint\": \"[0-9a-f]{16}\"\n}\n"));
  REQUIRE(before.substr(before.size() - 4096) != after.substr(after.size() - 4096));
  REQUIRE(written(plan) == after);
}

TEST_CASE("a plan of many assignments is written in pieces as it goes") {
  Plan plan = sample_plan();
  plan.assignments.resize(20000, plan.assignments.front());
  std::size_t pieces = 0, largest = 0;
  write_plan_json(plan, [&](std::string_view piece) {
    ++pieces;
    largest = std::max(largest, piece.size());
  });
  CHECK(pieces > 100);
  CHECK(largest < 80 * 1024);
}

TEST_CASE("a pack plan's unit that shares its GPU is written and read with the variables that say so") {
  Plan plan = sample_plan();
  plan.policy = Policy::pack;
  auto& a = plan.assignments[0];
  a.unit.requirement.edit().gpus = {1, "tag gpu"};
  a.unit.requirement.edit().nvlink.reset();
  a.gpus = {1};
  a.env = {};
  auto json = to_json(plan);
  REQUIRE(json["assignments"][0]["env"] ==
          nlohmann::ordered_json{{"CUDA_VISIBLE_DEVICES", "1"},
                                 {"TEST_SHARD_INDEX", "1"},
                                 {"TEST_TOTAL_SHARDS", "4"},
                                 {"TF_FORCE_GPU_ALLOW_GROWTH", "true"},
                                 {"XLA_PYTHON_CLIENT_PREALLOCATE", "false"}});
  // Keys sorted, "policy" comes after "assignments": the streamed reader meets the env first.
  std::string sorted = nlohmann::json::parse(json.dump()).dump();
  REQUIRE(sorted.find("\"policy\"") > sorted.find("\"assignments\""));
  for (const Plan& back : {parse_plan(sorted, "p.json"), plan_from_json(json, "p.json")}) {
    REQUIRE_FALSE(back.assignments[0].env);  // the planned env: none of its own
    REQUIRE(to_json(back).dump() == json.dump());
  }
  // A plan from before: the file's env, without them, is kept as it is (verify reports it).
  json["assignments"][0]["env"].erase("XLA_PYTHON_CLIENT_PREALLOCATE");
  json["assignments"][0]["env"].erase("TF_FORCE_GPU_ALLOW_GROWTH");
  auto old = parse_plan(json.dump(), "p.json");
  REQUIRE(old.assignments[0].env);
  REQUIRE(old.assignments[0].env->size() == 3);
}

TEST_CASE("a copied assignment has its own env: changing one leaves the other") {
  Plan plan = sample_plan();
  Assignment copy = plan.assignments[0];
  (*copy.env)["CUDA_VISIBLE_DEVICES"] = "4,5";
  REQUIRE(plan.assignments[0].env->at("CUDA_VISIBLE_DEVICES") == "0,1");
  copy = Assignment{};
  REQUIRE_FALSE(copy.env);
  copy = plan.assignments[0];
  REQUIRE(copy.env->size() == 3);
}

TEST_CASE("parse_plan, which never holds the whole document, reads what plan_from_json reads") {
  // Each case: the plan of sample_plan with an edit; both readers must give the same plan or
  // the same message (the first bad element of an array, after the checks that come first).
  auto text_of = [](const std::function<void(nlohmann::json&)>& edit) {
    auto json = nlohmann::json::parse(to_json(sample_plan()).dump());
    json["unschedulable"] = nlohmann::json::array({json["assignments"][0]});
    json["unschedulable"][0]["reason"] = "too big";
    edit(json);
    return json.dump(2);
  };
  auto outcome = [](const std::function<Plan()>& read) {
    try {
      return to_json(read()).dump();
    } catch (const InputError& e) {
      return std::string("error: ") + e.message();  // parse_plan's has a line, the document none
    }
  };
  using J = nlohmann::json;
  std::vector<std::pair<std::string, std::function<void(J&)>>> cases{
      {"as written", [](J&) {}},
      {"two assignments", [](J& j) { j["assignments"].push_back(j["assignments"][0]); }},
      {"second bad, then third bad",
       [](J& j) {
         j["assignments"].push_back(j["assignments"][0]);
         j["assignments"].push_back(j["assignments"][0]);
         j["assignments"][1]["node"] = 5;
         j["assignments"][2]["gpus"] = "x";
       }},
      {"an element that is no object",
       [](J& j) {
         j["assignments"].push_back(J::array({1, J::array({2})}));
       }},
      {"a scalar element", [](J& j) { j["unschedulable"].push_back(7); }},
      {"bad schema_version and a bad assignment",
       [](J& j) {
         j["schema_version"] = 2;
         j["assignments"][0]["gpus"] = nullptr;
       }},
      {"bad unschedulable and a bad assignment",
       [](J& j) {
         j["unschedulable"][0]["reason"] = 1;
         j["assignments"][0]["end_s"] = "late";
       }},
      {"bad diagnostics and a bad unschedulable",
       [](J& j) {
         j["diagnostics"] = J::array({J::object({{"severity", "warning"}})});
         j["unschedulable"][0]["unit"] = 3;
       }},
      {"assignments an object",
       [](J& j) {
         j["assignments"] = J::object({{"a", 1}});
       }},
      {"unschedulable null", [](J& j) { j["unschedulable"] = nullptr; }},
      {"no assignments", [](J& j) { j.erase("assignments"); }},
      {"arrays of that name deeper down",
       [](J& j) {
         j["summary"]["assignments"] = J::array({1, 2});
       }},
  };
  for (const auto& [name, edit] : cases) {
    INFO(name);
    std::string text = text_of(edit);
    REQUIRE(outcome([&] { return parse_plan(text, "p.json"); }) ==
            outcome([&] { return plan_from_json(J::parse(text), "p.json"); }));
  }
  // A key given twice: the last one counts, as in a document, even when it is empty.
  std::string text = text_of([](J&) {});
  std::string twice = text.substr(0, text.rfind('}')) + ", \"assignments\": []}";
  REQUIRE(parse_plan(twice, "p.json").assignments.empty());
  REQUIRE(parse_plan(text, "p.json").assignments.size() == 1);
  REQUIRE_THROWS_WITH(parse_plan("[" + text + "]", "p.json"), "p.json:1:1: $: a plan is a JSON object");
}

TEST_CASE("units with the same requirements share one, and a look-alike of another type is still an error") {
  auto json = nlohmann::json::parse(to_json(sample_plan()).dump());
  json["assignments"].push_back(json["assignments"][0]);
  Plan plan = parse_plan(json.dump(), "p.json");
  REQUIRE(&*plan.assignments[0].unit.requirement == &*plan.assignments[1].unit.requirement);
  REQUIRE(to_json(plan)["assignments"][1]["requirements"].dump() ==
          to_json(sample_plan())["assignments"][0]["requirements"].dump());
  json["assignments"][1]["requirements"]["gpus"] = 2.0;  // nlohmann's == takes it for 2
  REQUIRE_THROWS_WITH(parse_plan(json.dump(), "p.json"),
                      Catch::StartsWith("p.json:1:") &&
                          Catch::EndsWith(": assignments[1].requirements.gpus: expected an integer"));
}

TEST_CASE("broken JSON deep in a large plan is reported at its line and column, from a stream too") {
  // parse_plan never holds a streamed plan whole: it counts lines in 1 MiB chunks and keeps the
  // last two, so the errors here lie past several chunk boundaries, one number across one.
  // The padding is 3,000 members of 1 KiB each, not 100,000 small ones (15 s under ASan).
  auto text_with = [](const std::string& bad, std::size_t at_byte) {
    std::string text = "{\n";
    long line = 2;
    const std::string value(1000, 'x');
    while (text.size() + value.size() + 40 < at_byte) {
      text += "  \"padding_" + std::to_string(line) + "\": \"" + value + "\",\n";
      ++line;
    }
    std::string indent(at_byte - text.size(), ' ');
    text += indent + bad + "\n}\n";
    return std::tuple(text, line, static_cast<long>(indent.size()) + 1);
  };
  for (std::size_t at : {std::size_t{1} << 20, (std::size_t{2} << 20) - 2, std::size_t{3000000}}) {
    INFO(at);
    auto [text, line, column] = text_with("\"x\": 1e99999,", at);
    auto where = fmt::format("p.json:{}:{}: ", line, column + 5);  // the number, after "x":
    REQUIRE_THROWS_WITH(parse_plan(text, "p.json"),
                        Catch::StartsWith(where) && Catch::Contains("beyond the range"));
    std::istringstream stream(text);
    REQUIRE_THROWS_WITH(parse_plan(stream, "p.json"),
                        Catch::StartsWith(where) && Catch::Contains("beyond the range"));
    std::tie(text, line, column) = text_with("oops", at);
    where = fmt::format("p.json:{}:{}: ", line, column);
    REQUIRE_THROWS_WITH(parse_plan(text, "p.json"),
                        Catch::StartsWith(where) && Catch::Contains("not valid JSON"));
  }
  std::istringstream plan(to_json(sample_plan()).dump(2));
  REQUIRE(to_json(parse_plan(plan, "p.json")).dump() == to_json(sample_plan()).dump());
}

TEST_CASE("a plan that is not JSON says what it is: cut short, empty, compressed") {
  // Before, all three were "not valid JSON" and nothing more.
  auto whole = to_json(sample_plan()).dump(2);
  CHECK_THROWS_WITH(parse_plan(whole.substr(0, whole.size() / 2), "p.json"),
                    Catch::Contains("(the file ends too soon: cut short?)"));
  auto in_a_string =
      whole.substr(0, whole.find("\"schema_version\"") + 5);  // it said only "missing closing quote"
  CHECK_THROWS_WITH(parse_plan(in_a_string, "p.json"),
                    Catch::Contains("(the file ends too soon: cut short?)"));
  CHECK_THROWS_WITH(parse_plan("", "p.json"),
                    "p.json:1:1: the file is empty; a plan is the JSON object `gpuplan plan` writes");
  CHECK_THROWS_WITH(parse_plan(std::string("\x1f\x8b\x08\x00", 4), "p.json"),
                    "p.json:1:1: gzip-compressed data: decompress it first (in bash: <(zcat FILE))");
}

namespace {

/// Text read as from a pipe: it cannot be sought, so read only once.
class PipeBuffer : public std::streambuf {
 public:
  explicit PipeBuffer(std::string text) : text_(std::move(text)) {
    setg(text_.data(), text_.data(), text_.data() + text_.size());
  }

 private:
  std::string text_;
};

/// The line `needle` first appears on in `text` after `after` (a needle that begins with a
/// newline: the line after it).
long line_of(const std::string& text, const std::string& needle, const std::string& after = "") {
  auto at = text.find(needle, text.find(after) + after.size());
  REQUIRE(at != std::string::npos);
  return 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at) + 1, '\n');
}

/// parse_plan's message for `text`, read from memory, a file-like stream and a pipe.
std::vector<std::string> messages(const std::string& text) {
  std::vector<std::string> out;
  auto message = [&](const std::function<void()>& read) {
    try {
      read();
      out.push_back("(no error)");
    } catch (const InputError& e) {
      out.push_back(e.what());
    }
  };
  message([&] { parse_plan(text, "p.json"); });
  std::istringstream stream(text);
  message([&] { parse_plan(stream, "p.json"); });
  PipeBuffer pipe(text);
  std::istream piped(&pipe);
  message([&] { parse_plan(piped, "p.json"); });
  return out;
}

}  // namespace

TEST_CASE("a plan's wrong field is an error at its line, naming its JSON path") {
  // Each case: an edit, the JSON path the message names, and the text on the line it must name
  // (for a missing field, the object's line).
  using J = nlohmann::json;
  struct Case {
    std::string kind, path, on_line, after;
    std::function<void(J&)> edit;
  };
  std::vector<Case> cases{
      {"wrong type", "assignments[1].gpus", "\"gpus\": \"0,1\"", "",
       [](J& j) { j["assignments"][1]["gpus"] = "0,1"; }},
      {"missing", "assignments[1]", "\n    {", "\"end_s\"", [](J& j) { j["assignments"][1].erase("node"); }},
      {"out of range", "assignments[1].end_s", "-12345", "",
       [](J& j) { j["assignments"][1]["end_s"] = -12345; }},
      {"bad value in a requirement", "assignments[1].requirements.cuda", "\"twelve\"", "",
       [](J& j) { j["assignments"][1]["requirements"]["cuda"] = "twelve"; }},
      {"an environment variable", "assignments[1].env.TEST_SHARD_INDEX", "424242", "",
       [](J& j) { j["assignments"][1]["env"]["TEST_SHARD_INDEX"] = 424242; }},
      {"an unschedulable unit", "unschedulable[0].reason", "777777", "",
       [](J& j) { j["unschedulable"][0]["reason"] = 777777; }},
      {"bad value at the top", "policy", "\"sometimes\"", "", [](J& j) { j["policy"] = "sometimes"; }},
      {"wrong type at the top", "$.policy", "\"policy\": 7", "", [](J& j) { j["policy"] = 7; }},
      {"missing at the top", "$", "{", "", [](J& j) { j.erase("policy"); }},
      {"a large array that is none", "$.assignments", "\"assignments\": \"none\"", "",
       [](J& j) { j["assignments"] = "none"; }},
      {"unsupported version", "schema_version", "\"schema_version\": 7", "",
       [](J& j) { j["schema_version"] = 7; }},
      {"summary", "summary.makespan_s", "-54321", "", [](J& j) { j["summary"]["makespan_s"] = -54321; }},
      {"a listed test", "cpu_tests[0].reason", "\"reason\": true", "",
       [](J& j) { j["cpu_tests"][0]["reason"] = true; }},
      {"a diagnostic", "diagnostics[0]", "\n    {", "\"diagnostics\"",
       [](J& j) {
         j["diagnostics"] = J::array({J::object({{"severity", "note"}})});
       }},
  };
  for (const auto& c : cases) {
    INFO(c.kind);
    auto json = nlohmann::json::parse(to_json(sample_plan()).dump());
    json["assignments"].push_back(json["assignments"][0]);
    json["unschedulable"] = J::array({json["assignments"][0]});
    json["unschedulable"][0]["reason"] = "too big";
    c.edit(json);
    std::string text = json.dump(2);
    long line = line_of(text, c.on_line, c.after);
    auto found = messages(text);
    // Catch's matchers combined with && hold references: each made where it is used.
    const auto where = fmt::format("p.json:{}:", line), named = ": " + c.path + ": ";
    CHECK_THAT(found[0], Catch::StartsWith(where) && Catch::Contains(named));
    CHECK_THAT(found[1], Catch::StartsWith(where) && Catch::Contains(named));
    // From a pipe, whose text is gone once read: a unit's line is found in the text still kept,
    // a field at the top in that member's text, kept as it was read (before, the path alone).
    CHECK_THAT(found[2], Catch::StartsWith(where) && Catch::Contains(named));
  }
}

namespace {
/// A plan of 2,000 units, over 3 MiB as dump(1) writes it: past the chunks parse_plan keeps.
/// Each unit's label is long (1.6 KiB): 20,000 units of the usual size made it as large, and
/// reading those (each case reads its plan 3 ways) took 99 s of CI's time under ASan.
nlohmann::json large_plan() {
  auto json = nlohmann::json::parse(to_json(sample_plan()).dump());
  auto unit = json["assignments"][0];
  unit["label"] = "//ml/" + std::string(1600, 'x') + ":train";
  json["assignments"] = nlohmann::json::array();
  for (int i = 0; i < 2000; ++i) json["assignments"].push_back(unit);
  return json;
}
}  // namespace

TEST_CASE("a wrong field at the top of a large plan read from a pipe is reported at its line") {
  auto json = large_plan();
  for (const auto& [edit, path, on_line] :
       std::vector<std::tuple<std::function<void(nlohmann::json&)>, std::string, std::string>>{
           {[](nlohmann::json& j) { j["summary"]["gpu_units"] = "many"; }, "summary.gpu_units", "\"many\""},
           // After 3 MiB of units: the diagnostics member, kept as the parser passed it.
           {[](nlohmann::json& j) {
              j["diagnostics"] = {{{"severity", "note"}, {"label", 5}}};
            },
            "diagnostics[0].label", "\"label\": 5"},
           {[](nlohmann::json& j) { j.erase("policy"); }, "$", "{"}}) {
    INFO(path);
    auto edited = json;
    edit(edited);
    std::string text = edited.dump(1);
    REQUIRE(text.size() > (std::size_t{3} << 20));
    auto where = fmt::format("p.json:{}:", line_of(text, on_line));
    for (const auto& message : messages(text))
      CHECK_THAT(message, Catch::StartsWith(where) && Catch::Contains(": " + path + ": "));
  }
}

TEST_CASE("a wrong field deep in a large plan read from a pipe is reported at its line") {
  auto json = large_plan();
  json["assignments"][1500]["start_s"] = "soon";
  std::string text = json.dump(1);
  REQUIRE(text.size() > (std::size_t{3} << 20));
  auto where = fmt::format("p.json:{}:", line_of(text, "\"soon\""));
  for (const auto& message : messages(text))
    CHECK_THAT(message,
               Catch::StartsWith(where) && Catch::Contains(": assignments[1500].start_s: expected a number"));
}
