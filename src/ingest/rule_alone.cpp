// What `run-under --query` reads of a query for its one test: the test's rule alone, where the
// query's format lets it be cut out (xml_rule.cpp, json_rule.cpp).
#include <istream>
#include <streambuf>

#include "gpuplan/error.hpp"
#include "gpuplan/ingest.hpp"
#include "ingest/readers.hpp"

namespace gpuplan {

namespace {

/// `text` as a stream, read in place (never written to).
class ViewBuffer : public std::streambuf {
 public:
  explicit ViewBuffer(std::string_view text) {
    char* begin = const_cast<char*>(text.data());
    setg(begin, begin, begin + text.size());
  }
};

/// The format read_targets detects in `text`; nullopt where it reads nothing or refuses it.
std::optional<InputFormat> detected(std::string_view text) {
  ViewBuffer buffer(text);
  std::istream in(&buffer);
  ingest::Source source(in, "query");
  try {
    if (ingest::is_blank(source)) return std::nullopt;
    return ingest::detect_format(source);
  } catch (const InputError&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<std::string> rule_alone(std::string_view query, std::string_view label) {
  const auto format = detected(query);
  std::optional<std::string> alone;
  if (format == InputFormat::xml) alone = xml_rule_alone(query, label);
  if (format == InputFormat::streamed_jsonproto) alone = streamed_jsonproto_rule_alone(query, label);
  if (alone && detected(*alone) != format) return std::nullopt;  // read as another format
  return alone;
}

}  // namespace gpuplan
