// SharedRequirement: one Requirement for every test and unit that needs the same.
#include <utility>

#include "gpuplan/requirements.hpp"

namespace gpuplan {

namespace {

const std::shared_ptr<Requirement>& empty_requirement() {
  static const auto empty = std::make_shared<Requirement>();
  return empty;
}

}  // namespace

SharedRequirement::SharedRequirement() : requirement_(empty_requirement()) {}

SharedRequirement::SharedRequirement(Requirement requirement)
    : requirement_(std::make_shared<Requirement>(std::move(requirement))) {}

Requirement& SharedRequirement::edit() {
  // Shared (the empty one always is): copy first, so the others keep what they had.
  if (requirement_.use_count() != 1) requirement_ = std::make_shared<Requirement>(*requirement_);
  return *requirement_;
}

}  // namespace gpuplan
