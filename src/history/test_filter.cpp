// Whether a run was filtered to some of its test cases, from what the test or `bazel test` was
// given: such a run's time is not the test's (Sample::filtered).
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "gpuplan/history.hpp"

namespace gpuplan {

namespace {

/// A filter that selects nothing out: googletest's `*` (its default) or an empty one.
bool selects_all(std::string_view filter) { return filter.empty() || filter == "*"; }

}  // namespace

std::string test_case_filter(const std::vector<std::string>& args, bool pytest) {
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view arg = args[i];
    if (arg == "--") break;  // what follows is the test's own operands
    // googletest reads only --gtest_filter=PATTERNS (a separate value is no flag to it).
    if (arg.starts_with("--gtest_filter=")) {
      if (auto filter = arg.substr(15); !selects_all(filter)) return std::string(filter);
      continue;
    }
    if (!pytest) continue;
    // pytest's -k EXPRESSION, also written -kEXPRESSION ('-k gemm', one argument of a --test_arg,
    // is the expression " gemm": the blanks before it are none of it).
    if (arg == "-k" && i + 1 < args.size()) {
      if (!args[i + 1].empty()) return args[i + 1];
      ++i;
      continue;
    }
    if (arg.starts_with("-k") && arg.size() > 2 && arg[2] != '-') {
      const auto expression = arg.substr(std::min(arg.find_first_not_of(" \t", 2), arg.size()));
      if (!expression.empty()) return std::string(expression);
    }
  }
  return {};
}

std::string bazel_test_filter(const std::vector<std::string>& options, bool pytest) {
  std::string filter;                  // Bazel keeps the last --test_filter
  std::vector<std::string> test_args;  // and every --test_arg, in order
  for (const auto& option : options) {
    const std::string_view o = option;
    if (o.starts_with("--test_filter="))
      filter = o.substr(14);
    else if (o.starts_with("--test_arg="))
      test_args.emplace_back(o.substr(11));
  }
  if (!filter.empty()) return filter;
  return test_case_filter(test_args, pytest);
}

bool test_kind_may_run_pytest(std::string_view target_kind) {
  // BEP names a rule's kind "NAME rule" ("cc_test rule"; a macro's test, its rule's).
  const auto rule = target_kind.substr(0, target_kind.find(' '));
  return rule != "cc_test" && rule != "go_test" && rule != "rust_test" && rule != "java_test";
}

}  // namespace gpuplan
