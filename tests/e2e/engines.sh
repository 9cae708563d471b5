#!/usr/bin/env bash
# train.engine end to end: a spec solved and explained under each engine
# (the engine and its profile named, only what the engine runs ranked),
# pinned values the engine does not run (exit 1, at the value), compile
# refused for an engine other than plrun, recompute block / every chosen
# when memory is short, and a bad or missing profiles file.
set -u
. "$(dirname "$0")/plc_lib.bash"
plc=$PLC
fail() { die "$@"; }
py=/usr/bin/python3

cat > "$tmp/s.plan" <<'EOF'
model "llama-13b" {
  layers     = 40
  hidden     = 5120
  ffn_hidden = 13824
  heads      = 40
  vocab      = 128000
  seq_len    = 2048
}
cluster {
  gpu           = "A100-SXM4-80GB"
  nodes         = 4
  gpus_per_node = 8
}
train {
  global_batch = 1024
  steps        = 100
}
layout {
  tp in {1, 2, 4}
  pp in {1, 2}
  cp = 1
}
EOF

declare -A describes=([plrun]="plc's runtime, exact static plan" [megatron]="Megatron-Core 0.19 profile"
                      [megatron_r0_8]="Megatron-Core r0.8 profile" [fsdp2]="torchtitan FSDP2 profile")
for e in plrun megatron megatron_r0_8 fsdp2; do
    "$plc" solve --all "$tmp/s.plan" -D train.engine=$e > "$tmp/$e.txt" 2>&1 || { cat "$tmp/$e.txt"; fail "solve under $e"; }
    grep -qF "engine: $e (${describes[$e]})" "$tmp/$e.txt" || { head -3 "$tmp/$e.txt"; fail "$e not named with its profile"; }
    "$plc" explain "$tmp/s.plan" -D train.engine=$e > "$tmp/$e.explain" 2>&1 || fail "explain under $e"
    grep -qF "engine: $e (${describes[$e]})" "$tmp/$e.explain" || fail "explain does not name $e"
    if [ $e != plrun ]; then # no plrun plan to compare the memory with
        grep -qF "the plan's exact memory is not available: plans are plrun's, and train.engine = $e" "$tmp/$e.explain" ||
            fail "explain lowered a plan for $e"
        # the allocator share of the profile's alloc_overhead (0.2) against the margin to the limit
        grep -qE "^memory's least certain part: the allocator share, [0-9.]+ GiB on stage [0-9]+ \(alloc_overhead 0\.20 .* the peak is [0-9.]+ GiB (below|above) the limit" "$tmp/$e.explain" ||
            fail "explain under $e does not name the allocator share"
    else
        ! grep -q "least certain part" "$tmp/$e.explain" || fail "explain under plrun names an allocator share"
    fi
    "$plc" solve --top 3 --format yaml "$tmp/s.plan" -D train.engine=$e > "$tmp/$e.yaml" || fail "yaml solve under $e"
    "$py" - "$tmp/$e.yaml" "$e" <<'PY' || fail "yaml under $e"
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
e = sys.argv[2]
assert d["engine"] == e, d["engine"]
assert d["engine_profile"], d
for l in d["layouts"]:
    if e in ("megatron", "megatron_r0_8"):
        assert l["schedule"] in ("1f1b", "interleaved") and l["zero"] in (0, 1), l
        assert l["attention"] in ("fused", "flash2") and l["fused_rmsnorm"] == "on", l
    if e == "fsdp2":
        assert l["zero"] in (2, 3) and l["attention"] == "flash2", l
    assert "recompute_layers" in l, l
PY
done
# every row of --all is a layout the engine runs
grep -E '^ +[0-9]+ ' "$tmp/megatron.txt" | grep -qE ' (gpipe|layered|modular) ' && fail "megatron ranked a schedule it does not run"
grep -E '^ +[0-9]+ ' "$tmp/fsdp2.txt" | awk '{print $12}' | grep -qvE '^[23]$' && fail "fsdp2 ranked a ZeRO stage it does not run"

# a pinned value the engine does not run: exit 1, at the value, with what it runs
"$plc" check "$tmp/s.plan" -D train.engine=megatron -D layout.schedule=gpipe > "$tmp/pin.txt" 2>&1; rc=$?
[ $rc -eq 1 ] || fail "pinned gpipe under megatron: exit $rc"
grep -qF "error: engine megatron does not run schedule = gpipe; it runs 1f1b, interleaved" "$tmp/pin.txt" || { cat "$tmp/pin.txt"; fail "message"; }
"$plc" solve "$tmp/s.plan" -D train.engine=fsdp2 -D 'layout.zero in 0..1' > "$tmp/pin2.txt" 2>&1; rc=$?
[ $rc -eq 1 ] || fail "zero 0..1 under fsdp2: exit $rc"
grep -qF "engine fsdp2 runs no value zero allows; it runs 2, 3" "$tmp/pin2.txt" || { cat "$tmp/pin2.txt"; fail "range message"; }
"$plc" check "$tmp/s.plan" -D layout.recompute=block -D layout.recompute_layers=2 > "$tmp/pin3.txt" 2>&1; rc=$?
[ $rc -eq 1 ] || fail "block under plrun: exit $rc"
grep -qF "engine plrun does not run recompute = block; it runs none, selective, full" "$tmp/pin3.txt" || { cat "$tmp/pin3.txt"; fail "plrun block"; }
"$plc" check "$tmp/s.plan" -D train.engine=megatron -D layout.recompute=full -D layout.recompute_layers=2 > "$tmp/pin4.txt" 2>&1
grep -qF "recompute_layers = 2 needs recompute = block or every, not full" "$tmp/pin4.txt" || { cat "$tmp/pin4.txt"; fail "recompute_layers rule"; }

