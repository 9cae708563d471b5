#!/usr/bin/env bash
# plrun's memory report: on every rank, the measured peak beyond the
# runtime's measured fixed costs is within 5% of the plan's arena, on
# `make run` itself (tiny.plan on 4 data-parallel ranks, all its steps:
# an 8 MiB arena, where half a MiB of MPI's temporaries left in the heap
# put a rank 6% over) and on a data-parallel, a pipeline and a
# tensor-parallel ZeRO layout of a grown model; the arena printed is the
# one plc compiled into the plan.
set -u
. "$(dirname "$0")/plrun_lib.bash"
need_mpi
[ -r /proc/self/status ] || skip "skipped: no /proc/self/status to measure memory with"
case "$PLC_BIN" in *san*) skip "skipped: the sanitizer build's allocator (redzones, quarantine, shadow) is not plrun's memory" ;; esac
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# tiny.plan, grown so that the arena (tens of MiB) dwarfs page rounding
grown="-D model.layers=4 -D model.hidden=128 -D model.ffn_hidden=352 -D layout.cp=1"

# judge NAME RANKS: every rank of $tmp/NAME.log within 5% of an arena the plan has
judge() {
    local name=$1 n=$2 planned
    planned=$(awk '$1 == "stage" && $3 == "arena" { print $4 }' "$tmp/$name.compile" | sort -u | tr '\n' ' ')
    awk -v name="$name" -v n="$n" -v planned=" $planned" '
        /^  rank [0-9]+ / {
            split($0, f, "|"); sub(/^  rank [0-9]+ +/, "", f[1])
            arena = f[1] + 0; used = f[2] + 0; rows++
            if (index(planned, " " sprintf("%.2f", arena) " ") == 0) { printf "%s: arena %.2f is not one the plan has (%s)\n", name, arena, planned; bad = 1 }
            d = (used - arena) / arena; if (d < 0) d = -d
            if (d > 0.05) { printf "%s: %s: %.1f%% off the arena\n", name, $0, 100 * d; bad = 1 }
        }
        END { if (rows != n) { printf "%s: %d rank rows, expected %d\n", name, rows, n; bad = 1 } exit bad }' \
        "$tmp/$name.log"
}

# check NAME RANKS STEPS OVERRIDES...: compile tiny.plan with OVERRIDES, run
# STEPS steps ("plan": the plan's own), compare every rank.
# MPI's own heap during the steps (eager messages that arrive before their
# receive is posted, the temporaries of the nonblocking collectives alive
# at once) depends on how the ranks' timing skews, which the dry
# communication step that measures MPI's workspaces cannot reproduce: on
# 2 cores with 4 ranks it moved rank 0 of tp2_zero from +0.8% to +5.8%
# between two runs of the same plan. It only ever adds memory, so a second
# run is taken when the first is off, and the test fails when both are.
check() {
    local name=$1 n=$2 steps=$3; shift 3
    "$PLC" compile "$PLC_ROOT/examples/tiny.plan" -D cluster.gpus_per_node="$n" "$@" \
        -o "$tmp/$name.bin" >"$tmp/$name.compile" || { cat "$tmp/$name.compile"; die "$name: plc compile failed"; }
    local try steps_arg=()
    [ "$steps" = plan ] || steps_arg=(--steps "$steps")
    for try in 1 2; do
        run_ranks "$n" "$tmp/$name.bin" "${steps_arg[@]}" >"$tmp/$name.log" 2>&1 || { cat "$tmp/$name.log"; die "$name: plrun failed"; }
        sed -n '/^memory per rank/,/^runtime fixed costs/p' "$tmp/$name.log"
        grep -q '^runtime fixed costs measured: [0-9.]* MiB' "$tmp/$name.log" || die "$name: no fixed costs line"
        judge "$name" "$n" && return 0
        [ "$try" -eq 1 ] && echo "$name: run again (MPI's heap depends on the ranks' timing)"
    done
    die "$name: the measured memory is not the plan's, in two runs"
}
# make run's own compile (Makefile, RUN_RANKS = 4) and its 300 steps
check make_run 4 plan -D layout.dp=4
# shellcheck disable=SC2086
check dp4 4 4 $grown -D layout.dp=4 -D layout.tp=1 -D layout.pp=1
# shellcheck disable=SC2086
check pp2 2 4 $grown -D layout.dp=1 -D layout.tp=1 -D layout.pp=2
# shellcheck disable=SC2086
check tp2_zero 4 4 $grown -D layout.dp=2 -D layout.tp=2 -D layout.pp=1 -D layout.zero=1
echo "memory: ok"
