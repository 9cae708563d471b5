#!/usr/bin/env bash
# Hugging Face checkpoints (docs/checkpoint.md): plrun --export-hf writes
# trained weights under transformers' names and layouts, and --init-from
# starts a run from them.
#  - Llama and GPT-2: the first step's loss of a run started from the export
#    equals the loss transformers' forward pass computes on the file
#    (tests/e2e/hf_reference.py: rotate-half RoPE, nn.Linear / Conv1D
#    layouts, float64) within 1e-5, so names, shapes and the q/k
#    permutation are transformers';
#  - plc -> Hugging Face -> plc: the weights a run starts from equal, bit for
#    bit, those of plrun's own checkpoint of the exporting run;
#  - --init-from under another layout (2 ranks, tp 2) gives the same loss
#    within 1e-5, and its --export-hf (gathered from the shards) is the same
#    file byte for byte;
#  - errors exit 1 naming the problem: a missing tensor, a model without a
#    GPT-2 counterpart, --init-from with --resume, a missing path.
set -u
. "$(dirname "$0")/plrun_lib.bash"
need_mpi
PY=/usr/bin/python3
[ -x "$PY" ] || skip "skipped: /usr/bin/python3 not found"
"$PY" -c 'import torch, numpy' 2>/dev/null || skip "skipped: python3-torch or numpy not installed"
REF="$PLC_ROOT/tests/e2e/hf_reference.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# check NAME PLAN TPPLAN: export after 3 steps, restart from the export,
# compare with transformers' loss, with plc's checkpoint, and under tp 2
check() {
    local name=$1 plan=$2 tp=$3 d="$tmp/$1"
    mkdir -p "$d"
    run_ranks 1 "$plan" --steps 3 --export-hf "$d/hf" --checkpoint "$d/ck.safetensors" >"$d/log" 2>&1 ||
        { cat "$d/log"; die "$name: the exporting run failed"; }
    grep -q "Hugging Face checkpoint: $d/hf/model.safetensors" "$d/log" || { cat "$d/log"; die "$name: no export line"; }
    run_ranks 1 "$plan" --steps 1 --init-from "$d/hf" --export-oracle "$d/or" >"$d/log" 2>&1 ||
        { cat "$d/log"; die "$name: the run from the export failed"; }
    grep -q "weights from the Hugging Face checkpoint $d/hf" "$d/log" || die "$name: no --init-from line"
    "$PY" "$REF" "$d/hf" "$d/or/batches.safetensors" "$d/or/metrics.jsonl" ||
        die "$name: plrun's loss from the export differs from transformers' forward pass"
    # plc -> HF -> plc: the starting weights are the checkpoint's, bit for bit
    "$PY" - "$d/ck.safetensors" "$d/or/weights.safetensors" <<'PY' || die "$name: the round trip changed the weights"
import json, struct, sys
def tensors(p):
    raw = open(p, "rb").read(); n = struct.unpack("<Q", raw[:8])[0]; h = json.loads(raw[8:8 + n]); d = raw[8 + n:]
    return {k: d[v["data_offsets"][0]:v["data_offsets"][1]] for k, v in h.items() if k != "__metadata__"}
ck, w = tensors(sys.argv[1]), tensors(sys.argv[2])
names = [k for k in w]
bad = [k for k in names if ck.get(k) != w[k]]
print("round trip: %d weight tensors, %d differ" % (len(names), len(bad)))
sys.exit(1 if bad or not names else 0)
PY
    run_ranks 2 "$tp" --steps 1 --init-from "$d/hf/model.safetensors" --metrics "$d/tp.jsonl" >"$d/log" 2>&1 ||
        { cat "$d/log"; die "$name: --init-from under tp 2 failed"; }
    # gathered from tp shards: the export of the loaded weights is the same file
    run_ranks 2 "$tp" --steps 0 --init-from "$d/hf" --export-hf "$d/hf_tp" >"$d/log" 2>&1 ||
        { cat "$d/log"; die "$name: --export-hf under tp 2 failed"; }
    cmp -s "$d/hf/model.safetensors" "$d/hf_tp/model.safetensors" || die "$name: tp 2 re-export differs"
    cmp -s "$d/hf/config.json" "$d/hf_tp/config.json" || die "$name: tp 2 config.json differs"
    losses "$d/or/metrics.jsonl" >"$d/one.loss"
    losses "$d/tp.jsonl" >"$d/tp.loss"
    dev=$(max_rel_dev "$d/tp.loss" "$d/one.loss")
    echo "$name: --init-from under tp 2: relative deviation $dev"
    awk -v d="$dev" 'BEGIN { exit !(d != "inf" && d + 0 <= 1e-5) }' || die "$name: the tp 2 run deviates"
}

