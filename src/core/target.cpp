#include "gpuplan/target.hpp"

namespace gpuplan {

std::string canonical_label(std::string_view label) {
  if (label.starts_with("@@//")) label.remove_prefix(2);
  else if (label.starts_with("@//")) label.remove_prefix(1);
  return std::string(label);
}

bool is_test_rule_class(std::string_view rule_class) {
  return rule_class.ends_with("_test") && rule_class != "test_suite";
}

}  // namespace gpuplan
