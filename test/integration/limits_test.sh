#!/usr/bin/env bash
# Commands run as a CI job or a shell may run them: under limits (ulimit -v, -s, -n) and with a
# standard stream closed. Each ends with a message that says what is wrong and a documented exit
# status, never `terminate called`, a core, `internal error: std::bad_alloc`, a unit's run cut
# short or half a record.
source test/integration/lib.sh
requires python3 jq
GPUPLAN=$(realpath "$GPUPLAN")
cd "$SCRATCH"
query=$SOURCE_DIR/examples/query.xml
fleet=$SOURCE_DIR/examples/fleet.yaml

# 1. Standard error closed (2>&-): no file gpuplan opens takes its number. run-under's GPU lock
# took it, and the test got the lock file as its standard error (a write to it: EBADF, where a
# test's Python takes a closed one as sys.stderr None). Standard output closed stays an error.
mkdir -m 700 locks
cp "$SOURCE_DIR/test/data/plans/workstation_ml.json" ws.json
TEST_TARGET=//ml:inference_test "$GPUPLAN" run-under --plan ws.json --node ws-0 --lock-dir locks \
  sh -c 'readlink /proc/$$/fd/2 >stderr_of_test.txt; true' 2>&- || fail "run-under with standard error closed: exit $?"
! grep -q 'gpu-[0-9]*\.lock' stderr_of_test.txt || fail "the test's standard error was $(cat stderr_of_test.txt)"
status=0
"$GPUPLAN" targets "$query" >&- 2>err || status=$?
[ "$status" = 2 ] && grep -q '^gpuplan: <stdout>: cannot write: standard output is closed$' err ||
  fail "targets with standard output closed: exit $status, $(cat err)"
status=0  # exec's progress lines: it said "output error"
"$GPUPLAN" exec ws.json --node ws-0 --lock-dir locks --command true >&- 2>err || status=$?
[ "$status" = 2 ] && grep -q '^gpuplan: <stdout>: cannot write: standard output is closed$' err ||
  fail "exec with standard output closed: exit $status, $(cat err)"

# 2. A file size limit (ulimit -f, in KiB): standard output redirected to a file past it is an
# error, exit 2 (SIGXFSZ had ended show without a word, exit 153); exec's results record past it is
# not written, whole (SIGXFSZ had ended exec mid-record, exit 153, half a record left in the file).
"$GPUPLAN" show "$SOURCE_DIR/test/data/plans/example.plan.json" >shown.txt
[ "$(wc -c <shown.txt)" -gt 2048 ] || fail "show's text is too short to pass 2 KiB"
status=0
(ulimit -f 2 && exec "$GPUPLAN" show "$SOURCE_DIR/test/data/plans/example.plan.json") >cut.txt 2>err || status=$?
[ "$status" = 2 ] && grep -q '^gpuplan: <stdout>: cannot write: File too large' err ||
  fail "show past ulimit -f: exit $status, $(cat err)"
l4_fleet n0
printf '%s\n' "//t:a n0 0 0" "//t:b n0 1 0" | one_gpu_plan
"$GPUPLAN" exec "$SCRATCH/plan.json" --node n0 --lock-dir locks --results full.csv --command true >/dev/null 2>&1 ||
  fail "exec --results"
while [ "$(wc -c <full.csv)" -lt 2000 ]; do tail -1 full.csv >>full.csv; done
cp full.csv before.csv
status=0
(ulimit -f 2 && exec "$GPUPLAN" exec "$SCRATCH/plan.json" --node n0 --lock-dir locks --results full.csv --command true) \
  >/dev/null 2>err || status=$?
[ "$status" = 1 ] && grep -q 'full.csv: cannot append to the results file: File too large' err ||
  fail "exec --results past ulimit -f: exit $status, $(cat err)"
cmp -s full.csv before.csv || fail "exec left part of a record past ulimit -f: $(tail -c 200 full.csv)"

# 3. No descriptor to be had (ulimit -n) as exec starts a unit: that unit fails, said, the other
# runs, exit 3, its --json written. Before, exec ended at once, exit 2, the running unit killed and
# nothing recorded. Some limit between too few to start and enough for both units gets there.
not_started=0 sanitizer_short=0
for files in $(seq 4 24); do
  (ulimit -n "$files" && "$GPUPLAN" --version) >/dev/null 2>&1 || continue  # a sanitizer's own files
  rm -f exec.json
  status=0
  (ulimit -n "$files" && exec "$GPUPLAN" exec "$SCRATCH/plan.json" --node n0 --lock-dir locks --json exec.json \
    --command true) >out 2>err || status=$?
  case $status in
    0) ;;
    2) ! grep -q 'start' out || fail "exec under ulimit -n $files: exit 2 after a unit had started: $(cat err)" ;;
    3) grep -q '^gpuplan exec: //t:[ab]: not started: /bin/sh: cannot start: Too many open files' err &&
      [ -s exec.json ] || fail "exec under ulimit -n $files: exit 3, $(cat err)"
      not_started=$((not_started + 1)) ;;
    *) # A sanitizer build's own checks need descriptors too: UBSan's vptr check reads memory
      # through a pipe, and without one reports a valid object as `invalid vptr` (exit 1), its
      # symbolizer saying `(errno: 24)`, or its report `<memory cannot be printed>` (seen in CI on
      # GpuUsageSampler's thread). That limit tests the sanitizer, not gpuplan.
      grep -q 'runtime error:' err && grep -qE '\(errno: 24\)|<memory cannot be printed>' err &&
        { sanitizer_short=1; continue; }
      fail "exec under ulimit -n $files: exit $status, $(cat err)" ;;
  esac
