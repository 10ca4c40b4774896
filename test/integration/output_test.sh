# Outputs are whole or absent (issue 18 item 5) and progress shows only on a terminal (issue
# 14 item 7): a full disk is an error, -o replaces only regular files, a failed or interrupted
# write leaves no file behind, and the progress line stays out of pipes, CI logs and --quiet.
source test/integration/lib.sh

query=examples/query.xml
fleet=examples/fleet.yaml
"$GPUPLAN" plan "$query" --fleet "$fleet" > "$SCRATCH/plan.json" 2> /dev/null || [ $? = 3 ] || fail "plan"

# gpuplan reruns itself with glibc's huge pages (src/cli/main.cpp): the query on standard input
# survives the rerun, and the user's own GLIBC_TUNABLES, with or without hugetlb, change nothing.
for tunables in "" glibc.malloc.perturb=165 glibc.malloc.hugetlb=0; do
  GLIBC_TUNABLES=$tunables "$GPUPLAN" plan --fleet "$fleet" < "$query" > "$SCRATCH/piped.json" 2> /dev/null || [ $? = 3 ] ||
    fail "plan from standard input with GLIBC_TUNABLES=$tunables"
  cmp -s "$SCRATCH/plan.json" "$SCRATCH/piped.json" || fail "GLIBC_TUNABLES=$tunables changed the plan"
done
# The rerun is what runs the plan: its environment (/proc/PID/environ is the one it was started
# with) asks for huge pages; a user's hugetlb=0 gets no rerun.
rerun_environment() {  # TUNABLES: the environment `plan` reads its query with
  rm -f "$SCRATCH/query.fifo" && mkfifo "$SCRATCH/query.fifo"
  GLIBC_TUNABLES=$1 "$GPUPLAN" plan "$SCRATCH/query.fifo" --fleet "$fleet" > /dev/null 2>&1 &
  local pid=$!
  exec 7> "$SCRATCH/query.fifo"  # returns once the plan opened its query: after any rerun
  tr '\0' '\n' < "/proc/$pid/environ" > "$SCRATCH/environ"
  cat "$query" >&7
  exec 7>&-
  wait "$pid" || [ $? = 3 ] || fail "plan from a FIFO with GLIBC_TUNABLES=$1"
}
rerun_environment ""
grep -qx 'GLIBC_TUNABLES=glibc.malloc.hugetlb=1' "$SCRATCH/environ" || fail "plan ran without huge pages"
rerun_environment glibc.malloc.perturb=165
# (glibc 2.36 parses GLIBC_TUNABLES in place: its ':' reads back as the end of a string.)
grep -qx 'GLIBC_TUNABLES=glibc.malloc.perturb=165' "$SCRATCH/environ" && grep -qx 'glibc.malloc.hugetlb=1' "$SCRATCH/environ" &&
  grep -qx 'GPUPLAN_SAVED_GLIBC_TUNABLES=+glibc.malloc.perturb=165' "$SCRATCH/environ" ||
  fail "the rerun lost the user's tunables: $(cat "$SCRATCH/environ")"
rerun_environment glibc.malloc.hugetlb=0
! grep -q 'GPUPLAN_SAVED_GLIBC_TUNABLES' "$SCRATCH/environ" || fail "a rerun despite the user's hugetlb=0"

# A full disk on standard output is exit 2 with a message, never exit 0 with half a plan.
for command in "plan $query --fleet $fleet" "targets $query --json" "classify $query --json" \
               "classify $query" "fleet check $fleet" "show $SCRATCH/plan.json" "--help" "plan --help" "--version"; do
  rc=0; $GPUPLAN $command > /dev/full 2> "$SCRATCH/err.txt" || rc=$?
  [ "$rc" = 2 ] || fail "$command > /dev/full: exit $rc, not 2"
  grep -q "cannot write" "$SCRATCH/err.txt" || fail "$command > /dev/full: no message: $(cat "$SCRATCH/err.txt")"
done

# -o replaces a regular file only: not a device, a directory, a FIFO or a symbolic link.
refused() {  # PATH WHAT
  rc=0; "$GPUPLAN" plan "$query" --fleet "$fleet" -o "$1" 2> "$SCRATCH/err.txt" || rc=$?
  [ "$rc" = 2 ] || fail "-o $1: exit $rc, not 2"
  grep -q "$2" "$SCRATCH/err.txt" || fail "-o $1: $(cat "$SCRATCH/err.txt")"
}
refused /dev/null "is a device"
[ -c /dev/null ] || fail "/dev/null is no longer a device"
mkdir "$SCRATCH/dir"
refused "$SCRATCH/dir" "is a directory"
mkfifo "$SCRATCH/fifo"
refused "$SCRATCH/fifo" "is a FIFO"
echo keep > "$SCRATCH/kept.json"
ln -s "$SCRATCH/kept.json" "$SCRATCH/link.json"
refused "$SCRATCH/link.json" "symbolic link"
[ "$(cat "$SCRATCH/kept.json")" = keep ] || fail "a symbolic link's file was changed"

