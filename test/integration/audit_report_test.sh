#!/usr/bin/env bash
# gpuplan audit, explain and --classify-by-deps on captured graphs, without Bazel:
# examples/deps.xml (README "Classification from the dependency graph" says how it was made),
# examples/query.xml (tests(//...): a graph whose libraries are never expanded) and
# test/data/bazel's odd.query.xml, whose target names use the punctuation Bazel allows.
source test/integration/lib.sh
requires jq

# A team that names its own model library GPU code: every test reaches the main repository, so
# the graph can tell of each sh_test and py_test (README "GPU code the graph does not show").
{ cat examples/rules.yaml; printf "gpu_deps: ['//ml:model']\n"; } >"$SCRATCH/own.rules.yaml"

# Markdown tables: a `|` in a cell is escaped, or GitHub splits the cell there (even between
# backticks): in a tag change (gpu-model:L4|L40S), a label and a path.
"$GPUPLAN" audit examples/deps.xml --rules "$SCRATCH/own.rules.yaml" --format markdown >"$SCRATCH/audit.md" 2>/dev/null ||
  fail "audit --format markdown failed"
grep -qF '| `//ml:video_decode_test` | remove tags gpu, gpu-model:L4\|L40S |' "$SCRATCH/audit.md" ||
  fail "the tag change's | is not escaped: $(grep video "$SCRATCH/audit.md")"
printf "gpu_deps: ['//odd:t.sh']\n" >"$SCRATCH/odd.rules.yaml"
"$GPUPLAN" audit test/data/bazel/odd.query.xml --rules "$SCRATCH/odd.rules.yaml" --format markdown \
  >"$SCRATCH/odd.md" 2>/dev/null || fail "audit of odd names failed"
grep -qF "| \`//odd:a!%-@^_#&'()*+,;<=>?[]{\|}~\` | \`//odd:a!%-@^_#&'()*+,;<=>?[]{\|}~ → //odd:t.sh\` |" \
  "$SCRATCH/odd.md" || fail "a label's | is not escaped: $(cat "$SCRATCH/odd.md")"
# Every table row has as many cells as its header: no | left unescaped.
awk -F'|' '{ gsub(/\\\|/, "") } /^\|/ { if (!cells) cells = NF; else if (NF != cells) { print; bad = 1 } }
           !/^\|/ { cells = 0 } END { exit bad }' "$SCRATCH/audit.md" "$SCRATCH/odd.md" ||
  fail "a table row with a stray |"

# Non-ASCII names, which Bazel's XML encodes twice (test/data/bazel/README.md): a gpu_deps pattern
# written as the BUILD file names the file matches it, and the test that reaches it is named so.
printf "gpu_deps: ['//na:ünï.sh']\n" >"$SCRATCH/na.rules.yaml"
"$GPUPLAN" audit test/data/bazel/nonascii.deps.xml --rules "$SCRATCH/na.rules.yaml" >"$SCRATCH/na.audit" 2>&1 ||
  fail "audit of non-ASCII names failed: $(cat "$SCRATCH/na.audit")"
! grep -q "matches no label" "$SCRATCH/na.audit" || fail "gpu_deps '//na:ünï.sh' matched nothing: $(cat "$SCRATCH/na.audit")"
grep -A1 -F "Tests that reach GPU code without a GPU annotation or cpu-only (1)" "$SCRATCH/na.audit" |
  grep -qF "  //na:café_test" || fail "//na:café_test does not reach //na:ünï.sh: $(cat "$SCRATCH/na.audit")"

# GitHub reads "@name" in a PR comment's text as a mention of that user (@pypi is an organization
# there): repositories and labels are code spans, in the tables and the line of totals alike.
"$GPUPLAN" audit examples/deps.xml --format markdown >"$SCRATCH/unsupplied.md" 2>/dev/null
"$GPUPLAN" audit examples/query.xml --format markdown >"$SCRATCH/undeclared.md" 2>/dev/null
grep -qF '| `//ml:allreduce_test` | reaches no label of `@local_config_cuda` or `@pypi`, where the other sh_tests get' "$SCRATCH/unsupplied.md" ||
  fail "the repositories of an unsupplied test are no code spans: $(grep allreduce "$SCRATCH/unsupplied.md")"
for md in unsupplied undeclared odd; do
  ! sed 's/`[^`]*`//g' "$SCRATCH/$md.md" | grep -n '@' ||
    fail "$md.md has an @ outside a code span: GitHub would mention a user"
done

