// Fuzz target: one query/cquery reader, chosen when it is linked (fuzz::chosen_reader(): an
// --input-format name, or "detect": format detection, then the reader it picks).
#include <sstream>

#include "fuzz.hpp"
#include "gpuplan/ingest.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuplan;
  std::istringstream in(fuzz::text(data, size));
  auto forced = parse_input_format(fuzz::chosen_reader());
  return fuzz::expect_input_errors([&] { fuzz::dump_targets(read_targets(in, "fuzz.query", forced)); });
}