# A new file gets the usual permissions; a replaced file keeps its own.
(umask 022; "$GPUPLAN" plan "$query" --fleet "$fleet" -o "$SCRATCH/new.json" 2> /dev/null) || [ $? = 3 ] || fail "plan -o"
[ "$(stat -c %a "$SCRATCH/new.json")" = 644 ] || fail "a new plan file is $(stat -c %a "$SCRATCH/new.json"), not 644"
cmp -s "$SCRATCH/new.json" "$SCRATCH/plan.json" || fail "-o wrote something else than standard output"
chmod 640 "$SCRATCH/new.json"
"$GPUPLAN" plan "$query" --fleet "$fleet" -o "$SCRATCH/new.json" 2> /dev/null || [ $? = 3 ] || fail "plan -o again"
[ "$(stat -c %a "$SCRATCH/new.json")" = 640 ] || fail "replacing a plan file changed its mode"

# A write that fails half-way (here a file size limit, whose SIGXFSZ would end the process
# without a word) leaves neither the file nor a temporary.
rc=0; (ulimit -f 2; "$GPUPLAN" plan "$query" --fleet "$fleet" -o "$SCRATCH/cut.json" \
  2> "$SCRATCH/err.txt") || rc=$?
[ "$rc" = 2 ] || fail "a write past the file size limit: exit $rc, not 2"
[ ! -e "$SCRATCH/cut.json" ] || fail "half a plan was left behind"
leftovers() { find "$SCRATCH" -name '.*.gpuplan-*' | head -1; }
[ -z "$(leftovers)" ] || fail "a temporary file was left behind: $(leftovers)"

# SIGTERM, or SIGHUP (a closed terminal or ssh session), while the plan is written removes the
# temporary file. A plan of 20,000 tests takes long enough to write that the loop sees its
# temporary file and signals then.
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "{\"type\":\"RULE\",\"rule\":{\"name\":\"//p%d:t%d_test\",\"ruleClass\":\"py_test\",\"attribute\":[{\"name\":\"tags\",\"type\":\"STRING_LIST\",\"stringListValue\":[\"gpu\"]}]}}\n", i % 100, i }' \
  > "$SCRATCH/many.jsonl"
# signal_during_write SIGNAL: the exit status of a plan that got SIGNAL while writing its file
# (0 or 3 when it finished first, in all 5 tries). A try whose signal was sent while the
# temporary file was there is the last: an ignored SIGINT had run all 5 whole plans.
mkfifo "$SCRATCH/tick"
exec {tick}<> "$SCRATCH/tick"  # never written: a read of it waits out its timeout (no process)
signal_during_write() {
  local rc writing
  for try in 1 2 3 4 5; do
    rm -f "$SCRATCH/signalled.json"
    "$GPUPLAN" plan "$SCRATCH/many.jsonl" --fleet "$fleet" -o "$SCRATCH/signalled.json" 2> /dev/null &
    pid=$!
    while kill -0 "$pid" 2> /dev/null && ! compgen -G "$SCRATCH/.signalled.json.gpuplan-*" > /dev/null; do
      read -rt 0.002 -u "$tick" || true  # 2 ms: looking without a pause took a whole core from the plan
    done
    writing=0; compgen -G "$SCRATCH/.signalled.json.gpuplan-*" > /dev/null && writing=1
    kill -"$1" "$pid" 2> /dev/null || true
    rc=0; wait "$pid" || rc=$?
    [ -z "$(leftovers)" ] || fail "SIG$1 left a temporary file: $(leftovers)"
    case $rc in 0|3) [ "$writing" = 0 ] || break ;; *) break ;; esac
  done
  echo "$rc"
}
for signal in TERM HUP; do
  rc=$(signal_during_write $signal)
  case $rc in
    0|3) echo "note: the plan was written before SIG$signal came, in every try" >&2 ;;
    143|129) [ ! -e "$SCRATCH/signalled.json" ] || fail "SIG$signal during the write left a plan behind" ;;
    *) fail "SIG$signal during the write: exit $rc" ;;
  esac
done
# A SIGINT ignored from the start (a background job's, nohup) stays ignored: the plan is written.
rc=$( (trap '' INT; signal_during_write INT) )
case $rc in 0|3) cmp -s "$SCRATCH/signalled.json" <("$GPUPLAN" plan "$SCRATCH/many.jsonl" --fleet "$fleet" 2>/dev/null) ||
  fail "an ignored SIGINT changed the plan written" ;;
  *) fail "a SIGINT the caller ignored stopped plan: exit $rc" ;;
esac

# targets --json streams each test to standard output as it is read; with -o the file is whole
# or absent: bad input after 20,000 good tests leaves no file, and good input the same bytes.
{ cat "$SCRATCH/many.jsonl"; echo '{"type":"RULE","rule":'; } > "$SCRATCH/bad.jsonl"
refuses "bad.jsonl:20001" targets "$SCRATCH/bad.jsonl" --json -o "$SCRATCH/targets.json"
[ -z "$(leftovers)" ] || fail "targets -o left a temporary file: $(leftovers)"
"$GPUPLAN" targets "$SCRATCH/many.jsonl" --json -o "$SCRATCH/targets.json" || fail "targets -o"
"$GPUPLAN" targets "$SCRATCH/many.jsonl" --json | cmp -s - "$SCRATCH/targets.json" ||
  fail "targets -o wrote something else than standard output"