# compile is plrun's
"$plc" compile "$tmp/s.plan" -D train.engine=megatron -o "$tmp/x.bin" > "$tmp/c.txt" 2>&1; rc=$?
[ $rc -eq 1 ] || fail "compile under megatron: exit $rc"
grep -qF "train.engine = megatron, but a plan runs on plrun" "$tmp/c.txt" || { cat "$tmp/c.txt"; fail "compile message"; }
[ -e "$tmp/x.bin" ] && fail "compile wrote a plan for megatron"

# short of memory: block recompute with the fewest layers that fit
"$plc" solve --format yaml --top 1 "$tmp/s.plan" -D train.engine=megatron -D layout.tp=2 -D layout.pp=1 \
    -D layout.zero=1 -D layout.micro_batch=4 -D layout.recompute=block -D layout.memory_limit=80% > "$tmp/blk.yaml" || fail "block solve"
"$py" - "$tmp/blk.yaml" <<'PY' || fail "block choice"
import sys, yaml
l = yaml.safe_load(open(sys.argv[1]))["layouts"][0]
assert l["recompute"] == "block" and 1 <= l["recompute_layers"] < 40, l
PY
k=$("$py" -c 'import sys,yaml; print(yaml.safe_load(open(sys.argv[1]))["layouts"][0]["recompute_layers"])' "$tmp/blk.yaml")
if [ "$k" -gt 1 ]; then # one layer fewer does not fit
    "$plc" solve "$tmp/s.plan" -D train.engine=megatron -D layout.tp=2 -D layout.pp=1 -D layout.zero=1 \
        -D layout.micro_batch=4 -D layout.recompute=block -D layout.recompute_layers=$((k - 1)) -D layout.memory_limit=80% \
        > "$tmp/k1.txt" 2>&1; rc=$?
    [ $rc -eq 2 ] || { cat "$tmp/k1.txt"; fail "block:$((k - 1)) should not fit (exit $rc)"; }
fi
# torchtitan checkpoints every block, chosen ops or to a budget, not every
# n-th layer: the fsdp2 profile does not run recompute = every; a profiles
# file whose fsdp2 does is searched for its n
"$plc" solve "$tmp/s.plan" -D train.engine=fsdp2 -D layout.recompute=every > "$tmp/every.txt" 2>&1; rc=$?
[ $rc -eq 1 ] && grep -qF "engine fsdp2 does not run recompute = every" "$tmp/every.txt" || { cat "$tmp/every.txt"; fail "fsdp2 every: exit $rc"; }
sed '/^fsdp2:/,$s/values: \[none, selective, full\]/values: [none, selective, full, every]/' "$PLC_ROOT/examples/engines.yaml" > "$tmp/every.yaml.in"
cmp -s "$PLC_ROOT/examples/engines.yaml" "$tmp/every.yaml.in" && fail "test premise: the sed changed nothing"
PLC_ENGINES="$tmp/every.yaml.in" "$plc" solve --format yaml --top 1 "$tmp/s.plan" -D train.engine=fsdp2 -D layout.tp=2 -D layout.pp=1 \
    -D layout.zero=2 -D layout.micro_batch=4 -D layout.recompute=every -D layout.memory_limit=80% > "$tmp/every.yaml" || fail "every solve"
"$py" - "$tmp/every.yaml" <<'PY' || fail "every choice"
import sys, yaml
l = yaml.safe_load(open(sys.argv[1]))["layouts"][0]
assert l["recompute"] == "every" and l["recompute_layers"] >= 2, l
PY

# the profiles file: a missing one, one without a source
PLC_ENGINES="$tmp/none.yaml" "$plc" check "$tmp/s.plan" > "$tmp/m.txt" 2>&1; rc=$?
[ $rc -eq 1 ] || fail "missing profiles file: exit $rc"
grep -q "none.yaml" "$tmp/m.txt" || { cat "$tmp/m.txt"; fail "missing file not named"; }
sed 's/^\(    source: "Megatron-Core TransformerConfig.bias_activation_fusion\).*$/    source: ""/' \
    "$PLC_ROOT/examples/engines.yaml" > "$tmp/bad.yaml"
PLC_ENGINES="$tmp/bad.yaml" "$plc" check "$tmp/s.plan" -D train.engine=megatron > "$tmp/b.txt" 2>&1; rc=$?
[ $rc -eq 1 ] || fail "unsourced figure: exit $rc"
grep -qE "bad.yaml:[0-9]+:[0-9]+: error: 'fused_swiglu' lacks its source" "$tmp/b.txt" || { cat "$tmp/b.txt"; fail "unsourced message"; }
echo "engines e2e: ok"
