#!/usr/bin/env bash
# plc export of every example for every engine (docs/engines.md, "Export"):
# each export is either written or refused with its reason, never partial.
# A written one names the engine whose model it solved with, and its layout
# fits by plc's own model of that engine: the layout of its header, every
# key pinned, solved again with `plc solve -D train.engine=E` (the path the
# export takes) fits, with the step time and memory the header states.
# Every Megatron-LM script is executable (mode 755), sets dropout 0 and
# carries its spec's block: a GPT spec's the GPT flags (LayerNorm, biases,
# no SwiGLU), a Llama spec's the Llama flags.
# Mixture-of-experts and latent-attention examples (model keys experts,
# kv_lora_rank) are skipped, said so: the solver does not lay them out yet,
# and their export must refuse with the reason, never export a dense model.
set -u
. "$(dirname "$0")/plc_lib.bash"
written=0 refused=0 skipped=0
for spec in "$PLC_ROOT"/examples/*.plan; do
    name=$(basename "$spec" .plan)
    if grep -Eq '^ *(experts|kv_lora_rank) *= *[1-9]' "$spec"; then
        "$PLC" export --megatron "$spec" -o "$tmp/$name.moe" 2>"$tmp/err"; rc=$?
        [ $rc -eq 1 ] && grep -q 'error: .*\(mixture of experts\|latent attention\)' "$tmp/err" && [ ! -e "$tmp/$name.moe" ] ||
            die "$name: an MoE/MLA example exported (exit $rc) instead of refusing: $(cat "$tmp/err")"
        echo "export_all: skipping $name: the solver does not lay out mixture-of-experts or latent-attention models yet"
        skipped=$((skipped + 1))
        continue
    fi
    for pair in megatron:megatron torchtitan:fsdp2; do
        opt=${pair%%:*} eng=${pair#*:}
        out=$tmp/$name.$opt
        "$PLC" export --$opt "$spec" -o "$out" 2>"$tmp/err"; rc=$?
        if [ $rc -ne 0 ]; then
            # refused: exit 1 (the spec pins what the engine cannot run, or the
            # engine cannot train the model) or 2 (nothing it runs fits), with
            # the reason, and no file
            [ $rc -eq 1 ] || [ $rc -eq 2 ] || die "$name --$opt: exit $rc"
            grep -q 'error:' "$tmp/err" || die "$name --$opt: exit $rc without a reason"
            [ -e "$out" ] && die "$name --$opt: refused but wrote $out"
            refused=$((refused + 1))
            continue
        fi
        written=$((written + 1))
        grep -q "^plc export: modelling engine $eng " "$tmp/err" || die "$name --$opt: stderr does not name engine $eng"
        layout=$(sed -n 's/^\(# \)\{0,1\}Layout: //p' "$out" | head -1)
        [ -n "$layout" ] || die "$name --$opt: no layout line"
        pins=()
        for kv in $layout; do pins+=(-D "layout.${kv%%=*}=${kv#*=}"); done
        "$PLC" solve "$spec" -D train.engine=$eng "${pins[@]}" --format yaml >"$tmp/solve.yaml" 2>"$tmp/solve.err" ||
            die "$name --$opt: the exported layout does not fit under engine $eng: $(cat "$tmp/solve.err" "$tmp/solve.yaml" | tail -3)"
        /usr/bin/python3 - "$tmp/solve.yaml" "$out" <<'PY' || die "$name --$opt: the header's figures are not plc solve's"
import re, sys, yaml
l = yaml.safe_load(open(sys.argv[1]))["winner"]
assert l["fits"], l
head = open(sys.argv[2]).read()
t = float(re.search(r"plc predicts ([0-9.e+-]+) s per step", head).group(1))
mem, lim = map(float, re.search(r"([0-9.]+) GiB on the most loaded GPU \(limit ([0-9.]+) GiB\)", head).groups())
assert abs(t / l["step_time_s"] - 1) < 1e-3, (t, l["step_time_s"])
assert mem <= lim, (mem, lim)
assert abs(mem - l["memory"]["peak_bytes"] / 2**30) < 0.06, (mem, l["memory"]["peak_bytes"])
PY
        if [ $opt = megatron ]; then
            [ "$(stat -c %a "$out")" = 755 ] || die "$name: the script is not mode 755"
            bash -n "$out" || die "$name: not valid bash"
            grep -q -- '--attention-dropout 0 --hidden-dropout 0' "$out" || die "$name: dropout not 0"
            if grep -q '^ *arch *= *gpt' "$spec"; then
                grep -q -- '--normalization LayerNorm' "$out" || die "$name: a GPT spec without LayerNorm"
                grep -q -- '--swiglu\|--disable-bias-linear\|RMSNorm' "$out" && die "$name: a GPT spec with Llama flags"
            else
                grep -q -- '--normalization RMSNorm' "$out" && grep -q -- '--swiglu --disable-bias-linear' "$out" ||
                    die "$name: a Llama spec without the Llama flags"
            fi
        fi
    done
done
[ $written -ge 10 ] || die "only $written exports written ($refused refused)"
echo "export_all: ok ($written written, $refused refused, $skipped MoE examples skipped)"
