#!/usr/bin/env bash
# Checkpoints hold global tensors: a run stopped after 4 steps and resumed
# (same layout, then another layout, then from 8 ranks to 1) continues the
# uninterrupted run's loss curve: bitwise on the same layout, within 1e-5 on
# another. Then the GPT block: Hugging Face's tensor names, resumed under tp2+sp.
set -u
. "$(dirname "$0")/plrun_lib.bash"
need_mpi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
compile() { "$PLC" compile "$PLC_ROOT/examples/tiny.plan" "$@" || die "plc compile failed"; }
compile -D cluster.gpus_per_node=1 -D layout.dp=1 -D layout.tp=1 -D layout.pp=1 -D layout.cp=1 -o "$tmp/one.bin"
compile -D cluster.gpus_per_node=2 -D layout.dp=2 -D layout.tp=1 -D layout.pp=1 -D layout.cp=1 -D layout.zero=1 -o "$tmp/dp2.bin"
run_ranks 1 "$tmp/one.bin" --steps 8 --metrics "$tmp/full.jsonl" >"$tmp/log" 2>&1 || { cat "$tmp/log"; die "full run failed"; }
run_ranks 1 "$tmp/one.bin" --steps 4 --checkpoint "$tmp/ck.safetensors" >"$tmp/log" 2>&1 || { cat "$tmp/log"; die "first half failed"; }
[ -s "$tmp/ck.safetensors" ] || die "no checkpoint written"
run_ranks 1 "$tmp/one.bin" --steps 8 --resume "$tmp/ck.safetensors" --metrics "$tmp/same.jsonl" >"$tmp/log" 2>&1 ||
    { cat "$tmp/log"; die "resume on the same layout failed"; }
run_ranks 2 "$tmp/dp2.bin" --steps 8 --resume "$tmp/ck.safetensors" --metrics "$tmp/other.jsonl" >"$tmp/log" 2>&1 ||
    { cat "$tmp/log"; die "resume under dp=2 zero=1 failed"; }
losses "$tmp/full.jsonl" | tail -n 4 >"$tmp/full.loss"
losses "$tmp/same.jsonl" >"$tmp/same.loss"
losses "$tmp/other.jsonl" >"$tmp/other.loss"
[ "$(wc -l <"$tmp/same.loss")" -eq 4 ] || die "the resumed run should run steps 4..7"
grep -q '"step":4' "$tmp/same.jsonl" || die "the resumed run does not start at step 4"
cmp -s "$tmp/full.loss" "$tmp/same.loss" || { paste "$tmp/full.loss" "$tmp/same.loss"; die "same-layout resume differs"; }
dev=$(max_rel_dev "$tmp/other.loss" "$tmp/full.loss")
echo "resume under dp=2 zero=1: max relative deviation $dev"
awk -v d="$dev" 'BEGIN { exit !(d != "inf" && d + 0 <= 1e-5) }' || die "resume under another layout deviates"
# the other way round: a checkpoint written by 8 ranks (tp 2 x pp 2 x dp 2,
# ZeRO 2: shards gathered from every rank) resumes on one rank
compile -D cluster.gpus_per_node=8 -D layout.dp=2 -D layout.tp=2 -D layout.pp=2 -D layout.cp=1 \
    -D layout.zero=2 -D layout.micro_batch=4 -o "$tmp/eight.bin"
run_ranks 8 "$tmp/eight.bin" --steps 4 --checkpoint "$tmp/ck8.safetensors" >"$tmp/log" 2>&1 ||
    { cat "$tmp/log"; die "the 8-rank first half failed"; }
run_ranks 1 "$tmp/one.bin" --steps 8 --resume "$tmp/ck8.safetensors" --metrics "$tmp/from8.jsonl" >"$tmp/log" 2>&1 ||
    { cat "$tmp/log"; die "resume of the 8-rank checkpoint on one rank failed"; }
