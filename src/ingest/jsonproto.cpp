// bazel query --output=streamed_jsonproto (one Target a line) and --output=jsonproto
// (pretty-printed Targets back to back), and bazel cquery --output=jsonproto.
#include <fmt/format.h>

#include <unordered_map>
#include <vector>

#include "ingest/json.hpp"

namespace gpuplan::ingest {

void read_streamed_jsonproto(Source& source, Collector& out) {
  LineReader lines(source, max_target_bytes, simdjson::SIMDJSON_PADDING);
  JsonTargets targets(out);
  std::string_view line;
  while (lines.next(line)) {
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    targets.add(line, lines.readable_from(line), Position{source.name(), lines.line_number(), 1});
  }
}

void read_jsonproto(Source& source, Collector& out) {
  JsonTargets targets(out);
  JsonObjects(source, 0).read([&](std::string_view, std::string_view text, std::size_t readable,
                                  const Position& start) { targets.add(text, readable, start); });
}

void read_cquery_jsonproto(Source& source, Collector& out) {
  JsonTargets targets(out);
  std::vector<std::pair<std::size_t, std::uint64_t>> wanted;  // test index, configurationId
  std::unordered_map<std::uint64_t, std::string> configurations;
  JsonObjects(source, 2).read(
      [&](std::string_view key, std::string_view text, std::size_t readable, const Position& start) {
        if (key == "results") {
          std::size_t before = out.size();
          std::uint64_t id = targets.add_configured(text, readable, start);
          if (id != 0 && out.size() > before) wanted.emplace_back(before, id);
        } else if (key == "configurations") {
          targets.parse_object(text, readable, start, [&](simdjson::ondemand::object configuration) {
            std::uint64_t id = 0;
            std::string_view checksum;
            for (auto field : configuration) {
              std::string_view name = field.unescaped_key();
              if (name == "id") id = field.value().get_uint64();
              if (name == "checksum") checksum = field.value().get_string();
            }
            configurations[id] = short_configuration(checksum);
          });
        }
      });
  targets.finish();
  for (auto [index, id] : wanted) {
    auto found = configurations.find(id);
    if (found == configurations.end())
      throw InputError(Position{source.name()},
                       fmt::format("{} names configurationId {}, which configurations[] does not hold",
                                   out.at(index).label, id));
    out.at(index).configuration = found->second;
  }
}

}  // namespace gpuplan::ingest
