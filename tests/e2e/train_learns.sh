#!/usr/bin/env bash
# The main job, shortened: examples/tiny.plan on the synthetic Markov source
# across 2 data-parallel ranks. The loss must fall well below the uniform
# log(vocab) and most of the way to the source's entropy rate (make run
# trains longer and gets within 0.1 nats of it).
set -u
. "$(dirname "$0")/plrun_lib.bash"
need_mpi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
STEPS=${LEARN_STEPS:-60}
compile_tiny "$tmp/tiny.bin" 2
run_ranks 2 "$tmp/tiny.bin" --steps "$STEPS" --metrics "$tmp/m.jsonl" >"$tmp/log" 2>&1 ||
    { cat "$tmp/log"; die "plrun failed"; }
cat "$tmp/log"
entropy=$(grep -o 'entropy rate [0-9.]*' "$tmp/log" | head -n 1 | awk '{print $3}')
[ -n "$entropy" ] || die "plrun did not report the source's entropy rate"
vocab=$(awk '/vocab/ {print $3; exit}' "$PLC_ROOT/examples/tiny.plan")
first=$(losses "$tmp/m.jsonl" | head -n 1)
last=$(losses "$tmp/m.jsonl" | tail -n 5 | awk '{s += $1} END {printf "%.6f", s / NR}')
echo "loss: first $first, mean of the last 5 steps $last; uniform log(vocab) $(awk -v v="$vocab" 'BEGIN{printf "%.4f", log(v)}'), entropy rate $entropy"
awk -v f="$first" -v l="$last" -v h="$entropy" -v v="$vocab" 'BEGIN {
    u = log(v)
    if (f < u - 0.5 || f > u + 0.5) { print "FAIL: the first loss is not near log(vocab)"; exit 1 }
    # at least 70% of the way from uniform to the entropy floor
    if (l > h + 0.3 * (u - h)) { print "FAIL: the loss did not fall far enough"; exit 1 }
    if (l < h - 0.05) { print "FAIL: the loss fell below the entropy rate (impossible)"; exit 1 }
}' || exit 1
echo "learns: ok"
