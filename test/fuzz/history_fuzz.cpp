// Fuzz target: one history reader, chosen when it is linked (fuzz::chosen_reader(): "bep",
// "junit", "table"). What it read must survive `history summarize` and read back. The junit
// reader's input is a test.xml, then, after a line "----", the test.cache_status beside it (none
// without that line), which it reads where the XML cannot be read.
#include <optional>
#include <sstream>

#include "fuzz.hpp"
#include "gpuplan/history.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuplan;
  std::string_view reader = fuzz::chosen_reader();
  std::string all = fuzz::text(data, size);
  std::optional<BazelCacheStatusFile> status;
  if (reader == "junit" && all.find("\n----\n") != std::string::npos) {
    auto [xml, bytes] = fuzz::split_two(std::move(all));
    all = std::move(xml);
    status = BazelCacheStatusFile{"fuzz/test.cache_status", std::move(bytes)};
  }
  std::istringstream in(all);
  return fuzz::expect_input_errors([&] {
    HistoryRead read = reader == "bep" ? read_bep(in, "fuzz.bep.json", false)
                       : reader == "junit"
                           ? read_junit(in, "fuzz/test.xml", TestLogPath{"//fuzz:a_test", 1, 4, 0}, false, {},
                                        [&status] { return status; })
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
