#!/usr/bin/env bash
# An output survives a power loss once gpuplan says it is written: its file is synced before it is
# renamed into place, and then the directory that names it is synced too (and, for an export that
# made its folder, each folder made). Before, only the file was synced: ext4 and XFS may come back
# from a crash after the command ended with the old file or none. test/faults/record_syncs.cpp,
# preloaded, records the renames and syncs in the order they happened. Under a second.
source test/integration/lib.sh
RECORD=${GPUPLAN_BUILD_DIR:-$(dirname "$GPUPLAN")}/librecord_syncs.so
[ -e "$RECORD" ] || fail "$RECORD is missing: it is built with gpuplan_tests"
SCRATCH=$(realpath "$SCRATCH")  # as /proc/self/fd names the synced directories
log=$SCRATCH/syncs.log

# synced_after TARGET DIR: DIR was fsync'ed after the last rename onto TARGET.
synced_after() {
  awk -v target="$1" -v dir="$2" '$1 == "rename" && $2 == target { renamed = 1; synced = 0 }
    renamed && $1 == "fsync" && $2 == dir { synced = 1 } END { exit !(renamed && synced) }' "$log" ||
    fail "$2 was not synced after $1 was renamed into it: $(cat "$log")"
}

# 1. plan -o: the plan's directory.
mkdir "$SCRATCH/out"
: >"$log"
status=0
LD_PRELOAD=$RECORD GPUPLAN_RECORD_SYNCS_TO=$log "$GPUPLAN" plan examples/query.xml --fleet examples/fleet.yaml \
  --rules examples/rules.yaml -o "$SCRATCH/out/plan.json" 2>/dev/null || status=$?
[ "$status" = 0 ] || [ "$status" = 3 ] || fail "plan: exit $status"
synced_after "$SCRATCH/out/plan.json" "$SCRATCH/out"

# 2. An export into folders it makes: the files' folder, and each new folder in its parent.
: >"$log"
LD_PRELOAD=$RECORD GPUPLAN_RECORD_SYNCS_TO=$log "$GPUPLAN" export slurm "$SCRATCH/out/plan.json" \
  -o "$SCRATCH/new/jobs" 2>/dev/null || fail "export slurm: exit $?"
script=$(awk '$1 == "rename" { print $2; exit }' "$log")
[ -n "$script" ] || fail "export slurm renamed nothing: $(cat "$log")"
synced_after "$script" "$SCRATCH/new/jobs"
synced_after "$script" "$SCRATCH/new"
synced_after "$script" "$SCRATCH"
