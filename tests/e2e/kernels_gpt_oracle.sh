#!/usr/bin/env bash
# The GPT block's CPU kernels (LayerNorm, GELU, bias, learned positions)
# against PyTorch's own modules: the unit suite kernels_gpt_export writes
# fixed cases with plc's results, tests/oracle/kernels_gpt_oracle.py
# recomputes them with torch.nn.LayerNorm, F.gelu(approximate="tanh"),
# nn.Linear and nn.Embedding (float64) and compares, forward and backward.
set -u
: "${PLC_BIN:?PLC_BIN must name the directory holding the binaries}"
: "${PLC_ROOT:?PLC_ROOT must name the repository root}"
skip() { echo "$*"; exit 77; }
[ -x /usr/bin/python3 ] || skip "skipped: /usr/bin/python3 not found"
/usr/bin/python3 -c 'import torch, numpy' 2>/dev/null || skip "skipped: python3-torch or numpy not installed"
[ -x "$PLC_BIN/unit_tests" ] || skip "skipped: $PLC_BIN/unit_tests not built (make $PLC_BIN/unit_tests)"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$PLC_ROOT/tests" && PLC_KERNEL_EXPORT="$tmp/kernels_gpt.safetensors" "$PLC_BIN/unit_tests" kernels_gpt_export) \
    >"$tmp/unit.log" 2>&1 || { cat "$tmp/unit.log"; echo "FAIL: unit_tests kernels_gpt_export"; exit 1; }
[ -s "$tmp/kernels_gpt.safetensors" ] || { cat "$tmp/unit.log"; echo "FAIL: no export written"; exit 1; }
/usr/bin/python3 "$PLC_ROOT/tests/oracle/kernels_gpt_oracle.py" "$tmp/kernels_gpt.safetensors" --tol 1e-5 ||
    { echo "FAIL: the GPT kernels disagree with PyTorch"; exit 1; }
