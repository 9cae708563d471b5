#!/usr/bin/env bash
# Determinism (docs/runtime.md): on one machine and OpenBLAS kernel family,
# the same plan run twice gives bitwise identical losses, and 1 and 2
# threads per rank give bitwise identical losses. tests/run_determinism.sh
# runs it again under each OpenBLAS core type the CPU can run.
set -u
. "$(dirname "$0")/plrun_lib.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
compile_tiny "$tmp/tiny.bin" 1
for run in a b; do
    "$PLRUN" "$tmp/tiny.bin" --steps 8 --threads 1 --metrics "$tmp/$run.jsonl" >"$tmp/$run.log" 2>&1 ||
        { cat "$tmp/$run.log"; die "plrun failed"; }
done
OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 "$PLRUN" "$tmp/tiny.bin" --steps 8 --threads 2 \
    --metrics "$tmp/c.jsonl" >"$tmp/c.log" 2>&1 || { cat "$tmp/c.log"; die "plrun failed"; }
losses "$tmp/a.jsonl" >"$tmp/a.loss"
losses "$tmp/b.jsonl" >"$tmp/b.loss"
losses "$tmp/c.jsonl" >"$tmp/c.loss"
[ "$(wc -l <"$tmp/a.loss")" -eq 8 ] || die "expected 8 steps of metrics"
cmp -s "$tmp/a.loss" "$tmp/b.loss" || { paste "$tmp/a.loss" "$tmp/b.loss"; die "two runs of the same plan differ"; }
cmp -s "$tmp/a.loss" "$tmp/c.loss" || { paste "$tmp/a.loss" "$tmp/c.loss"; die "1 and 2 threads differ"; }
echo "determinism: 2 runs and 1 vs 2 threads bitwise identical over 8 steps"
