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
  // Test rules whose program is what the rule built, a binary or a JVM, JavaScript or .NET
  // launcher, never pytest: their `-k` is their own option. Each is a rule its ruleset defines
  // (a macro's test has its rule's kind); sorted.
  static constexpr std::string_view runs_no_pytest[] = {
      "android_instrumentation_test",  // rules_android
      "android_local_test",
      "cc_test",       // rules_cc
      "csharp_test",   // rules_dotnet
      "d_test",        // rules_d
      "fsharp_test",   // rules_dotnet
      "go_test",       // rules_go
      "haskell_test",  // rules_haskell
      "ios_ui_test",   // rules_apple
      "ios_unit_test",
      "java_test",      // rules_java
      "jest_test",      // aspect's rules_jest
      "js_test",        // aspect's rules_js
      "kt_jvm_test",    // rules_kotlin
      "macos_ui_test",  // rules_apple
      "macos_unit_test",
      "nodejs_test",       // rules_nodejs
      "rust_test",         // rules_rust
      "scala_junit_test",  // rules_scala
      "scala_specs2_junit_test",
      "scala_test",
      "swift_test",      // rules_swift
      "tvos_unit_test",  // rules_apple
      "visionos_unit_test",
      "watchos_unit_test",
      "zig_test",  // rules_zig
  };
  static_assert(std::is_sorted(std::begin(runs_no_pytest), std::end(runs_no_pytest)));
  // BEP names a rule's kind "NAME rule" ("cc_test rule").
  const auto rule = target_kind.substr(0, target_kind.find(' '));
  return !std::binary_search(std::begin(runs_no_pytest), std::end(runs_no_pytest), rule);
}

}  // namespace gpuplan
