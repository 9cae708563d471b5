#!/usr/bin/env bash
# Issue 36's runtime acceptance: the zero-bubble schedules (zb_h1, zb_h2,
# zb_v, dualpipe_v: backwards split into B and W units by the lowering)
# train a tiny Llama on plrun's CPU backend with 1F1B's losses. For pp 2
# and 4 (and pp 2 with dp 2 and with tp 2), every step's loss of 20 fp32
# steps (the Llama block; tied embeddings and the GPT block of
# examples/tiny-gpt.plan on pp 2)
# must match the same layout under 1F1B within 1e-6 relative; one
# plan run twice must give bitwise identical losses; and each plan file
# must stay within 3x the size of 1F1B's (the orders fold into loops, not
# units unrolled per micro-batch); plc trace --svg draws the W units in
# their own colour. Prints layout -> max relative deviation
# and plan size against 1F1B's.
set -u
. "$(dirname "$0")/plrun_lib.bash"
need_mpi
STEPS=${ZB_STEPS:-20}
TOL=1e-6
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/zb.plan" <<PLAN
model "zb" {
  layers = 8
  hidden = 32
  ffn_hidden = 64
  heads = 4
  kv_heads = 2
  vocab = 64
  seq_len = 16
  tie_embeddings = false
}
cluster {
  gpu = "host-cpu"
  nodes = 1
  gpus_per_node = 8
}
train {
  global_batch = 8
  steps = $STEPS
  precision = fp32
  seed = 5
  data = synthetic
  lr.peak = 3e-3
  lr.warmup = 3
  grad_clip = 1.0
}
PLAN
# tied embeddings: zb_v and dualpipe_v hold both ends on rank 0 (no all-reduce of the copies)
sed 's/tie_embeddings = false/tie_embeddings = true/' "$tmp/zb.plan" >"$tmp/tied.plan"

failures=0
# the GPT block (biases, LayerNorm, learned positions): examples/tiny-gpt.plan
sed "s/^\( *steps *=\).*/\1 $STEPS/" "$PLC_ROOT/examples/tiny-gpt.plan" >"$tmp/gpt.plan"

# run NAME dp tp pp schedule [SPEC]
run() {
    local name=$1 dp=$2 tp=$3 pp=$4 sched=$5 spec=${6:-zb}
    local ranks=$((dp * tp * pp)) log="$tmp/$name.log"
    if ! "$PLC" compile "$tmp/$spec.plan" -D cluster.gpus_per_node="$ranks" -D layout.dp="$dp" -D layout.tp="$tp" \
        -D layout.pp="$pp" -D layout.cp=1 -D layout.sp=off -D layout.zero=0 -D layout.recompute=none -D layout.vpp=1 \
        -D layout.schedule="$sched" -D layout.micro_batch=1 -o "$tmp/$name.bin" >"$log" 2>&1; then
        echo "plc compile failed for $name:"; sed 's/^/    /' "$log" | tail -n 15
        failures=$((failures + 1)); return 1
    fi
    if ! run_ranks "$ranks" "$tmp/$name.bin" --steps "$STEPS" --metrics "$tmp/$name.jsonl" >>"$log" 2>&1; then
        echo "plrun failed for $name ($ranks ranks):"; sed 's/^/    /' "$log" | tail -n 15
        failures=$((failures + 1)); return 1
    fi
    losses "$tmp/$name.jsonl" >"$tmp/$name.loss"
}

# check NAME REFERENCE: losses within TOL, plan within 3x the reference's size
check() {
    local name=$1 ref=$2 dev size refsize ok
    dev=$(max_rel_dev "$tmp/$name.loss" "$tmp/$ref.loss")
    size=$(wc -c <"$tmp/$name.bin")
    refsize=$(wc -c <"$tmp/$ref.bin")
    ok=$(awk -v d="$dev" -v t="$TOL" -v s="$size" -v r="$refsize" \
        'BEGIN { print (d != "inf" && d + 0 <= t + 0 && s <= 3 * r) ? 1 : 0 }')
    printf '  %-20s %12s  plan %7d bytes (1f1b %7d)  %s\n' "$name" "$dev" "$size" "$refsize" \
        "$([ "$ok" = 1 ] && echo ok || echo FAIL)"
    [ "$ok" = 1 ] || failures=$((failures + 1))
}

