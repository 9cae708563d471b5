#!/usr/bin/env bash
# plc compile, dump, diff and trace on the tiny spec: plans compile for
# several layouts, compiling twice gives byte-identical plans, dump is
# stable, diff reports layout and communication changes, trace writes valid
# Chrome trace JSON, and damaged plans are rejected with a message and
# exit status 1 (never a crash).
set -u
. "$(dirname "$0")/plc_lib.bash"
spec=$PLC_ROOT/examples/tiny.plan

compile() { # NAME RANKS -D...
    local name=$1 n=$2; shift 2
    "$PLC" compile "$spec" -D cluster.gpus_per_node="$n" "$@" -o "$tmp/$name.bin" >"$tmp/$name.log" 2>&1 ||
        { cat "$tmp/$name.log"; die "compile $name"; }
}
compile dp2 2 -D layout.dp=2 -D layout.tp=1 -D layout.pp=1 -D layout.cp=1 -D layout.zero=0
compile dp2z2 2 -D layout.dp=2 -D layout.tp=1 -D layout.pp=1 -D layout.cp=1 -D layout.zero=2
compile tp2pp2 4 -D layout.dp=1 -D layout.tp=2 -D layout.pp=2 -D layout.cp=1 -D layout.sp=on
grep -q '^layout .*dp=2' "$tmp/dp2.log" || die "compile summary lacks the layout"
grep -q '^memory' "$tmp/dp2.log" && grep -q '^plan ' "$tmp/dp2.log" || die "compile summary lacks memory/plan lines"

# determinism
"$PLC" compile "$spec" -D cluster.gpus_per_node=2 -D layout.dp=2 -D layout.tp=1 -D layout.pp=1 -D layout.cp=1 -D layout.zero=0 \
    -o "$tmp/again.bin" >/dev/null || die "second compile"
cmp -s "$tmp/dp2.bin" "$tmp/again.bin" || die "the same spec compiled twice gives different plans"

# dump: stable, one instruction a line, --rank picks a stage's program
"$PLC" dump "$tmp/tp2pp2.bin" >"$tmp/d1.txt" || die "dump"
"$PLC" dump "$tmp/tp2pp2.bin" >"$tmp/d2.txt" || die "dump"
cmp -s "$tmp/d1.txt" "$tmp/d2.txt" || die "dump is not stable"
grep -q 'MATMUL' "$tmp/d1.txt" || die "dump has no MATMUL"
"$PLC" dump "$tmp/tp2pp2.bin" --rank 3 --no-buffers >"$tmp/r3.txt" || die "dump --rank"
grep -q '^rank 3: tp=1 cp=0 dp=0 pp=1' "$tmp/r3.txt" || die "dump --rank 3 header"
grep -q 'XENT_LOSS' "$tmp/r3.txt" || die "the last stage's program has no loss"
"$PLC" dump "$tmp/tp2pp2.bin" --rank 4 >/dev/null 2>&1 && die "dump accepted rank 4 of 4"

# diff
"$PLC" diff "$tmp/dp2.bin" "$tmp/dp2z2.bin" >"$tmp/diff.txt"; rc=$?
[ $rc -eq 1 ] || die "diff of different plans: exit $rc, want 1"
grep -q 'layout.zero  *0 -> 2' "$tmp/diff.txt" || die "diff does not show the ZeRO change"
grep -q 'REDUCE_SCATTER' "$tmp/diff.txt" || die "diff does not show communication by kind"
grep -q '^+++ b/rank' "$tmp/diff.txt" || die "diff has no unified listing"

# trace: valid JSON, every rank on a track (tensor-parallel peers share one)
"$PLC" trace "$tmp/tp2pp2.bin" -o "$tmp/trace.json" >"$tmp/trace.log" || die "trace"
/usr/bin/python3 - "$tmp/trace.json" <<'PY' || die "trace JSON"
import json, sys
d = json.load(open(sys.argv[1]))
ev = d["traceEvents"]
pids = {e["pid"] for e in ev if e.get("ph") == "X"}
ranks = sorted(r for e in ev if e.get("name") == "process_name" for r in e["args"].get("ranks", [e["pid"]]))
assert ranks == [0, 1, 2, 3], ranks
assert pids <= {0, 1, 2, 3}, pids
tids = {e["tid"] for e in ev if e.get("ph") == "X"}
assert 0 in tids, tids
assert all(e["dur"] >= 0 for e in ev if e.get("ph") == "X")
PY
grep -q '^step ' "$tmp/trace.log" || die "trace prints no step time"

# damaged plans: a clear message and exit 1
for cut in 0 7 40 500; do
    head -c "$cut" "$tmp/dp2.bin" >"$tmp/cut.bin"
    "$PLC" dump "$tmp/cut.bin" >/dev/null 2>"$tmp/err.txt"; rc=$?
    [ $rc -eq 1 ] || die "truncated plan ($cut bytes): exit $rc"
    grep -q 'error:' "$tmp/err.txt" || die "truncated plan: no message"
done
cp "$tmp/dp2.bin" "$tmp/flip.bin"
printf '\xff' | dd of="$tmp/flip.bin" bs=1 seek=3000 conv=notrunc 2>/dev/null
"$PLC" trace "$tmp/flip.bin" -o "$tmp/x.json" 2>"$tmp/err.txt"; rc=$?
[ $rc -eq 1 ] && grep -q 'CRC32\|damaged' "$tmp/err.txt" || die "flipped byte not caught (exit $rc)"
"$PLC" dump "$PLC_ROOT/examples/tiny.plan" 2>"$tmp/err.txt"; rc=$?
[ $rc -eq 1 ] && grep -q 'not a plan file' "$tmp/err.txt" || die "a spec passed as a plan: exit $rc"
echo "plan commands: ok"
