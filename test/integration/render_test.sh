# The Gantt chart as a user opens it: the SVG is well-formed XML, and the HTML page loads
# in a real headless Chromium without errors and draws one bar per unit, labels kept as text
# (chart_test.sh checks the chart at scale).
source test/integration/lib.sh
requires chromium jq xmllint

# A copy of the example plan whose first label is full of characters that mean something to HTML and shells.
jq '.assignments[0].label = "//x:<b>&\"'"'"'$(touch pwned)" | .assignments[0].unit = .assignments[0].label' \
  test/data/plans/example.plan.json > "$SCRATCH/tricky.plan.json"
plans=(test/data/plans/example.plan.json "$SCRATCH/tricky.plan.json")
if [ -f examples/fleet.yaml ]; then
  status=0
  "$GPUPLAN" plan --fleet examples/fleet.yaml examples/query.xml -o "$SCRATCH/examples.plan.json" || status=$?
  [ "$status" -eq 0 ] || [ "$status" -eq 3 ] || fail "gpuplan plan on the examples exited $status"
  plans+=("$SCRATCH/examples.plan.json")
fi

for plan in "${plans[@]}"; do
  name=$(basename "$plan" .json)
  units=$(jq '.assignments | length' "$plan")
  "$GPUPLAN" render "$plan" -o "$SCRATCH/$name.svg"
  xmllint --noout "$SCRATCH/$name.svg" || fail "$name.svg is not well-formed XML"
  [ "$(grep -c '<g class="bar"' "$SCRATCH/$name.svg")" -eq "$units" ] || fail "$name.svg does not have $units bars"

  "$GPUPLAN" render "$plan" -o "$SCRATCH/$name.html"
  # The tricky label is searched for as text (#q=<b>&), so the page must find exactly one unit.
  (cd "$SCRATCH" && timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
     --disable-background-networking --disable-component-update --disable-sync \
     --user-data-dir="$(mktemp -d "$SCRATCH/chromium.XXXXXX")" --enable-logging=stderr --v=0 \
     --dump-dom "file://$SCRATCH/$name.html#q=%3Cb%3E%26" > "$SCRATCH/$name.dom" 2> "$SCRATCH/$name.log") ||
    fail "chromium could not load $name.html: $(tail -5 "$SCRATCH/$name.log")"
  if grep -E 'Uncaught|CONSOLE.*(error|Error)' "$SCRATCH/$name.log"; then fail "$name.html has script errors"; fi
  grep -q 'data-ready="true"' "$SCRATCH/$name.dom" || fail "$name.html's script did not run to the end"
  grep -q "data-drawn=\"$units\"" "$SCRATCH/$name.dom" || fail "$name.html does not draw $units bars"
done

grep -q 'data-matches="1"' "$SCRATCH/tricky.plan.dom" || fail "searching the tricky label as text does not find it"
grep -q 'data-matches="0"' "$SCRATCH/example.plan.dom" || fail "the example plan has no label with <b>&"
grep -q '<b>' "$SCRATCH/tricky.plan.dom" && fail "the tricky label became markup"
[ ! -e "$SCRATCH/pwned" ] || fail "a label ran a command"
# With --fleet the SVG draws every GPU of every node of the fleet, as the HTML page does (it was
# refused: the SVG could not show idle GPUs); a fleet the plan does not fit is refused alike.
# The plan's fleet with a third H100 node, which no unit uses.
plan=test/data/plans/example.plan.json fleet="$SCRATCH/fleet.yaml"
sed 's/^    count: 2$/    count: 3/' test/data/plans/fleet.yaml > "$fleet"
"$GPUPLAN" render "$plan" --fleet "$fleet" -o "$SCRATCH/fleet.svg" || fail "render --fleet to .svg was refused"
"$GPUPLAN" render "$plan" --fleet "$fleet" -o "$SCRATCH/fleet.html"
xmllint --noout "$SCRATCH/fleet.svg" || fail "fleet.svg is not well-formed XML"
lanes=$(sed -n 's|.*<script type="application/json" id="plan-data">\(.*\)</script>.*|\1|p' "$SCRATCH/fleet.html" |
  jq '[.nodes[].lanes | length] | add')
[ "$lanes" -gt "$(grep -c 'class="gp-gpu"' "$SCRATCH/example.plan.svg")" ] || fail "the fleet has no GPU the plan leaves idle"
[ "$(grep -c 'class="gp-gpu"' "$SCRATCH/fleet.svg")" -eq "$lanes" ] || fail "fleet.svg does not draw the fleet's $lanes GPUs"
[ "$(grep -c '<g class="bar"' "$SCRATCH/fleet.svg")" -eq "$(jq '.assignments | length' "$plan")" ] ||
  fail "fleet.svg does not draw every unit"
sed 's/nodes: \[l4-0\]/nodes: [l4-9]/' test/data/plans/fleet.yaml > "$SCRATCH/other.yaml"
for ext in svg html; do
  refuses "which this fleet does not have" render "$plan" --fleet "$SCRATCH/other.yaml" -o "$SCRATCH/other.$ext"
done
status=0
"$GPUPLAN" render "$plan" --fleet "$fleet" -o "$SCRATCH/fleet.trace.json" 2> /dev/null || status=$?
[ "$status" -ne 0 ] || fail "render --fleet to trace events is not refused"
# Trace events: valid JSON with one complete event per unit and GPU it holds; markdown lists
# every unschedulable unit.
plan=test/data/plans/example.plan.json
"$GPUPLAN" render "$plan" -o "$SCRATCH/plan.trace.json"
[ "$(jq '[.traceEvents[] | select(.ph == "X")] | length' "$SCRATCH/plan.trace.json")" -eq \
  "$(jq '[.assignments[].gpus | length] | add' "$plan")" ] || fail "the trace lacks events"
"$GPUPLAN" show "$plan" --format markdown > "$SCRATCH/plan.md"
for unit in $(jq -r '.unschedulable[].unit' "$plan"); do
  grep -qF -- "- \`$unit\`" "$SCRATCH/plan.md" || fail "the markdown summary does not list $unit"
done
echo "PASS: charts render in Chromium with one bar per unit"
