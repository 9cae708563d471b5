#!/usr/bin/env bash
# scripts/gpu/check.sh: the CUDA backend on a machine with a GPU, in one go.
# Needs bin/ built with CUDA (make) and, where the machine lacks plrun's host
# libraries (Open MPI, OpenBLAS, libyaml, CUnit), the archive made by
# scripts/gpu/kit.sh. Writes logs to $OUT (default /tmp/plc-gpu) and prints a
# summary last:
#   1. the CUDA kernels against the CPU kernels (unit suite cuda_kernels);
#   2. tests/e2e/gpu.sh: 10-step loss curves, CUDA against CPU, fp32 and bf16;
#   3. repeatability: the same bf16 plan twice on the GPU, losses compared
#      bit for bit;
#   4. speed: a Llama-1B-class plan (scripts/gpu/llama1b.plan) with its
#      predicted step time beside the measured one, device memory
#      (nvidia-smi, sampled, and plrun's own report) beside the plan's arena;
#      run with step graphs (the default) and again with --no-graph: both
#      step times, and the losses compared bit for bit;
#   5. the peers: cuBLAS GEMMs and PyTorch's SDPA (scripts/gpu/peer.py, which
#      names the kernel SDPA ran: scripts/gpu/sdpa_backend.py, and times each
#      backend alone), and PyTorch training the 1B model
#      (scripts/gpu/torch_llama.py, eager; with TORCH_COMPILE=1 also under
#      torch.compile, minutes more);
#   6. plrun's flash attention alone at the peer's shape
#      (bin/bench_cuda_attention, where `make bench` built it);
#   7. NCCL: the tiny plan on 2 ranks sharing the one GPU, against the CPU;
#   8. where a step of the 1B plan goes (plrun --trace), last as the slowest.
# Last, where 4 ran, one row of bench/gpu-results.csv (scripts/gpu/csv_row.py:
# the figures of 4, 5 and 6 of this call) in $OUT/gpu-results.csv, and
# appended to bench/gpu-results.csv of this checkout.
# Arguments, if any, pick the checks by number (8 needs 4's plan):
#   bash scripts/gpu/check.sh 4 7 8
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/plc-gpu}
mkdir -p "$OUT"
sum="$OUT/summary.txt"
: >"$sum"
say() { echo "$*" | tee -a "$sum"; }

nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv,noheader >"$OUT/gpu.txt" 2>&1
say "gpu: $(cat "$OUT/gpu.txt")  date: $(date -u +%F)"
say "host: $(. /etc/os-release; echo "$PRETTY_NAME"), $(ldd --version | head -n 1)"
. scripts/gpu/env.sh
say "LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}"
ldd bin/plrun | grep "not found" | tee -a "$sum"
export PLC_BIN=$PWD/bin PLC_ROOT=$PWD
checks=" ${*:-1 2 3 4 5 6 7 8} "
want() { case "$checks" in *" $1 "*) return 0 ;; esac; return 1; }
t=$(mktemp -d)

want 1 && { (cd tests && timeout 90 ../bin/unit_tests cuda_kernels) >"$OUT/unit.log" 2>&1
say "1. unit cuda_kernels: rc $? | $(grep -E 'asserts|tests ' "$OUT/unit.log" | tr -s ' ' | tr '\n' ' ')"; }

want 2 && { timeout 180 bash tests/e2e/gpu.sh >"$OUT/e2e_gpu.log" 2>&1
say "2. e2e gpu.sh: rc $? | $(grep -E 'deviation|bitwise|skipped|ok|fail' "$OUT/e2e_gpu.log" | tr '\n' ' ')"; }

want 3 && {
bin/plc compile examples/tiny.plan -D train.precision=bf16 -D cluster.gpus_per_node=1 -D layout.dp=1 -D layout.tp=1 \
    -D layout.pp=1 -D layout.cp=1 -o "$t/r.bin" >/dev/null 2>&1
for i in 1 2; do timeout 40 bin/plrun "$t/r.bin" --backend cuda --steps 20 --metrics "$t/r$i.jsonl" >"$OUT/repeat$i.log" 2>&1; done
n1=$(grep -c loss "$t/r1.jsonl" 2>/dev/null) n2=$(grep -c loss "$t/r2.jsonl" 2>/dev/null)
if [ "${n1:-0}" -gt 0 ] && cmp -s <(grep -o '"loss":[^,]*' "$t/r1.jsonl") <(grep -o '"loss":[^,]*' "$t/r2.jsonl"); then
    same=identical
else same="NOT identical"; fi
say "3. repeat: ${n1:-0} and ${n2:-0} steps, losses $same"
}

