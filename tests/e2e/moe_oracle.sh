#!/usr/bin/env bash
# Issue 35's oracle: a tiny mixture-of-experts Llama trained by plrun and
# replayed by the PyTorch oracle (tests/oracle/torch_oracle.py, its
# moe_ffn: torch.topk, per-expert index masks, the per-sequence
# load-balancing loss), loss, lr and grad norm of 10 steps and the first
# step's gradients within 1e-6 relative: softmax routing with a shared
# expert on one rank and on tp=2 x pp=2; sigmoid routing with a route scale,
# a dense first layer and every other layer MoE. Then a capacity factor of
# 0.5: the copies over capacity are dropped and counted in the metrics (at
# least R k - E C per layer and micro-batch), and a dropless run reports no
# drop count at all.
set -u
. "$(dirname "$0")/plrun_lib.bash"
[ -x /usr/bin/python3 ] || skip "skipped: /usr/bin/python3 not found"
/usr/bin/python3 -c 'import torch, numpy' 2>/dev/null || skip "skipped: python3-torch or numpy not installed"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
write_spec() { # write_spec FILE LAYERS [MOE LINES]
    cat >"$1" <<PLAN
model "moe-oracle" {
  layers = $2
  hidden = 32
  ffn_hidden = 64
  heads = 4
  kv_heads = 2
  vocab = 64
  seq_len = 16
  experts = 4
  experts_per_token = 2
  expert_ffn_hidden = 32
$3  aux_loss = 0.01
}
cluster { gpu = "host-cpu"  nodes = 1  gpus_per_node = 4 }
train {
  global_batch = 4
  steps = 10
  precision = fp32
  seed = 11
  data = synthetic
  lr.peak = 3e-3
  lr.warmup = 3
  grad_clip = 1.0
}
layout { dp = 1  cp = 1  sp = off }
PLAN
}
write_spec "$tmp/softmax.plan" 2 "  shared_experts = 1
  shared_expert_ffn_hidden = 32
"
write_spec "$tmp/sigmoid.plan" 4 "  router = sigmoid
  route_scale = 2.5
  dense_layers = 1
  moe_every = 2
"
write_spec "$tmp/capacity.plan" 2 "  capacity_factor = 0.5
"
check() { # check NAME SPEC RANKS OVERRIDES...
    local name=$1 spec=$2 ranks=$3; shift 3
    "$PLC" compile "$tmp/$spec.plan" "$@" -o "$tmp/$name.bin" >"$tmp/$name.log" 2>&1 ||
        { cat "$tmp/$name.log"; die "plc compile failed ($name)"; }
    run_ranks "$ranks" "$tmp/$name.bin" --steps 10 --export-oracle "$tmp/$name" >"$tmp/$name.log" 2>&1 ||
        { cat "$tmp/$name.log"; die "plrun failed ($name)"; }
    local d="$tmp/$name"
    echo "$name:"
    local out rc
    out=$(/usr/bin/python3 "$PLC_ROOT/tests/oracle/torch_oracle.py" --weights "$d/weights.safetensors" \
        --batches "$d/batches.safetensors" --metrics "$d/metrics.jsonl" --grads "$d/grads.safetensors" \
        --steps 10 --tol 1e-6 2>&1)
    rc=$?
    if [ "$rc" != 0 ]; then echo "$out"; die "plrun disagrees with the PyTorch oracle ($name)"; fi
    echo "$out" | tail -n 2
}
check softmax_single softmax 1 -D cluster.gpus_per_node=1 -D layout.tp=1 -D layout.pp=1
check sigmoid_single sigmoid 1 -D cluster.gpus_per_node=1 -D layout.tp=1 -D layout.pp=1
if command -v "${PLC_MPIRUN%% *}" >/dev/null 2>&1; then
    check softmax_tp2_pp2 softmax 4 -D cluster.gpus_per_node=4 -D layout.tp=2 -D layout.pp=2 -D layout.micro_batch=1
else
    echo "note: no MPI launcher: the tp=2 x pp=2 run is left out"
fi

# capacity: rows 64 (4 x 16), k 2, E 4, C = ceil(0.5 x 128 / 4) = 16: at
# least 128 - 64 copies dropped per layer, 2 layers, one micro-batch
"$PLC" compile "$tmp/capacity.plan" -D cluster.gpus_per_node=1 -D layout.tp=1 -D layout.pp=1 -D layout.micro_batch=4 \
    -o "$tmp/cap.bin" >/dev/null 2>&1 || die "plc compile failed (capacity)"
run_ranks 1 "$tmp/cap.bin" --steps 2 --metrics "$tmp/cap.jsonl" >"$tmp/cap.log" 2>&1 || { cat "$tmp/cap.log"; die "plrun failed (capacity)"; }
grep -q '  dropped [0-9]' "$tmp/cap.log" || die "the step line does not report the dropped copies"
dropped=$(grep -o '"moe_dropped":[0-9]*' "$tmp/cap.jsonl" | head -n 1 | cut -d: -f2)
[ -n "$dropped" ] && [ "$dropped" -ge 128 ] || die "capacity 0.5 dropped '${dropped:-none}' copies in step 1, expected >= 128"
echo "capacity_factor 0.5: $dropped copies dropped in step 1 (>= 128)"
grep -q moe_dropped "$tmp/softmax_single/metrics.jsonl" && die "a dropless run reports a drop count"
# what the lowering does not run is refused
# (before the search: the model and precision; ep > 1 at its key, rule
# ENGINE_EP: plrun runs ep = 1 only)
refused() { # refused STATUS WHAT OVERRIDES...
    local want=$1 what=$2; shift 2
    "$PLC" compile "$tmp/softmax.plan" "$@" -o "$tmp/refused.bin" >"$tmp/refused.log" 2>&1
    local rc=$?
    [ "$rc" = "$want" ] && grep -q "$what" "$tmp/refused.log" ||
        { cat "$tmp/refused.log"; die "expected exit $want and '$what' (got $rc)"; }
}
refused 1 "mixture-of-experts layers in fp32 only" -D cluster.gpus_per_node=1 -D layout.tp=1 -D layout.pp=1 -D train.precision=bf16
refused 1 "expert-bias balancing is modelled but not lowered" -D cluster.gpus_per_node=1 -D layout.tp=1 -D layout.pp=1 -D model.expert_bias=true
refused 1 "runs mixture-of-experts layers with ep = 1 only" -D cluster.gpus_per_node=2 -D layout.tp=1 -D layout.pp=1 -D layout.dp=2 -D layout.ep=2
echo "ok: plrun's MoE layers agree with the PyTorch oracle"
