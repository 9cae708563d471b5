#!/usr/bin/env bash
# "No layout fits" names its real reason (issues 39, 40): when no
# combination of the degrees is legal, the rule that removed them (no dp
# divides the batch) and the closest legal batch sizes and GPU counts, at
# any scale; when layouts are legal but too large, suggestions that keep
# the spec's pins: each "KEY = VALUE: fits" holds when applied.
set -u
plc="$PLC_BIN/plc"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

spec() { # spec FILE NODES BATCH LAYOUT-LINES...
    local f=$1 nodes=$2 batch=$3; shift 3
    {
        printf 'model "llama-7b" {\n  layers = 32\n  hidden = 4096\n  ffn_hidden = 11008\n  heads = 32\n  vocab = 32000\n  seq_len = 2048\n}\n'
        printf 'cluster {\n  gpu = "A100-SXM4-80GB"\n  nodes = %s\n  gpus_per_node = 8\n}\n' "$nodes"
        printf 'train {\n  global_batch = %s\n  steps = 100\n}\n' "$batch"
        printf 'layout {\n'
        for l in "$@"; do printf '  %s\n' "$l"; done
        printf '}\n'
    } > "$f"
}

# 296 GPUs (37 nodes), 128 sequences, no layout block values: no dp
# divides the batch (the rest, a multiple of 37, is more stages than the 32
# layers; on 24 GPUs plrun runs pp 3 over them, dp 8)
spec "$tmp/gpus24.plan" 37 128
"$plc" solve "$tmp/gpus24.plan" > "$tmp/out24.txt"; rc=$?
[ $rc -eq 2 ] || fail "296 GPUs: exit $rc, want 2"
grep -q "no layout that the layout block allows is legal on 296 GPUs" "$tmp/out24.txt" ||
    fail "296 GPUs: no statement of what is illegal"
grep -qE "e\.g\. dp = [0-9]+ does not divide global_batch = 128 sequences" "$tmp/out24.txt" || fail "296 GPUs: no batch reason"
grep -q "contradict" "$tmp/out24.txt" && fail "296 GPUs: blames a layout block the spec does not have"
grep -q "^closest legal alternatives:" "$tmp/out24.txt" || fail "296 GPUs: no alternatives"
# every alternative offered is legal: plc check accepts it with the degrees it names
alt=$(grep -oE "global_batch = [0-9]+ \(dp [0-9]+, tp [0-9]+, pp [0-9]+, cp [0-9]+\)" "$tmp/out24.txt" | head -1)
[ -n "$alt" ] || fail "296 GPUs: no batch alternative"
read -r b dp tp pp cp < <(echo "$alt" | sed -E 's/global_batch = ([0-9]+) \(dp ([0-9]+), tp ([0-9]+), pp ([0-9]+), cp ([0-9]+)\)/\1 \2 \3 \4 \5/')
"$plc" check -q "$tmp/gpus24.plan" -D train.global_batch="$b" -D layout.dp="$dp" -D layout.tp="$tp" \
    -D layout.pp="$pp" -D layout.cp="$cp" || fail "296 GPUs: the alternative '$alt' is not legal"
nodes=$(grep -oE "nodes = [0-9]+ \([0-9]+ GPUs" "$tmp/out24.txt" | head -1 | grep -oE "[0-9]+" | head -1)
[ -n "$nodes" ] || fail "296 GPUs: no GPU-count alternative"
"$plc" solve "$tmp/gpus24.plan" -D cluster.nodes="$nodes" > /dev/null || fail "296 GPUs: nodes = $nodes does not solve"

# the same for a bot: plc solve --format yaml names the rule
"$plc" solve --format yaml "$tmp/gpus24.plan" > "$tmp/out24.yaml" 2>/dev/null; rc=$?
[ $rc -eq 2 ] || fail "296 GPUs yaml: exit $rc, want 2"
grep -q '^- rule: "DP_BATCH"' "$tmp/out24.yaml" || fail "296 GPUs yaml: no invalid_by_rule DP_BATCH"
grep -qE '^  example: "dp = [0-9]+ does not divide global_batch = 128 sequences"' "$tmp/out24.yaml" ||
    fail "296 GPUs yaml: no example"

# 100,000 GPUs: check says ok (the spec pins nothing wrong), compile names why
spec "$tmp/huge.plan" 12500 1024 "tp in {1, 2, 4, 8}" "pp in {1, 2, 4, 8, 16}"
"$plc" check -q "$tmp/huge.plan" || fail "100,000 GPUs: check failed"
"$plc" compile "$tmp/huge.plan" -o "$tmp/huge.bin" > "$tmp/outhuge.txt" 2>&1; rc=$?
[ $rc -eq 2 ] || fail "100,000 GPUs: compile exit $rc, want 2"
grep -q "legal on 100000 GPUs" "$tmp/outhuge.txt" || fail "100,000 GPUs: no reason"
grep -qE "does not divide global_batch = 1024" "$tmp/outhuge.txt" || fail "100,000 GPUs: no batch reason"
grep -qE "nodes = [0-9]+ \([0-9]+ GPUs" "$tmp/outhuge.txt" || fail "100,000 GPUs: no GPU count offered"
"$plc" check -q --max-memory 80% "$tmp/huge.plan" > "$tmp/gatehuge.txt" 2>&1; rc=$?
[ $rc -eq 2 ] || fail "100,000 GPUs: check with a gate exit $rc, want 2"
grep -qE "does not divide global_batch = 1024" "$tmp/gatehuge.txt" || fail "100,000 GPUs: check with a gate gives no reason"

# too large with pins: every suggestion that fits fits when applied
spec "$tmp/pins.plan" 1 2048 "tp = 1" "pp = 1" "recompute = none" "zero = 0" "attention = fused"
"$plc" solve "$tmp/pins.plan" > "$tmp/outpins.txt"; rc=$?
[ $rc -eq 2 ] || fail "pins: exit $rc, want 2"
grep -q "no layout fits in" "$tmp/outpins.txt" || fail "pins: not a memory no-fit"
grep -q "recompute=none" "$tmp/outpins.txt" || fail "pins: the closest candidate drops recompute = none"
grep -q "attention=fused" "$tmp/outpins.txt" || fail "pins: the closest candidate drops attention = fused"
n=0
while read -r key val; do
    "$plc" solve "$tmp/pins.plan" -D "layout.$key=$val" > "$tmp/applied.txt"; rc=$?
    [ $rc -eq 0 ] || fail "pins: '$key = $val' said fits, solve with it exits $rc"
    n=$((n + 1))
done < <(grep -E '^  - (zero|recompute|micro_batch|sp) = [a-z0-9]+( \(outside [^)]*\))?: fits' "$tmp/outpins.txt" |
         sed -E 's/^  - ([a-z_]+) = ([a-z0-9]+).*/\1 \2/')
[ $n -gt 0 ] || fail "pins: no single-key suggestion fits (nothing checked)"
echo "nofit_reasons e2e: ok ($n suggestions applied)"
