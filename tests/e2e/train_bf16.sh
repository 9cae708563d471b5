#!/usr/bin/env bash
# bf16 training on the CPU backend (bf16 parameters and activations, fp32
# gradients, master weights and optimizer state; docs/runtime.md,
# "Precision"). examples/tiny.plan compiled with -D train.precision=bf16
# runs 20 steps single-rank and under dp2, tp2 (bf16 all-reduce), tp2+sp
# (bf16 reduce-scatter), pp2 1f1b, dp2 zero 1 and cp4 (bf16 reduce-scatter
# of dK/dV over four ranks). Checks:
#   (a) the bf16 curve stays within TOL_FP32 relative of the fp32 curve of
#       the same spec, and is not the fp32 curve (bf16 really is in effect);
#   (b) the same bf16 plan run twice is bitwise identical (single, tp2 and
#       cp4, whose bf16 reductions go through comm_bf16.h's MPI operation);
#   (c) every layout stays within TOL_LAYOUT of the single-rank bf16 curve
#       (not bitwise: the reduction order differs), and a skipped bf16
#       reduce-scatter (PLC_FAULT_SKIP) is caught;
#   (d) the loss falls;
# and a checkpoint (fp32 master weights) resumes bitwise on the same plan.
# Then the GPT block (examples/tiny-gpt.plan) in bf16: single rank and
# tp2+sp against fp32 and against each other, the same tolerances.
# Measured on this spec (25 steps): bf16 vs fp32 at most 1.5e-4 relative,
# layouts vs single-rank bf16 at most 2.5e-5; the tolerances leave ~7x room.
set -u
. "$(dirname "$0")/plrun_lib.bash"
need_mpi
STEPS=20
TOL_FP32=1e-3
TOL_LAYOUT=2e-4
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# train NAME PRECISION RANKS DEFINES...: compile and run STEPS steps, losses in $tmp/NAME.loss
train() {
    local name=$1 prec=$2 ranks=$3
    shift 3
    "$PLC" compile "${SPEC:-$PLC_ROOT/examples/tiny.plan}" -D train.precision="$prec" -D cluster.gpus_per_node="$ranks" \
        "$@" -o "$tmp/$name.bin" >"$tmp/$name.clog" 2>&1 || { cat "$tmp/$name.clog"; die "plc compile failed for $name"; }
    run_ranks "$ranks" "$tmp/$name.bin" --steps "$STEPS" --metrics "$tmp/$name.jsonl" >"$tmp/$name.log" 2>&1 ||
        { tail -n 20 "$tmp/$name.log"; die "plrun failed for $name"; }
    losses "$tmp/$name.jsonl" >"$tmp/$name.loss"
    [ "$(wc -l <"$tmp/$name.loss")" -eq "$STEPS" ] || die "$name: expected $STEPS steps of metrics"
}
within() { awk -v d="$1" -v t="$2" 'BEGIN { exit !(d != "inf" && d + 0 <= t + 0) }'; }

single="-D layout.dp=1 -D layout.tp=1 -D layout.pp=1 -D layout.cp=1"
train fp32 fp32 1 $single
train bf16 bf16 1 $single
train bf16_again bf16 1 $single
grep -q 'precision=bf16' <("$PLC" dump "$tmp/bf16.bin") || die "the bf16 plan does not say precision=bf16"
grep -q ' param bf16 ' <("$PLC" dump "$tmp/bf16.bin") || die "the bf16 plan has no bf16 parameters"

# (a) against fp32
dev=$(max_rel_dev "$tmp/bf16.loss" "$tmp/fp32.loss")
echo "bf16 vs fp32, single rank: max relative deviation $dev (tolerance $TOL_FP32)"
within "$dev" "$TOL_FP32" || { paste "$tmp/bf16.loss" "$tmp/fp32.loss"; die "bf16 strays from fp32"; }
within "$dev" 1e-9 && die "the bf16 curve equals the fp32 curve: bf16 storage is not in effect"

# (b) bitwise repeatable
cmp -s "$tmp/bf16.loss" "$tmp/bf16_again.loss" || { paste "$tmp/bf16.loss" "$tmp/bf16_again.loss"; die "two runs of the bf16 plan differ"; }
echo "bf16 single rank: 2 runs bitwise identical"

# (c) layouts against single-rank bf16
failures=0
layout() { # layout NAME RANKS DEFINES...
    local name=$1 ranks=$2
    shift 2
    train "$name" bf16 "$ranks" "$@"
    local d
    d=$(max_rel_dev "$tmp/$name.loss" "$tmp/bf16.loss")
    printf '  %-10s max relative deviation from single-rank bf16 %s\n' "$name" "$d"
    within "$d" "$TOL_LAYOUT" || { echo "    exceeds $TOL_LAYOUT"; failures=$((failures + 1)); }
}
echo "bf16 layouts (tolerance $TOL_LAYOUT):"
layout dp2 2 -D layout.dp=2 -D layout.tp=1 -D layout.pp=1 -D layout.cp=1
layout tp2 2 -D layout.dp=1 -D layout.tp=2 -D layout.pp=1 -D layout.cp=1 -D layout.sp=false
layout tp2_sp 2 -D layout.dp=1 -D layout.tp=2 -D layout.pp=1 -D layout.cp=1 -D layout.sp=true
layout pp2_1f1b 2 -D layout.dp=1 -D layout.tp=1 -D layout.pp=2 -D layout.cp=1 -D layout.schedule=1f1b
layout dp2_zero1 2 -D layout.dp=2 -D layout.tp=1 -D layout.pp=1 -D layout.cp=1 -D layout.zero=1
layout cp4 4 -D layout.dp=1 -D layout.tp=1 -D layout.pp=1 -D layout.cp=4
[ "$failures" -eq 0 ] || die "$failures bf16 layout(s) stray from the single-rank curve"
"$PLC" dump "$tmp/tp2.bin" | grep -q 'ALLREDUCE L0\.m0\.' || die "tp2 was expected to all-reduce bf16 activations"
grep -q 'bf16' <("$PLC" dump "$tmp/tp2.bin" | grep ' L0\.m0\.attn_out ') || die "tp2's all-reduced activation is not bf16"

