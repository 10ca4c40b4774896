#include <catch2/catch.hpp>

#include "gpuplan/requirements.hpp"

using namespace gpuplan;

TEST_CASE("copies of a shared requirement share one Requirement until one of them is edited") {
  Requirement two;
  two.gpus = {2, "tag gpu:2"};
  SharedRequirement a = two;
  SharedRequirement b = a;
  REQUIRE(&*a == &*b);  // held once
  b.edit().nvlink = Sourced<bool>{true, "tag nvlink"};
  REQUIRE(&*a != &*b);
  REQUIRE(!a->needs_nvlink());  // the edit stays with b
  REQUIRE(b->needs_nvlink());
  REQUIRE(b->gpus.value == 2);
  Requirement& own = b.edit();  // b's own copy now: edited in place
  REQUIRE(&own == &*b);
}

TEST_CASE("an empty shared requirement asks for nothing, and editing one leaves the others empty") {
  SharedRequirement a, b;
  REQUIRE(a->gpus.value == 0);
  a.edit().gpus = {1, "tag gpu"};
  REQUIRE(a->gpus.value == 1);
  REQUIRE(b->gpus.value == 0);
  REQUIRE(SharedRequirement()->gpus.value == 0);
}
