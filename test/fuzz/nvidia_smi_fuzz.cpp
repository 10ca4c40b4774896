// Fuzz target: the nvidia-smi importer. The input is the --query-gpu CSV, a line "----",
// then the `topo -m` matrix. The fleet file it writes must load.
#include <sstream>

#include "fuzz.hpp"
#include "gpuplan/fleet.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuplan;
  auto texts = fuzz::split_two(fuzz::text(data, size));  // clang 14 cannot capture a structured binding
  return fuzz::expect_input_errors([&] {
    std::string yaml =
        import_nvidia_smi({texts.first, "fuzz.query.csv"}, {texts.second, "fuzz.topo.txt"}, ImportOptions{})
            .yaml;
    std::istringstream in(yaml);
    try {
      (void)load_fleet(in, "imported.yaml");
    } catch (const InputError&) {
      __builtin_trap();  // the importer wrote a fleet gpuplan rejects
    }
  });
}