# Progress: one updating line on a terminal once the command has run a while (here at once);
# none with --quiet, with CI set, or when standard error is not a terminal.
if command -v script > /dev/null; then
  shown() {  # ENV... : gpuplan plan under a pseudo-terminal; succeeds if it showed progress
    env "$@" script -qec "'$GPUPLAN' plan '$SCRATCH/many.jsonl' --fleet $fleet -o '$SCRATCH/p.json' $flags" \
      "$SCRATCH/typescript" > /dev/null 2>&1 || true
    # Any stage's line ("gpuplan: sorting 20000 tests (0 s)"): each lasts a few tens of ms here,
    # and the line is redrawn every 20 ms, so which stages it catches varies (planning: not always).
    grep -aqE "gpuplan: [a-z]+ [^(]*\([0-9]+ s\)" "$SCRATCH/typescript"
  }
  flags=
  shown -u CI GPUPLAN_PROGRESS_AFTER_MS=0 || fail "no progress line on a terminal"
  ! shown CI=true GPUPLAN_PROGRESS_AFTER_MS=0 || fail "a progress line with CI set"
  flags=--quiet
  ! shown -u CI GPUPLAN_PROGRESS_AFTER_MS=0 || fail "a progress line with --quiet"
fi
env -u CI GPUPLAN_PROGRESS_AFTER_MS=0 "$GPUPLAN" plan "$SCRATCH/many.jsonl" --fleet "$fleet" -o "$SCRATCH/p.json" \
  2> "$SCRATCH/err.txt" || [ $? = 3 ] || fail "plan many"
! grep -q $'\r' "$SCRATCH/err.txt" || fail "a progress line in a pipe"

# A closed standard input is an error, not an empty query (an empty plan with exit 0), and the
# fleet file opened next is not read in its place.
refuses '<stdin>: cannot read: standard input is closed' plan --fleet "$fleet" -o "$SCRATCH/closed.json" <&-
"$GPUPLAN" plan "$query" --fleet "$fleet" -o "$SCRATCH/closed.json" <&- 2> /dev/null || [ $? = 3 ] ||
  fail "a closed standard input stopped a plan that does not read it"
# An output that is also an input: written after the inputs were read, it replaced the query,
# the fleet or a plan with exit 0. It is refused, the input untouched; a rolling history is not.
cp "$query" "$SCRATCH/same.xml"
cp "$fleet" "$SCRATCH/same.yaml"
ln -sf "$SCRATCH/same.xml" "$SCRATCH/link.xml"
for args in "$SCRATCH/same.xml --fleet $fleet -o $SCRATCH/same.xml" \
  "$query --fleet=$SCRATCH/same.yaml -o $SCRATCH/same.yaml" "$SCRATCH/link.xml --fleet $fleet -o $SCRATCH/same.xml" \
  "$SCRATCH/same.xml --fleet $fleet -o$SCRATCH/same.xml" "$query --fleet $SCRATCH/same.yaml --output=$SCRATCH/same.yaml"; do
  rc=0; "$GPUPLAN" plan $args 2> "$SCRATCH/err.txt" || rc=$?
  [ "$rc" = 2 ] && grep -q "cannot write: it is also an input of this command" "$SCRATCH/err.txt" ||
    fail "plan $args: exit $rc, $(cat "$SCRATCH/err.txt")"
done
rc=0; "$GPUPLAN" plan --fleet "$fleet" -o "$SCRATCH/same.xml" < "$SCRATCH/same.xml" 2> "$SCRATCH/err.txt" || rc=$?
[ "$rc" = 2 ] && grep -q "also an input of this command (standard input)" "$SCRATCH/err.txt" ||
  fail "plan -o its own standard input: exit $rc, $(cat "$SCRATCH/err.txt")"
cmp -s "$query" "$SCRATCH/same.xml" && cmp -s "$fleet" "$SCRATCH/same.yaml" || fail "an input was replaced by the output"
printf 'label,shard,seconds\n//a:t,,5\n' > "$SCRATCH/rolling.csv"
"$GPUPLAN" history summarize "$SCRATCH/rolling.csv" -o "$SCRATCH/rolling.csv" 2> "$SCRATCH/err.txt" ||
  fail "a rolling history was refused: $(cat "$SCRATCH/err.txt")"

# Standard input given for two inputs: the fleet was read from the query's text, or the second
# history was silently empty.
for args in "plan - --fleet -" "compare - --fleet -" "history summarize - -"; do
  input=$query
  [[ $args != history* ]] || input=$SCRATCH/rolling.csv
  refuses "standard input is given for two inputs" $args < "$input"
done
"$GPUPLAN" plan - --fleet "$fleet" -o - < "$query" > /dev/null 2>&1 || [ $? = 3 ] || fail "plan - -o - was refused"

echo "ok"