done
[ "$not_started" -gt 0 ] || [ "$sanitizer_short" = 1 ] ||
  fail "no limit of descriptors let exec start one unit and not the other"
# The same where no process can be had (fork's EAGAIN, at ulimit -u), in every build: the second
# unit's fork fails (test/faults/fork_fails.cpp, preloaded).
FORK_FAILS=${GPUPLAN_BUILD_DIR:-$(dirname "$GPUPLAN")}/libfork_fails.so
[ -e "$FORK_FAILS" ] || fail "$FORK_FAILS is missing: it is built with gpuplan_tests"
rm -f exec.json
status=0
LD_PRELOAD=$FORK_FAILS GPUPLAN_FORK_FAILS_AT=2 "$GPUPLAN" exec "$SCRATCH/plan.json" --node n0 --lock-dir locks \
  --json exec.json --command true >out 2>err || status=$?
[ "$status" = 3 ] && grep -q '^gpuplan exec: //t:[ab]: not started: /bin/sh: cannot start (no process to be had: ulimit -u?)' err &&
  [ "$(jq -c '[.totals.passed, .totals.failed]' exec.json)" = '[1,1]' ] ||
  fail "exec where a unit's process cannot start: exit $status, $(cat err) $(cat exec.json 2>/dev/null)"

# A limit on the address space the commands need to start at all: an ASan build reserves
# terabytes up front and cannot run under one (skipped there).
under_limits() { (ulimit "$@" && "$GPUPLAN" --version) >/dev/null 2>&1; }
if ! under_limits -v 2000000; then
  echo "limits_test: the limits of address space are skipped: gpuplan does not start under ulimit -v" >&2
  echo "limits_test: ok"
  exit 0
fi

# 4. No thread to be had: a stack limit of 16 GB (the size glibc gives a thread's stack) within
# 2 GB of address space. The progress line's thread failed and `plan` ended in `terminate called`
# (exit 134, a core) though it draws nothing off a terminal.
status=0
(ulimit -s 16000000 -v 2000000 && exec "$GPUPLAN" plan "$query" --fleet "$fleet" -o planned.json) 2>err || status=$?
[ "$status" = 0 ] && [ -s planned.json ] || fail "plan where no thread can start: exit $status, $(cat err)"
# exec's units run, unmeasured, said once (GPU sampling had ended exec: exit 1, internal error).
status=0
(ulimit -s 16000000 -v 2000000 && exec "$GPUPLAN" exec "$SCRATCH/plan.json" --node n0 --lock-dir locks \
  --results unmeasured.csv --command true) >out 2>err || status=$?
[ "$status" = 0 ] && [ "$(grep -c "no thread to measure the units' GPU use" err)" = 1 ] &&
  [ "$(grep -c ',n0,.*,0,,,' unmeasured.csv)" = 2 ] || fail "exec where no thread can start: exit $status, $(cat err)"
# run-under --claims, whose lease is renewed by a thread, says why it stops and names the limits.
mkdir -m 700 claims
status=0
(ulimit -s 16000000 -v 2000000 && TEST_TARGET=//ml:inference_test exec "$GPUPLAN" run-under --plan ws.json --node ws-0 \
  --lock-dir locks --claims claims true) 2>err || status=$?
[ "$status" = 1 ] && grep -q '^gpuplan: cannot start a thread: Resource temporarily unavailable (.*ulimit -v is 1953 MiB)$' err ||
  fail "run-under --claims where no thread can start: exit $status, $(cat err)"

# 5. Memory that runs out part way, at every step of plan, show, verify and render: the message
# says so (and what ran out, and where), exit 1, no file left. Before, `internal error:
# std::bad_alloc`, or `terminate called` (exit 134) where it ran out outside main's thread.
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "{\"type\":\"RULE\",\"rule\":{\"name\":\"//p%d:t%d_test\",\"ruleClass\":\"py_test\",\"attribute\":[{\"name\":\"tags\",\"type\":\"STRING_LIST\",\"stringListValue\":[\"gpu\"]}]}}\n", i % 100, i }' \
  >many.jsonl
"$GPUPLAN" plan many.jsonl --fleet "$fleet" -o many.plan.json 2>/dev/null || fail "plan of many.jsonl"
out_of_memory=0
for kb in $(seq 24000 12000 108000); do
  # Below some 16 MB the libraries fail as they load, before gpuplan's code runs (the loader's
  # message, exit 127; or yaml-cpp's initialiser's `terminate called`): nothing it can say then.
  (ulimit -v "$kb" && "$GPUPLAN" --version) >/dev/null 2>&1 || continue
  for command in "plan many.jsonl --fleet $fleet -o out.json" "show many.plan.json" \
    "verify many.plan.json --fleet $fleet" "render many.plan.json -o out.svg"; do
    status=0
    (ulimit -v "$kb" && exec $GPUPLAN $command) >/dev/null 2>err || status=$?
    case $status in
      0 | 3) ;;
      1) grep -q '^gpuplan: out of memory.* (ulimit -v is [0-9]* MiB); give gpuplan more memory$' err ||
        fail "$command under ulimit -v $kb: exit 1, $(cat err)"
        out_of_memory=$((out_of_memory + 1)) ;;
      *) fail "$command under ulimit -v $kb: exit $status, $(cat err)" ;;
    esac
    [ -z "$(find . -name '.*.gpuplan-*')" ] && { [ "$status" != 1 ] || [ ! -e out.json ]; } ||
      fail "$command under ulimit -v $kb left a file: $(find . -name '*out*')"
    rm -f out.json out.svg
  done
done
[ "$out_of_memory" -gt 0 ] || fail "no command ran out of memory: the limits are too high to test anything"

echo "limits_test: ok"