echo "zero-bubble schedules against 1F1B (max relative loss deviation over $STEPS steps, tolerance $TOL):"
for layout in "pp2 1 1 2 zb" "pp4 1 1 4 zb" "dp2_pp2 2 1 2 zb" "tp2_pp2 1 2 2 zb" "gpt_pp2 1 1 2 gpt" "tied_pp2 1 1 2 tied"; do
    set -- $layout
    name=$1 dp=$2 tp=$3 pp=$4 spec=$5
    run "${name}_1f1b" "$dp" "$tp" "$pp" 1f1b "$spec" || continue
    scheds="zb_h1 zb_h2 zb_v dualpipe_v"
    [ "$name" = pp2 ] || [ "$name" = pp4 ] || scheds="zb_h1 zb_v"
    [ "$name" = tied_pp2 ] && scheds="zb_v dualpipe_v"
    for s in $scheds; do
        run "${name}_$s" "$dp" "$tp" "$pp" "$s" "$spec" && check "${name}_$s" "${name}_1f1b"
    done
done

# bitwise repeatable: the same zb_v plan run again
if [ -f "$tmp/pp4_zb_v.bin" ] && run_ranks 4 "$tmp/pp4_zb_v.bin" --steps "$STEPS" --metrics "$tmp/again.jsonl" \
    >"$tmp/again.log" 2>&1; then
    losses "$tmp/again.jsonl" >"$tmp/again.loss"
    if cmp -s "$tmp/again.loss" "$tmp/pp4_zb_v.loss"; then
        echo "  pp4_zb_v run twice: bitwise identical losses"
    else
        echo "  pp4_zb_v run twice: losses differ: FAIL"; failures=$((failures + 1))
    fi
else
    echo "  pp4_zb_v second run failed"; failures=$((failures + 1))
fi

# plc trace --svg draws the W units in their own colour, in the legend only where the schedule splits
if "$PLC" trace --svg "$tmp/pp2_zb_h1.bin" -o "$tmp/zb.svg" >/dev/null 2>&1 &&
    "$PLC" trace --svg "$tmp/pp2_1f1b.bin" -o "$tmp/1f1b.svg" >/dev/null 2>&1 &&
    grep -q 'weight gradients (W)' "$tmp/zb.svg" && [ "$(grep -c '#8c564b' "$tmp/zb.svg")" -ge 3 ] &&
    ! grep -q 'weight gradients (W)' "$tmp/1f1b.svg" && ! grep -q '#8c564b' "$tmp/1f1b.svg"; then
    echo "  plc trace --svg: W drawn apart under zb_h1 ($(grep -c '#8c564b' "$tmp/zb.svg") shapes), not under 1f1b"
else
    echo "  plc trace --svg: W not drawn apart: FAIL"; failures=$((failures + 1))
fi

# the rulebook: zb_v needs 2 pp equal chunks of the layers
if "$PLC" compile "$tmp/zb.plan" -D cluster.gpus_per_node=8 -D layout.dp=1 -D layout.tp=1 -D layout.pp=8 -D layout.cp=1 \
    -D layout.schedule=zb_v -o "$tmp/bad.bin" >"$tmp/bad.log" 2>&1; then
    echo "  zb_v on pp 8 with 8 layers compiled: FAIL"; failures=$((failures + 1))
elif ! grep -q "cuts the layers into 2 \* pp = 16 equal chunks" "$tmp/bad.log"; then
    echo "  zb_v on pp 8: wrong refusal:"; sed 's/^/    /' "$tmp/bad.log"; failures=$((failures + 1))
else
    echo "  zb_v on pp 8 with 8 layers: refused (rule zb_v_layers)"
fi

[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all zero-bubble layouts match 1F1B"
