#!/usr/bin/env bash
# Issue 35's layouts of a mixture-of-experts model (ep = 1): a tiny MoE
# Llama (4 routed experts, top-2, a shared expert, a dense first layer, the
# load-balancing loss) runs 10 fp32 steps under dp, tp (the experts' FFN
# split like the dense MLP: etp = tp) with and without sp, pp, cp (the
# load-balancing loss's choices summed over a sequence's chunks), dp with
# ZeRO 1-3, full recompute and tp x pp x dp; every step's loss must match the single-rank run within
# 1e-5 relative, and a multi-rank plan run twice must give bitwise identical
# losses. Prints layout -> max relative deviation.
set -u
. "$(dirname "$0")/plrun_lib.bash"
need_mpi
STEPS=${MOE_STEPS:-10}
TOL=1e-5
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/moe.plan" <<PLAN
model "moe-equiv" {
  layers = 4
  hidden = 32
  ffn_hidden = 64
  heads = 4
  kv_heads = 2
  vocab = 64
  seq_len = 16
  experts = 4
  experts_per_token = 2
  expert_ffn_hidden = 32
  shared_experts = 1
  shared_expert_ffn_hidden = 32
  dense_layers = 1
  aux_loss = 0.01
}
cluster { gpu = "host-cpu"  nodes = 1  gpus_per_node = 8 }
train {
  global_batch = 8
  steps = $STEPS
  precision = fp32
  seed = 7
  data = synthetic
  lr.peak = 3e-3
  lr.warmup = 3
  grad_clip = 1.0
}
PLAN

failures=0
run_layout() { # run_layout NAME dp tp pp cp zero recompute micro_batch (a name ending _sp: sequence parallel)
    local name=$1 dp=$2 tp=$3 pp=$4 cp=$5 zero=$6 rc=$7 mb=$8 sp=off
    case $name in *_sp) sp=on ;; esac
    local ranks=$((dp * tp * pp * cp)) plan="$tmp/$name.bin" log="$tmp/$name.log"
    if ! "$PLC" compile "$tmp/moe.plan" -D cluster.gpus_per_node="$ranks" -D layout.dp="$dp" -D layout.tp="$tp" \
        -D layout.pp="$pp" -D layout.etp="$tp" -D layout.cp="$cp" -D layout.sp="$sp" -D layout.zero="$zero" -D layout.recompute="$rc" \
        -D layout.vpp=1 -D layout.schedule=1f1b -D layout.micro_batch="$mb" -o "$plan" >"$log" 2>&1; then
        echo "plc compile failed for $name:"; sed 's/^/    /' "$log" | tail -n 15
        failures=$((failures + 1)); return 1
    fi
    if ! run_ranks "$ranks" "$plan" --steps "$STEPS" --metrics "$tmp/$name.jsonl" >>"$log" 2>&1; then
        echo "plrun failed for $name ($ranks ranks):"; sed 's/^/    /' "$log" | tail -n 15
        failures=$((failures + 1)); return 1
    fi
    losses "$tmp/$name.jsonl" >"$tmp/$name.loss"
}

#        name            dp tp pp cp zero recompute mb
layouts=(
    "single          1  1  1  1  0    none      1"
    "single_mb2      1  1  1  1  0    none      2"
    "dp2             2  1  1  1  0    none      1"
    "dp2_zero1       2  1  1  1  1    none      1"
    "dp2_zero2       2  1  1  1  2    none      1"
    "dp2_zero3       2  1  1  1  3    none      1"
    "tp2             1  2  1  1  0    none      1"
    "tp2_sp          1  2  1  1  0    none      1"
    "pp2             1  1  2  1  0    none      1"
    "cp2             1  1  1  2  0    none      1"
    "cp2_dp2_zero2   2  1  1  2  2    none      1"
    "recompute_full  1  1  1  1  0    full      1"
    "tp2_pp2_dp2     2  2  2  1  0    none      1"
)
echo "MoE layouts against the single-rank loss curve ($STEPS steps, tolerance $TOL):"
for row in "${layouts[@]}"; do
    # shellcheck disable=SC2086
    run_layout $row || continue
    name=${row%% *}
    [ "$name" = single ] && continue
    dev=$(max_rel_dev "$tmp/$name.loss" "$tmp/single.loss")
    ok=$(awk -v d="$dev" -v t="$TOL" 'BEGIN { print (d != "inf" && d + 0 <= t + 0) ? 1 : 0 }')
    printf '  %-16s %12s  %s\n' "$name" "$dev" "$([ "$ok" = 1 ] && echo ok || echo FAIL)"
    [ "$ok" = 1 ] || failures=$((failures + 1))
done
# bitwise repeatable: the same multi-rank plan twice
if [ -f "$tmp/tp2_pp2_dp2.loss" ]; then
    run_ranks 8 "$tmp/tp2_pp2_dp2.bin" --steps "$STEPS" --metrics "$tmp/again.jsonl" >"$tmp/again.log" 2>&1 ||
        { sed 's/^/    /' "$tmp/again.log" | tail -n 15; die "plrun failed on the repeat run"; }
    losses "$tmp/again.jsonl" >"$tmp/again.loss"
    if cmp -s "$tmp/again.loss" "$tmp/tp2_pp2_dp2.loss"; then
        echo "  tp2_pp2_dp2 run twice: bitwise identical losses"
    else
        echo "  tp2_pp2_dp2 run twice: losses differ (FAIL)"; failures=$((failures + 1))
    fi
fi
[ "$failures" = 0 ] || die "$failures MoE layout check(s) failed"
echo "ok: every MoE layout on the single-rank curve"
