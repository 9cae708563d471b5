#!/usr/bin/env bash
# The independent check: plrun exports the initial weights, the batches, its
# metrics and the first step's gradients (--export-oracle), and the PyTorch
# oracle (tests/oracle/torch_oracle.py, Debian's python3-torch) replays the
# training: loss, lr and grad norm of every step and the gradients after step
# 1 must agree within 1e-5 relative over 10 steps. Once on one rank, once on
# a 4-rank layout (tp=2 x pp=2), whose gradients are gathered from shards;
# then the same for the GPT block (tp=2 x pp=2 with sequence parallelism).
set -u
. "$(dirname "$0")/plrun_lib.bash"
[ -x /usr/bin/python3 ] || skip "skipped: /usr/bin/python3 not found"
/usr/bin/python3 -c 'import torch, numpy' 2>/dev/null || skip "skipped: python3-torch or numpy not installed"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# write_spec FILE NAME SEED [ARCH LINES]: the oracle's small model, with the
# given seed; extra model lines (the GPT block: LayerNorm, biases, GELU,
# learned positions, untied) before the shared ones
write_spec() {
    cat >"$1" <<PLAN
model "$2" {
$4  layers = 2
  hidden = 32
  heads = 4
  kv_heads = 2
  vocab = 64
  seq_len = 16
}
cluster { gpu = "host-cpu"  nodes = 1  gpus_per_node = 4 }
train {
  global_batch = 4
  steps = 10
  precision = fp32
  seed = $3
  data = synthetic
  lr.peak = 3e-3
  lr.warmup = 3
  grad_clip = 1.0
}
layout { dp = 1  cp = 1 }
PLAN
}
write_spec "$tmp/oracle.plan" oracle 11 "  ffn_hidden = 64
"
write_spec "$tmp/gpt.plan" oracle-gpt 13 "  arch = gpt
"
check() { # check NAME RANKS OVERRIDES... (SPEC=gpt for the GPT spec)
    local name=$1 ranks=$2; shift 2
    "$PLC" compile "$tmp/${SPEC:-oracle}.plan" "$@" -o "$tmp/$name.bin" || die "plc compile failed ($name)"
    run_ranks "$ranks" "$tmp/$name.bin" --steps 10 --export-oracle "$tmp/$name" >"$tmp/$name.log" 2>&1 ||
        { cat "$tmp/$name.log"; die "plrun failed ($name)"; }
    local d="$tmp/$name"
    /usr/bin/python3 "$PLC_ROOT/tests/oracle/torch_oracle.py" --weights "$d/weights.safetensors" \
        --batches "$d/batches.safetensors" --metrics "$d/metrics.jsonl" --grads "$d/grads.safetensors" \
        --steps 10 --tol 1e-5 || die "plrun disagrees with the PyTorch oracle ($name)"
}
check single 1 -D cluster.gpus_per_node=1 -D layout.tp=1 -D layout.pp=1
SPEC=gpt check gpt_single 1 -D cluster.gpus_per_node=1 -D layout.tp=1 -D layout.pp=1
if command -v "${PLC_MPIRUN%% *}" >/dev/null 2>&1; then
    check tp2_pp2 4 -D cluster.gpus_per_node=4 -D layout.tp=2 -D layout.pp=2 -D layout.micro_batch=1
    SPEC=gpt check gpt_tp2_pp2_sp 4 -D cluster.gpus_per_node=4 -D layout.tp=2 -D layout.pp=2 -D layout.sp=on \
        -D layout.micro_batch=1
fi
echo "oracle: plrun matches PyTorch"
