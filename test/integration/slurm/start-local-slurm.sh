#!/usr/bin/env bash
# Copied from /work/shared/recipes/start-local-slurm.sh for test/integration/slurm_test.sh.
# start-local-slurm.sh -- throw-away single-host Slurm 22.05 cluster with FAKE GPUs.
#
# Tested on Debian 12 (bookworm), packages slurmctld slurmd slurm-client munge
# (22.05.8-4+deb12u3, munge 0.5.15), running as root, no systemd, no real GPUs.
#
# What you get:
#   * munged, slurmctld and one slurmd PER VIRTUAL NODE, all on this host, all
#     started as plain background processes (no systemd), everything (config,
#     state, logs, munge key/socket, fake /dev nodes) under $SLT_DIR.
#   * Debian's Slurm is built with MULTIPLE_SLURMD (see `scontrol show config |
#     grep MULTIPLE`), so several NodeName entries can share this host, each
#     slurmd started with `-N <name>` and its own Port.
#   * Every virtual node declares fake GPUs as GRES backed by fake character
#     devices (mknod c 195 N, i.e. nvidia's major number; they are never opened).
#     Slurm then sets CUDA_VISIBLE_DEVICES / SLURM_JOB_GPUS / SLURM_STEP_GPUS /
#     GPU_DEVICE_ORDINAL / SLURM_GPUS_ON_NODE in jobs and hands out disjoint
#     indices to concurrent jobs.
#
# Usage:
#   sudo ./start-local-slurm.sh            # start (idempotent: stops an old one first)
#                                          # (also works unprivileged, see RUN_USER below)
#   export SLURM_CONF=$SLT_DIR/etc/slurm.conf   # REQUIRED for sbatch/srun/squeue/...
#   sbatch --gres=gpu:2 --wrap 'echo $CUDA_VISIBLE_DEVICES'
#   sudo ./start-local-slurm.sh stop       # teardown (kills only the PIDs it recorded)
#   sudo ./start-local-slurm.sh stop --purge   # ... and delete $SLT_DIR/{etc,state}
#
# Tunables (environment):
#   SLT_DIR      base dir                       (default /tmp/slurmtest)
#   SLT_NODES    "name:gputype:count:features ..." (features comma-separated, may be empty;
#                count 0 = CPU-only node)
#                default "n1:h100:4:cuda12.4,nvlink n2:a100:2:cuda11.8"
#   SLT_CPUS     CPUs advertised per virtual node (default 8; real core count does not matter
#                thanks to SlurmdParameters=config_overrides)
#   SLT_MEM      RealMemory (MB) advertised per virtual node (default 4000)
#   SLT_FAKEDEV  mknod (default; falls back to symlink) | symlink  -- how fake /dev/nvidiaN are made
#   SLT_CTLD_PORT  slurmctld port (default 16817); slurmd ports are SLT_CTLD_PORT+1+i
#   SLT_PARTITIONS more partitions besides "debug" (the default, no time limit), "name:maxtime ..."
#                (maxtime as slurm.conf's MaxTime, e.g. 30 for 30 minutes), each of every node
set -euo pipefail

SLT_DIR=${SLT_DIR:-/tmp/slurmtest}
SLT_NODES=${SLT_NODES:-"n1:h100:4:cuda12.4,nvlink n2:a100:2:cuda11.8"}
SLT_CPUS=${SLT_CPUS:-8}
SLT_MEM=${SLT_MEM:-4000}
SLT_CTLD_PORT=${SLT_CTLD_PORT:-16817}
SLT_PARTITIONS=${SLT_PARTITIONS:-}

ETC=$SLT_DIR/etc
ST=$SLT_DIR/state
PIDS=$ST/pids           # one file per daemon we started, containing its PID
export SLURM_CONF=$ETC/slurm.conf

log() { printf '[%(%T)T] %s\n' -1 "$*" >&2; }

