"""scripts/gpu/torch_llama.py: the tokens/s peer of plrun's 1B plan. The same
model as scripts/gpu/llama1b.plan (hidden 2048, 16 layers, GQA 32/8, ffn
8192, vocab 32000, RoPE, RMSNorm, SwiGLU, untied head: 1,104,218,112
parameters), trained the way Megatron-style trainers do in PyTorch eager:
fp32 parameters under bf16 autocast, scaled_dot_product_attention (causal),
AdamW (fused where the build has it), gradients clipped to norm 1, one
micro-batch of 16 sequences of 2048 random tokens per step. Prints the
parameter count, each step's time (CUDA events) and the mean after the
first as JSON lines.

With --compile the model runs under torch.compile (the "torch_compile_tok_s"
peer of bench/gpu-results.csv; the first step includes the compilation and
is left out of the mean, as the warm-up is). On a GPU it first names the
attention kernel SDPA runs at the model's shape (scripts/gpu/sdpa_backend.py).

    python3 scripts/gpu/torch_llama.py [--steps 6] [--batch 16] [--layers 16] [--compile]
    python3 scripts/gpu/torch_llama.py --small   # a CPU-sized check
"""
import argparse, json, math, os, sys, time
import torch
import torch.nn as nn
import torch.nn.functional as F


class Norm(nn.Module):  # nn.RMSNorm where the build has it (2.4 and later)
    def __init__(s, h):
        super().__init__()
        s.w = nn.Parameter(torch.ones(h))

    def forward(s, x):
        return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5).to(x.dtype) * s.w


def rms_norm(h):
    return nn.RMSNorm(h, eps=1e-5) if hasattr(nn, "RMSNorm") else Norm(h)


class Block(nn.Module):
    def __init__(s, h, ffn, heads, kv):
        super().__init__()
        s.heads, s.kv, s.hd = heads, kv, h // heads
        s.n1, s.n2 = rms_norm(h), rms_norm(h)
        s.qkv = nn.Linear(h, h + 2 * kv * s.hd, bias=False)
        s.o = nn.Linear(h, h, bias=False)
        s.gate_up = nn.Linear(h, 2 * ffn, bias=False)
        s.down = nn.Linear(ffn, h, bias=False)

    def forward(s, x, cos, sin):
        b, t, h = x.shape
        q, k, v = s.qkv(s.n1(x)).split([h, s.kv * s.hd, s.kv * s.hd], dim=-1)
        q = q.view(b, t, s.heads, s.hd).transpose(1, 2)
        k = k.view(b, t, s.kv, s.hd).transpose(1, 2)
        v = v.view(b, t, s.kv, s.hd).transpose(1, 2)
        q, k = rope(q, cos, sin), rope(k, cos, sin)
        a = attention(q, k, v, s.heads // s.kv)
        x = x + s.o(a.transpose(1, 2).reshape(b, t, h))
        g, u = s.gate_up(s.n2(x)).chunk(2, dim=-1)
        return x + s.down(F.silu(g) * u)


def attention(q, k, v, group):
    sdpa = getattr(F, "scaled_dot_product_attention", None)
    if sdpa is not None:
        try:
            return sdpa(q, k, v, is_causal=True, enable_gqa=True)
        except TypeError:  # PyTorch before 2.5: no enable_gqa
            pass
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    if sdpa is not None:
        return sdpa(q, k, v, is_causal=True)
    t = q.shape[-2]  # PyTorch before 2.0 (the development machine's CPU check only)
    s = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    s = s.masked_fill(torch.ones(t, t, dtype=torch.bool, device=q.device).triu(1), float("-inf"))
    return s.softmax(-1) @ v


def rope(x, cos, sin):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2 :]
    return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)


