#!/usr/bin/env bash
# The CUDA backend against the CPU backend on the same plan: 10 fp32 steps
# of the tiny model, losses within 1e-4 relative (different summation
# orders; cuBLAS without TF32). Skips where plrun has no CUDA backend or the
# machine no GPU.
set -u
. "$(dirname "$0")/plrun_lib.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
compile_tiny "$tmp/tiny.bin" 1
if ! "$PLRUN" "$tmp/tiny.bin" --backend cuda --steps 10 --metrics "$tmp/gpu.jsonl" >"$tmp/gpu.log" 2>&1; then
    if grep -q "built without the CUDA backend\|no CUDA GPU" "$tmp/gpu.log"; then
        skip "skipped: $(grep -o 'built without the CUDA backend\|no CUDA GPU is available' "$tmp/gpu.log" | head -n 1)"
    fi
    cat "$tmp/gpu.log"; die "plrun --backend cuda failed"
fi
"$PLRUN" "$tmp/tiny.bin" --backend cpu --steps 10 --metrics "$tmp/cpu.jsonl" >"$tmp/cpu.log" 2>&1 ||
    { cat "$tmp/cpu.log"; die "plrun --backend cpu failed"; }
losses "$tmp/gpu.jsonl" >"$tmp/gpu.loss"
losses "$tmp/cpu.jsonl" >"$tmp/cpu.loss"
dev=$(max_rel_dev "$tmp/gpu.loss" "$tmp/cpu.loss")
echo "cuda vs cpu: max relative loss deviation over 10 steps $dev"
awk -v d="$dev" 'BEGIN { exit !(d != "inf" && d + 0 <= 1e-4) }' || die "the CUDA backend deviates from the CPU backend"
echo "gpu: ok"
