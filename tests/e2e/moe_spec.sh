#!/usr/bin/env bash
# Mixture-of-experts and latent-attention specs (docs/model.md): the four
# MoE examples check; plc solve, compile, export, explain, trace, scale
# and check with a gate refuse them with exit 1,
# saying that the solver does not model them yet and giving both parameter
# counts (Mixtral-8x7B: 46,702,792,704 parameters, 12,879,925,248 active;
# DeepSeek-V3: 671,026,404,352 and 37,552,282,624), and write no file; a
# -D override of the MoE keys is checked as the file's keys are. When the
# solver lays MoE models out, this script's refusals give way to its checks.
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
mixtral='mixture of experts (experts = 8; 46,702,792,704 parameters, 12,879,925,248 active): the solver has no model of expert layers'
deepseek='mixture of experts (experts = 256; 671,026,404,352 parameters, 37,552,282,624 active)'
for cmd in solve compile export; do
    refuses $cmd "$ex/mixtral-8x7b-h100.plan" "$mixtral"
    refuses $cmd "$ex/deepseek-v3-h100.plan" "$deepseek"
done
for cmd in solve explain trace; do refuses $cmd "$ex/tiny-moe.plan" 'mixture of experts (experts = 4;'; done
"$PLC" scale "$ex/tiny-moe.plan" --gpus 1..8 >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'plc scale: error: mixture of experts' "$tmp/err" || die "plc scale: exit $rc: $(cat "$tmp/err")"
"$PLC" check --min-mfu 10% "$ex/tiny-moe.plan" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'the gates cannot be checked: mixture of experts' "$tmp/err" || die "plc check with a gate: exit $rc"
# latent attention alone (no experts) is refused by its own name
sed -e '/^  experts/d; /^  shared_experts/d; /^  expert_ffn_hidden/d; /^  dense_layers/d; /^  router/d' \
    -e '/^  route_scale/d; /^  aux_loss/d; /^  expert_bias/d; /^  capacity_factor/d' \
    "$ex/deepseek-v3-h100.plan" >"$tmp/mla.plan"
"$PLC" check -q "$tmp/mla.plan" || die "plc check of DeepSeek-V3 without experts"
refuses solve "$tmp/mla.plan" 'latent attention (kv_lora_rank = 512)'
# -D: valid overrides pass, a broken one is reported at the command line
"$PLC" check -q "$ex/tiny-moe.plan" -D model.experts=8 -D model.capacity_factor=1.5 -D model.router=sigmoid ||
    die "valid MoE overrides rejected"
if "$PLC" check -q "$ex/tiny-moe.plan" -D model.experts_per_token=5 2>"$tmp/err"; then die "top-k 5 of 4 experts accepted"; fi
grep -q "^<command line>:1:25: error: experts_per_token = 5 is more than experts = 4" "$tmp/err" ||
    die "-D error text: $(cat "$tmp/err")"
echo "moe_spec: the MoE examples check; solve, compile and export refuse them with both counts"
