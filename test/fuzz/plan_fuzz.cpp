// Fuzz target: the plan reader, then what `show` prints and the plan written back, which
// must read back.
#include "fuzz.hpp"
#include "gpuplan/emit.hpp"
#include "gpuplan/plan.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuplan;
  std::string text = fuzz::text(data, size);
  return fuzz::expect_input_errors([&] {
    Plan plan = parse_plan(text, "fuzz.plan.json");
    (void)render_text(plan, TextOptions{});
    std::string written = to_json(plan).dump();
    try {
      (void)parse_plan(written, "written.plan.json");
    } catch (const InputError&) {
      __builtin_trap();  // gpuplan cannot read back what it wrote
    }
  });
}
