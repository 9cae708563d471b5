#!/usr/bin/env bash
# Issue 5's and 16's benchmark: tokens/s of plrun on one rank against the
# same model trained by PyTorch on the CPU (same machine, same thread
# count), and plrun's model FLOP/s as a fraction of the sgemm peak
# (bench_kernels --peak: the faster of OpenBLAS and plrun's own matmul).
# fp32, AdamW, the Llama of docs/model.md, two sizes: this script's own
# (vocab 2048) and issue 16's (vocab 256, seq 256).
#
# The machine may be shared, so nothing is timed alone: for each model and
# thread count, BENCH_ROUNDS rounds each run plrun, then PyTorch, then the
# peak, one after the other; the figures are medians over every timed step
# of every round (the first step of a run is warm-up), the peak the best
# of its rounds. Knobs: BENCH_THREADS ("1 2"), BENCH_ROUNDS (3),
# BENCH_STEPS (6 per run). All three run under the OpenMP wait policy plrun
# takes by default (passive, docs/runtime.md), unless OMP_WAIT_POLICY says.
# PLC_BASE_BIN (optional): the directory of another build's plrun (an
# earlier commit), run in every round right after this one on the same
# plan, so that a change is measured against its base in the same run.
set -u
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}
: "${PLC_BIN:?PLC_BIN must name the directory holding plc and plrun}"
THREAD_LIST=${BENCH_THREADS:-1 2}
ROUNDS=${BENCH_ROUNDS:-3}
STEPS=${BENCH_STEPS:-6}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