want 4 && {
case "$(cat "$OUT/gpu.txt")" in *H100*) gpu=H100-SXM5-80GB ;; *) gpu=H200-SXM-141GB ;; esac
bin/plc compile scripts/gpu/llama1b.plan -D "cluster.gpu=\"$gpu\"" -o "$t/l1b.bin" >"$OUT/l1b.compile.log" 2>&1 ||
    say "4. 1B: compile failed"
nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 >"$t/mem.txt" 2>/dev/null &
smi=$!
stdbuf -oL timeout 150 bin/plrun "$t/l1b.bin" --backend cuda --steps 6 --metrics "$OUT/l1b.jsonl" >"$OUT/l1b.log" 2>&1
rc=$?
kill $smi 2>/dev/null; wait $smi 2>/dev/null
say "4. 1B: rc $rc | $(grep -E '^layout|^predicted' "$OUT/l1b.compile.log" | tr -s ' ' | tr '\n' ' ')"
say "   plan: $(grep -E 'stage 0 +arena' "$OUT/l1b.compile.log" | tr -s ' ')"
say "   device memory used, peak sampled: $(sort -n "$t/mem.txt" | tail -n 1) MiB"
say "   measured steps: $(grep -o '"step_time_s":[^,}]*\|"tokens_per_s":[^,}]*\|"loss":[^,]*' "$OUT/l1b.jsonl" | cut -d: -f2 | paste -sd' ')"
grep -E "^setup|^step:|^time|^plrun|^device|^  rank" "$OUT/l1b.log" | tee -a "$sum"
# the same without the step graphs: the time they save, and the same bits
stdbuf -oL timeout 150 bin/plrun "$t/l1b.bin" --backend cuda --steps 6 --no-graph --metrics "$OUT/l1b_eager.jsonl" \
    >"$OUT/l1b_eager.log" 2>&1
rc=$?
if cmp -s <(grep -o '"loss":[^,]*,"lr":[^,]*,"grad_norm":[^,}]*' "$OUT/l1b.jsonl" 2>/dev/null) \
    <(grep -o '"loss":[^,]*,"lr":[^,]*,"grad_norm":[^,}]*' "$OUT/l1b_eager.jsonl" 2>/dev/null) &&
    [ -s "$OUT/l1b_eager.jsonl" ]; then same=identical; else same="NOT identical"; fi
say "   --no-graph: rc $rc | losses and norms against the graph run: $same | $(grep -E '^step:|^time' "$OUT/l1b_eager.log" | tr '\n' ' ')"
}

want 5 && { env -u LD_LIBRARY_PATH timeout 120 python3 scripts/gpu/peer.py >"$OUT/peer.log" 2>&1
say "5. peers: rc $?"
grep -v '"what": "gemm' "$OUT/peer.log" | tail -n 12 | tee -a "$sum"
env -u LD_LIBRARY_PATH PYTHONUNBUFFERED=1 timeout 200 python3 scripts/gpu/torch_llama.py --steps 6 >"$OUT/torch.log" 2>&1
say "   PyTorch training the 1B model (scripts/gpu/torch_llama.py): rc $? | $(tail -n 1 "$OUT/torch.log")"
grep '"sdpa backend"' "$OUT/torch.log" | tee -a "$sum"
if [ "${TORCH_COMPILE:-0}" = 1 ]; then
    env -u LD_LIBRARY_PATH PYTHONUNBUFFERED=1 timeout 400 python3 scripts/gpu/torch_llama.py --steps 6 --compile \
        >"$OUT/torch_compile.log" 2>&1
    say "   the same under torch.compile: rc $? | $(tail -n 1 "$OUT/torch_compile.log")"
fi; }
if want 6 && [ -x bin/bench_cuda_attention ]; then # plrun's attention alone, the peer's shape (make bench builds it)
    timeout 60 bin/bench_cuda_attention >"$OUT/attn.log" 2>&1
    say "6. plrun's attention alone: rc $?"
    tee -a "$sum" <"$OUT/attn.log"
