# The HTML chart at 20, 2,000 and 20,000 units, as a user's browser shows it: plans made by
# `gpuplan plan` from generated queries (awk below: every 7th test asks for 2 GPUs, every
# 23rd for 4, every 997th from the 14th on for 16, which no node has), rendered with
# --fleet (so idle GPUs and nodes are drawn), loaded in headless Chromium. The page must
# draw every scheduled unit in its fitted view, list every unschedulable one, show every
# node of the fleet, find units by search (#q=) and run without script errors.
# Screenshots go to $GPUPLAN_BUILD_DIR/test-output/chart/ for people to look at.
source test/integration/lib.sh
requires chromium jq awk
OUTPUT=${GPUPLAN_BUILD_DIR:-$SCRATCH}/test-output/chart
mkdir -p "$OUTPUT"

query() {  # N: a query of N GPU tests in N/50+1 packages, sizes in turn
  awk -v n="$1" 'BEGIN {
    print "<?xml version=\"1.1\" encoding=\"UTF-8\" standalone=\"no\"?>\n<query version=\"2\">"
    split("small medium large enormous", sizes, " ")
    for (i = 0; i < n; ++i) {
      gpus = i % 997 == 13 ? 16 : i % 23 == 0 ? 4 : i % 7 == 0 ? 2 : 1
      p = i % (int(n / 50) + 1)
      printf "  <rule class=\"py_test\" location=\"/ws/pkg%d/BUILD:%d:8\" name=\"//pkg%d:case%d_test\">\n", p, i + 1, p, i
      printf "    <list name=\"tags\"><string value=\"gpu:%d\"/></list>\n", gpus
      printf "    <string name=\"size\" value=\"%s\"/>\n  </rule>\n", sizes[i % 4 + 1]
    }
    print "</query>"
  }'
}
fleet() {  # NODES: H100 nodes of 8 GPUs; more than the tests fill, so some idle
  printf 'version: 1\npools:\n  - name: h100\n    count: %d\n    gpu: {model: H100-SXM-80GB, count: 8}\n' "$1"
  printf '    cuda: "12.4"\n    driver: "550.54.15"\n    topology: nvswitch\n'
}
chromium_run() {  # NAME ARGS...: headless Chromium, its log in $SCRATCH/NAME.log
  local name=$1; shift
  timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
    --disable-background-networking --disable-component-update --disable-sync --hide-scrollbars \
    --user-data-dir="$(mktemp -d "$SCRATCH/chromium.XXXXXX")" --enable-logging=stderr --v=0 \
    --window-size=1400,900 "$@" 2> "$SCRATCH/$name.log" || fail "chromium failed on $name: $(tail -5 "$SCRATCH/$name.log")"
  if grep -E 'Uncaught|CONSOLE.*(error|Error)' "$SCRATCH/$name.log"; then fail "$name has script errors"; fi
}
attribute() {  # DOM NAME: the value of <body data-NAME="...">
  grep -o "<body[^>]*" "$1" | grep -o " data-$2=\"[^\"]*\"" | cut -d'"' -f2
}

for n in 20 2000 20000; do
  nodes=$((n / 300 + 2))
  query "$n" > "$SCRATCH/query$n.xml"
  fleet "$nodes" > "$SCRATCH/fleet$n.yaml"
  status=0
  "$GPUPLAN" plan --fleet "$SCRATCH/fleet$n.yaml" "$SCRATCH/query$n.xml" -o "$SCRATCH/plan$n.json" 2> /dev/null || status=$?
  [ "$status" -eq 3 ] || fail "gpuplan plan of $n units exited $status, not 3 (one unit needs 16 GPUs)"
  "$GPUPLAN" render "$SCRATCH/plan$n.json" --fleet "$SCRATCH/fleet$n.yaml" -o "$SCRATCH/chart$n.html"
  grep -qE '(src|href)="?(https?:)?//' "$SCRATCH/chart$n.html" && fail "chart$n.html loads something from the network"
  units=$(jq '.assignments | length' "$SCRATCH/plan$n.json")
  unschedulable=$(jq '.unschedulable | length' "$SCRATCH/plan$n.json")
  [ "$((units + unschedulable))" -eq "$n" ] || fail "the plan of $n units has $units + $unschedulable"

  chromium_run "chart$n" --screenshot="$OUTPUT/chart-$n.png" --dump-dom "file://$SCRATCH/chart$n.html" \
    > "$SCRATCH/chart$n.dom"
  [ "$(attribute "$SCRATCH/chart$n.dom" ready)" = true ] || fail "chart$n.html's script did not run to the end"
  [ "$(attribute "$SCRATCH/chart$n.dom" units)" = "$units" ] || fail "chart$n.html does not carry $units units"
  drawn=$(attribute "$SCRATCH/chart$n.dom" drawn)
  [ "$drawn" = "$units" ] || fail "chart$n.html draws $drawn of $units units in its fitted view"
  [ "$(attribute "$SCRATCH/chart$n.dom" nodes)" = "$nodes" ] || fail "chart$n.html does not draw all $nodes nodes (idle ones too)"
  listed=$(grep -c '<li class="unsched">' "$SCRATCH/chart$n.dom" || true)
  [ "$listed" = "$unschedulable" ] || fail "chart$n.html lists $listed of $unschedulable unschedulable units"
  [ "$(stat -c %s "$OUTPUT/chart-$n.png")" -gt 10000 ] || fail "the screenshot of chart$n.html is nearly empty"
  echo "OK: $n units: $drawn drawn, $listed unschedulable listed, $nodes nodes; $OUTPUT/chart-$n.png"
done

# Search: the units of one package, counted by the page against the plan.
expected=$(jq '[.assignments[] | select(.unit | startswith("//pkg3:"))] | length' "$SCRATCH/plan2000.json")
chromium_run search --screenshot="$OUTPUT/chart-2000-search.png" --dump-dom \
  "file://$SCRATCH/chart2000.html#q=//pkg3:" > "$SCRATCH/search.dom"
[ "$(attribute "$SCRATCH/search.dom" matches)" = "$expected" ] || fail "searching //pkg3: does not find its $expected units"
echo "PASS: the HTML chart draws every unit at 20, 2,000 and 20,000 units; screenshots in $OUTPUT"
