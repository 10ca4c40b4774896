#!/usr/bin/env bash
# exec --claims on a claims directory whose disk fills up during the run (a shared file system
# at its quota): the unit that ran is still marked done (its claim file, rewritten in place and
# linked as the mark, takes no new space), and a unit that cannot be claimed is not run here,
# said, exit 3. Before, the first done mark that could not be written ended exec mid-run (exit 2,
# its running units killed) with the unit that had run still claimed, for another node to run
# again once the lease ran out. Needs a tmpfs of its own: root (skipped otherwise).
source test/integration/lib.sh
requires python3 jq
GPUPLAN=$(realpath "$GPUPLAN")
if [ "$(id -u)" != 0 ] || ! mkdir "$SCRATCH/full" || ! mount -t tmpfs -o size=64k tmpfs "$SCRATCH/full" 2>/dev/null; then
  echo "SKIP: mounting a small tmpfs needs root" >&2
  exit 77
fi
trap 'umount "$SCRATCH/full"; rm -rf "$SCRATCH"' EXIT
# n0 runs //t:fill, which fills the disk, and then //t:after, on GPU 0.
printf '%s\n' "//t:fill n0 0 0" "//t:after n0 0 1" | one_gpu_plan
cat >"$SCRATCH/unit.sh" <<SH
#!/bin/sh
echo "\$1" >>"$SCRATCH/ran.log"
[ "\$1" != //t:fill ] || dd if=/dev/zero of="$SCRATCH/full/fill" bs=4k count=100 2>/dev/null
exit 0
SH
chmod +x "$SCRATCH/unit.sh"
mkdir "$SCRATCH/full/claims"
status=0
"$GPUPLAN" exec "$SCRATCH/plan.json" --node n0 --claims "$SCRATCH/full/claims" --command "$SCRATCH/unit.sh {label}" \
  --json "$SCRATCH/exec.json" >"$SCRATCH/out" 2>"$SCRATCH/err" || status=$?
[ "$status" = 3 ] || fail "exec on a claims disk that filled up: exit $status, not 3: $(cat "$SCRATCH/err")"
[ "$(cat "$SCRATCH/ran.log")" = //t:fill ] || fail "the units that ran: $(cat "$SCRATCH/ran.log")"
done_marks=("$SCRATCH"/full/claims/*.done)
[ "${#done_marks[@]}" = 1 ] && grep -qx "n0 [0-9]* 0" "${done_marks[0]}" ||
  fail "//t:fill, which ran and passed, is not marked done: $(ls -l "$SCRATCH/full/claims")"
grep -q "//t:after not run here: .*No space left on device" "$SCRATCH/err" ||
  fail "exec does not say why //t:after did not run: $(cat "$SCRATCH/err")"
[ "$(jq -c '[.units[] | .outcome]' "$SCRATCH/exec.json")" = '["passed","not_run"]' ] ||
  fail "--json: $(cat "$SCRATCH/exec.json")"

# Dispatching (--fleet), a unit whose claim cannot be written is tried again on each pass (the disk
# may have room later) but said once: before, every pass said it again. n0's //t:other, on GPU 1,
# ends after //t:fill has filled the disk (waits for it: a fixed second from its start was not
# enough for a loaded machine's //t:fill to have run dd), and each end is a pass.
umount "$SCRATCH/full"
mount -t tmpfs -o size=64k tmpfs "$SCRATCH/full"
rm -f "$SCRATCH/ran.log"
l4_fleet n0 n1
printf '%s\n' "//t:fill n0 0 0" "//t:after n0 0 1" "//t:other n0 1 0" "//t:last n0 1 1" | one_gpu_plan
sed -i 's|^exit 0$|[ "$1" != //t:fill ] \|\| touch "$0.filled"\n[ "$1" != //t:other ] \|\| { for i in $(seq 600); do [ -e "$0.filled" ] \&\& break; sleep 0.1; done; sleep 1; }|' "$SCRATCH/unit.sh"
mkdir "$SCRATCH/full/claims"
status=0
"$GPUPLAN" exec "$SCRATCH/plan.json" --node n0 --claims "$SCRATCH/full/claims" --fleet "$SCRATCH/fleet.yaml" \
  --command "$SCRATCH/unit.sh {label}" >"$SCRATCH/out" 2>"$SCRATCH/err" || status=$?
[ "$status" = 3 ] || fail "dispatching on a claims disk that filled up: exit $status, not 3: $(cat "$SCRATCH/err")"
[ "$(grep -c "//t:after not run here: .*No space left on device" "$SCRATCH/err")" = 1 ] ||
  fail "//t:after's claim that could not be written is not said once: $(cat "$SCRATCH/err")"
echo "claims_full_test: ok"