# ----------------------------------------------------------------------------
stop_cluster() {
    # Kill only PIDs we recorded ourselves.  All daemons get SIGTERM at once
    # (each takes ~1.5-2 s to exit, so sequential stopping would take ~8 s),
    # then we wait up to 10 s and SIGKILL stragglers.
    [ -d "$PIDS" ] || return 0
    local f pid live=()
    for f in "$PIDS"/*; do
        [ -f "$f" ] || continue
        pid=$(cat "$f")
        if kill -0 "$pid" 2>/dev/null; then kill -TERM "$pid" 2>/dev/null && live+=("$pid"); fi
        rm -f "$f"
    done
    for _ in $(seq 100); do
        local still=()
        for pid in "${live[@]}"; do kill -0 "$pid" 2>/dev/null && still+=("$pid"); done
        live=("${still[@]}")
        [ ${#live[@]} -eq 0 ] && return 0
        sleep 0.1
    done
    log "SIGKILL ${live[*]}"; kill -KILL "${live[@]}" 2>/dev/null || true
}

if [ "${1:-start}" = stop ]; then
    # be nice: cancel running jobs so their slurmstepd's exit
    if [ -f "$PIDS/slurmctld" ] && kill -0 "$(cat "$PIDS/slurmctld")" 2>/dev/null; then
        scancel --full $(squeue -h -o %i 2>/dev/null) 2>/dev/null || true
        sleep 0.5
    fi
    stop_cluster
    [ "${2:-}" = --purge ] && rm -rf "$ETC" "$ST"
    log "stopped"
    exit 0
fi

# ----------------------------------------------------------------------------
# 0. prerequisites
export PATH=$PATH:/usr/sbin:/sbin        # slurmctld/slurmd/munged live in /usr/sbin
need=()
for b in munged slurmctld slurmd sbatch; do command -v "$b" >/dev/null || need+=("$b"); done
if [ ${#need[@]} -gt 0 ]; then
    [ "$(id -u)" = 0 ] || { echo "missing ${need[*]}; apt-get install slurmctld slurmd slurm-client munge (as root)" >&2; exit 1; }
    log "installing slurm + munge packages"
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
        slurmctld slurmd slurm-client munge >/dev/null
fi
# Run as root (normal: any user can submit, slurmd setuid()s to them) or as an
# ordinary user (also works, tested: all daemons run as that user, SlurmUser =
# SlurmdUser = that user, and only that user can run jobs; fake devices become
# symlinks because mknod needs CAP_MKNOD).
RUN_USER=$(id -un)

stop_cluster                   # idempotent restart
T0=$(date +%s.%N)
rm -rf "$ST"                   # fresh controller state => job ids restart at 1
mkdir -p "$ETC" "$ST"/{ctld,log,fakedev,munge-key,munge-run} "$PIDS"

# ----------------------------------------------------------------------------
# 1. munge: private key + socket under $ST; munged runs as the invoking user
#    (--force: needed when that is root / socket in an unusual place) in the
#    background.  Socket dir must be o+x so non-root job submitters can use it;
#    the key dir must be 0700.
chmod 700 "$ST/munge-key"; chmod 755 "$ST/munge-run"
dd if=/dev/urandom of="$ST/munge-key/munge.key" bs=1024 count=1 status=none
chmod 400 "$ST/munge-key/munge.key"
MUNGE_SOCK=$ST/munge-run/munge.socket.2
setsid munged -F --force --key-file="$ST/munge-key/munge.key" --socket="$MUNGE_SOCK" \
       --log-file="$ST/log/munged.log" --pid-file="$ST/munge-run/munged.pid" \
       --seed-file="$ST/munge-key/munged.seed" </dev/null >"$ST/log/munged.stdout" 2>&1 &
echo $! > "$PIDS/munged"   # -F: foreground, so $! is the real PID
for _ in $(seq 50); do [ -S "$MUNGE_SOCK" ] && [ -s "$ST/munge-run/munged.pid" ] && break; sleep 0.1; done
munge -S "$MUNGE_SOCK" -n | unmunge -S "$MUNGE_SOCK" >/dev/null || { log "munge self-test failed"; exit 1; }

# ----------------------------------------------------------------------------
# 2. configuration
HOST=$(hostname -s)      # SlurmctldHost must be this machine's short hostname
NODE_LINES=""; GRES_LINES=""; NODE_NAMES=()
i=0
for spec in $SLT_NODES; do
    IFS=: read -r name gtype gcount feats <<<"$spec"
    i=$((i+1)); port=$((SLT_CTLD_PORT + i))
    NODE_NAMES+=("$name")
    # fake GPU device nodes: char devices 195:<n> (nvidia major), one dir per node.
    # Plain files are rejected by slurmd ("is not a valid character or block device").
    mkdir -p "$ST/fakedev/$name"
    # If mknod is not permitted (e.g. container without CAP_MKNOD) or SLT_FAKEDEV=symlink,
    # symlinks to /dev/null work too (slurmd stat()s through the link).
    for ((g=0; g<gcount; g++)); do
        f=$ST/fakedev/$name/nvidia$g
        if [ "${SLT_FAKEDEV:-mknod}" = symlink ] || ! mknod "$f" c 195 $(( (i-1)*16 + g )) 2>/dev/null; then
            ln -sf /dev/null "$f"
        fi
    done
    gres=""   # a node spec with count 0 (e.g. "cpu1:none:0:") becomes a CPU-only node
    if [ "$gcount" -gt 0 ]; then
        gres=" Gres=gpu:$gtype:$gcount"
        GRES_LINES+="NodeName=$name Name=gpu Type=$gtype File=$ST/fakedev/$name/nvidia[0-$((gcount-1))]"$'\n'
    fi
    NODE_LINES+="NodeName=$name NodeHostname=$HOST NodeAddr=127.0.0.1 Port=$port CPUs=$SLT_CPUS RealMemory=$SLT_MEM$gres${feats:+ Features=$feats} State=UNKNOWN"$'\n'
done

PARTITION_LINES=""
for spec in $SLT_PARTITIONS; do
    IFS=: read -r name maxtime <<<"$spec"
    PARTITION_LINES+=$'\n'"PartitionName=$name Nodes=ALL MaxTime=$maxtime State=UP OverSubscribe=NO"
done

cat > "$ETC/slurm.conf" <<EOF
# generated by start-local-slurm.sh
ClusterName=fakegpu
SlurmctldHost=$HOST(127.0.0.1)
SlurmctldPort=$SLT_CTLD_PORT
SlurmdPort=$((SLT_CTLD_PORT + 1))
# all daemons run as the invoking user (root normally), no dedicated slurm user needed
SlurmUser=$RUN_USER
SlurmdUser=$RUN_USER
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$MUNGE_SOCK
# state / logs / pids under $ST  (%n = node name, needed for multiple slurmd)
StateSaveLocation=$ST/ctld
SlurmdSpoolDir=$ST/slurmd-%n
SlurmctldPidFile=$ST/slurmctld.pid
SlurmdPidFile=$ST/slurmd-%n.pid
SlurmctldLogFile=$ST/log/slurmctld.log
SlurmdLogFile=$ST/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
# no cgroups, no accounting, no MPI, no mail
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SwitchType=switch/none
MailProg=/bin/true
# scheduling: GPU-aware consumable resources; start jobs right after submit
SchedulerType=sched/backfill
SchedulerParameters=batch_sched_delay=0,bf_interval=1,bf_continue
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
GresTypes=gpu
ReturnToService=2
# trust the CPU/memory numbers below instead of the real hardware
SlurmdParameters=config_overrides
# quick clean-up of finished jobs
MinJobAge=60
KillWait=2
${NODE_LINES}PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO${PARTITION_LINES}
EOF

cat > "$ETC/gres.conf" <<EOF
# generated by start-local-slurm.sh -- fake GPUs, no NVML
AutoDetect=off
${GRES_LINES}
EOF
: > "$ETC/plugstack.conf"   # silences a harmless "no plugstack.conf" debug message

# ----------------------------------------------------------------------------
# 3. daemons: foreground mode (-D) in the background, own session (setsid) so
#    they survive the calling shell; we record the PIDs ourselves.
setsid slurmctld -D -i >"$ST/log/slurmctld.stdout" 2>&1 < /dev/null &
echo $! > "$PIDS/slurmctld"
for n in "${NODE_NAMES[@]}"; do
    mkdir -p "$ST/slurmd-$n"
    setsid slurmd -D -N "$n" >"$ST/log/slurmd-$n.stdout" 2>&1 < /dev/null &
    echo $! > "$PIDS/slurmd-$n"
done

# wait until every node is idle (typically ~1-2 s)
ok=
for _ in $(seq 300); do
    states=$(sinfo -h -N -o '%T' 2>/dev/null | sort -u | tr '\n' ' ')
    [ "$states" = "idle " ] && { ok=1; break; }
    sleep 0.1
done
if [ -z "$ok" ]; then
    log "cluster did not come up (node states: ${states:-none}); see $ST/log"
    sinfo -N -l || true
    exit 1
fi
log "cluster up in $(echo "$(date +%s.%N) - $T0" | bc) s: nodes ${NODE_NAMES[*]}"
log "export SLURM_CONF=$SLURM_CONF"