# An incomplete graph (examples/query.xml is tests(//...): the libraries are named, never
# expanded): each test whose GPU use is unknown is listed with the label it reaches, in every
# format; --strict makes it an error (exit 2) naming them.
"$GPUPLAN" audit examples/query.xml --json >"$SCRATCH/partial.json" 2>"$SCRATCH/partial.err" ||
  fail "audit of tests(//...) failed: $(cat "$SCRATCH/partial.err")"
unknown=$(jq '.summary.unknown' "$SCRATCH/partial.json")
[ "$unknown" -gt 0 ] && [ "$(jq '.unknown | length' "$SCRATCH/partial.json")" = "$unknown" ] ||
  fail "the unknown tests are counted, not listed: $(jq -c '.summary, .unknown' "$SCRATCH/partial.json")"
read -r test undeclared < <(jq -r '.unknown[0] | "\(.label) \(.undeclared)"' "$SCRATCH/partial.json")
[ -n "$undeclared" ] && [ "$undeclared" != null ] || fail "an unknown test without its undeclared label"
"$GPUPLAN" audit examples/query.xml >"$SCRATCH/partial.txt" 2>/dev/null
grep -q "^Tests whose GPU use is unknown ($unknown): " "$SCRATCH/partial.txt" &&
  grep -qF "  $test
      why: reaches $undeclared, which the input did not expand" "$SCRATCH/partial.txt" ||
  fail "the text report does not name the unknown tests: $(cat "$SCRATCH/partial.txt")"
"$GPUPLAN" audit examples/query.xml --format markdown 2>/dev/null | grep -qF "| \`$test\` | reaches \`$undeclared\`, which the input did not expand |" ||
  fail "the markdown report does not name the unknown tests"
# (The team macro's tag names a GPU: without its rule it would be an error of its own under --strict.)
printf 'version: 1\nrules:\n  - {tag: %s, set: {gpus: $1}}\n' "'^team-gpus-(\d+)$'" >"$SCRATCH/team.yaml"
refuses -F "$test: reaches $undeclared, which the input did not expand" \
  audit examples/query.xml --strict --rules "$SCRATCH/team.yaml"
"$GPUPLAN" audit examples/deps.xml --rules "$SCRATCH/own.rules.yaml" --strict >/dev/null 2>&1 ||
  fail "audit --strict of a whole graph failed"
# Without it, GPU tests of the probe script reach nothing of @pypi, where the others get GPU code.
refuses -F "//ml:allreduce_test: reaches no label of @local_config_cuda or @pypi, where the other sh_tests get their GPU code" \
  audit examples/deps.xml --strict --rules "$SCRATCH/team.yaml"
# explain says the same of one test, in text and JSON.
"$GPUPLAN" explain "$test" examples/query.xml 2>/dev/null | grep -qF "dependency graph
  unknown: reaches $undeclared, which the input did not expand (run bazel query 'deps($test)')" ||
  fail "explain does not say $test's GPU use is unknown"
"$GPUPLAN" explain "$test" examples/query.xml --json 2>/dev/null |
  jq -e --arg u "$undeclared" '.gpu_code.unknown and .gpu_code.undeclared == $u and .gpu_code.reaches == null' >/dev/null ||
  fail "explain --json has no unknown gpu_code"
# Its rules' inputs are never expanded, so a gpu_free or gpu_deps pattern has nothing to match
# there: the example's own rules are no typo, and explain --strict of a test passes (it failed).
"$GPUPLAN" explain //xla:triton_test examples/query.xml --rules examples/rules.yaml --strict \
  >/dev/null 2>"$SCRATCH/unexpanded.err" || fail "explain --strict of tests(//...): $(cat "$SCRATCH/unexpanded.err")"
"$GPUPLAN" audit examples/query.xml --rules examples/rules.yaml >/dev/null 2>"$SCRATCH/unexpanded.err"
! grep -q 'matches no label' "$SCRATCH/unexpanded.err" ||
  fail "a pattern was called a typo against tests(//...): $(cat "$SCRATCH/unexpanded.err")"
# --classify-by-deps names each GPU test it leaves as it is.
"$GPUPLAN" classify --classify-by-deps --json examples/query.xml >/dev/null 2>"$SCRATCH/by-deps.err"
grep -q "^gpuplan: warning: //[^:]*:[^:]*: reaches .*, which the input did not expand: whether it uses GPU code is unknown" \
  "$SCRATCH/by-deps.err" || fail "classify --classify-by-deps names no unknown test: $(cat "$SCRATCH/by-deps.err")"
refuses "" classify --classify-by-deps --strict examples/query.xml

