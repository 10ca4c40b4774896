#!/usr/bin/env bash
# exec --claims on a claims directory whose file server fails as a unit ends (EIO on its done mark,
# from test/faults/done_mark_eio.cpp, preloaded): the unit's outcome here stands, exec goes on with
# the others, says which mark it could not write and why, and keeps the unit's claim renewed while
# it runs, trying the mark again, so no other node runs the unit again meanwhile. Before, exec ended
# mid-run (exit 2, the next unit never ran) and gave the claim up, for another node to run the unit
# that had just passed again at once.
source test/integration/lib.sh
requires python3 jq
GPUPLAN=$(realpath "$GPUPLAN")
EIO=${GPUPLAN_BUILD_DIR:-$(dirname "$GPUPLAN")}/libdone_mark_eio.so
[ -e "$EIO" ] || fail "$EIO is missing: it is built with gpuplan_tests"
cat >"$SCRATCH/unit.sh" <<SH
#!/bin/sh
echo "\$1" >>"$SCRATCH/ran.log"
SH
chmod +x "$SCRATCH/unit.sh"
# unit claim files, DIR/HASH.N: given up, one is dated at the epoch (a second after it)
fresh_claims() { find "$1" -regextype posix-extended -regex '.*/[0-9a-f]{16}\.[0-9]+' -newermt '@100' | wc -l; }

# The server fails for the whole run: both units run and pass; neither is marked done, and both
# claims are left as last renewed (a lease before another node takes them), not given up. Exit 1,
# as for results records a full disk kept out: every unit passed, something was not written.
printf '%s\n' "//t:a n0 0 0" "//t:b n0 0 1" | one_gpu_plan
touch "$SCRATCH/failing"
status=0
LD_PRELOAD=$EIO GPUPLAN_FAIL_DONE_MARKS=$SCRATCH/failing "$GPUPLAN" exec "$SCRATCH/plan.json" --node n0 \
  --claims "$SCRATCH/claims" --command "$SCRATCH/unit.sh {label}" --json "$SCRATCH/exec.json" \
  >"$SCRATCH/out" 2>"$SCRATCH/err" || status=$?
[ "$status" = 1 ] || fail "exec whose done marks cannot be written: exit $status, not 1: $(cat "$SCRATCH/err")"
[ "$(cat "$SCRATCH/ran.log")" = "$(printf '//t:a\n//t:b')" ] || fail "the units that ran: $(cat "$SCRATCH/ran.log")"
grep -q "^gpuplan exec: //t:a ran here (passed), but its done mark cannot be written: $SCRATCH/claims: cannot write the done mark $SCRATCH/claims/[0-9a-f]*\.done: Input/output error (tried 3 times)" \
  "$SCRATCH/err" || fail "exec does not say which done mark it could not write, and why: $(cat "$SCRATCH/err")"
grep -q "^gpuplan exec: error: //t:b ran here, but its done mark is not written: .*Input/output error. Another node may run it again once the lease (60 s) has run out" \
  "$SCRATCH/err" || fail "exec does not say, as it ends, that //t:b may run again: $(cat "$SCRATCH/err")"
tail -1 "$SCRATCH/err" | grep -qx "gpuplan exec: every unit passed, and not written: 2 done marks in $SCRATCH/claims; exit 1" ||
  fail "the last line: $(tail -1 "$SCRATCH/err")"
[ "$(jq -c '[.units[] | .outcome]' "$SCRATCH/exec.json")" = '["passed","passed"]' ] ||
  fail "--json: $(cat "$SCRATCH/exec.json")"
! ls "$SCRATCH"/claims/*.done >/dev/null 2>&1 || fail "a done mark was written: $(ls "$SCRATCH/claims")"
[ "$(fresh_claims "$SCRATCH/claims")" = 2 ] || fail "the claims of the units that ran were given up: $(ls -l --time-style=+%s "$SCRATCH/claims")"

# The server heals while the run goes on: //t:a's mark is written by a renewal (a quarter lease
# later), said, and exec exits 0. //t:b, on GPU 1, heals it once exec has said //t:a's mark failed,
# and ends once the mark is there.
rm -rf "$SCRATCH/claims" "$SCRATCH/ran.log"
printf '%s\n' "//t:a n0 0 0" "//t:b n0 1 0" | one_gpu_plan
cat >>"$SCRATCH/unit.sh" <<SH
[ "\$1" = //t:b ] || exit 0
for i in \$(seq 1200); do grep -q "//t:a ran here" "$SCRATCH/err" && break; sleep 0.05; done
rm -f "$SCRATCH/failing"
for i in \$(seq 1200); do ls "$SCRATCH"/claims/*.done >/dev/null 2>&1 && break; sleep 0.05; done
SH
touch "$SCRATCH/failing"
status=0
LD_PRELOAD=$EIO GPUPLAN_FAIL_DONE_MARKS=$SCRATCH/failing "$GPUPLAN" exec "$SCRATCH/plan.json" --node n0 \
  --claims "$SCRATCH/claims" --lease 10 --command "$SCRATCH/unit.sh {label}" >"$SCRATCH/out" 2>"$SCRATCH/err" || status=$?
[ "$status" = 0 ] || fail "exec whose done mark was written late: exit $status, not 0: $(cat "$SCRATCH/err")"
grep -q "^gpuplan exec: //t:a: its done mark is written now" "$SCRATCH/err" ||
  fail "exec does not say the late done mark is written: $(cat "$SCRATCH/err")"
[ "$(ls "$SCRATCH"/claims/*.done | wc -l)" = 2 ] || fail "not both units are marked done: $(ls "$SCRATCH/claims")"
! grep -q "error:" "$SCRATCH/err" || fail "an error for a mark written late: $(cat "$SCRATCH/err")"

# run-under, whose test Bazel reports: the test ends as it ran (exit 0), and the mark not written
# is said in its log. Before, run-under exited 2 after the test had passed.
install -d -m 0700 "$SCRATCH/locks" "$SCRATCH/ru-claims"  # run-under creates neither
touch "$SCRATCH/failing"
status=0
LD_PRELOAD=$EIO GPUPLAN_FAIL_DONE_MARKS=$SCRATCH/failing TEST_TARGET=//t:a "$GPUPLAN" run-under --plan "$SCRATCH/plan.json" \
  --node n0 --lock-dir "$SCRATCH/locks" --claims "$SCRATCH/ru-claims" true 2>"$SCRATCH/ru.err" || status=$?
[ "$status" = 0 ] || fail "run-under whose done mark cannot be written: exit $status, not 0: $(cat "$SCRATCH/ru.err")"
grep -q "^gpuplan run-under: error: //t:a ran here (exit 0), but its done mark is not written: .*Input/output error. Another node may run it again once the lease (60 s) has run out" \
  "$SCRATCH/ru.err" || fail "run-under does not say its done mark is not written: $(cat "$SCRATCH/ru.err")"
[ "$(fresh_claims "$SCRATCH/ru-claims")" = 1 ] || fail "run-under gave the claim up: $(ls -l --time-style=+%s "$SCRATCH/ru-claims")"
echo "claims_eio_test: ok"