one="-D cluster.gpus_per_node=1 -D layout.dp=1 -D layout.tp=1 -D layout.pp=1 -D layout.cp=1"
two="-D cluster.gpus_per_node=2 -D layout.dp=1 -D layout.tp=2 -D layout.pp=1 -D layout.cp=1"
# shellcheck disable=SC2086
"$PLC" compile "$PLC_ROOT/examples/tiny.plan" $one -o "$tmp/llama1.bin" >/dev/null || die "plc compile failed"
# shellcheck disable=SC2086
"$PLC" compile "$PLC_ROOT/examples/tiny.plan" $two -o "$tmp/llama2.bin" >/dev/null || die "plc compile failed"
check llama "$tmp/llama1.bin" "$tmp/llama2.bin"
gpt2="-D model.positions=learned -D model.kv_heads=4"
# shellcheck disable=SC2086
"$PLC" compile "$PLC_ROOT/examples/tiny-gpt.plan" $one $gpt2 -o "$tmp/gpt1.bin" >/dev/null || die "plc compile failed"
# shellcheck disable=SC2086
"$PLC" compile "$PLC_ROOT/examples/tiny-gpt.plan" $two $gpt2 -o "$tmp/gpt2.bin" >/dev/null || die "plc compile failed"
check gpt2 "$tmp/gpt1.bin" "$tmp/gpt2.bin"

# errors: exit 1, naming the problem
expect_error() { # WHAT NEEDLE ARGS...
    local what=$1 needle=$2; shift 2
    run_ranks 1 "$@" >"$tmp/err.log" 2>&1
    local rc=$?
    [ "$rc" -eq 1 ] || { cat "$tmp/err.log"; die "$what: exit $rc, expected 1"; }
    grep -qF -- "$needle" "$tmp/err.log" || { cat "$tmp/err.log"; die "$what: no '$needle' in the message"; }
}
"$PY" - "$tmp/llama/hf/model.safetensors" "$tmp/partial.safetensors" <<'PY' || die "could not write a partial file"
import json, struct, sys
raw = open(sys.argv[1], "rb").read(); n = struct.unpack("<Q", raw[:8])[0]; h = json.loads(raw[8:8 + n]); d = raw[8 + n:]
drop = "model.layers.1.mlp.down_proj.weight"
out, data, off = {}, b"", 0
for k in sorted(x for x in h if x not in ("__metadata__", drop)):
    b, e = h[k]["data_offsets"]; out[k] = dict(h[k], data_offsets=[off, off + e - b]); data += d[b:e]; off += e - b
hdr = json.dumps(out).encode(); hdr += b" " * (-len(hdr) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(hdr)) + hdr + data)
PY
expect_error "a missing tensor" "no tensor model.layers.1.mlp.down_proj.weight (plc's layers.1.w_down)" \
    "$tmp/llama1.bin" --steps 1 --init-from "$tmp/partial.safetensors"
expect_error "a GPT-2 checkpoint for a Llama plan" "model_type is \"gpt2\"" \
    "$tmp/llama1.bin" --steps 1 --init-from "$tmp/gpt2/hf"
# shellcheck disable=SC2086
"$PLC" compile "$PLC_ROOT/examples/tiny-gpt.plan" $one -D model.kv_heads=4 -D model.positions=rope -o "$tmp/gptrope.bin" >/dev/null || die "plc compile failed"
expect_error "a GPT block with RoPE" "GPT2Config has learned positions only" \
    "$tmp/gptrope.bin" --steps 1 --export-hf "$tmp/nope"
expect_error "--init-from and --resume" "choose one" \
    "$tmp/llama1.bin" --init-from "$tmp/llama/hf" --resume "$tmp/llama/ck.safetensors"
expect_error "a missing path" "--init-from $tmp/absent: No such file or directory" \
    "$tmp/llama1.bin" --steps 1 --init-from "$tmp/absent"
echo "hf_checkpoint: ok"
