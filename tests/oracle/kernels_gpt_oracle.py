#!/usr/bin/python3
"""kernels_gpt_oracle.py: the GPT block's CPU kernels against PyTorch's own
modules, forward and backward, on the cases that the unit suite
"kernels_gpt_export" writes (tests/unit/test_kernels_gpt.c):

    ln    torch.nn.LayerNorm (eps 1e-5): y, row mean and rstd, dx, dweight, dbias
    gelu  torch.nn.functional.gelu(approximate="tanh"): y, dx
    lin   torch.nn.Linear with bias (plc stores W as [in, out]): y, dx, dW, dbias
    pos   torch.nn.Embedding over the rank's absolute positions added to x: y, dtable

PyTorch computes in float64 from the same fp32 inputs; every plc output must
agree within --tol times the largest magnitude of PyTorch's result.

Usage: /usr/bin/python3 kernels_gpt_oracle.py FILE.safetensors [--tol 1e-5]
Exit status: 0 all agree, 1 a disagreement, 2 unusable input."""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch_oracle import OracleInputError, st_load  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("file", help="safetensors written by unit_tests kernels_gpt_export")
    ap.add_argument("--tol", type=float, default=1e-5)
    args = ap.parse_args()
    try:
        t, _ = st_load(args.file)
    except OracleInputError as e:
        print(f"kernels_gpt_oracle: {e}", file=sys.stderr)
        return 2
    torch.set_grad_enabled(True)

    def get(name):
        if name not in t:
            raise OracleInputError(f"{args.file}: no tensor '{name}'")
        return torch.from_numpy(t[name]).to(torch.float64)

    failures = 0

    def check(what, plc, ref):
        nonlocal failures
        ref = ref.detach()
        scale = ref.abs().max().item()
        err = (get(plc) - ref).abs().max().item()
        ok = scale > 0 and err <= args.tol * scale
        print(f"  {'ok  ' if ok else 'FAIL'} {what:<28} max |plc - torch| = {err:.3e}  (scale {scale:.3g})")
        failures += not ok

    try:
        # LayerNorm
        x = get("ln.x").requires_grad_(True)
        ln = torch.nn.LayerNorm(x.shape[-1], eps=1e-5, dtype=torch.float64)
        with torch.no_grad():
            ln.weight.copy_(get("ln.w"))
            ln.bias.copy_(get("ln.b"))
        y = ln(x)
        y.backward(get("ln.dy"))
        var, mean = torch.var_mean(x.detach(), dim=-1, unbiased=False)
        check("layernorm y", "ln.y", y)
        check("layernorm mean", "ln.mean", mean)
        check("layernorm rstd", "ln.rstd", 1.0 / torch.sqrt(var + 1e-5))
        check("layernorm dx", "ln.dx", x.grad)
        check("layernorm dweight", "ln.dw", ln.weight.grad)
        check("layernorm dbias", "ln.db", ln.bias.grad)

        # GELU, tanh approximation
        x = get("gelu.x").requires_grad_(True)
        y = F.gelu(x, approximate="tanh")
        y.backward(get("gelu.dy"))
        check("gelu y", "gelu.y", y)
        check("gelu dx", "gelu.dx", x.grad)

        # a linear layer with bias
        x = get("lin.x").requires_grad_(True)
        w = get("lin.w")
        lin = torch.nn.Linear(w.shape[0], w.shape[1], bias=True, dtype=torch.float64)
        with torch.no_grad():
            lin.weight.copy_(w.t())
            lin.bias.copy_(get("lin.bias"))
        y = lin(x)
        y.backward(get("lin.dy"))
        check("linear y", "lin.y", y)
        check("linear dx", "lin.dx", x.grad)
        check("linear dweight", "lin.dw", lin.weight.grad.t())
        check("linear dbias", "lin.dbias", lin.bias.grad)

        # learned positions of a context-parallel chunk
        x = get("pos.x")
        table = get("pos.table")
        if "pos.positions" not in t:
            raise OracleInputError(f"{args.file}: no tensor 'pos.positions'")
        positions = torch.from_numpy(t["pos.positions"]).to(torch.int64)
        emb = torch.nn.Embedding(table.shape[0], table.shape[1], dtype=torch.float64)
        with torch.no_grad():
            emb.weight.copy_(table)
        y = x + emb(positions)[None]
        y.backward(get("pos.dy"))
        check("positions y", "pos.y", y)
        check("positions dtable", "pos.dtable", emb.weight.grad)
    except (OracleInputError, RuntimeError) as e:
        print(f"kernels_gpt_oracle: {e}", file=sys.stderr)
        return 2
    print(f"kernels_gpt_oracle: {'all agree' if not failures else f'{failures} disagreement(s)'} (tol {args.tol:g})")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
