#!/usr/bin/env bash
# plc solve / explain / scale end to end: rankings, YAML, pinned layouts,
# "no layout fits" (exit 2) against spec errors (exit 1), help texts.
set -u
plc="$PLC_BIN/plc"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
py=/usr/bin/python3
have_yaml=0
"$py" -c 'import yaml' 2>/dev/null && have_yaml=1

spec() { # spec FILE NODES LAYOUT-LINES...
    local f=$1 nodes=$2; shift 2
    {
        printf 'model "llama-13b" {\n  layers = 40\n  hidden = 5120\n  ffn_hidden = 13824\n  heads = 40\n  vocab = 128000\n  seq_len = 2048\n}\n'
        printf 'cluster {\n  gpu = "A100-SXM4-80GB"\n  nodes = %s\n  gpus_per_node = 8\n}\n' "$nodes"
        printf 'train {\n  global_batch = 2048\n  steps = 1000\n}\n'
        printf 'layout {\n'
        for l in "$@"; do printf '  %s\n' "$l"; done
        printf '}\n'
    } > "$f"
}

spec "$tmp/auto.plan" 8 "tp in {1, 2, 4}" "cp = 1" "micro_batch in {1, 2, 4}"
"$plc" solve "$tmp/auto.plan" > "$tmp/out.txt"; rc=$?
[ $rc -eq 0 ] || fail "solve exit $rc"
grep -q "searched" "$tmp/out.txt" || fail "no search statistics"
grep -qE '^ +1 +[0-9]+ +[0-9]+' "$tmp/out.txt" || fail "no ranked row"
[ "$(grep -cE '^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+' "$tmp/out.txt")" -eq 10 ] || fail "default --top is not 10"

"$plc" solve --top 3 --format yaml "$tmp/auto.plan" > "$tmp/out.yaml" || fail "yaml solve failed"
if [ $have_yaml -eq 1 ]; then
    "$py" - "$tmp/out.yaml" <<'PY' || fail "yaml output"
