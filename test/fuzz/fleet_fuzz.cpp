// Fuzz target: the fleet YAML loader, then `fleet check`'s text and JSON reports.
#include <sstream>

#include "fuzz.hpp"
#include "gpuplan/fleet.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuplan;
  std::istringstream in(fuzz::text(data, size));
  return fuzz::expect_input_errors([&] {
    Fleet fleet = load_fleet(in, "fuzz.fleet.yaml");
    (void)fleet_summary(fleet);
    (void)fleet_summary_json(fleet);
  });
}
