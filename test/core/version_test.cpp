#include "gpuplan/version.hpp"

#include <catch2/catch.hpp>

#include "gpuplan/size.hpp"

using namespace gpuplan;

TEST_CASE("versions compare as numbers, so 12.10 is newer than 12.4") {
  REQUIRE(*Version::parse("12.10") > *Version::parse("12.4"));
  REQUIRE(*Version::parse("12") == *Version::parse("12.0"));
  REQUIRE(Version::parse("12.4")->str() == "12.4");
}

TEST_CASE("malformed versions are rejected, not guessed") {
  for (auto text : {"", "twelve", "12.", ".4", "12..4", "12.4a", "-1", "1234567.1"}) {
    INFO(text);
    REQUIRE_FALSE(Version::parse(text));
  }
}

TEST_CASE("version constraints hold or fail as written") {
  auto ge = *VersionConstraint::parse(">=12.4");
  REQUIRE(ge.satisfied_by(*Version::parse("12.4")));
  REQUIRE(ge.satisfied_by(*Version::parse("12.10")));
  REQUIRE_FALSE(ge.satisfied_by(*Version::parse("11.8")));
  // No version (an AMD node's CUDA) meets no bound, not even one below a version.
  REQUIRE_FALSE(VersionConstraint::parse("<12.0")->satisfied_by(Version{}));
  REQUIRE_FALSE(ge.satisfied_by(Version{}));
  REQUIRE_FALSE(VersionConstraint::parse("<12.0")->satisfied_by(*Version::parse("12")));
  REQUIRE(VersionConstraint::parse("==9.0")->satisfied_by(*Version::parse("9")));
  REQUIRE(to_string(*parse_constraints(">=12.0,<13")) == ">=12.0,<13");
  REQUIRE_FALSE(parse_constraints(">=twelve"));
  REQUIRE_FALSE(parse_constraints(">=12,"));
}

TEST_CASE("a bad version, constraint or size says which text is not one and how to write it") {
  REQUIRE(Version::parse("12.x").problem() == "\"12.x\" is not a version (write e.g. 12.4)");
  REQUIRE(VersionConstraint::parse("=>12").problem() ==
          "\"=>12\" is not a version constraint (write e.g. >=12.4, <13 or ==9.0)");
  REQUIRE(parse_constraints(">=12,<thirteen").problem() ==
          "\"<thirteen\" is not a version constraint (write e.g. >=12.4, <13 or ==9.0)");
  REQUIRE(parse_size_mib("0G").problem() ==
          "\"0G\" is not a memory size (write e.g. 40GiB, 40G or 40960MiB)");
}

TEST_CASE("GPU memory sizes are binary whatever unit is written") {
  for (auto text : {"40GiB", "40G", "40GB", "40g", "40960MiB", "40960M", "40960mb"}) {
    INFO(text);
    REQUIRE(*parse_size_mib(text) == 40960);
  }
  REQUIRE(*parse_size_mib("0.5GiB") == 512);
  for (auto text : {"lots", "40", "0G", "GiB", "-1G", "40 GiB", "99999999999999T"}) {
    INFO(text);
    REQUIRE_FALSE(parse_size_mib(text));
  }
  REQUIRE(format_mib(40960) == "40GiB");
  REQUIRE(format_mib(1536) == "1.5GiB");
  REQUIRE(format_mib(700) == "700MiB");
}
