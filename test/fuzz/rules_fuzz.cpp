// Fuzz target: the rules YAML loader, then classification of a few tagged tests with the
// rules read (tag regexes, $N substitution, requirement values).
#include <sstream>

#include "fuzz.hpp"
#include "gpuplan/classify.hpp"
#include "gpuplan/rules.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuplan;
  std::istringstream in(fuzz::text(data, size));
  return fuzz::expect_input_errors([&] {
    Rules rules = load_rules(in, "fuzz.rules.yaml");
    static const TargetList targets = [] {
      TargetList list;
      for (const char* tags : {"gpu team-gpus-4", "requires-gpu:2 exclusive", "manual",
                               "cuda-12.4 gpu_mem_40G", "aaaaaaaaaaaaaaaaaaaaaaaaaaaa", "multi_gpu"}) {
        Target target;
        target.label = std::string("//fuzz:") + tags[0] + "_test";
        target.rule_class = "py_test";
        target.has_attributes = true;
        std::istringstream words(tags);
        for (std::string tag; words >> tag;) target.tags.emplace_back(tag);
        list.tests.push_back(std::move(target));
      }
      return list;
    }();
    (void)classify(targets, rules, ClassifyOptions{});
  });
}