losses "$tmp/from8.jsonl" >"$tmp/from8.loss"
dev=$(max_rel_dev "$tmp/from8.loss" "$tmp/full.loss")
echo "8-rank checkpoint resumed on one rank: max relative deviation $dev"
awk -v d="$dev" 'BEGIN { exit !(d != "inf" && d + 0 <= 1e-5) }' || die "resume of the 8-rank checkpoint deviates"
# a checkpoint of another model is refused, naming what differs (and, when
# the model is allowed to change, the first tensor whose shape differs)
cat >"$tmp/other.plan" <<PLAN
model "other" { layers = 1  hidden = 32  ffn_hidden = 64  heads = 2  kv_heads = 2  vocab = 64  seq_len = 16 }
cluster { gpu = "host-cpu"  nodes = 1  gpus_per_node = 1 }
train { global_batch = 2  steps = 2  precision = fp32  seed = 1  data = synthetic }
layout { dp = 1  tp = 1  pp = 1 }
PLAN
"$PLC" compile "$tmp/other.plan" -o "$tmp/other.bin" || die "plc compile failed"
if "$PLRUN" "$tmp/other.bin" --resume "$tmp/ck.safetensors" >"$tmp/log" 2>&1; then die "a foreign checkpoint was accepted"; fi
grep -q "model.layers: checkpoint 2, plan 1" "$tmp/log" || { cat "$tmp/log"; die "the refusal does not name the model's change"; }
allow=""
for k in layers hidden ffn_hidden heads vocab seq_len; do allow="$allow --allow-changed model.$k"; done
for k in global_batch lr.peak lr.floor lr.warmup lr.decay_steps; do allow="$allow --allow-changed train.$k"; done
# shellcheck disable=SC2086
if "$PLRUN" "$tmp/other.bin" --resume "$tmp/ck.safetensors" $allow >"$tmp/log" 2>&1; then die "a foreign checkpoint was accepted"; fi
grep -q "tok_emb\|layers\.0" "$tmp/log" || { cat "$tmp/log"; die "the refusal does not name the tensor"; }
# the GPT block: its checkpoint names tensors as Hugging Face's GPT-2 does
# (docs/model.md) and resumes under tp2 + sp within 1e-5
gpt() { "$PLC" compile "$PLC_ROOT/examples/tiny-gpt.plan" "$@" || die "plc compile failed (GPT)"; }
gpt -D cluster.gpus_per_node=1 -o "$tmp/g1.bin"
gpt -D cluster.gpus_per_node=2 -D layout.tp=2 -D layout.sp=on -o "$tmp/g2.bin"
run_ranks 1 "$tmp/g1.bin" --steps 8 --metrics "$tmp/gfull.jsonl" >"$tmp/log" 2>&1 || { cat "$tmp/log"; die "GPT full run failed"; }
run_ranks 1 "$tmp/g1.bin" --steps 4 --checkpoint "$tmp/gck.safetensors" >"$tmp/log" 2>&1 || { cat "$tmp/log"; die "GPT first half failed"; }
for name in wte.weight wpe.weight h.0.ln_1.bias h.3.attn.q.bias h.1.attn.c_proj.weight h.2.mlp.c_fc.weight ln_f.bias; do
    grep -aq "\"$name\"" "$tmp/gck.safetensors" || die "the GPT checkpoint has no tensor $name"
done
run_ranks 2 "$tmp/g2.bin" --steps 8 --resume "$tmp/gck.safetensors" --metrics "$tmp/gother.jsonl" >"$tmp/log" 2>&1 ||
    { cat "$tmp/log"; die "GPT resume under tp=2 sp failed"; }
losses "$tmp/gfull.jsonl" | tail -n 4 >"$tmp/gfull.loss"
losses "$tmp/gother.jsonl" >"$tmp/gother.loss"
gdev=$(max_rel_dev "$tmp/gother.loss" "$tmp/gfull.loss")
awk -v d="$gdev" 'BEGIN { exit !(d != "inf" && d + 0 <= 1e-5) }' || die "GPT resume under tp=2 sp deviates by $gdev"
echo "GPT checkpoint: Hugging Face names, resume under tp=2 sp within $gdev"
echo "checkpoint: resume bitwise on the same layout, within 1e-5 under dp=2 zero=1 and from 8 ranks to 1"
