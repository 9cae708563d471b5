#!/usr/bin/env bash
# The CUDA backend against the CPU backend on the same plans, 10 steps of
# the tiny model each:
#   fp32: losses within 1e-6 relative (different summation orders; cuBLAS
#         without TF32; measured 7.0e-9 on an H200, bench/gpu-results.md);
#   bf16: losses within 1e-4 relative (measured 3.3e-6 on that H200). Both
#         backends store bf16 the same way (round to nearest even after every
#         op, fp32 master weights and gradients), but a different summation
#         order inside an op can move a result across a bf16 rounding
#         boundary (2^-8 relative), and such differences compound over the
#         steps; the CPU's bf16 curve stays within 1.5e-4 of its fp32 curve
#         on this spec (tests/e2e/train_bf16.sh).
#   bf16_tc: the bf16 spec with one head of 64 and flash2 attention, which
#         runs on the tensor cores; the same tolerance (its P and dS keep
#         about 16 bits; measured 4.5e-6 on an H200, bench/gpu-results.md).
#   graphs: each of those plans again with --no-graph: the losses and
#         gradient norms bit for bit those of the run that replays its step
#         graphs (the same kernels with the same arguments; docs/runtime.md,
#         "Step graphs"), and the setup lines say which mode ran.
#   over: one rank more than the node has GPUs is refused at start, with the
#         counts (exit 1), where mpirun and nvidia-smi are found.
# Skips where plrun has no CUDA backend or the machine no GPU.
set -u
. "$(dirname "$0")/plrun_lib.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
compile_tiny "$tmp/fp32.bin" 1
"$PLC" compile "$PLC_ROOT/examples/tiny.plan" -D train.precision=bf16 -D cluster.gpus_per_node=1 -D layout.dp=1 \
    -D layout.tp=1 -D layout.pp=1 -D layout.cp=1 -o "$tmp/bf16.bin" >"$tmp/compile.log" 2>&1 ||
    { cat "$tmp/compile.log"; die "plc compile failed (bf16)"; }
# one head of 64: bf16 flash attention on the tensor cores (flash_attention_tc.cu)
"$PLC" compile "$PLC_ROOT/examples/tiny.plan" -D train.precision=bf16 -D cluster.gpus_per_node=1 -D layout.dp=1 \
    -D layout.tp=1 -D layout.pp=1 -D layout.cp=1 -D model.heads=1 -D model.kv_heads=1 -D layout.attention=flash2 \
    -o "$tmp/bf16_tc.bin" >"$tmp/compile.log" 2>&1 || { cat "$tmp/compile.log"; die "plc compile failed (bf16_tc)"; }

# compare NAME TOLERANCE: the plan $tmp/NAME.bin on both backends
compare() {
    local name=$1 tol=$2
    if ! "$PLRUN" "$tmp/$name.bin" --backend cuda --steps 10 --metrics "$tmp/$name.gpu.jsonl" >"$tmp/$name.gpu.log" 2>&1; then
        if grep -q "built without the CUDA backend\|no CUDA GPU" "$tmp/$name.gpu.log"; then
            skip "skipped: $(grep -o 'built without the CUDA backend\|no CUDA GPU is available' "$tmp/$name.gpu.log" | head -n 1)"
        fi
        cat "$tmp/$name.gpu.log"; die "plrun --backend cuda failed ($name)"
    fi
    "$PLRUN" "$tmp/$name.bin" --backend cpu --steps 10 --metrics "$tmp/$name.cpu.jsonl" >"$tmp/$name.cpu.log" 2>&1 ||
        { cat "$tmp/$name.cpu.log"; die "plrun --backend cpu failed ($name)"; }
    losses "$tmp/$name.gpu.jsonl" >"$tmp/$name.gpu.loss"
    losses "$tmp/$name.cpu.jsonl" >"$tmp/$name.cpu.loss"
    local dev
    dev=$(max_rel_dev "$tmp/$name.gpu.loss" "$tmp/$name.cpu.loss")
    echo "$name: cuda vs cpu, max relative loss deviation over 10 steps $dev (tolerance $tol)"
    awk -v d="$dev" -v t="$tol" 'BEGIN { exit !(d != "inf" && d + 0 <= t + 0) }' ||
        { paste "$tmp/$name.gpu.loss" "$tmp/$name.cpu.loss"; die "the CUDA backend deviates from the CPU backend ($name)"; }
}
compare fp32 1e-6
compare bf16 1e-4
compare bf16_tc 1e-4

# graphs NAME: the run above (step graphs) against one with --no-graph, bitwise
graphs() {
    local name=$1
    grep -q "^step: [0-9]* graphs\? over [0-9]* of [0-9]* instructions" "$tmp/$name.gpu.log" ||
        { cat "$tmp/$name.gpu.log"; die "no step graphs named in the setup lines ($name)"; }
    "$PLRUN" "$tmp/$name.bin" --backend cuda --steps 10 --no-graph --metrics "$tmp/$name.eager.jsonl" \
        >"$tmp/$name.eager.log" 2>&1 || { cat "$tmp/$name.eager.log"; die "plrun --backend cuda --no-graph failed ($name)"; }
    grep -q "^step: eager (--no-graph)" "$tmp/$name.eager.log" ||
        { cat "$tmp/$name.eager.log"; die "--no-graph not named in the setup lines ($name)"; }
    grep -o '"loss":[^,}]*,"lr":[^,}]*,"grad_norm":[^,}]*' "$tmp/$name.gpu.jsonl" >"$tmp/$name.graph.bits"
    grep -o '"loss":[^,}]*,"lr":[^,}]*,"grad_norm":[^,}]*' "$tmp/$name.eager.jsonl" >"$tmp/$name.eager.bits"
    [ "$(wc -l <"$tmp/$name.graph.bits")" -eq 10 ] && cmp -s "$tmp/$name.graph.bits" "$tmp/$name.eager.bits" ||
        { paste "$tmp/$name.graph.bits" "$tmp/$name.eager.bits"; die "step graphs and --no-graph differ ($name)"; }
    echo "$name: step graphs and --no-graph bitwise identical over 10 steps ($(grep -o '^step: [0-9]* graphs\? over [0-9]* of [0-9]*' "$tmp/$name.gpu.log" | cut -d' ' -f2-))"
}
graphs fp32
graphs bf16
graphs bf16_tc

# more ranks on the node than GPUs: two pick the same GPU (by its bus id),
# refused at start with the pair and the counts, exit 1
# (NCCL itself answers only "invalid usage"; bench/gpu-results.md)
if command -v "${PLC_MPIRUN%% *}" >/dev/null 2>&1 && command -v nvidia-smi >/dev/null 2>&1; then
    n=$(($(nvidia-smi -L | grep -c '^GPU') + 1))
    compile_tiny "$tmp/over.bin" "$n" >"$tmp/compile.log" 2>&1 || { cat "$tmp/compile.log"; die "plc compile failed (over)"; }
    rc=0
    timeout 120 $PLC_MPIRUN -np "$n" "$PLRUN" "$tmp/over.bin" --backend cuda --steps 1 >"$tmp/over.log" 2>&1 || rc=$?
    grep -q "share a GPU: $n ranks on this node see $((n - 1)) GPU" "$tmp/over.log" && [ "$rc" -eq 1 ] ||
        { cat "$tmp/over.log"; die "$n ranks on $((n - 1)) GPUs: expected exit 1 and the counts, got exit $rc"; }
    echo "over: $n ranks on $((n - 1)) GPU(s) refused at start (exit 1)"
fi
echo "gpu: ok"
