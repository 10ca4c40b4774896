#include "util/shell_words.hpp"

#include <catch2/catch.hpp>
#include <string>
#include <vector>

using gpuplan::util::shell_words;
using Words = std::vector<std::string>;

TEST_CASE("a quoted argument is one word, its quotes gone, as the shell passes it") {
  CHECK(shell_words("bazel test '--test_arg=-k gemm' {label}") ==
        Words{"bazel", "test", "--test_arg=-k gemm", "{label}"});
  CHECK(shell_words("bazel test --test_filter=\"A B\" {label}") ==
        Words{"bazel", "test", "--test_filter=A B", "{label}"});
  CHECK(shell_words("pytest -k\"not slow\" x") == Words{"pytest", "-knot slow", "x"});
  CHECK(shell_words("a '' b") == Words{"a", "", "b"});
}

TEST_CASE("a backslash quotes as the shell's does, outside and inside double quotes") {
  CHECK(shell_words(R"(echo a\ b \"c)") == Words{"echo", "a b", "\"c"});
  CHECK(shell_words(R"(echo "a \"b\" \$HOME \x" 'c\d')") == Words{"echo", R"(a "b" $HOME \x)", R"(c\d)"});
  CHECK(shell_words("bazel test \\\n  --config=cuda") == Words{"bazel", "test", "--config=cuda"});
}

TEST_CASE("the shell's operators and comments end words and are none") {
  CHECK(shell_words("cd x&&docker run img;true|cat >log 2>&1") ==
        Words{"cd", "x", "docker", "run", "img", "true", "cat", "log", "2", "1"});
  CHECK(shell_words("run {label} # 'an unclosed quote\nnext") == Words{"run", "{label}", "next"});
  CHECK(shell_words("a#b") == Words{"a#b"});
}

TEST_CASE("a command substitution stays as written, one piece of its word") {
  CHECK(shell_words("t \"$(basename {label})\" x") == Words{"t", "$(basename {label})", "x"});
  CHECK(shell_words("t $(echo ')' \"(\")x `a b` c") == Words{"t", "$(echo ')' \"(\")x", "`a b`", "c"});
}

TEST_CASE("the script a shell is given with -c is split in its place") {
  CHECK(shell_words("sh -c 'docker run --gpus all img {label}'") ==
        Words{"sh", "-c", "docker", "run", "--gpus", "all", "img", "{label}"});
  CHECK(shell_words("/bin/bash -o pipefail -lc \"pytest -k 'gemm and fp16' x\" name") ==
        Words{"/bin/bash", "-o", "pipefail", "-lc", "pytest", "-k", "gemm and fp16", "x", "name"});
  CHECK(shell_words("bash run.sh -c 'a b'") == Words{"bash", "run.sh", "-c", "a b"});
}

TEST_CASE("an unclosed quote runs to the end of the line") {
  CHECK(shell_words("echo 'a b") == Words{"echo", "a b"});
  CHECK(shell_words("echo \"a b") == Words{"echo", "a b"});
  CHECK(shell_words("echo $(a b") == Words{"echo", "$(a b"});
  CHECK(shell_words("x\\") == Words{"x\\"});
}