have_torch=0
[ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import torch' 2>/dev/null && have_torch=1
cat >"$tmp/torch_llama.py" <<'PY'
# the plan's model in PyTorch ops; prints tokens/s of each step after the first
import sys, time, math, torch
L, H, F, NH, KV, V, S, GB, STEPS, T = map(int, sys.argv[1:])
torch.set_num_threads(T)
torch.manual_seed(0)
hd = H // NH
def p(*shape, std=0.02):
    return torch.nn.Parameter(torch.randn(*shape) * std)
emb, head, fnorm = p(V, H), p(H, V), torch.nn.Parameter(torch.ones(H))
layers = [dict(an=torch.nn.Parameter(torch.ones(H)), wq=p(H, NH * hd), wk=p(H, KV * hd), wv=p(H, KV * hd),
               wo=p(NH * hd, H), mn=torch.nn.Parameter(torch.ones(H)), wg=p(H, F), wu=p(H, F), wd=p(F, H))
          for _ in range(L)]
params = [emb, head, fnorm] + [t for l in layers for t in l.values()]
inv = 10000.0 ** (-torch.arange(0, hd, 2, dtype=torch.float32) / hd)
ang = torch.arange(S, dtype=torch.float32)[:, None] * inv[None, :]
cos, sin = torch.cos(ang), torch.sin(ang)
mask = torch.triu(torch.ones(S, S, dtype=torch.bool), 1)
def rms(x, w): return x * torch.rsqrt((x * x).mean(-1, keepdim=True) + 1e-5) * w
def rope(x):
    a, b = x[..., 0::2], x[..., 1::2]
    c, s = cos[None, :, None, :], sin[None, :, None, :]
    return torch.stack((a * c - b * s, a * s + b * c), -1).flatten(-2)
def forward(tok):
    x = emb[tok]
    for l in layers:
        h = rms(x, l["an"])
        q = rope((h @ l["wq"]).view(GB, S, NH, hd))
        k = rope((h @ l["wk"]).view(GB, S, KV, hd)).repeat_interleave(NH // KV, 2)
        v = (h @ l["wv"]).view(GB, S, KV, hd).repeat_interleave(NH // KV, 2)
        sc = (q.transpose(1, 2) @ k.transpose(1, 2).transpose(-1, -2)) / math.sqrt(hd)
        a = torch.softmax(sc.masked_fill(mask, float("-inf")), -1) @ v.transpose(1, 2)
        x = x + a.transpose(1, 2).reshape(GB, S, NH * hd) @ l["wo"]
        h = rms(x, l["mn"])
        x = x + (torch.nn.functional.silu(h @ l["wg"]) * (h @ l["wu"])) @ l["wd"]
    return rms(x, fnorm) @ head
opt = torch.optim.AdamW(params, lr=1e-3)
tok = torch.randint(0, V, (GB, S + 1))
for s in range(STEPS):
    t0 = time.perf_counter()
    logits = forward(tok[:, :-1])
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, V), tok[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    if s: print(GB * S / (time.perf_counter() - t0))
PY

median() { sort -g | awk '{v[NR] = $1} END {if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
status=0
echo "$(nproc --all) cores, load average $(cut -d' ' -f1-3 /proc/loadavg) at the start; $ROUNDS rounds of $STEPS steps; OMP_WAIT_POLICY=$OMP_WAIT_POLICY"
# name L H F NH KV V S GB
for model in "bench 4 256 704 8 4 2048 128 16" "issue16 4 256 688 8 4 256 256 8"; do
    read -r name L H F NH KV V S GB <<<"$model"
    cat >"$tmp/$name.plan" <<PLAN
model "$name" { layers = $L  hidden = $H  ffn_hidden = $F  heads = $NH  kv_heads = $KV  vocab = $V  seq_len = $S }
cluster { gpu = "host-cpu"  nodes = 1  gpus_per_node = 1 }
train { global_batch = $GB  steps = $STEPS  precision = fp32  seed = 1  data = synthetic }
layout { dp = 1  tp = 1  pp = 1  cp = 1  micro_batch = $GB  recompute = none }
PLAN
    "$PLC_BIN/plc" compile "$tmp/$name.plan" -o "$tmp/$name.bin" >/dev/null || { echo "plc compile failed"; exit 1; }
    for T in $THREAD_LIST; do
        : >"$tmp/p.tps"; : >"$tmp/p.flops"; : >"$tmp/t.tps"; : >"$tmp/peak"; : >"$tmp/b.tps"; ratios=""
        for r in $(seq "$ROUNDS"); do
            OMP_NUM_THREADS=$T "$PLC_BIN/plrun" "$tmp/$name.bin" --threads "$T" --steps "$STEPS" \
                --metrics "$tmp/m.jsonl" >"$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
            grep -o '"tokens_per_s":[^,}]*' "$tmp/m.jsonl" | cut -d: -f2 | tail -n +2 >"$tmp/p1"
            grep -o '"model_flops_per_s":[^,}]*' "$tmp/m.jsonl" | cut -d: -f2 | tail -n +2 >>"$tmp/p.flops"
            cat "$tmp/p1" >>"$tmp/p.tps"
            if [ -n "${PLC_BASE_BIN:-}" ]; then
                OMP_NUM_THREADS=$T "$PLC_BASE_BIN/plrun" "$tmp/$name.bin" --threads "$T" --steps "$STEPS" \
                    --metrics "$tmp/b.jsonl" >"$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
                grep -o '"tokens_per_s":[^,}]*' "$tmp/b.jsonl" | cut -d: -f2 | tail -n +2 >>"$tmp/b.tps"
            fi
            if [ "$have_torch" = 1 ]; then
                OMP_NUM_THREADS=$T /usr/bin/python3 "$tmp/torch_llama.py" "$L" "$H" "$F" "$NH" "$KV" "$V" "$S" \
                    "$GB" "$STEPS" "$T" >"$tmp/t1" || { echo "pytorch failed"; exit 1; }
                cat "$tmp/t1" >>"$tmp/t.tps"
                ratios="$ratios $(awk -v a="$(median <"$tmp/p1")" -v b="$(median <"$tmp/t1")" 'BEGIN {printf "%.2f", a / b}')"
            fi
            if [ -x "$PLC_BIN/bench_kernels" ]; then
                OMP_NUM_THREADS=$T OPENBLAS_NUM_THREADS=$T "$PLC_BIN/bench_kernels" --peak |
                    awk '/sgemm peak/ {print $3}' >>"$tmp/peak"
            fi
        done
        p_tps=$(median <"$tmp/p.tps"); p_flops=$(median <"$tmp/p.flops")
        echo "model $name: $L x $H (ffn $F, heads $NH/$KV, vocab $V), seq $S, batch $GB; $T thread(s)"
        printf '  plrun     %8.0f tokens/s  %6.1f GFLOP/s (model FLOPs)\n' "$p_tps" "$(awk -v f="$p_flops" 'BEGIN {print f / 1e9}')"
        if [ -n "${PLC_BASE_BIN:-}" ]; then
            b_tps=$(median <"$tmp/b.tps")
            awk -v a="$p_tps" -v b="$b_tps" 'BEGIN {printf "  plrun base %7.0f tokens/s (PLC_BASE_BIN); this build / base: %.2fx\n", b, a / b}'
        fi
        if [ "$have_torch" = 1 ]; then
            t_tps=$(median <"$tmp/t.tps")
            printf '  pytorch   %8.0f tokens/s  (torch %s)\n' "$t_tps" "$(/usr/bin/python3 -c 'import torch; print(torch.__version__)')"
            awk -v a="$p_tps" -v b="$t_tps" -v r="$ratios" \
                'BEGIN {printf "  plrun / pytorch: %.2fx (medians; per round:%s)\n", a / b, r}'
            [ -n "${PLC_BASE_BIN:-}" ] && awk -v a="$b_tps" -v b="$t_tps" \
                'BEGIN {printf "  plrun base / pytorch: %.2fx (medians)\n", a / b}'
        else
            echo "  pytorch   (skipped: /usr/bin/python3 with torch not found)"
        fi
        peak=$(sort -g "$tmp/peak" | tail -n 1)
        [ -n "$peak" ] && awk -v f="$p_flops" -v p="$peak" -v t="$T" \
            'BEGIN { printf "  plrun model FLOP/s = %.1f%% of the sgemm peak (%.1f GFLOP/s at %d thread(s), this run)\n", 100 * f / 1e9 / p, p, t }'
        # PyTorch's model FLOP/s: the same FLOPs a token as plrun's; its
        # share of the peak bounds the ratio plrun can reach (1 / share)
        [ -n "$peak" ] && [ "$have_torch" = 1 ] && awk -v f="$p_flops" -v a="$p_tps" -v b="$t_tps" -v p="$peak" \
            'BEGIN { s = f / a * b / 1e9 / p; printf "  pytorch model FLOP/s = %.1f%% of the sgemm peak (so plrun / pytorch <= %.2fx at the peak)\n", 100 * s, 1 / s }'
    done
done
echo "load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
echo "where the time goes: plrun --trace FILE (per-op timeline)"
exit $status
