#!/usr/bin/env bash
# Unequal stages under plrun and the pp values plc explain says are missing
# (issue 39): a 126-layer model (Meta's Llama 3.1 405B on 16384 GPUs,
# examples/llama405b-h100.plan) is solved with pp 4, 8 and 16, which do not
# divide its layers; on a 6-layer spec on 12 GPUs pp 4 is searched, and
# plc explain names, for every pp from 1 to the most stages that no region
# holds, the rule that removed it, in text and in YAML.
set -u
plc="$PLC_BIN/plc"
ex="$PLC_ROOT/examples"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# 405B: pp 4, 8, 16 are legal (31, 32, 32, 31; 15, 16 x 6, 15; 7, 8 x 14, 7) and solved
for pp in 4 8 16; do
    "$plc" check -q "$ex/llama405b-h100.plan" -D layout.pp=$pp || fail "405B: pp = $pp refused by plc check"
    "$plc" solve "$ex/llama405b-h100.plan" -D layout.pp=$pp >"$tmp/s$pp.txt" || fail "405B: pp = $pp: no layout"
    awk '$1 == 1 { print $4 }' "$tmp/s$pp.txt" | grep -qx "$pp" || fail "405B: pp = $pp is not the winner's pp"
done
# Meta's layout: tp 8, pp 16, interleaved (virtual stages 3, 4 x 30, 3:
# ranks 7, 8 x 14, 7) compiles, the plan's memory the solver's on every stage
"$plc" compile "$ex/llama405b-h100.plan" -D layout.tp=8 -D layout.pp=16 -D layout.cp=1 \
    -D layout.schedule=interleaved -D layout.vpp=2 -o "$tmp/meta.bin" >"$tmp/meta.txt" 2>&1 ||
    fail "405B: tp 8, pp 16, vpp 2 interleaved does not compile: $(tail -3 "$tmp/meta.txt")"
grep -q "^plan       16384 ranks, 16 programs" "$tmp/meta.txt" || fail "405B: not 16 programs"
grep -E "^  stage [0-9]+ +plan " "$tmp/meta.txt" | grep -vq "solver .*(-0.0%)\|solver .*(+0.0%)" &&
    fail "405B: a stage's estimate differs from its plan: $(grep -E '^  stage [0-9]+ +plan ' "$tmp/meta.txt")"

spec() { # spec FILE LAYOUT-LINES...
    local f=$1; shift
    {
        printf 'model "tiny" {\n  layers = 6\n  hidden = 64\n  ffn_hidden = 128\n  heads = 4\n  kv_heads = 2\n'
        printf '  vocab = 128\n  seq_len = 32\n}\n'
        printf 'cluster {\n  gpu = "host-cpu"\n  nodes = 1\n  gpus_per_node = 12\n}\n'
        printf 'train {\n  global_batch = 24\n  steps = 10\n  precision = fp32\n  data = synthetic\n}\n'
        printf 'layout {\n'
        for l in "$@"; do printf '  %s\n' "$l"; done
        printf '}\n'
    } >"$f"
}

# no layout block: pp 4 (1, 2, 2, 1) is searched; 5 and 7..12 are not, each with its rule
spec "$tmp/free.plan"
"$plc" explain "$tmp/free.plan" >"$tmp/free.txt" || fail "explain of the 6-layer spec failed"
grep -qx "pp from 1 to 12 (the most stages): searched 1, 2, 3, 4, 6; the others removed by:" "$tmp/free.txt" ||
    fail "6 layers: the searched pp values are not 1, 2, 3, 4, 6: $(grep '^pp from' "$tmp/free.txt")"
grep -qx "  GPU_COUNT, pp = 5: pp = 5 does not divide the 12 GPUs (nodes \* gpus_per_node)" "$tmp/free.txt" ||
    fail "6 layers: pp 5 without its rule"
grep -qx "  PP_LAYERS, pp = 7, 8, 9, 10, 11, 12: e.g. pp = 7 is more than layers = 6: every stage needs a layer" \
    "$tmp/free.txt" || fail "6 layers: pp 7-12 without their rule"

grep -qx "  - 1 by PP_LAYERS, e.g. pp = 12 is more than layers = 6: every stage needs a layer" "$tmp/free.txt" ||
    fail "6 layers: the rules' counts do not name PP_LAYERS"

# interleaved with vpp 2 pinned: pp 1 and pp 4, 6 removed by the rules the pinned layout breaks
spec "$tmp/il.plan" "pp in 1..12" "schedule = interleaved" "vpp = 2" "tp = 1" "cp = 1"
"$plc" explain "$tmp/il.plan" >"$tmp/il.txt" || fail "explain of the interleaved spec failed"
grep -q "^pp from 1 to 12 (the most stages): searched 2, 3; the others removed by:" "$tmp/il.txt" ||
    fail "interleaved: searched pp values: $(grep '^pp from' "$tmp/il.txt")"
grep -qx "  INTERLEAVED_PP, pp = 1: the winner moved there: the interleaved schedule needs pp >= 2" "$tmp/il.txt" ||
    fail "interleaved: pp 1 without its rule"
grep -q "^  VPP_LAYERS, pp = 4, 6: e.g. the winner moved there: pp \* vpp = 8 does not divide layers = 6" "$tmp/il.txt" ||
    fail "interleaved: pp 4, 6 without their rule"
# every pp from 1 to 12 is either searched or has a reason
n=$(sed -n '/^pp from/,/^best of each/p' "$tmp/il.txt" | grep -oE "pp = [0-9, ]+" | grep -oE "[0-9]+" | sort -un | wc -l)
s=$(grep '^pp from' "$tmp/il.txt" | sed 's/.*searched //; s/;.*//' | tr ',' '\n' | grep -c '[0-9]')
[ $((n + s)) -eq 12 ] || fail "interleaved: $n values with a reason and $s searched, not 12"

# the same in YAML
"$plc" explain --format yaml "$tmp/il.plan" >"$tmp/il.yaml" || fail "explain --format yaml failed"
/usr/bin/python3 - "$tmp/il.yaml" <<'PY' || fail "explain --format yaml: pp_values"
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
pv = d["pp_values"]
assert pv["most"] == 12 and pv["searched"] == [2, 3], pv
by = {r["by"]: r for r in pv["removed"]}
assert by["INTERLEAVED_PP"]["first"] == 1 and by["INTERLEAVED_PP"]["count"] == 1, by
assert by["VPP_LAYERS"]["first"] == 4 and by["VPP_LAYERS"]["count"] == 2, by
assert by["GPU_COUNT"]["first"] == 5 and by["PP_LAYERS"]["count"] == 6, by
PY
echo "explain_pp: 405B solved with pp 4, 8, 16 and compiled with Meta's layout; every missing pp named with its rule"
