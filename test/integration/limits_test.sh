#!/usr/bin/env bash
# Commands run as a CI job or a shell may run them: under limits (ulimit -v, -s, -n) and with a
# standard stream closed. Each ends with a message that says what is wrong and a documented exit
# status, never `terminate called`, a core, `internal error: std::bad_alloc`, a unit's run cut
# short or half a record.
source test/integration/lib.sh
requires python3
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
[ "$status" = 2 ] && grep -q '^gpuplan: <stdout>: cannot write: Bad file descriptor' err ||
  fail "targets with standard output closed: exit $status, $(cat err)"


echo "limits_test: ok"
