"""scripts/gpu/peer.py: the peers of plrun's CUDA kernels, measured by PyTorch
on the same GPU in the same call: cuBLAS bf16 GEMMs of the 1B plan's shapes
(and one 8192^3 product, the card's matrix ceiling) and
torch.nn.functional.scaled_dot_product_attention forward + backward at the
plan's attention shape, with the kernel SDPA ran named (scripts/gpu/sdpa_backend.py:
the enabled backends, PyTorch's dispatcher choice, the kernels the profiler
saw) and each backend alone timed. Times are CUDA-event medians over random
inputs."""
import os, sys, json, torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sdpa_backend  # noqa: E402

def bench(fn, reps=20, warm=3):
    for _ in range(warm):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); fn(); b.record(); torch.cuda.synchronize()
        times.append(a.elapsed_time(b) / 1e3)
    times.sort()
    return times[len(times) // 2]

def main():
    tokens, hidden, ffn, heads, kv, vocab, seq = 32768, 2048, 8192, 32, 8, 32000, 2048
    hd = hidden // heads
    dev = torch.device("cuda")
    print("device", torch.cuda.get_device_name(0), "torch", torch.__version__)
    rows = []
    shapes = [("ceiling 8192^3", 8192, 8192, 8192),
              ("qkv", tokens, hidden + 2 * kv * hd, hidden), ("attn out", tokens, hidden, hidden),
              ("gate+up", tokens, 2 * ffn, hidden), ("down", tokens, hidden, ffn), ("logits", tokens, vocab, hidden)]
    for name, m, n, k in shapes:
        a = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        b = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
        t = bench(lambda: a @ b)
        rows.append({"what": "gemm " + name, "m": m, "n": n, "k": k, "s": t, "tflops": 2 * m * n * k / t / 1e12})
        del a, b
    b = tokens // seq
    q = torch.randn(b, heads, seq, hd, device=dev, dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(b, kv, seq, hd, device=dev, dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(b, kv, seq, hd, device=dev, dtype=torch.bfloat16, requires_grad=True)
    kk, vv = (x.repeat_interleave(heads // kv, dim=1).detach().requires_grad_() for x in (k, v))
    g = torch.randn(b, heads, seq, hd, device=dev, dtype=torch.bfloat16)
    F = torch.nn.functional.scaled_dot_product_attention
    fl = 4 * b * heads * seq * seq * hd / 2  # causal forward: QK^T and PV, half the square
    t_f = bench(lambda: F(q, kk, vv, is_causal=True))
    def fb():
        o = F(q, kk, vv, is_causal=True); o.backward(g)
    t_fb = bench(fb)
    rows.append({"what": "sdpa forward", "s": t_f, "tflops": fl / t_f / 1e12})
    rows.append({"what": "sdpa forward+backward", "s": t_fb, "tflops": 3.5 * fl / t_fb / 1e12})
    rows.append(sdpa_backend.report(q, kk, vv, g, is_causal=True))
    for name, t in sdpa_backend.time_backends(bench, q, kk, vv, g, is_causal=True).items():
        if name.endswith("_refused"):
            rows.append({"what": "sdpa %s alone refused" % name[:-8], "why": t})
        elif t is not None:
            rows.append({"what": "sdpa %s alone forward+backward" % name, "s": t, "tflops": 3.5 * fl / t / 1e12})
    for r in rows:
        print(json.dumps(r))

if __name__ == "__main__":
    sys.exit(main())
