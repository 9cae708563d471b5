#!/usr/bin/env bash
# Issue 5's benchmark: tokens/s of plrun on one rank against the same model
# trained by PyTorch on the CPU (same machine, same run, same thread count),
# and plrun's model FLOP/s as a fraction of OpenBLAS sgemm's measured peak
# (bench_kernels). fp32, AdamW, the Llama of docs/model.md.
set -u
: "${PLC_BIN:?PLC_BIN must name the directory holding plc and plrun}"
THREADS=${BENCH_THREADS:-$(nproc --all)}
STEPS=${BENCH_STEPS:-8}
export OMP_NUM_THREADS=$THREADS OPENBLAS_NUM_THREADS=$THREADS
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
L=4 H=256 F=704 NH=8 KV=4 V=2048 S=128 GB=16
cat >"$tmp/bench.plan" <<PLAN
model "bench" { layers = $L  hidden = $H  ffn_hidden = $F  heads = $NH  kv_heads = $KV  vocab = $V  seq_len = $S }
cluster { gpu = "host-cpu"  nodes = 1  gpus_per_node = 1 }
train { global_batch = $GB  steps = $STEPS  precision = fp32  seed = 1  data = synthetic }
layout { dp = 1  tp = 1  pp = 1  cp = 1  micro_batch = $GB  recompute = none }
PLAN
"$PLC_BIN/plc" compile "$tmp/bench.plan" -o "$tmp/b.bin" >/dev/null || { echo "plc compile failed"; exit 1; }
"$PLC_BIN/plrun" "$tmp/b.bin" --threads "$THREADS" --steps "$STEPS" --metrics "$tmp/m.jsonl" >"$tmp/log" 2>&1 ||
    { cat "$tmp/log"; exit 1; }
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
plrun_tps=$(grep -o '"tokens_per_s":[^,}]*' "$tmp/m.jsonl" | cut -d: -f2 | tail -n +2 | median)
plrun_flops=$(grep -o '"model_flops_per_s":[^,}]*' "$tmp/m.jsonl" | cut -d: -f2 | tail -n +2 | median)
echo "model $L x $H (ffn $F, heads $NH/$KV, vocab $V), seq $S, batch $GB, $THREADS threads, $(nproc --all) cores"
printf 'plrun     %10.0f tokens/s  %7.2f GFLOP/s (model FLOPs)\n' "$plrun_tps" "$(awk -v f="$plrun_flops" 'BEGIN{print f/1e9}')"
if [ -x /usr/bin/python3 ] && /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    torch_tps=$(/usr/bin/python3 - "$L" "$H" "$F" "$NH" "$KV" "$V" "$S" "$GB" "$STEPS" "$THREADS" <<'PY'
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
times = []
for s in range(STEPS):
    t0 = time.perf_counter()
    logits = forward(tok[:, :-1])
    loss = torch.nn.functional.cross_entropy(logits.reshape(-1, V), tok[:, 1:].reshape(-1))
    opt.zero_grad()
    loss.backward()
    opt.step()
    times.append(time.perf_counter() - t0)
times = sorted(times[1:])
print(GB * S / times[len(times) // 2])
PY
)
    printf 'pytorch   %10.0f tokens/s  (torch %s)\n' "$torch_tps" "$(/usr/bin/python3 -c 'import torch; print(torch.__version__)')"
    awk -v a="$plrun_tps" -v b="$torch_tps" 'BEGIN { printf "plrun / pytorch: %.2fx\n", a / b }'
else
    echo "pytorch   (skipped: /usr/bin/python3 with torch not found)"
fi
if [ -x "$PLC_BIN/bench_kernels" ]; then
    peak=$("$PLC_BIN/bench_kernels" 2>/dev/null | awk '/sgemm peak/ {print $3}')
    [ -n "$peak" ] && awk -v f="$plrun_flops" -v p="$peak" \
        'BEGIN { printf "plrun model FLOP/s = %.1f%% of the sgemm peak (%.1f GFLOP/s)\n", 100 * f / 1e9 / p, p }'
fi
echo "limits: at this size the step is dominated by the matmuls of the vocabulary head and the MLP"
echo "(OpenBLAS sgemm) plus the memory-bound element-wise kernels (RMSNorm, SwiGLU, cross-entropy) and"
echo "attention; see the per-op timeline with plrun --trace."
