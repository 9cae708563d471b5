#!/usr/bin/env bash
# Mixture-of-experts and latent-attention specs (docs/model.md): the four
# MoE examples check; under plrun (whose lowering runs MoE layers in fp32
# with ep = 1) plc solve and compile refuse the bf16 ones with exit 1 and
# the reason, and write no file, and take the fp32 tiny one; plc export
# writes Mixtral's Megatron-LM script; under megatron and fsdp2 plc solve
# lays them out with ep and etp (docs/solver.md); a -D override of the MoE
# keys is checked as the file's keys are.
set -u
. "$(dirname "$0")/plc_lib.bash"
ex=$PLC_ROOT/examples
for name in mixtral-8x7b-h100 qwen3-30b-a3b-h100 deepseek-v3-h100 tiny-moe; do
    "$PLC" check -q "$ex/$name.plan" || die "plc check $name"
done
refuses() { # command, spec, expected text
    local cmd=$1 spec=$2 want=$3
    rm -f "$tmp/out.bin"
    case $cmd in
    compile) "$PLC" compile "$spec" -o "$tmp/out.bin" >"$tmp/out" 2>"$tmp/err" ;;
    export) "$PLC" export --megatron "$spec" -o "$tmp/out.bin" >"$tmp/out" 2>"$tmp/err" ;;
    *) "$PLC" "$cmd" "$spec" >"$tmp/out" 2>"$tmp/err" ;;
    esac
    local rc=$?
    [ $rc -eq 1 ] || die "plc $cmd $(basename "$spec"): exit $rc, expected 1: $(cat "$tmp/err")"
    grep -q "error: .*$want" "$tmp/err" || die "plc $cmd $(basename "$spec"): no '$want' in: $(cat "$tmp/err")"
    [ ! -e "$tmp/out.bin" ] || die "plc $cmd $(basename "$spec") wrote a file"
}
# plrun runs MoE layers in fp32 with ep = 1 (docs/model.md): the bf16
# examples are refused with the reason (DeepSeek-V3 by its latent attention
# where the solver sees that first), the fp32 tiny one solves and compiles
plrun='plrun runs mixture-of-experts layers in fp32 only\|latent attention (kv_lora_rank = 512): engine plrun does not run it'
for cmd in solve compile; do
    refuses $cmd "$ex/mixtral-8x7b-h100.plan" "$plrun"
    refuses $cmd "$ex/deepseek-v3-h100.plan" "$plrun"
done
"$PLC" export --megatron "$ex/mixtral-8x7b-h100.plan" -o "$tmp/mixtral.sh" >"$tmp/out" 2>"$tmp/err" ||
    die "plc export --megatron mixtral: $(cat "$tmp/err")"
grep -q -- "--num-experts 8" "$tmp/mixtral.sh" || die "the Mixtral script lacks --num-experts 8"
for cmd in solve explain trace; do
    "$PLC" $cmd "$ex/tiny-moe.plan" >"$tmp/out" 2>"$tmp/err" || die "plc $cmd tiny-moe: $(cat "$tmp/err")"
done
"$PLC" compile "$ex/tiny-moe.plan" -o "$tmp/tiny-moe.bin" >"$tmp/out" 2>"$tmp/err" || die "plc compile tiny-moe: $(cat "$tmp/err")"
"$PLC" dump "$tmp/tiny-moe.bin" | grep -q "moe:" || die "plc dump of tiny-moe's plan has no moe: line"
# under an engine that runs them (docs/solver.md, Mixture of experts): solved,
# with the ep and etp columns, and the counts in the header
for e in megatron fsdp2; do
    "$PLC" solve -D train.engine=$e -D layout.zero=auto "$ex/mixtral-8x7b-h100.plan" >"$tmp/out" 2>"$tmp/err" ||
        die "plc solve mixtral under $e: $(cat "$tmp/err")"
    grep -q "^rank .* ep etp " "$tmp/out" || die "no ep, etp columns under $e: $(head -8 "$tmp/out")"
done
grep -q "46,702,792,704\|46.70 B" "$tmp/out" || die "Mixtral's parameter count: $(head -2 "$tmp/out")"
"$PLC" solve -D train.engine=megatron "$ex/deepseek-v3-h100.plan" >"$tmp/out" 2>"$tmp/err" ||
    die "plc solve deepseek-v3 under megatron: $(cat "$tmp/err")"
# latent attention alone (no experts) is refused by its own name
sed -e '/^  experts/d; /^  shared_experts/d; /^  expert_ffn_hidden/d; /^  dense_layers/d; /^  router/d' \
    -e '/^  route_scale/d; /^  aux_loss/d; /^  expert_bias/d; /^  capacity_factor/d' \
    "$ex/deepseek-v3-h100.plan" >"$tmp/mla.plan"
"$PLC" check -q "$tmp/mla.plan" || die "plc check of DeepSeek-V3 without experts"
refuses solve "$tmp/mla.plan" 'latent attention (kv_lora_rank = 512): engine plrun does not run it'
# -D: valid overrides pass, a broken one is reported at the command line
"$PLC" check -q "$ex/tiny-moe.plan" -D model.experts=8 -D model.capacity_factor=1.5 -D model.router=sigmoid ||
    die "valid MoE overrides rejected"
if "$PLC" check -q "$ex/tiny-moe.plan" -D model.experts_per_token=5 2>"$tmp/err"; then die "top-k 5 of 4 experts accepted"; fi
grep -q "^<command line>:1:25: error: experts_per_token = 5 is more than experts = 4" "$tmp/err" ||
    die "-D error text: $(cat "$tmp/err")"
echo "moe_spec: the MoE examples check; plrun refuses the bf16 ones and compiles tiny-moe; megatron and fsdp2 solve them"
