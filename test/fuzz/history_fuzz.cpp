// Fuzz target: one history reader, chosen when it is linked (fuzz::chosen_reader(): "bep",
// "junit", "table"). What it read must survive `history summarize` and read back.
#include <sstream>

#include "fuzz.hpp"
#include "gpuplan/history.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuplan;
  std::istringstream in(fuzz::text(data, size));
  std::string_view reader = fuzz::chosen_reader();
  return fuzz::expect_input_errors([&] {
    HistoryRead read = reader == "bep" ? read_bep(in, "fuzz.bep.json", false)
                       : reader == "junit"
                           ? read_junit(in, "fuzz/test.xml", TestLogPath{"//fuzz:a_test", 1, 4, 0}, false)
                           : read_table(in, "fuzz.history", false);
    std::string summary = summarize(read.history, 20);
    std::istringstream again(summary);
    try {
      (void)read_table(again, "summary.json", true);
    } catch (const InputError&) {
      __builtin_trap();  // gpuplan cannot read back what it wrote
    }
  });
}