fi
# 7. NCCL: 2 ranks of the tiny plan (dp 2) on the one GPU, against the CPU backend
want 7 && {
bin/plc compile examples/tiny.plan -D cluster.gpus_per_node=2 -D layout.dp=2 -D layout.tp=1 -D layout.pp=1 \
    -D layout.cp=1 -o "$t/dp2.bin" >/dev/null 2>&1
for be in cuda cpu; do
    timeout 60 mpirun -np 2 --oversubscribe bin/plrun "$t/dp2.bin" --backend $be --steps 10 \
        --metrics "$t/dp2.$be.jsonl" >"$OUT/nccl_$be.log" 2>&1
    echo "rc $?" >>"$OUT/nccl_$be.log"
done
dev=$(paste -d' ' <(grep -o '"loss":[^,}]*' "$t/dp2.cuda.jsonl" 2>/dev/null | cut -d: -f2) \
    <(grep -o '"loss":[^,}]*' "$t/dp2.cpu.jsonl" 2>/dev/null | cut -d: -f2) |
    awk 'NF == 2 { d = $1 - $2; if (d < 0) d = -d; r = $2 < 0 ? -$2 : $2; if (r > 0 && d / r > m) m = d / r; n++ }
         NF != 2 { bad++ }
         END { printf "%d steps compared (%d unmatched), max relative loss deviation %.3e", n, bad, m }')
say "7. NCCL, 2 ranks on one GPU: cuda $(tail -n 1 "$OUT/nccl_cuda.log"), cpu $(tail -n 1 "$OUT/nccl_cpu.log") | $dev"
# the same 2 ranks without step graphs: NCCL recorded in a graph against NCCL eager (reported, not required
# to match: NCCL may pick another algorithm for a recorded collective)
timeout 60 mpirun -np 2 --oversubscribe bin/plrun "$t/dp2.bin" --backend cuda --steps 10 --no-graph \
    --metrics "$t/dp2.eager.jsonl" >"$OUT/nccl_eager.log" 2>&1
rc=$?
if cmp -s <(grep -o '"loss":[^,]*' "$t/dp2.cuda.jsonl" 2>/dev/null) <(grep -o '"loss":[^,]*' "$t/dp2.eager.jsonl" 2>/dev/null) &&
    [ -s "$t/dp2.eager.jsonl" ]; then same=identical; else same="NOT identical"; fi
say "   2 ranks, step graphs against --no-graph (rc $rc): losses $same | $(grep -E '^step:' "$OUT/nccl_cuda.log" | head -n 1)"
grep -iE "error|nccl|duplicate|rank [0-9]" "$OUT/nccl_cuda.log" | head -n 6 | tee -a "$sum"
}

# 8. where a 1B step goes: every instruction synchronised and timed (last: the slowest)
want 8 && {
stdbuf -oL timeout 150 bin/plrun "$t/l1b.bin" --backend cuda --steps 2 --trace "$OUT/l1b_trace.json" >"$OUT/l1b_trace.log" 2>&1
say "8. traced 1B run (each kernel synchronised): rc $? | $(grep -E '^time|^setup' "$OUT/l1b_trace.log" | tr '\n' ' ')"
env -u LD_LIBRARY_PATH python3 scripts/gpu/trace_summary.py "$OUT/l1b_trace.json" 2>&1 | head -n 14 | tee -a "$sum"
rm -f "$OUT/l1b_trace.json"
}
# the row of bench/gpu-results.csv, from this call's logs
if want 4 && [ -s "$OUT/l1b.jsonl" ]; then
    env -u LD_LIBRARY_PATH python3 scripts/gpu/csv_row.py "$OUT" bench/gpu-results.csv >"$OUT/csv.log" 2>&1
    say "csv: rc $? | $(tail -n 1 "$OUT/csv.log")"
fi
rm -rf "$t"
(cd "$OUT" && tar -czf logs.tgz --exclude=logs.tgz --exclude=l1b_trace.json *.log *.jsonl *.csv gpu.txt 2>/dev/null)
