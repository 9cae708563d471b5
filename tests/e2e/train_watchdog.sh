#!/usr/bin/env bash
# The watchdog: one rank of two stopped with SIGSTOP in the middle of a run.
# The other rank passes the deadline (--timeout 3) in its next transfer, says
# which instruction (or, stopped while a checkpoint is written, which
# checkpoint; or in the step's world reductions, which) and which rank it
# waits for, and the job ends (exit 1)
# well within 60 s, leaving the last periodic checkpoint intact: it resumes.
set -u
. "$(dirname "$0")/plrun_lib.bash"
need_mpi
tmp=$(mktemp -d)
pid= victim=
trap '[ -n "$victim" ] && kill -KILL "$victim" 2>/dev/null; [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT
compile_tiny "$tmp/two.bin" 2
compile_tiny "$tmp/one.bin" 1
timeout 120 $PLC_MPIRUN -np 2 "$PLRUN" "$tmp/two.bin" --steps 300 --timeout 3 --checkpoint-dir "$tmp/ck" \
    --checkpoint-every 2 >"$tmp/log" 2>&1 &
pid=$!
for _ in $(seq 600); do grep -q '^step *4/' "$tmp/log" && break; sleep 0.1; done
grep -q '^step *4/' "$tmp/log" || { cat "$tmp/log"; die "the run did not get to step 4"; }
for p in $(pgrep -f "$PLRUN $tmp/two.bin"); do
    tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1' && victim=$p
done
[ -n "$victim" ] || skip "skipped: cannot find rank 1's process (not Open MPI?)"
start=$(date +%s)
kill -STOP "$victim"
wait "$pid"; rc=$?
pid=
secs=$(( $(date +%s) - start ))
grep -v '^step' "$tmp/log" | head -n 12
[ "$rc" -ne 0 ] && [ "$rc" -lt 124 ] || die "the job should end with an error (exit $rc)"
[ "$secs" -le 60 ] || die "the job took $secs s to end after the stop"
# where rank 0 waited when the stop came: the instruction, the checkpoint
# being written, or the step's world reductions (its loss, or the stop
# signal's check after a step), and the silent rank
grep -q "rank 0: .*no progress for [0-9.]* s (the --timeout deadline) waiting for .*rank 1 did not answer" "$tmp/log" &&
    grep -q "rank 0: instruction [0-9]* ([A-Z_]*\|writing the checkpoint of step [0-9]*\|rank 0: the reduction of the step's loss failed\|rank 0: after step [0-9]*: " "$tmp/log" ||
    die "the message does not name where rank 0 waited (instruction, checkpoint or the step's reductions) and the silent rank"
grep -q "is intact; resume with --resume" "$tmp/log" || die "no word on the last checkpoint"
last=$(cat "$tmp/ck/latest") || die "no checkpoint marker"
n=$(echo "$last" | sed 's/step-0*//; s/\..*//')
"$PLRUN" "$tmp/one.bin" --steps $((n + 1)) --resume "$tmp/ck" >"$tmp/log2" 2>&1 || { cat "$tmp/log2"; die "the last checkpoint does not resume"; }
echo "watchdog: rank 1 stopped, the job ended after ${secs}s (deadline 3 s) with exit $rc; $last resumes"
