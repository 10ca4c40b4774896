// JUnit XML of what `exec` or `run-under` ran, for CI systems' test reports.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>

#include "gpuplan/export.hpp"
#include "gpuplan/target.hpp"

namespace gpuplan {

namespace {

/// Text as an XML 1.0 attribute value: markup escaped, characters XML cannot hold as U+FFFD.
std::string attribute(std::string_view text) {
  std::string out;
  for (char c : text) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '&': out += "&amp;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      case '\t': out += "&#9;"; break;
      case '\n': out += "&#10;"; break;
      case '\r': out += "&#13;"; break;
      default: out += u < 0x20 || u == 0x7f ? "\xEF\xBF\xBD" : std::string(1, c);
    }
  }
  return out;
}

/// "//pkg/sub:name" → ("//pkg/sub", "name"); a label without ':' is all name.
std::pair<std::string, std::string> split_label(const std::string& label) {
  auto colon = label.rfind(':');
  if (colon == std::string::npos) return {"", label};
  return {label.substr(0, colon), label.substr(colon + 1)};
}

std::string seconds(double s) { return fmt::format("{:.3f}", s); }

/// A results record as a case: a <failure> for a non-zero exit (128 + N: killed by signal N),
/// a timeout or a run stopped before it ended.
JunitCase junit_case(const RunRecord& r) {
  JunitCase c{.label = r.label,
              .shard_index = r.shard_index,
              .seconds = r.seconds,
              .node = r.node,
              .gpus = r.gpus,
              .filtered = r.filtered};
  auto fail = [&](const char* type, std::string message) {
    c.failure_type = type;
    c.failure_message = std::move(message);
  };
  if (r.end == RunEnd::timed_out)
    fail("timeout", "timed out");
  else if (r.end == RunEnd::stopped)
    fail("stopped", "stopped before it ended");
  else if (r.exit_status > 128)
    fail("signal", fmt::format("killed by signal {}", r.exit_status - 128));
  else if (r.exit_status != 0)
    fail("exit", fmt::format("exit status {}", r.exit_status));
  return c;
}

}  // namespace

std::string junit_xml(const std::vector<JunitCase>& cases) {
  std::map<std::string, std::vector<const JunitCase*>> by_node;
  for (const auto& c : cases) by_node[c.node].push_back(&c);
  auto totals = [](const std::vector<const JunitCase*>& list) {
    long failures = 0;
    double time = 0;
    for (const auto* c : list) {
      failures += !c->failure_type.empty();
      time += c->seconds;
    }
    return std::pair{failures, time};
  };
  std::vector<const JunitCase*> all;
  for (const auto& c : cases) all.push_back(&c);
  auto [failures, total] = totals(all);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"gpuplan\" tests=\"{}\" failures=\"{}\" time=\"{}\">\n", cases.size(),
                     failures, seconds(total));
  for (const auto& [node, list] : by_node) {
    auto [node_failures, node_time] = totals(list);
    out += fmt::format("  <testsuite name=\"{}\" hostname=\"{}\" tests=\"{}\" failures=\"{}\" time=\"{}\">\n",
                       attribute("gpuplan " + node), attribute(node), list.size(), node_failures,
                       seconds(node_time));
    for (const auto* c : list) {
      auto [package, name] = split_label(c->label);
      if (c->shard_index) name += fmt::format(" shard {}", *c->shard_index);
      out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{}\">\n", attribute(package),
                         attribute(name), seconds(c->seconds));
      out += fmt::format(
          "      <properties><property name=\"label\" value=\"{}\"/><property name=\"node\" value=\"{}\"/>"
          "<property name=\"gpus\" value=\"{}\"/>{}{}{}</properties>\n",
          attribute(c->label), attribute(node), gpu_list(c->gpus),
          c->cached ? "<property name=\"cached\" value=\"true\"/>" : "",
          // Its time is not the test's, nor its pass a pass of every case.
          c->filtered ? "<property name=\"filtered\" value=\"true\"/>" : "",
          c->bazel_status.empty()
              ? ""
              : fmt::format("<property name=\"bazel_status\" value=\"{}\"/>", attribute(c->bazel_status)));
      if (!c->failure_type.empty())
        out += fmt::format("      <failure message=\"{}\" type=\"{}\"/>\n", attribute(c->failure_message),
                           attribute(c->failure_type));
      out += "    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

std::vector<JunitCase> bazel_junit_cases(const std::vector<Assignment>& units, const BepOutcomes& events,
                                         const std::string& node, const std::string& no_result) {
  // Per test, shard and run: the last attempt (Bazel retries a failed one under
  // --flaky_test_attempts; the last says how the run ended).
  std::map<std::string, std::map<std::pair<int, int>, const BepOutcome*>> last;
  for (const auto& o : events.results) {
    auto& slot = last[label_identity(o.label)][{o.shard, o.run}];
    if (!slot || o.attempt >= slot->attempt) slot = &o;
  }
  std::map<std::string, std::string> overall;
  for (const auto& [label, status] : events.overall_status) overall[label_identity(label)] = status;
  std::vector<JunitCase> cases;
  for (const auto& a : units) {
    const auto identity = label_identity(a.unit.label);
    JunitCase c{.label = a.unit.label,
                .shard_index = a.unit.shard_index,
                .node = node,
                .gpus = a.gpus,
                .cached = true};
    if (auto it = overall.find(identity); it != overall.end()) c.bazel_status = it->second;
    std::vector<const BepOutcome*> ended;
    if (auto it = last.find(identity); it != last.end())
      for (const auto& [shard_run, outcome] : it->second)
        if (!a.unit.shard_index || shard_run.first == *a.unit.shard_index + 1) ended.push_back(outcome);
    if (ended.empty()) {
      c.cached = false;
      c.failure_type = "no-result";
      c.failure_message = no_result;
    }
    // Bazel's verdict on the test passes it where its runs disagree (FLAKY, under
    // --runs_per_test_detects_flakes); else the shard fails with its first failed run.
    const bool passed = c.bazel_status == "PASSED" || c.bazel_status == "FLAKY";
    for (const auto* o : ended) {
      c.seconds += o->seconds;
      c.cached = c.cached && o->cached;
      c.filtered = c.filtered || o->filtered;  // a .bazelrc's --test_filter: not the test's whole pass
      if (passed || o->status == "PASSED" || o->status == "FLAKY" || !c.failure_type.empty()) continue;
      c.failure_type = o->status;
      std::transform(c.failure_type.begin(), c.failure_type.end(), c.failure_type.begin(),
                     [](unsigned char ch) { return std::tolower(ch); });
      c.failure_message =
          fmt::format("Bazel: {}{}", o->status, o->test_log.empty() ? "" : "; its log: " + o->test_log);
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

std::string results_junit(const std::vector<RunRecord>& records) {
  return results_junit(records, {}, {}, {});
}

std::string results_junit(const std::vector<RunRecord>& records, const std::vector<Assignment>& not_run,
                          const std::string& node, const std::string& why) {
  std::vector<JunitCase> cases;
  cases.reserve(records.size() + not_run.size());
  for (const auto& r : records) cases.push_back(junit_case(r));
  for (const auto& a : not_run)
    cases.push_back({.label = a.unit.label,
                     .shard_index = a.unit.shard_index,
                     .node = node,
                     .gpus = a.gpus,
                     .failure_type = "no-result",
                     .failure_message = why});
  return junit_xml(cases);
}

}  // namespace gpuplan
