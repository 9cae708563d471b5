#!/usr/bin/env bash
# Launch with Slurm for real: starts munged, slurmctld and slurmd (Debian's
# packages) on this one machine in a scratch directory, runs
# `srun --mpi=pmix -n 4 plrun job.bin`, and checks that plrun took its rank
# and size from Slurm's PMIx (4 ranks, one loss curve) and trained exactly as
# under mpirun (the same final loss). Skips, with a line saying why, where
# Slurm is not installed or slurmd cannot start (containers without the
# privileges it needs). Also runs examples/slurm/plc.sbatch through sbatch.
set -u
# under the sanitizers: full malloc stacks, so that LeakSanitizer matches
# Open MPI's exit-time leaks against tests/lsan.supp (as plrun_lib.bash does)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
: "${PLC_BIN:?}" "${PLC_ROOT:?}"
PLC=$PLC_BIN/plc
PLRUN=$PLC_BIN/plrun
skip() { echo "skip: $*"; exit 77; }
for b in munged slurmctld slurmd srun sinfo sbatch; do
    command -v "$b" >/dev/null 2>&1 || PATH=$PATH:/usr/sbin:/sbin
    command -v "$b" >/dev/null 2>&1 || skip "Slurm is not installed ($b missing; scripts/install-deps.sh installs slurmd slurmctld slurm-client munge)"
done
[ "$(id -u)" -eq 0 ] || skip "starting slurmd needs root"
S=$(mktemp -d /tmp/plc-slurm.XXXXXX)
chmod 755 "$S"
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    sleep 1
    for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done
    rm -rf "$S"
}
trap cleanup EXIT
die() { echo "FAIL: $*"; for f in "$S"/*.log; do [ -f "$f" ] && { echo "== $f"; tail -n 20 "$f"; }; done; exit 1; }

# munge, on its own socket
mkdir -p "$S/munge"
dd if=/dev/urandom of="$S/munge/munge.key" bs=1024 count=1 status=none
chmod 400 "$S/munge/munge.key"
munged -f --key-file="$S/munge/munge.key" --socket="$S/munge/munge.socket" --pid-file="$S/munge/munged.pid" \
    --log-file="$S/munged.log" --seed-file="$S/munge/seed" 2>>"$S/munged.log" || skip "munged does not start: $(tail -n 1 "$S/munged.log")"
for _ in $(seq 50); do [ -s "$S/munge/munged.pid" ] && break; sleep 0.1; done
pids+=("$(cat "$S/munge/munged.pid")")

# slurm.conf: one node (this machine) with 4 task slots, root as the Slurm user
host=$(hostname -s)
port=$((20000 + $$ % 20000))
mkdir -p "$S/state" "$S/spool"
cat >"$S/slurm.conf" <<CONF
ClusterName=plctest
SlurmctldHost=$host
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$S/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$S/state
SlurmdSpoolDir=$S/spool
SlurmctldPidFile=$S/slurmctld.pid
SlurmdPidFile=$S/slurmd.pid
SlurmctldLogFile=$S/slurmctld.log
SlurmdLogFile=$S/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
MpiDefault=pmix
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
NodeName=$host CPUs=4 State=UNKNOWN
PartitionName=plc Nodes=$host Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE:4
CONF
export SLURM_CONF=$S/slurm.conf
slurmctld -D -i -f "$SLURM_CONF" >>"$S/slurmctld.log" 2>&1 &
pids+=($!)
slurmd -D -f "$SLURM_CONF" -N "$host" >>"$S/slurmd.log" 2>&1 &
pids+=($!)
ready=0
for _ in $(seq 60); do
    kill -0 "${pids[2]}" 2>/dev/null || skip "slurmd cannot start here: $(grep -m1 -i 'error\|fatal' "$S/slurmd.log")"
    kill -0 "${pids[1]}" 2>/dev/null || skip "slurmctld cannot start here: $(grep -m1 -i 'error\|fatal' "$S/slurmctld.log")"
    if sinfo -h -o '%t' 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then ready=1; break; fi
    sleep 0.5
done
[ $ready -eq 1 ] || skip "the Slurm node does not become idle: $(sinfo -h -o '%t %E' 2>&1 | head -1)"

# the tiny model on 4 data-parallel ranks, 20 steps
"$PLC" compile "$PLC_ROOT/examples/tiny.plan" -D layout.dp=4 -D cluster.gpus_per_node=4 -D train.steps=20 -D train.lr.warmup=2 \
    -o "$S/job.bin" >/dev/null || die "compile"
timeout 300 srun --mpi=pmix -n 4 "$PLRUN" "$S/job.bin" >"$S/srun.out" 2>&1 || { cat "$S/srun.out"; die "srun plrun"; }
grep -q '4 ranks' "$S/srun.out" || { cat "$S/srun.out"; die "plrun under srun did not see 4 ranks"; }
${PLC_MPIRUN:-mpirun --allow-run-as-root --oversubscribe} -np 4 "$PLRUN" "$S/job.bin" >"$S/mpirun.out" 2>&1 || die "mpirun plrun"
last() { grep -E '^step +20\b' "$1" | head -1 | sed -E 's/.*loss ([0-9.]+).*/\1/'; }
a=$(last "$S/srun.out"); b=$(last "$S/mpirun.out")
[ -n "$a" ] && [ "$a" = "$b" ] || { cat "$S/srun.out"; die "loss at step 20: srun '$a', mpirun '$b'"; }
echo "srun -n 4: 4 ranks, loss at step 20 = $a (mpirun: $b)"

# the sbatch example
PLC_JOB=$S/job.bin PLRUN=$PLRUN sbatch --wait -o "$S/sbatch.out" -n 4 "$PLC_ROOT/examples/slurm/plc.sbatch" >/dev/null 2>"$S/sbatch.err" ||
    { cat "$S/sbatch.err" "$S/sbatch.out" 2>/dev/null; die "sbatch examples/slurm/plc.sbatch"; }
c=$(last "$S/sbatch.out")
[ "$c" = "$a" ] || { cat "$S/sbatch.out"; die "sbatch: loss at step 20 '$c', want '$a'"; }
echo "slurm: ok"
