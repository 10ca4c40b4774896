# What people read after planning in CI: unschedulable units sharing a reason are one stderr
# line each (not one per unit), and the markdown summary lists every one of them by reason.
source test/integration/lib.sh
requires jq
cat > "$SCRATCH/tiny.yaml" <<'YAML'
# One node with one L4: most of the example's GPU tests cannot run here.
version: 1
pools:
  - name: l4
    count: 1
    gpu: {model: L4, count: 1}
    cuda: "12.4"
    driver: "550.54.15"
YAML
status=0
"$GPUPLAN" plan --fleet "$SCRATCH/tiny.yaml" examples/query.xml -o "$SCRATCH/plan.json" 2> "$SCRATCH/err" || status=$?
[ "$status" -eq 3 ] || fail "plan on a one-GPU fleet exited $status, not 3"
units=$(jq '.unschedulable | length' "$SCRATCH/plan.json")
reasons=$(jq '[.unschedulable[].reason] | unique | length' "$SCRATCH/plan.json")
[ "$units" -gt "$reasons" ] || fail "the fixture should have several units sharing a reason ($units units, $reasons reasons)"
[ "$(grep -c '^gpuplan: unschedulable: ' "$SCRATCH/err")" -eq "$reasons" ] ||
  fail "not one stderr line per reason: $(cat "$SCRATCH/err")"
# Every unit is counted once across the lines.
counted=$(sed -n 's/^gpuplan: unschedulable: \([0-9]*\) units: .*/\1/p' "$SCRATCH/err" | paste -sd+ | bc)
single=$(grep -c '^gpuplan: unschedulable: //' "$SCRATCH/err" || true)
[ "$((${counted:-0} + single))" -eq "$units" ] || fail "the grouped lines count $counted + $single units, not $units"
"$GPUPLAN" show "$SCRATCH/plan.json" --format markdown > "$SCRATCH/plan.md"
[ "$(grep -c '^<details><summary>' "$SCRATCH/plan.md")" -ge "$reasons" ] || fail "markdown does not group by reason"
echo "PASS: unschedulable units are reported grouped by reason"