# explain under --classify-by-deps names it, not the tag, as the source of gpus 0.
"$GPUPLAN" explain //tf:conv_test examples/deps.xml --classify-by-deps 2>/dev/null |
  grep -q '^  gpus  *0  *from --classify-by-deps: no path to GPU code (gpu_deps), overruling tag requires-gpu-nvidia$' ||
  fail "explain --classify-by-deps: $("$GPUPLAN" explain //tf:conv_test examples/deps.xml --classify-by-deps 2>&1)"

# gpu_deps patterns that can never match are refused with the line and the forms a pattern takes.
for pattern in '//g:...' '//a:b/...' '@/bad//x' '///a:b' '//a/../b:c'; do
  printf 'version: 1\ngpu_deps: ["%s"]\n' "$pattern" >"$SCRATCH/bad.rules.yaml"
  refuses -F "bad.rules.yaml:2:12: gpu_deps: \"$pattern\" " audit examples/deps.xml --rules "$SCRATCH/bad.rules.yaml"
  grep -q 'a pattern is @repo//pkg/\.\.\., //pkg/\.\.\., //pkg:name or //pkg:\*' "$SCRATCH/refused.err" ||
    fail "gpu_deps $pattern: $(cat "$SCRATCH/refused.err")"
done
printf 'version: 1\ngpu_deps: ["//ml:all-targets"]\n' >"$SCRATCH/all.rules.yaml"
"$GPUPLAN" audit examples/deps.xml --rules "$SCRATCH/all.rules.yaml" --json 2>/dev/null |
  jq -e '[.gpu_without_gpu_code[].label | select(startswith("//ml:"))] | length == 0' >/dev/null ||
  fail "//ml:all-targets does not make every //ml target GPU code"

# A test's own warning (a malformed tag) is on standard error as plan gives it, and the totals
# line counts it: audit had dropped it without a word, while --strict refused it.
cat >"$SCRATCH/malformed.deps.xml" <<'XML'
<?xml version="1.1" encoding="UTF-8" standalone="no"?>
<query version="2">
<rule class="cc_test" location="/w/cu/BUILD:1:1" name="//cu:kernel_test">
<list name="tags"><string value="gpu:0"/><string value="gpu"/></list>
<rule-input name="//cu:kernel"/>
</rule>
<rule class="cuda_library" location="/w/cu/BUILD:5:1" name="//cu:kernel">
</rule>
</query>
XML
"$GPUPLAN" audit "$SCRATCH/malformed.deps.xml" >/dev/null 2>"$SCRATCH/malformed.err" ||
  fail "audit of a malformed tag failed: $(cat "$SCRATCH/malformed.err")"
grep -q '^gpuplan: warning: //cu:kernel_test: tag gpu:0 is malformed: ' "$SCRATCH/malformed.err" ||
  fail "audit does not show the malformed tag: $(cat "$SCRATCH/malformed.err")"
tail -n 1 "$SCRATCH/malformed.err" | grep -q '^gpuplan: 1 test audited: .*; 1 warning, 0 notes$' ||
  fail "audit's totals line: $(cat "$SCRATCH/malformed.err")"
refuses "tag gpu:0 is malformed" audit --strict "$SCRATCH/malformed.deps.xml"

# The query's skipped test (//ml:benchmark_test, tagged manual) is not audited, and the totals
# say so: before, "22 tests audited" beside plan's and classify's "23 tests" left it to guess.
"$GPUPLAN" audit examples/deps.xml --rules examples/rules.yaml >"$SCRATCH/skipped.txt" 2>"$SCRATCH/skipped.err"
tail -n 1 "$SCRATCH/skipped.txt" | grep -q "^22 tests audited: .*; 1 skipped test of the query not audited, as plan skips it$" &&
  tail -n 1 "$SCRATCH/skipped.err" | grep -q "; 1 skipped test of the query not audited, as plan skips it; 2 warnings, 0 notes$" ||
  fail "audit does not say it left the skipped test out: $(tail -n 1 "$SCRATCH/skipped.txt" "$SCRATCH/skipped.err")"
[ "$("$GPUPLAN" audit examples/deps.xml --rules examples/rules.yaml --json 2>/dev/null | jq -c '.summary | [.tests, .skipped_tests]')" = '[22,1]' ] ||
  fail "audit --json's summary.skipped_tests"
[ "$("$GPUPLAN" classify examples/deps.xml --rules examples/rules.yaml --json 2>/dev/null | jq -c '.summary | [.tests, .skipped_tests]')" = '[23,1]' ] ||
  fail "classify's counts of the same query"
echo "audit report: ok"
