// JUnit XML of what `exec` or `run-under` ran, for CI systems' test reports.
#include <fmt/format.h>

#include <map>

#include "gpuplan/export.hpp"

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

}  // namespace

std::string results_junit(const std::vector<RunRecord>& records) {
  std::map<std::string, std::vector<const RunRecord*>> by_node;
  for (const auto& r : records) by_node[r.node].push_back(&r);
  long failures = 0;
  double total = 0;
  for (const auto& r : records) {
    failures += r.end != RunEnd::exited || r.exit_status != 0;
    total += r.seconds;
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format("<testsuites name=\"gpuplan\" tests=\"{}\" failures=\"{}\" time=\"{}\">\n",
                     records.size(), failures, seconds(total));
  for (const auto& [node, runs] : by_node) {
    long node_failures = 0;
    double node_time = 0;
    for (const auto* r : runs) {
      node_failures += r->end != RunEnd::exited || r->exit_status != 0;
      node_time += r->seconds;
    }
    out += fmt::format("  <testsuite name=\"{}\" hostname=\"{}\" tests=\"{}\" failures=\"{}\" time=\"{}\">\n",
                       attribute("gpuplan " + node), attribute(node), runs.size(), node_failures,
                       seconds(node_time));
    for (const auto* r : runs) {
      auto [package, name] = split_label(r->label);
      if (r->shard_index) name += fmt::format(" shard {}", *r->shard_index);
      out += fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{}\">\n", attribute(package),
                         attribute(name), seconds(r->seconds));
      out += fmt::format(
          "      <properties><property name=\"label\" value=\"{}\"/><property name=\"node\" value=\"{}\"/>"
          "<property name=\"gpus\" value=\"{}\"/></properties>\n",
          attribute(r->label), attribute(node), gpu_list(r->gpus));
      if (r->end == RunEnd::timed_out)
        out += "      <failure message=\"timed out\" type=\"timeout\"/>\n";
      else if (r->end == RunEnd::stopped)
        out += "      <failure message=\"stopped before it ended\" type=\"stopped\"/>\n";
      else if (r->exit_status > 128)
        out += fmt::format("      <failure message=\"killed by signal {}\" type=\"signal\"/>\n",
                           r->exit_status - 128);
      else if (r->exit_status != 0)
        out += fmt::format("      <failure message=\"exit status {}\" type=\"exit\"/>\n", r->exit_status);
      out += "    </testcase>\n";
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

}  // namespace gpuplan
