#include "util/markdown.hpp"

#include <catch2/catch.hpp>

namespace markdown = gpuplan::util::markdown;

TEST_CASE("a pipe in a table cell is escaped, inside a code span too") {
  CHECK(markdown::text("remove tags gpu, gpu-model:L4|L40S") == "remove tags gpu, gpu-model:L4\\|L40S");
  CHECK(markdown::code_cell("//odd:md|pipe*_test") == "`//odd:md\\|pipe*_test`");
  CHECK(markdown::code_cell("//a:b`c|d") == "``//a:b`c\\|d``");
}

TEST_CASE("a code span outside a table keeps its pipes and is fenced past its backticks") {
  CHECK(markdown::code("//x:<b>|y") == "`//x:<b>|y`");
  CHECK(markdown::code("`x`") == "`` `x` ``");
  CHECK(markdown::code("a\nb") == "`a b`");
}

TEST_CASE("text shows markup as text") {
  CHECK(markdown::text("gpu-model:<script> *x*") == "gpu-model:&lt;script&gt; \\*x\\*");
  CHECK(markdown::text("line\nbreak") == "line break");
}
