#!/usr/bin/env bash
# One output vocabulary across commands: switches are on/off (never sp=0/1
# or true/false), counts agree with their plural ("1 node"), percentages
# are exact (77.5%, not 78%), dump names every layout dimension, and every
# command's layout line is the same text.
set -u
. "$(dirname "$0")/plc_lib.bash"
ex=$PLC_ROOT/examples
spec=$ex/tiny.plan
pin=(-D layout.dp=4 -D layout.tp=2 -D layout.pp=1 -D layout.cp=1 -D layout.memory_limit=77.5%)
"$PLC" compile "$spec" "${pin[@]}" -o "$tmp/a.bin" >"$tmp/compile.txt" || die "compile"
"$PLC" dump "$tmp/a.bin" --no-buffers >"$tmp/dump.txt" || die "dump"
"$PLC" solve "$spec" "${pin[@]}" >"$tmp/solve.txt" || die "solve"
"$PLC" explain "$spec" "${pin[@]}" >"$tmp/explain.txt" || die "explain"
"$PLC" compile "$spec" -D layout.dp=8 -o "$tmp/b.bin" >/dev/null || die "compile b"
"$PLC" diff --no-listing "$tmp/a.bin" "$tmp/b.bin" >"$tmp/diff.txt"; [ $? -eq 1 ] || die "diff"
"$PLC" scale "$spec" --gpus 1..8 >"$tmp/scale.txt" || die "scale"
"$PLC" trace "$tmp/a.bin" -o "$tmp/t.json" >"$tmp/trace.txt" || die "trace"
OMP_NUM_THREADS=1 ${PLC_MPIRUN:-mpirun --allow-run-as-root --oversubscribe} -np 8 "$PLC_BIN/plrun" "$tmp/a.bin" --steps 1 \
    >"$tmp/plrun.txt" 2>&1 || { cat "$tmp/plrun.txt"; die "plrun"; }
all=("$tmp"/*.txt)
if grep -nE '\b(sp|fused_rmsnorm|tie_embeddings)=([01]|true|false)\b' "${all[@]}"; then die "a switch printed as 0/1 or true/false"; fi
if grep -nE '\b1 (nodes|ranks|GPUs|errors|warnings)\b' "${all[@]}"; then die "a plural after 1"; fi
grep -q '(77.5% of' "$tmp/solve.txt" || die "solve: memory_limit not exact"
grep -q 'fused_rmsnorm=' "$tmp/dump.txt" || die "dump omits fused_rmsnorm"
grep -q '1 node ' "$tmp/dump.txt" || die "dump: '1 node'"
# the same layout line in compile, dump, explain and plrun
line=$(sed -n 's/^layout  *//p' "$tmp/compile.txt")
[ -n "$line" ] || die "compile prints no layout line"
grep -qF "layout: $line" "$tmp/dump.txt" || die "dump's layout line differs from compile's"
grep -qF "winner: $line" "$tmp/explain.txt" || die "explain's layout line differs"
grep -qF "layout: $line;" "$tmp/plrun.txt" || { grep layout "$tmp/plrun.txt"; die "plrun's layout line differs"; }
echo "vocabulary: ok"
