#!/usr/bin/env bash
# The padded vocabulary (docs/model.md) in checkpoints: a model with a
# vocabulary of 67 trained 5 steps under tp = 2 saves its real 67 rows (not
# the 68 of the padded blocks), and resuming it under tp = 1 continues as an
# uninterrupted tp = 1 run (losses within 1e-6 relative: the padding took no
# part in the loss and got no gradient; only the order of fp32 sums differs).
set -u
. "$(dirname "$0")/plrun_lib.bash"
need_mpi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/pad.plan" <<'PLAN'
model "pad" {
  layers = 2
  hidden = 32
  ffn_hidden = 64
  heads = 4
  kv_heads = 2
  vocab = 67
  seq_len = 16
}
cluster {
  gpu = "host-cpu"
  nodes = 1
  gpus_per_node = 2
}
train {
  global_batch = 4
  steps = 10
  precision = fp32
  seed = 3
  data = synthetic
  lr.peak = 3e-3
}
layout {
  dp = 1
  pp = 1
  cp = 1
  attention = naive
}
PLAN
for tp in 1 2; do
    "$PLC" compile "$tmp/pad.plan" -D layout.tp=$tp -D cluster.gpus_per_node=$tp -o "$tmp/tp$tp.bin" >/dev/null ||
        die "compile tp = $tp"
done
run_ranks 2 "$tmp/tp2.bin" --steps 5 --checkpoint "$tmp/ck.safetensors" >"$tmp/a.log" 2>&1 || { cat "$tmp/a.log"; die "tp = 2 run"; }
run_ranks 1 "$tmp/tp1.bin" --steps 10 --metrics "$tmp/full.jsonl" >"$tmp/b.log" 2>&1 || { cat "$tmp/b.log"; die "tp = 1 run"; }
run_ranks 1 "$tmp/tp1.bin" --steps 10 --resume "$tmp/ck.safetensors" --metrics "$tmp/resumed.jsonl" >"$tmp/c.log" 2>&1 ||
    { cat "$tmp/c.log"; die "resume under tp = 1"; }
losses "$tmp/full.jsonl" | tail -n 5 >"$tmp/full.loss"
losses "$tmp/resumed.jsonl" | tail -n 5 >"$tmp/resumed.loss"
dev=$(max_rel_dev "$tmp/resumed.loss" "$tmp/full.loss")
awk -v d="$dev" 'BEGIN { exit !(d != "inf" && d + 0 <= 1e-6) }' ||
    die "resumed losses differ from the uninterrupted run by $dev relative"
if [ -x /usr/bin/python3 ]; then
    /usr/bin/python3 - "$tmp/ck.safetensors" <<'PY' || die "the checkpoint does not hold the real vocabulary"
import json, struct, sys
b = open(sys.argv[1], "rb").read()
h = json.loads(b[8:8 + struct.unpack("<Q", b[:8])[0]])
assert h["tok_emb"]["shape"] == [67, 32], h["tok_emb"]["shape"]
assert h["lm_head"]["shape"] == [32, 67], h["lm_head"]["shape"]
PY
fi
echo "vocab padding: a tp = 2 checkpoint of vocab 67 holds 67 rows and resumes under tp = 1 (max rel dev $dev)"
