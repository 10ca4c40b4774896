# gpuplan show on big plans, as a user narrows it: --node keeps one node's chart, --label
# keeps matching units (Bazel's //pkg/... or a glob), --summary prints a line per node;
# each says what it left out, and a node with no units is an error naming the nodes.
source test/integration/lib.sh
plan=test/data/plans/example.plan.json

out=$("$GPUPLAN" show "$plan" --width 120 --node l4-0)
grep -q "^Showing 4 of 16 scheduled units and 0 of 1 unschedulable (--node l4-0)" <<<"$out" || fail "--node note: $out"
grep -q "^l4-0 " <<<"$out" || fail "--node l4-0 has no l4-0 chart: $out"
grep -q "^a100-0 \|^h100-" <<<"$out" && fail "--node l4-0 still charts other nodes: $out"

out=$("$GPUPLAN" show "$plan" --width 120 --label '//ml/...')
grep -q "^Showing 10 of 16 scheduled units and 1 of 1 unschedulable (--label //ml/...)" <<<"$out" || fail "--label //ml/...: $out"
grep -q "nccl" <<<"$out" && fail "--label //ml/... kept //tf:nccl_test: $out"
out=$("$GPUPLAN" show "$plan" --width 120 --label '//tf:*' --label '//xla:*')
grep -q "^Showing 5 of 16 scheduled units" <<<"$out" || fail "two --label globs: $out"

refuses "nosuch: no unit of the plan runs there (nodes with units: a100-0, h100-0, h100-1, l4-0)" show "$plan" --node nosuch

out=$("$GPUPLAN" show "$plan" --width 80 --summary)
[ "$(echo "$out" | grep -cE '^(a100|h100|l4)-[0-9] +[0-9]+ +[0-9]+ ')" -eq 4 ] || fail "--summary has not 4 node lines: $out"
[ "$(echo "$out" | awk '/^(a100|h100|l4)-[0-9] / {n += $3} END {print n}')" -eq 16 ] || fail "--summary units do not add up to 16: $out"
grep -q "1 unschedulable unit, 2 diagnostics" <<<"$out" || fail "--summary counts: $out"

# Every node's axis marks the makespan (28m), and its column runs down the lanes (│).
out=$("$GPUPLAN" show "$plan" --width 100)
[ "$(echo "$out" | grep -c "makespan 28m ▼")" -eq 4 ] || fail "not every node's axis marks the makespan: $out"
grep -q '^ GPU 3 .*│$' <<<"$out" || fail "the makespan column is not drawn down the lanes: $out"
# With --fleet, a node of the fleet with no unit and the GPUs no unit uses are drawn as idle.
sed 's/count: 2$/count: 3/' test/data/plans/fleet.yaml > "$SCRATCH/fleet.yaml"  # h100-2 idle, l4-0 gets a GPU 2
out=$("$GPUPLAN" show "$plan" --width 100 --fleet "$SCRATCH/fleet.yaml")
grep -q "^h100-2 ── idle, 8 GPUs ─" <<<"$out" || fail "--fleet does not draw the idle node h100-2: $out"
grep -A4 "^l4-0 " <<<"$out" | grep -q "^ GPU 2 ·idle·" || fail "--fleet does not draw l4-0's idle GPU 2: $out"
no_fleet=$("$GPUPLAN" show "$plan" --width 100)
grep -q "^h100-2" <<<"$out" && grep -q "^h100-2" <<<"$no_fleet" &&
  fail "without --fleet an idle node is drawn"
# A fleet the plan does not fit is refused as simulate refuses it (exit 2, nothing on stdout):
# show and render mixed the two fleets' nodes silently.
for command in "show $plan --width 100" "show $plan --summary" "render $plan -o $SCRATCH/mixed.html"; do
  # shellcheck disable=SC2086
  refuses "the plan puts //.* on node .*, which this fleet does not have" $command --fleet examples/fleet.yaml
done
sed 's/^      count: 2$/      count: 1/' test/data/plans/fleet.yaml > "$SCRATCH/fewer.yaml"  # l4-0 loses its GPU 1
refuses "on GPU 1 of l4-0, which has 1 GPUs" show "$plan" --fleet "$SCRATCH/fewer.yaml"
# The plan from standard input, a pipe or a file, reads as the plan file does.
[ "$("$GPUPLAN" show - --width 100 <"$plan")" = "$no_fleet" ] || fail "show - < plan differs from show plan"
[ "$(cat "$plan" | "$GPUPLAN" show - --width 100)" = "$no_fleet" ] || fail "cat plan | show - differs from show plan"
# ... from where the caller left standard input: here after a first line read by the shell.
[ "$({ read -r _; "$GPUPLAN" show - --width 100 2>&1; } <"$plan")" != "$no_fleet" ] ||
  fail "show - read standard input from its start, not from where it stood"
# COLUMNS is held to the range --width takes: a huge value had drawn lanes of two billion columns.
wide=$(COLUMNS=2147483647 timeout 20 "$GPUPLAN" show "$plan") || fail "show with COLUMNS=2147483647 failed or hung"
[ "$wide" = "$("$GPUPLAN" show "$plan" --width 1000)" ] || fail "COLUMNS=2147483647 is not --width 1000"
# Past what an int holds too: atoi wrapped 2^32 + 80 to 80 columns, and read 2^31 as negative (ignored).
for huge in 4294967376 2147483648 99999999999999999999; do
  [ "$(COLUMNS=$huge "$GPUPLAN" show "$plan")" = "$wide" ] || fail "COLUMNS=$huge is not --width 1000"
done
echo "PASS: show"
