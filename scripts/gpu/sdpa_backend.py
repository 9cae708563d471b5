"""scripts/gpu/sdpa_backend.py: which kernel PyTorch's
torch.nn.functional.scaled_dot_product_attention runs, so that the peer of
plrun's attention is named (issue 38). Three witnesses, each printed:

  flags    torch.backends.cuda.{flash,cudnn,mem_efficient,math}_sdp_enabled(),
           and cuDNN's version (torch.backends.cudnn.version());
  choice   torch._fused_sdp_choice(q, k, v, ...), PyTorch's own dispatcher
           decision for these tensors (a private function: absent in some
           builds, then "unknown");
  kernels  the CUDA kernels a forward and backward launched, from
           torch.profiler, sorted into cudnn / flash / efficient / math by
           their names (the one witness that cannot be wrong about what ran).

time_backends() times forward+backward under torch.nn.attention.sdpa_kernel
with each backend alone (those that refuse the shape are reported so), the
fastest being the peer a fused kernel of plrun's must meet."""
import json

import torch
import torch.nn.functional as F

NAMES = ("cudnn", "flash", "efficient", "math")


def _kind(kernel):
    """cudnn / flash / efficient from a kernel's name, None for others (the
    names are printed too: cuDNN's own kernels may say "flash" as well, and
    a name with "cudnn" in it counts as cuDNN first)"""
    n = kernel.lower()
    if "cudnn" in n:
        return "cudnn"
    if "flash" in n:
        return "flash"
    if "fmha" in n or "efficient" in n or "mem_eff" in n:
        return "efficient"
    return None


def flags():
    b = torch.backends.cuda
    out = {}
    for name, fn in (("flash", "flash_sdp_enabled"), ("cudnn", "cudnn_sdp_enabled"),
                     ("efficient", "mem_efficient_sdp_enabled"), ("math", "math_sdp_enabled")):
        f = getattr(b, fn, None)
        out[name] = bool(f()) if f else None
    out["cudnn_version"] = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return out


def choice(q, k, v, **kw):
    f = getattr(torch, "_fused_sdp_choice", None)
    if f is None:
        return "unknown"
    try:
        idx = f(q, k, v, None, 0.0, kw.get("is_causal", False), None, kw.get("enable_gqa", False))
    except TypeError:
        try:
            idx = f(q, k, v, None, 0.0, kw.get("is_causal", False))
        except Exception as e:  # noqa: BLE001 - report, do not fail the check
            return "unknown (%s)" % type(e).__name__
    except Exception as e:  # noqa: BLE001
        return "unknown (%s)" % type(e).__name__
    try:
        from torch.nn.attention import SDPBackend
        return SDPBackend(idx).name.lower()
    except Exception:  # noqa: BLE001
        return "index %s" % idx


def kernels(q, k, v, g, **kw):
    """the attention kernels one forward+backward launched, by kind"""
    from torch.profiler import ProfilerActivity, profile
    for x in (q, k, v):
        x.grad = None
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        F.scaled_dot_product_attention(q, k, v, **kw).backward(g)
        torch.cuda.synchronize()
    seen = {}
    for e in prof.key_averages():
        kind = _kind(e.key)
        if kind:
            seen.setdefault(kind, []).append(e.key[:80])
    return seen


def report(q, k, v, g, **kw):
    """one JSON-able dict: the three witnesses"""
    seen = kernels(q, k, v, g, **kw)
    ran = sorted(seen) or ["math (no fused kernel seen)"]
    return {"what": "sdpa backend", "shape": list(q.shape), "kv_shape": list(k.shape), "dtype": str(q.dtype),
            "flags": flags(), "choice": choice(q, k, v, **kw), "ran": ran,
            "kernels": {kind: names[:3] for kind, names in seen.items()}}


def time_backends(bench, q, k, v, g, **kw):
    """forward+backward seconds under each backend alone; None where refused"""
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel
    except ImportError:
        return {}
    enum = {"cudnn": "CUDNN_ATTENTION", "flash": "FLASH_ATTENTION", "efficient": "EFFICIENT_ATTENTION",
            "math": "MATH"}
    out = {}
    for name in NAMES:
        be = getattr(SDPBackend, enum[name], None)
        if be is None:
            out[name] = None
            continue

        def fb():
            F.scaled_dot_product_attention(q, k, v, **kw).backward(g)
        try:
            with sdpa_kernel(be):
                out[name] = bench(fb)
        except RuntimeError as e:
            out[name] = None
            out[name + "_refused"] = str(e).splitlines()[0][:120]
    return out


if __name__ == "__main__":
    dev = torch.device("cuda")
    q = torch.randn(2, 8, 256, 64, device=dev, dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(2, 8, 256, 64, device=dev, dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(2, 8, 256, 64, device=dev, dtype=torch.bfloat16, requires_grad=True)
    print(json.dumps(report(q, k, v, torch.randn_like(q), is_causal=True)))
