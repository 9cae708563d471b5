#!/usr/bin/env bash
# head_dim and qk_norm (Qwen3; docs/model.md "Head width and qk-norm"): a
# dense Qwen3-like model solves under megatron, is refused under plrun with
# the lowering's reason (exit 1), and bench/fidelity --published reads
# head_dim and qk-norm from a row's kv_heads remarks, predicting a heavier
# model (fewer tokens/s) than the same row without them. plc export
# --megatron writes --kv-channels and --qk-layernorm; --torchtitan refuses.
set -u
: "${PLC_BIN:?}" "${PLC_ROOT:?}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/q.plan" <<'PLAN'
model "qwen3-dense" {
  layers     = 8
  hidden     = 2048
  ffn_hidden = 6144
  heads      = 32
  kv_heads   = 4
  head_dim   = 128
  qk_norm    = on
  vocab      = 151936
  seq_len    = 4096
}
cluster {
  gpu = "H100-SXM5-80GB"
}
train {
  global_batch = 64
  steps        = 10
  engine       = megatron
}
layout {
  attention = flash2
}
PLAN
fail() { echo "FAIL: $*"; exit 1; }
"$PLC_BIN/plc" solve "$tmp/q.plan" > "$tmp/solve.out" 2>&1 || fail "solve under megatron: $(cat "$tmp/solve.out")"
"$PLC_BIN/plc" solve -D train.engine=plrun "$tmp/q.plan" > "$tmp/plrun.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "solve under plrun exited $rc, expected 1"
grep -q "plrun's lowering runs head_dim = hidden / heads only" "$tmp/plrun.out" || fail "no reason: $(cat "$tmp/plrun.out")"
"$PLC_BIN/plc" compile -D train.engine=plrun "$tmp/q.plan" -o "$tmp/q.bin" > "$tmp/compile.out" 2>&1
rc=$?
[ "$rc" -eq 1 ] || fail "compile under plrun exited $rc, expected 1"
grep -q "plrun's lowering runs head_dim = hidden / heads only" "$tmp/compile.out" || fail "compile: $(cat "$tmp/compile.out")"
[ ! -e "$tmp/q.bin" ] || fail "compile wrote a plan"

# the exports: Megatron-LM's flags for both; torchtitan's Llama 3 decoder has neither
"$PLC_BIN/plc" export --megatron "$tmp/q.plan" > "$tmp/megatron.sh" 2> "$tmp/export.err" || fail "export --megatron: $(cat "$tmp/export.err")"
grep -q -- "--kv-channels 128$" "$tmp/megatron.sh" || fail "no --kv-channels 128"
grep -q -- "--qk-layernorm$" "$tmp/megatron.sh" || fail "no --qk-layernorm"
for flag in --kv-channels --qk-layernorm; do
    grep -qx -- "$flag" "$PLC_ROOT/docs/engines/megatron-core-0.19-flags.txt" || fail "$flag is not a Megatron-Core 0.19 flag"
done
"$PLC_BIN/plc" export --torchtitan -D train.engine=fsdp2 "$tmp/q.plan" > /dev/null 2> "$tmp/tt.err"
rc=$?
[ "$rc" -eq 1 ] || fail "export --torchtitan exited $rc, expected 1"
grep -q "qk_norm = on: this export builds on torchtitan" "$tmp/tt.err" || fail "torchtitan's refusal: $(cat "$tmp/tt.err")"

hdr='row_id,source,table,model,arch,layers,hidden,ffn_hidden,heads,kv_heads,vocab,seq_len,tied,gpu,gpus,global_batch,tp,pp,dp,cp,vpp,micro_batch,schedule,recompute,sp,zero,attention,precision,framework,src_metric,src_value,src_mfu_pct,src_flop_formula,meas_tok_s_gpu,notes'
row='test,Qwen3-like,,Qwen3-dense,llama,8,2048,6144,32,KV,151936,4096,off,H100-SXM5-80GB,8,64,1,1,8,1,1,1,1f1b,none,off,1,flash2,bf16,Megatron-Core r0.8,tok/s,1000,,,1000,dense'
{ echo "$hdr"; echo "${row/KV/\"4 (GQA; head_dim 128; qk-layernorm)\"}"; echo "${row/test,/plain,}" | sed 's/,KV,/,4,/'; } > "$tmp/rows.csv"
/usr/bin/python3 "$PLC_ROOT/bench/fidelity" --plc "$PLC_BIN/plc" --published "$tmp/rows.csv" > "$tmp/fid.csv" 2> "$tmp/fid.err" \
    || fail "fidelity: $(cat "$tmp/fid.err")"
with=$(awk -F, '$1 == "test" {print $3}' "$tmp/fid.csv")
without=$(awk -F, '$1 == "plain" {print $3}' "$tmp/fid.csv")
echo "tokens/s/GPU: head_dim 128 + qk-norm $with, hidden / heads = 64 $without"
awk -v a="$with" -v b="$without" 'BEGIN { exit !(a + 0 > 0 && b + 0 > 0 && a + 0 < b + 0) }' \
    || fail "expected a smaller positive prediction with head_dim 128 ($with) than without ($without)"
echo "head_dim: ok"