class Llama(nn.Module):
    def __init__(s, layers, h, ffn, heads, kv, vocab, seq):
        super().__init__()
        s.emb = nn.Embedding(vocab, h)
        s.blocks = nn.ModuleList(Block(h, ffn, heads, kv) for _ in range(layers))
        s.norm = rms_norm(h)
        s.head = nn.Linear(h, vocab, bias=False)
        hd = h // heads
        inv = 1.0 / (10000.0 ** (torch.arange(0, hd, 2).float() / hd))
        ang = torch.outer(torch.arange(seq).float(), inv)
        s.register_buffer("cos", ang.cos(), persistent=False)
        s.register_buffer("sin", ang.sin(), persistent=False)

    def forward(s, tok, tgt):
        x = s.emb(tok)
        for blk in s.blocks:
            x = blk(x, s.cos, s.sin)
        logits = s.head(s.norm(x))
        return F.cross_entropy(logits.float().view(-1, logits.shape[-1]), tgt.view(-1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--layers", type=int, default=16)
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--compile", action="store_true")
    a = ap.parse_args()
    cfg = dict(layers=a.layers, h=2048, ffn=8192, heads=32, kv=8, vocab=32000, seq=2048)
    if a.small:
        cfg = dict(layers=2, h=64, ffn=128, heads=4, kv=2, vocab=256, seq=32)
    cuda = torch.cuda.is_available()
    dev = torch.device("cuda" if cuda else "cpu")
    torch.manual_seed(0)
    model = Llama(**cfg).to(dev)
    for p in model.parameters():
        if p.dim() == 2:
            nn.init.normal_(p, std=0.02)
    n = sum(p.numel() for p in model.parameters())
    if cuda:  # the kernel SDPA runs at the model's attention shape, under the same autocast dtype
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import sdpa_backend
        hd = cfg["h"] // cfg["heads"]
        q = torch.randn(a.batch, cfg["heads"], cfg["seq"], hd, device=dev, dtype=torch.bfloat16, requires_grad=True)
        kv = [torch.randn(a.batch, cfg["kv"], cfg["seq"], hd, device=dev, dtype=torch.bfloat16, requires_grad=True)
              for _ in range(2)]
        try:
            rep = sdpa_backend.report(q, kv[0], kv[1], torch.randn_like(q), is_causal=True, enable_gqa=True)
        except (TypeError, RuntimeError) as e:  # no enable_gqa before 2.5: the model repeats K/V itself
            rep = {"what": "sdpa backend", "error": str(e).splitlines()[0][:160]}
        print(json.dumps(rep), flush=True)
        del q, kv
    if a.compile:
        model = torch.compile(model)
    try:
        opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1, fused=cuda)
    except (TypeError, RuntimeError):
        opt = torch.optim.AdamW(model.parameters(), lr=3e-4, weight_decay=0.1)
    print(json.dumps({"device": torch.cuda.get_device_name(0) if cuda else "cpu", "torch": torch.__version__,
                      "params": n, "batch": a.batch, "seq": cfg["seq"]}), flush=True)
    times = []
    for step in range(a.steps):
        tok = torch.randint(0, cfg["vocab"], (a.batch, cfg["seq"]), device=dev)
        tgt = torch.randint(0, cfg["vocab"], (a.batch, cfg["seq"]), device=dev)
        if cuda:
            t0, t1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            t0.record()
        w0 = time.perf_counter()
        with torch.autocast(dev.type, dtype=torch.bfloat16):
            loss = model(tok, tgt)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        if cuda:
            t1.record()
            torch.cuda.synchronize()
            dt = t0.elapsed_time(t1) / 1e3
        else:
            dt = time.perf_counter() - w0
        times.append(dt)
        assert math.isfinite(loss.item()), "the loss is not finite"
        print(json.dumps({"step": step + 1, "loss": round(loss.item(), 4), "s": round(dt, 4)}), flush=True)
    rest = times[1:] or times
    mean = sum(rest) / len(rest)
    print(json.dumps({"what": "pytorch %s step" % ("compile" if a.compile else "eager"), "mean_s": mean, "tokens_per_s": a.batch * cfg["seq"] / mean,
                      "peak_mem_mib": torch.cuda.max_memory_allocated() / 2**20 if cuda else None}), flush=True)


if __name__ == "__main__":
    main()