for again in tp2:2 cp4:4; do
    name=${again%:*} ranks=${again#*:}
    run_ranks "$ranks" "$tmp/$name.bin" --steps "$STEPS" --metrics "$tmp/${name}_again.jsonl" >"$tmp/${name}_again.log" 2>&1 ||
        { tail -n 20 "$tmp/${name}_again.log"; die "plrun failed for $name (again)"; }
    losses "$tmp/${name}_again.jsonl" >"$tmp/${name}_again.loss"
    cmp -s "$tmp/$name.loss" "$tmp/${name}_again.loss" || die "two runs of the $name bf16 plan differ"
done
echo "bf16 tp2 (MPI bf16 all-reduce) and cp4 (bf16 reduce-scatter over 4): 2 runs each bitwise identical"

# the tolerance catches a broken bf16 collective
PLC_FAULT_SKIP=REDUCE_SCATTER@tp run_ranks 2 "$tmp/tp2_sp.bin" --steps "$STEPS" --metrics "$tmp/fault.jsonl" \
    >"$tmp/fault.log" 2>&1 || { tail -n 20 "$tmp/fault.log"; die "plrun failed for the fault run"; }
losses "$tmp/fault.jsonl" >"$tmp/fault.loss"
dev=$(max_rel_dev "$tmp/fault.loss" "$tmp/bf16.loss")
within "$dev" "$TOL_LAYOUT" && die "skipping the bf16 reduce-scatter went unnoticed (deviation $dev)"
echo "fault check: tp2+sp without its bf16 reduce-scatter deviates by $dev"

# checkpoints hold the fp32 master weights: resuming at step 10 continues
# bitwise on the same plan, and within tolerance under dp2
"$PLRUN" "$tmp/bf16.bin" --steps 10 --checkpoint "$tmp/ck.safetensors" >"$tmp/ck.log" 2>&1 ||
    { tail -n 20 "$tmp/ck.log"; die "plrun --checkpoint failed"; }
"$PLRUN" "$tmp/bf16.bin" --steps "$STEPS" --resume "$tmp/ck.safetensors" --metrics "$tmp/resumed.jsonl" \
    >"$tmp/resumed.log" 2>&1 || { tail -n 20 "$tmp/resumed.log"; die "plrun --resume failed"; }
losses "$tmp/resumed.jsonl" >"$tmp/resumed.loss"
tail -n +11 "$tmp/bf16.loss" >"$tmp/bf16_tail.loss"
cmp -s "$tmp/resumed.loss" "$tmp/bf16_tail.loss" || { paste "$tmp/resumed.loss" "$tmp/bf16_tail.loss"; die "a resumed bf16 run differs"; }
run_ranks 2 "$tmp/dp2.bin" --steps "$STEPS" --resume "$tmp/ck.safetensors" --metrics "$tmp/resumed_dp2.jsonl" \
    >"$tmp/resumed_dp2.log" 2>&1 || { tail -n 20 "$tmp/resumed_dp2.log"; die "plrun --resume failed under dp2"; }
losses "$tmp/resumed_dp2.jsonl" >"$tmp/resumed_dp2.loss"
dev=$(max_rel_dev "$tmp/resumed_dp2.loss" "$tmp/bf16_tail.loss")
within "$dev" "$TOL_LAYOUT" || die "resuming the bf16 checkpoint under dp2 deviates by $dev"
echo "bf16 checkpoint at step 10: resumed bitwise (same plan), $dev under dp2"

# (d) the loss falls
first=$(head -n 1 "$tmp/bf16.loss")
last=$(tail -n 1 "$tmp/bf16.loss")
awk -v f="$first" -v l="$last" 'BEGIN { exit !(l < 0.9 * f) }' || die "bf16 loss did not fall: $first -> $last"
echo "bf16 loss falls: $first -> $last over $STEPS steps"
# the GPT block (examples/tiny-gpt.plan): LayerNorm, biases, GELU and the
# position table in bf16, single rank and tp2+sp, against fp32
SPEC=$PLC_ROOT/examples/tiny-gpt.plan train gpt_fp32 fp32 1 $single
SPEC=$PLC_ROOT/examples/tiny-gpt.plan train gpt_bf16 bf16 1 $single
SPEC=$PLC_ROOT/examples/tiny-gpt.plan train gpt_bf16_tp2_sp bf16 2 -D layout.tp=2 -D layout.sp=on
dev=$(max_rel_dev "$tmp/gpt_bf16.loss" "$tmp/gpt_fp32.loss")
within "$dev" "$TOL_FP32" || die "GPT bf16 strays from fp32 by $dev"
within "$dev" 1e-9 && die "the GPT bf16 curve equals the fp32 curve"
dev2=$(max_rel_dev "$tmp/gpt_bf16_tp2_sp.loss" "$tmp/gpt_bf16.loss")
within "$dev2" "$TOL_LAYOUT" || die "GPT bf16 tp2+sp strays from single-rank bf16 by $dev2"
echo "GPT block: bf16 vs fp32 $dev, tp2+sp vs single-rank bf16 $dev2"
echo "train_bf16: ok"