import sys, yaml
d = yaml.load(open(sys.argv[1]), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
L = d["layouts"]
assert len(L) == 3, len(L)
keys = "dp tp pp cp sp vpp micro_batch schedule recompute zero attention fused_rmsnorm fits memory_bytes step_time_s tokens_per_s mfu reason".split()
for l in L:
    for k in keys: assert k in l, k
    assert l["fits"] and l["memory_bytes"] <= d["memory_limit_bytes"]
    assert l["dp"] * l["tp"] * l["pp"] * l["cp"] == 64
    assert l["tp"] in (1, 2, 4) and l["cp"] == 1
    assert 0 < l["mfu"] < 1
assert [l["step_time_s"] for l in L] == sorted(l["step_time_s"] for l in L)
PY
fi

# --all: every candidate, non-fitting ones with a memory figure and a reason
spec "$tmp/some.plan" 8 "tp in {1, 2}" "pp in {1, 2}" "cp = 1" "zero = 1" "schedule = 1f1b" "attention = flash2" "micro_batch in {1, 2, 4, 8}"
"$plc" solve --all --format yaml "$tmp/some.plan" > "$tmp/all.yaml" || fail "solve --all"
if [ $have_yaml -eq 1 ]; then
    "$py" - "$tmp/all.yaml" <<'PY' || fail "--all output"
import sys, yaml
d = yaml.load(open(sys.argv[1]), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
L = d["layouts"]
bad = [l for l in L if l["valid"] and not l["fits"]]
assert bad and all(l["memory_bytes"] > d["memory_limit_bytes"] and "GiB" in l["reason"] for l in bad)
assert sum(1 for l in L if l["fits"]) == d["fitting"]
PY
fi

# every dimension pinned: that layout, fit or not (micro_batch 8 does not fit: exit 2)
pins=("dp = 64" "tp = 1" "pp = 1" "cp = 1" "sp = off" "vpp = 1" "schedule = 1f1b" "recompute = none" "zero = 1" "attention = flash2" "fused_rmsnorm = on")
spec "$tmp/pin.plan" 8 "${pins[@]}" "micro_batch = 8"
"$plc" solve "$tmp/pin.plan" > "$tmp/pin.txt"; rc=$?
[ $rc -eq 2 ] || fail "pinned non-fitting layout: exit $rc, want 2"
grep -q "pins every dimension" "$tmp/pin.txt" || fail "pinned layout not reported"
grep -q "over the" "$tmp/pin.txt" || fail "pinned layout: no memory reason"

# no layout fits: closest candidates and what would make them fit
spec "$tmp/small.plan" 1 "tp = 1" "pp = 1" "recompute = none" "zero = 0"
"$plc" solve "$tmp/small.plan" > "$tmp/nofit.txt"; rc=$?
[ $rc -eq 2 ] || fail "no layout: exit $rc, want 2"
grep -q "no layout fits" "$tmp/nofit.txt" || fail "no 'no layout fits'"
grep -q "closest candidates" "$tmp/nofit.txt" || fail "no closest candidates"
grep -q "what would make" "$tmp/nofit.txt" || fail "no suggestions"
grep -qE "zero = [123]( \(outside [^)]*\))?: fits|GPUs .*: fits|recompute = full( \(outside [^)]*\))?: fits" "$tmp/nofit.txt" ||
    fail "no working suggestion"

# a spec error is exit 1, not 2
printf 'model "x" {\n  layers = -3\n}\n' > "$tmp/bad.plan"
"$plc" solve "$tmp/bad.plan" > /dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "spec error: exit $rc, want 1"
"$plc" solve --top zero "$tmp/auto.plan" > /dev/null 2>&1; [ $? -eq 1 ] || fail "bad --top accepted"
"$plc" solve --format xml "$tmp/auto.plan" > /dev/null 2>&1; [ $? -eq 1 ] || fail "bad --format accepted"
"$plc" solve > /dev/null 2>&1; [ $? -eq 1 ] || fail "missing spec accepted"

# explain
"$plc" explain "$tmp/auto.plan" > "$tmp/explain.txt" || fail "explain failed"
for w in "winner:" "memory per rank" "step time" "compute" "best of each rejected region" "tp = " \
         "memory against the lowered plan"; do
    grep -q "$w" "$tmp/explain.txt" || fail "explain lacks '$w'"
done
# the solver's estimate against the lowered plan's exact peak, per stage:
# the plan's figure matches what plc compile reports for the same layout
"$plc" explain "$tmp/auto.plan" | grep -E '^  stage [0-9]+ +plan ' > "$tmp/explain_mem.txt"
[ -s "$tmp/explain_mem.txt" ] || fail "explain: no per-stage plan memory lines"
"$plc" compile "$tmp/auto.plan" -o "$tmp/auto.bin" | grep -E '^  stage [0-9]+ +plan ' > "$tmp/compile_mem.txt" \
    || fail "compile failed"
cmp -s "$tmp/explain_mem.txt" "$tmp/compile_mem.txt" || fail "explain and compile disagree on the plan's memory"
"$plc" explain "$tmp/small.plan" > /dev/null; [ $? -eq 2 ] || fail "explain without a fit: want exit 2"

# compile's gate is the plan's exact memory: Llama-3-70B pinned on 1024 H100
# fits the solver's estimate (60.03 GiB) but its stage-0 arena plus the fixed
# costs (61,586 MiB) exceeds the 75.4% limit (61,495 MiB): refused, exit 2,
# figures shown. (At the issue's 77.5%, 61,708 MiB, it fits since interleaved
# plans wait for their sends two units later, not at the end of the step:
# its stage-0 arena fell from 62,058 to 57,970 MiB.)
cat > "$tmp/l3.plan" <<'PLAN'
model "llama3-70b" {
  layers = 80
  hidden = 8192
  ffn_hidden = 28672
  heads = 64
  kv_heads = 8
  vocab = 128256
  seq_len = 8192
}
cluster {
  gpu = "H100-SXM5-80GB"
  nodes = 128
  gpus_per_node = 8
}
train {
  global_batch = 512
  steps = 1000
}
layout {
  dp = 16
  tp = 2
  pp = 8
  cp = 4
  sp = on
  vpp = 5
  micro_batch = 1
  schedule = interleaved
  recompute = none
  zero = 1
  attention = flash2
  fused_rmsnorm = on
  memory_limit = 75.4%
}
PLAN
"$plc" compile "$tmp/l3.plan" -o "$tmp/l3.bin" > "$tmp/l3.out" 2> "$tmp/l3.err"; rc=$?
[ $rc -eq 2 ] || { cat "$tmp/l3.err"; fail "pinned 70B layout over the limit: exit $rc, want 2"; }
grep -qE "stage 0 +arena .* over the limit" "$tmp/l3.err" || fail "no per-stage figures for the refused plan"
[ ! -e "$tmp/l3.bin" ] || fail "a plan that does not fit was written"
# with 85% it fits and is written; the summary says by how much
"$plc" compile "$tmp/l3.plan" -D layout.memory_limit=85% -o "$tmp/l3.bin" > "$tmp/l3.out" 2>&1 || fail "70B at 85%"
grep -qE "stage 0 +arena .* within the limit" "$tmp/l3.out" || fail "no fit figures in the summary"
# the vocabulary of GPT-2 (50257) solves and compiles with tp = 2: padded
"$plc" compile "$PLC_ROOT/examples/tiny.plan" -D model.vocab=50257 -D layout.tp=2 -o "$tmp/v.bin" > /dev/null \
    || fail "vocab 50257 with tp = 2"
# a missing output directory is the user's error (exit 1), not an internal one
"$plc" compile "$PLC_ROOT/examples/tiny.plan" -o "$tmp/no/such/dir/x.bin" > /dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || fail "missing output directory: exit $rc, want 1"

# scale: the curve over cluster sizes
"$plc" scale "$tmp/auto.plan" --gpus 8..256 > "$tmp/scale.txt" || fail "scale failed"
[ "$(grep -cE '^ +(8|16|32|64|128|256) ' "$tmp/scale.txt")" -eq 6 ] || fail "scale rows"
grep -qE "returns diminish|no diminishing" "$tmp/scale.txt" || fail "scale verdict"
"$plc" scale "$tmp/auto.plan" --gpus 9..4 > /dev/null 2>&1; [ $? -eq 1 ] || fail "bad range accepted"
"$plc" scale "$tmp/auto.plan" > /dev/null 2>&1; [ $? -eq 1 ] || fail "scale without --gpus accepted"

# the GPT block: GPT-2 small has Hugging Face's 124,439,808 parameters
# (tied embeddings, learned positions, biases, LayerNorm bias); GPT-3 175B
# on 1024 A100 solves
"$plc" solve --top 1 --format yaml "$PLC_ROOT/examples/gpt2-small.plan" > "$tmp/gpt2.yaml" || fail "solve gpt2-small"
grep -qx "parameters: 124439808" "$tmp/gpt2.yaml" || { grep parameters "$tmp/gpt2.yaml"; fail "GPT-2 small parameter count"; }
"$plc" solve --top 3 "$PLC_ROOT/examples/gpt3-175b-a100.plan" > "$tmp/gpt3.txt" || fail "solve gpt3-175b-a100"
grep -q "model gpt3-175b (174.6[0-9] B parameters)" "$tmp/gpt3.txt" || fail "GPT-3 175B parameter count"

# overrides through -D, and help texts
"$plc" solve -D layout.tp=2 --format yaml "$tmp/auto.plan" | grep -q "tp: 2" || fail "-D override"
for c in solve explain scale; do "$plc" $c --help | grep -q "usage: plc $c" || fail "$c --help"; done
echo "solver e2e: ok"
