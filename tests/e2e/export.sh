#!/usr/bin/env bash
# plc export --megatron / --torchtitan: every Megatron-LM flag written is one
# the argument parser of the release the modelled profile describes defines:
# Megatron-Core 0.19 for engine megatron (docs/engines/megatron-core-0.19-flags.txt),
# r0.8 for megatron_r0_8 (docs/engines/megatron-core-r0.8-flags.txt), each
# read from its arguments.py at the commit named there; every torchtitan field set or read
# is one of its configuration classes (docs/engines/torchtitan-keys.txt);
# the values are the plan's or the spec's; the model is the spec's (the GPT
# or the Llama block, dropout 0, the optimizer and schedule); a spec is solved
# with the engine's profile; what the engine cannot run or its flags cannot
# say is refused with the reason.
set -u
. "$(dirname "$0")/plc_lib.bash"
ex=$PLC_ROOT/examples
flags=$PLC_ROOT/docs/engines/megatron-core-0.19-flags.txt
flags08=$PLC_ROOT/docs/engines/megatron-core-r0.8-flags.txt
keys=$PLC_ROOT/docs/engines/torchtitan-keys.txt
for f in "$flags" "$flags08"; do
    grep -q '^# NVIDIA/Megatron-LM commit [0-9a-f]\{40\}' "$f" || die "$f names no commit"
done
grep -q 'pytorch/torchtitan commit [0-9a-f]\{40\}' "$keys" || die "key list names no commit"

megatron_ok() { # SCRIPT [FLAG LIST]: bash syntax, executable, dropout 0, every flag on
    # the list of the release it was written for (default: 0.19's), which it names
    local list=${2:-$flags}
    grep -q "^# release's (docs/engines/$(basename "$list"))" "$1" || die "$1: does not name $(basename "$list")"
    bash -n "$1" || die "$1: not valid bash"
    [ "$(stat -c %a "$1")" = 755 ] || die "$1: mode $(stat -c %a "$1"), want 755"
    grep -q -- '--attention-dropout 0 --hidden-dropout 0' "$1" || die "$1: dropout not 0"
    sed -n '/^ARGS=(/,/^)/p' "$1" | grep -o -- '--[a-z0-9-]*' | sort -u >"$tmp/used"
    [ -s "$tmp/used" ] || die "$1: no flags"
    local bad; bad=$(grep -vxFf <(grep -v '^#' "$list") "$tmp/used")
    [ -z "$bad" ] || die "$1: flags Megatron-LM does not define: $bad"
}
arg() { sed -n '/^ARGS=(/,/^)/p' "$1" | grep -o -- "$2 [^ ]*" | head -1 | cut -d' ' -f2; }

# a plan Megatron-LM can run: values are the plan's
"$PLC" compile "$ex/llama7b-a100.plan" -D layout.tp=2 -D layout.pp=2 -D layout.schedule=interleaved -D layout.vpp=2 \
    -D layout.recompute=full -o "$tmp/7b.bin" >/dev/null || die "compile 7b"
"$PLC" export --megatron "$tmp/7b.bin" -o "$tmp/7b.sh" || die "export --megatron plan"
megatron_ok "$tmp/7b.sh"
"$PLC" dump "$tmp/7b.bin" | grep '^layout:' >"$tmp/layout"
[ "$(arg "$tmp/7b.sh" --num-layers-per-virtual-pipeline-stage)" = 8 ] || die "32 layers over pp 2, vpp 2: 8 a virtual stage"
for pair in tp:--tensor-model-parallel-size pp:--pipeline-model-parallel-size cp:--context-parallel-size \
            micro_batch:--micro-batch-size; do
    want=$(grep -o " ${pair%%:*}=[0-9]*" "$tmp/layout" | cut -d= -f2)
    got=$(arg "$tmp/7b.sh" "${pair#*:}")
    [ "$want" = "$got" ] || die "${pair#*:} is '$got', the plan's ${pair%%:*} is '$want'"
done
[ "$(arg "$tmp/7b.sh" --global-batch-size)" = 2048 ] || die "global batch"
[ "$(arg "$tmp/7b.sh" --num-layers)" = 32 ] || die "layers"
[ "$(arg "$tmp/7b.sh" --recompute-granularity)" = full ] || die "recompute"
grep -q -- '--sequence-parallel' "$tmp/7b.sh" || die "sp"
grep -q -- '--bf16' "$tmp/7b.sh" || die "precision"
grep -q -- '--use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather' "$tmp/7b.sh" || die "zero 1"
# the overlap flags are the megatron profile's: TP overlap (with sp) in the
# built-in 0.19 profile, none under the 2021 profile of calibration/;
# 0.19 picks the attention with --attention-backend (it asserts that the
# NVTE_* variables agree), r0.8 with those variables
grep -q -- '--sequence-parallel --tp-comm-overlap' "$tmp/7b.sh" || die "0.19 profile: no --tp-comm-overlap"
grep -q -- '--attention-backend flash --flash-attention-version 2' "$tmp/7b.sh" || die "0.19: flash2 backend flag"
grep -q 'NVTE_' <(sed -n '/^set -euo/,$p' "$tmp/7b.sh") && die "0.19: NVTE_* variables set"
PLC_ENGINES="$PLC_ROOT/calibration/engines-megatron-lm-2021.yaml" "$PLC" export --megatron "$tmp/7b.bin" \
    -o "$tmp/7b-2021.sh" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'zero = 1, which Megatron-LM has no equivalent for (Megatron-LM 2021-2022 profile' "$tmp/err" ||
    die "2021 profile, zero 1 plan: exit $rc, want 1"
# r0.8 asserts pp > 2 for the interleaved schedule without p2p overlap
"$PLC" compile "$ex/llama7b-a100.plan" -D layout.tp=2 -D layout.pp=2 -D layout.schedule=interleaved -D layout.vpp=2 \
    -D layout.recompute=full -D layout.zero=0 -D layout.attention=fused -o "$tmp/7bz0.bin" >/dev/null || die "compile 7b zero 0"
PLC_ENGINES="$PLC_ROOT/calibration/engines-megatron-lm-2021.yaml" "$PLC" export --megatron "$tmp/7bz0.bin" \
    -o "$tmp/7b-2021.sh" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'asserts pp > 2 with --no-overlap-p2p-communication' "$tmp/err" ||
    die "2021 profile, interleaved pp 2: exit $rc, want 1 and the reason"
[ -e "$tmp/7b-2021.sh" ] && die "refused, but the script was written"
"$PLC" compile "$ex/llama7b-a100.plan" -D layout.tp=2 -D layout.pp=4 -D layout.schedule=interleaved -D layout.vpp=2 \
    -D layout.recompute=full -D layout.zero=0 -D layout.attention=fused -o "$tmp/7bz0.bin" >/dev/null || die "compile 7b zero 0 pp 4"
PLC_ENGINES="$PLC_ROOT/calibration/engines-megatron-lm-2021.yaml" "$PLC" export --megatron "$tmp/7bz0.bin" \
    -o "$tmp/7b-2021.sh" || die "2021 profile, zero 0 plan"
grep -q -- '--attention-backend unfused' "$tmp/7b-2021.sh" || die "fused attention: TE's unfused path"
megatron_ok "$tmp/7b-2021.sh"
sed -n '/^ARGS=(/,/^)/p' "$tmp/7b-2021.sh" | grep -q -- '--overlap\|--tp-comm-overlap' && die "2021 profile: overlap flags written"
grep -q -- '--no-overlap-p2p-communication' "$tmp/7b-2021.sh" || die "2021 profile: p2p overlap not turned off"

# a plan it cannot run is refused; its spec is solved with the megatron
# profile, which offers no modular schedule
"$PLC" compile "$ex/llama70b-h100.plan" -o "$tmp/70b.bin" >/dev/null || die "compile 70b"
"$PLC" dump "$tmp/70b.bin" | grep -q 'schedule=modular' || die "test premise: the 70b plan is modular"
"$PLC" export --megatron "$tmp/70b.bin" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'schedule = modular (modular pipeline placement), which Megatron-LM has no equivalent' "$tmp/err" ||
    die "modular plan: exit $rc, want 1 and the reason"
grep -q 'hint: export the spec instead' "$tmp/err" || die "modular plan: no hint"
"$PLC" export --megatron "$ex/llama70b-h100.plan" -o "$tmp/70b.sh" 2>"$tmp/err" || die "export --megatron spec"
megatron_ok "$tmp/70b.sh"
grep -q '^plc export: modelling engine megatron (Megatron-Core 0.19 profile): the spec names none' "$tmp/err" ||
    die "stderr does not say which engine's model"
grep -q '^# Layout: .*schedule=\(1f1b\|interleaved\)' "$tmp/70b.sh" || die "70b: not a schedule Megatron runs"
grep -q '^# Note:' "$tmp/70b.sh" && die "70b: solved with megatron's profile, no note expected"
# its layout and prediction are plc solve -D train.engine=megatron's
"$PLC" solve "$ex/llama70b-h100.plan" -D train.engine=megatron --top 1 >"$tmp/solve70.txt" 2>&1 || die "solve 70b megatron"
want=$(awk '$1 == "1" { print $2, $3, $4, $5 }' "$tmp/solve70.txt")
got=$(sed -n 's/^# Layout: dp=\([0-9]*\) tp=\([0-9]*\) pp=\([0-9]*\) cp=\([0-9]*\).*/\1 \2 \3 \4/p' "$tmp/70b.sh")
[ -n "$want" ] && [ "$want" = "$got" ] || die "70b: exported dp tp pp cp '$got', plc solve -D train.engine=megatron '$want'"
# the spec's block: Llama flags, interleaved RoPE as plc's
grep -q -- '--normalization RMSNorm' "$tmp/70b.sh" && grep -q -- '--swiglu --disable-bias-linear' "$tmp/70b.sh" ||
    die "llama: no Llama block flags"
grep -q -- '--position-embedding-type rope --rotary-base [0-9.e+]* --rotary-interleaved --no-rope-fusion' "$tmp/70b.sh" ||
    die "llama: RoPE not interleaved"
# a GPT spec gets the GPT block: LayerNorm, GELU and biases (Megatron's
# defaults), learned positions, tied embeddings
"$PLC" export --megatron "$ex/gpt2-small.plan" -o "$tmp/gpt2.sh" 2>/dev/null || die "export --megatron gpt2"
megatron_ok "$tmp/gpt2.sh"
grep -q -- '--normalization LayerNorm --norm-epsilon 1e-05' "$tmp/gpt2.sh" || die "gpt2: LayerNorm"
grep -q -- '--position-embedding-type learned_absolute' "$tmp/gpt2.sh" || die "gpt2: learned positions"
grep -q -- '--swiglu\|--disable-bias-linear\|RMSNorm\|--untie-embeddings\|rope' "$tmp/gpt2.sh" && die "gpt2: Llama flags"
[ "$(arg "$tmp/gpt2.sh" --vocab-size)" = 50256 ] || die "gpt2: the null tokenizer adds one id to --vocab-size"
grep -q -- '--lr 0.0006 --min-lr 6e-05 --lr-decay-style cosine --lr-warmup-iters 100 --lr-decay-iters 1000' "$tmp/gpt2.sh" ||
    die "gpt2: lr schedule"
grep -q -- '--adam-beta1 0.9 --adam-beta2 0.95 --adam-eps 1e-08 --weight-decay 0.1 --clip-grad 1' "$tmp/gpt2.sh" ||
    die "gpt2: AdamW"
# a spec naming another engine is refused; one naming this one is solved as it says
"$PLC" export --megatron "$ex/gpt2-small.plan" -D train.engine=fsdp2 -D layout.zero=auto >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'train.engine = fsdp2, but --megatron exports for engine megatron' "$tmp/err" ||
    die "spec naming fsdp2 exported for megatron: exit $rc, want 1"
"$PLC" export --megatron "$ex/gpt2-small.plan" -D train.engine=megatron >/dev/null 2>"$tmp/err" &&
    grep -q "modelling engine megatron .*the spec's train.engine" "$tmp/err" || die "spec naming megatron"
# what Megatron-LM cannot take is refused, not dropped
"$PLC" export --megatron "$ex/gpt2-small.plan" -D train.lr.warmup=1000 >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'asserts lr_warmup_steps < lr_decay_steps' "$tmp/err" || die "warmup = decay: exit $rc, want 1"
[ "$(arg "$tmp/70b.sh" --num-query-groups)" = 8 ] || die "GQA"
# r0.8 stays selectable: train.engine = megatron_r0_8 is solved with its
# profile and written in its flags (the NVTE_* variables choose attention)
"$PLC" export --megatron "$ex/llama7b-a100.plan" -D train.engine=megatron_r0_8 -o "$tmp/7b-r08.sh" 2>"$tmp/err" ||
    die "export --megatron, engine megatron_r0_8"
grep -q '^plc export: modelling engine megatron_r0_8 (Megatron-Core r0.8 profile)' "$tmp/err" || die "r0.8: which model"
megatron_ok "$tmp/7b-r08.sh" "$flags08"
grep -q '^export NVTE_FLASH_ATTN=1 NVTE_FUSED_ATTN=0' "$tmp/7b-r08.sh" || die "r0.8: NVTE variables"
grep -q -- '--attention-backend' "$tmp/7b-r08.sh" && die "r0.8: a 0.19 flag"
grep -q 'Megatron-Core r0.8 (core_v0.8.0' "$tmp/7b-r08.sh" || die "r0.8: release not named"
# r0.8 asserts that pp divides layers: unequal stages are refused
"$PLC" export --megatron "$ex/llama7b-a100.plan" -D cluster.nodes=3 -D layout.pp=6 -D train.engine=megatron_r0_8 \
    >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'pp = 6 does not divide layers = 32; engine megatron_r0_8 runs equal stages only' "$tmp/err" ||
    die "r0.8, pp 6 over 32 layers: exit $rc, want 1 and the reason"

# Llama 3.1 405B (126 layers) under the current profile: Meta's layout, tp 8,
# pp 16, interleaved, one layer fewer on the first and the last stage, is
# accepted and predicted; the export counts the embedding and the loss as
# layers (126 + 2 = 128, 8 a rank), never --decoder-first/last-pipeline-num-layers
# with a virtual pipeline (Megatron wants those divisible by vpp)
"$PLC" export --megatron "$ex/llama405b-h100.plan" -o "$tmp/405.sh" 2>"$tmp/err" || die "405b: exit $?"
megatron_ok "$tmp/405.sh"
# its layout is plc solve -D train.engine=megatron's best
"$PLC" solve "$ex/llama405b-h100.plan" -D train.engine=megatron --top 1 >"$tmp/solve405.txt" 2>&1 || die "solve 405b megatron"
want=$(awk '$1 == "1" { print $2, $3, $4, $5, $7 }' "$tmp/solve405.txt")
got=$(sed -n 's/^# Layout: dp=\([0-9]*\) tp=\([0-9]*\) pp=\([0-9]*\) cp=\([0-9]*\) sp=[a-z]* vpp=\([0-9]*\).*/\1 \2 \3 \4 \5/p' "$tmp/405.sh")
[ -n "$want" ] && [ "$want" = "$got" ] || die "405b: exported dp tp pp cp vpp '$got', plc solve -D train.engine=megatron '$want'"
for vpp in 2 4; do
    "$PLC" export --megatron "$ex/llama405b-h100.plan" -D layout.tp=8 -D layout.pp=16 -D layout.dp=128 -D layout.cp=1 \
        -D layout.schedule=interleaved -D layout.vpp=$vpp -o "$tmp/405m.sh" 2>"$tmp/err" || die "405b, Meta's layout, vpp $vpp"
    megatron_ok "$tmp/405m.sh"
    grep -q "^# Layout: dp=128 tp=8 pp=16 cp=1 .*vpp=$vpp .*schedule=interleaved" "$tmp/405m.sh" || die "405b: not the pinned layout"
    grep -q '^# plc predicts [0-9.]* s per step' "$tmp/405m.sh" || die "405b: no prediction"
    grep -q -- '--account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split' "$tmp/405m.sh" ||
        die "405b vpp $vpp: no account flags"
    [ "$(arg "$tmp/405m.sh" --num-layers-per-virtual-pipeline-stage)" = $((128 / 16 / vpp)) ] ||
        die "405b vpp $vpp: layers a virtual stage"
    grep -q -- '--decoder-first\|--decoder-last\|--pipeline-model-parallel-layout' "$tmp/405m.sh" && die "405b: other split flags"
done

# torchtitan: a module Python compiles, only known keys, the plan's values
"$PLC" export --torchtitan "$tmp/7b.bin" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'zero = 1, which torchtitan has no equivalent' "$tmp/err" || die "zero 1 plan for torchtitan: exit $rc"
"$PLC" compile "$ex/llama7b-a100.plan" -D layout.tp=2 -D layout.pp=2 -D layout.schedule=interleaved -D layout.vpp=2 \
    -D layout.recompute=full -D layout.zero=3 -o "$tmp/7bz3.bin" >/dev/null || die "compile 7b zero 3"
"$PLC" export --torchtitan "$tmp/7bz3.bin" -o "$tmp/tt.py" || die "export --torchtitan"
"$PLC" export --torchtitan "$ex/llama70b-h100.plan" -D layout.zero=auto -o "$tmp/tt70.py" 2>"$tmp/err" || die "export --torchtitan 70b"
grep -q '^plc export: modelling engine fsdp2 (torchtitan FSDP2 profile)' "$tmp/err" || die "torchtitan: which engine's model"
# the spec pins zero = 1, which fsdp2 does not run: the rule's error, at its place
"$PLC" export --torchtitan "$ex/llama70b-h100.plan" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'llama70b-h100.plan:[0-9]*:[0-9]*: error: engine fsdp2 does not run zero = 1' "$tmp/err" &&
    grep -q 'hint: --torchtitan solves as with -D train.engine=fsdp2' "$tmp/err" || die "zero = 1 for torchtitan: exit $rc, want 1"
# what torchtitan cannot express is refused: a GPT block, every-n-th layer checkpointing
"$PLC" export --torchtitan "$ex/gpt2-small.plan" -D layout.zero=auto >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'arch = gpt: torchtitan .* has no GPT block' "$tmp/err" || die "torchtitan gpt: exit $rc, want 1"
"$PLC" export --torchtitan "$ex/llama7b-a100.plan" -D layout.zero=3 -D layout.recompute=every >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'engine fsdp2 does not run recompute = every' "$tmp/err" || die "recompute every for fsdp2: exit $rc, want 1"
"$PLC" export --torchtitan "$ex/llama7b-a100.plan" -D layout.zero=3 -D train.lr.decay_steps=500 >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'decays until the last step' "$tmp/err" || die "lr.decay < steps for torchtitan: exit $rc, want 1"
# a mixture of experts for torchtitan: Qwen3-30B-A3B's shape without its aux
# loss (torchtitan has none), with heads hidden / heads wide and no qk-norm
# (the export builds on Llama 3's decoder), the first layer dense, on ep 8:
# the experts' shape checked and the router set per layer,
# expert_parallel_degree the layout's; an aux loss or etp > 1 is refused
# with the reason
qw="-D model.head_dim=64 -D model.qk_norm=off"
"$PLC" export --torchtitan "$ex/qwen3-30b-a3b-h100.plan" $qw -D model.aux_loss=0 -D model.dense_layers=1 -D layout.zero=3 \
    -D layout.ep=8 -o "$tmp/tt_moe.py" 2>"$tmp/err" || die "export --torchtitan qwen3 ep 8: exit $?: $(cat "$tmp/err")"
"$PLC" export --torchtitan "$ex/qwen3-30b-a3b-h100.plan" $qw -D layout.zero=3 -o "$tmp/tt_aux.py" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'aux_loss = 0.001: torchtitan .* has no auxiliary load-balancing loss' "$tmp/err" &&
    [ ! -e "$tmp/tt_aux.py" ] || die "torchtitan aux loss: exit $rc, $(cat "$tmp/err")"
"$PLC" export --torchtitan "$ex/qwen3-30b-a3b-h100.plan" $qw -D model.aux_loss=0 -D layout.zero=3 -D layout.etp=2 \
    -o "$tmp/tt_etp.py" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'engine fsdp2 has no expert tensor parallelism' "$tmp/err" && [ ! -e "$tmp/tt_etp.py" ] ||
    die "torchtitan etp 2: exit $rc, $(cat "$tmp/err")"
/usr/bin/python3 - "$keys" "$tmp/tt.py" "$tmp/tt70.py" "$tmp/tt_moe.py" <<'PY' || die "torchtitan module"
import ast, sys
known = {l.strip() for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")}
alias = {"p": "parallelism", "tr": "training", "config.debug": "debug"}
# the objects the module reads or sets by name (scripts/torchtitan-keys.py)
objects = {"config", "model_spec", "model", "block", "attention", "rope", "norm", "ffn", "linear",
           "moe", "router", "routed", "experts"}
for path in sys.argv[2:]:
    tree = ast.parse(open(path).read())
    got = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in objects:
            assert "%s.%s" % (n.value.id, n.attr) in known, (path, ast.unparse(n))
        if isinstance(n, ast.Call) and ast.unparse(n.func) in ("ParamGroupConfig", "OptimizersContainer.Config",
                                                               "LRSchedulersContainer.Config"):
            sec = {"ParamGroupConfig": "param_group", "OptimizersContainer.Config": "optimizer",
                   "LRSchedulersContainer.Config": "lr_scheduler"}[ast.unparse(n.func)]
            for k in n.keywords:
                assert "%s.%s" % (sec, k.arg) in known, (path, sec, k.arg)
                got["%s.%s" % (sec, k.arg)] = k.value
        if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Attribute):
            t = n.targets[0]
            owner = ast.unparse(t.value)
            if owner in objects and not (owner == "config" and t.attr == "activation_checkpoint"):
                continue
            if owner == "config" and t.attr == "activation_checkpoint":
                v = ast.unparse(n.value)
                key = "activation_checkpoint = " + ("None" if v == "None" else v.split(".")[0])
            else:
                key = alias[owner] + "." + t.attr
            assert key in known, (path, key)
            got[key] = ast.literal_eval(n.value) if not key.startswith("activation") and "inf" not in ast.unparse(n.value) else n.value
    if path.endswith("tt.py"):
        assert got["parallelism.tensor_parallel_degree"] == 2 and got["parallelism.pipeline_parallel_degree"] == 2
        assert got["parallelism.pipeline_parallel_schedule"] == "Interleaved1F1B"
        assert got["parallelism.pipeline_parallel_layers_per_stage"] == 32 // (2 * 2)
        assert got["parallelism.data_parallel_shard_degree"] == 8, "zero 3 -> FSDP2 over dp = 8"
        assert got["parallelism.data_parallel_replicate_degree"] == 1
        assert ast.unparse(got["activation_checkpoint = FullAC"]) == "FullAC.Config()"
        assert got["training.num_tokens_per_train_step"] == 2048 * 2048
        assert ast.literal_eval(got["lr_scheduler.warmup_steps"]) == 200
        assert ast.literal_eval(got["lr_scheduler.decay_type"]) == "cosine"
        assert abs(ast.literal_eval(got["lr_scheduler.min_lr_factor"]) - 0.1) < 1e-12
        src = open(path).read()
        assert "want = dict(layers=32, hidden=4096, vocab=32000, heads=32, kv_heads=32, ffn_hidden=11008)" in src, src
        assert "rope.scaling = \"none\"" in src
    if path.endswith("tt_moe.py"):
        assert got["parallelism.expert_parallel_degree"] == 8
        src = open(path).read()
        tree = ast.parse(src)
        env = {}
        for n in tree.body:
            if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) in ("moe_layers", "_plc_dense_ffn_hidden"):
                env[ast.unparse(n.targets[0])] = ast.literal_eval(n.value)
        assert env["moe_layers"] == set(range(1, 48)), env
        assert env["_plc_dense_ffn_hidden"] == 6144
        for line in ("want = dict(experts=128, expert_ffn_hidden=768, shared_ffn_hidden=0)", "router.top_k = 8",
                     'router.score_func = "softmax"', "router.route_norm = True", "router.route_scale = 1",
                     "router.num_expert_groups = None", "moe.load_balance_coeff = None"):
            assert line in src, line
PY


# Llama-3-8B on 8 H100 naming no engine: solved with fsdp2's model (not
# plrun's dp 8, ZeRO 2 without checkpointing, which fsdp2's profile puts at
# 96 GiB), the header's memory within the limit, context parallelism with
# the spmd_types backend torchtitan needs for it, the shape checked
cat >"$tmp/l3.plan" <<'EOF'
model "llama3-8b" {
  layers     = 32
  hidden     = 4096
  heads      = 32
  kv_heads   = 8
  ffn_hidden = 14336
  vocab      = 128256
  seq_len    = 8192
  rope_theta = 500000
}
cluster {
  gpu           = "H100-SXM5-80GB"
  nodes         = 1
  gpus_per_node = 8
}
train {
  global_batch = 64
  steps        = 1000
  precision    = bf16
  lr.peak      = 3e-4
  lr.warmup    = 200
}
EOF
"$PLC" export --torchtitan "$tmp/l3.plan" -o "$tmp/l3.py" 2>"$tmp/err" || die "export --torchtitan llama3-8b"
grep -q 'modelling engine fsdp2 .*the spec names none' "$tmp/err" || die "llama3-8b: not solved with fsdp2's model"
/usr/bin/python3 - "$tmp/l3.py" <<'PY' || die "llama3-8b torchtitan module"
import re, sys
src = open(sys.argv[1]).read()
mem, lim = map(float, re.search(r"([0-9.]+) GiB on the most loaded GPU \(limit ([0-9.]+) GiB\), by engine fsdp2's model", src).groups())
assert mem <= lim, (mem, lim)
cp = int(re.search(r"p.context_parallel_degree = (\d+)", src).group(1))
assert (cp > 1) == ('p.spmd_backend = "spmd_types"' in src), cp
assert "want = dict(layers=32, hidden=4096, vocab=128256, heads=32, kv_heads=8, ffn_hidden=14336)" in src
assert "rope.theta = 500000" in src
PY

# what an engine runs is its profile's runs list (engines.yaml), not a table
# of export's own: a profiles file whose megatron runs only 1f1b refuses the
# interleaved plan that the built-in profile accepts
sed '/^megatron:/,/^fsdp2:/s/values: \[1f1b, interleaved\]/values: [1f1b]/' \
    "$PLC_ROOT/examples/engines.yaml" >"$tmp/engines-1f1b.yaml"
cmp -s "$PLC_ROOT/examples/engines.yaml" "$tmp/engines-1f1b.yaml" && die "test premise: the sed changed nothing"
PLC_ENGINES="$tmp/engines-1f1b.yaml" "$PLC" export --megatron "$tmp/7b.bin" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'schedule = interleaved (interleaved 1F1B), which Megatron-LM has no equivalent' "$tmp/err" ||
    die "narrowed profile: exit $rc, want 1 and the reason"
PLC_ENGINES="$tmp/engines-1f1b.yaml" "$PLC" export --megatron "$ex/llama7b-a100.plan" -D layout.schedule=interleaved \
    -D layout.pp=2 -D layout.vpp=2 >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'error: engine megatron does not run schedule = interleaved; it runs 1f1b' "$tmp/err" ||
    die "narrowed profile, pinned spec: exit $rc, want 1 and what it runs"

# unequal stages (uneven_stages, docs/engines.md): 32 layers on pp 6 run as
# 4, 6 x 4, 4; Megatron-LM names the ends' counts, torchtitan the middle's
# and what the ends hold less; with few layers a stage (9 on pp 8: 2, 1 x 6,
# 1) torchtitan gets each stage's modules; plc compile (plrun) refuses.
# Interleaved (uneven_stages 2): 32 layers on pp 4 with vpp 3 run as 12
# virtual stages 1, 3 x 10, 1 (ranks 7, 9, 9, 7), which torchtitan takes
# as layers_per_stage 3 with 2 less on each end. Megatron-Core 0.19 writes
# the first and last counts with vpp 1, and the interleaved split as
# --pipeline-model-parallel-layout, one entry a virtual stage (34 slots do
# not divide by 12, so the embedding and loss flags do not give this split)
"$PLC" export --megatron "$ex/llama7b-a100.plan" -D cluster.nodes=3 -D layout.pp=6 -D train.engine=megatron \
    -o "$tmp/uneven.sh" 2>"$tmp/err" || die "export --megatron, pp 6 over 32 layers: exit $?"
megatron_ok "$tmp/uneven.sh"
grep -q -- '--decoder-first-pipeline-num-layers 4 --decoder-last-pipeline-num-layers 4$' "$tmp/uneven.sh" ||
    die "pp 6 over 32 layers: not 4, 6 x 4, 4"
"$PLC" export --torchtitan "$ex/llama7b-a100.plan" -D cluster.nodes=3 -D layout.pp=6 -D train.engine=fsdp2 \
    -D layout.zero=3 -o "$tmp/uneven_tt.py" || die "export --torchtitan, pp 6 over 32 layers"
"$PLC" export --torchtitan "$ex/tiny.plan" -D model.layers=9 -D layout.pp=8 -D train.engine=fsdp2 -D layout.zero=3 \
    -D train.precision=bf16 -o "$tmp/uneven_fqns.py" || die "export --torchtitan, pp 8 over 9 layers"
"$PLC" export --torchtitan "$ex/llama7b-a100.plan" -D layout.pp=4 -D layout.vpp=3 -D layout.schedule=interleaved \
    -D train.engine=fsdp2 -D layout.zero=3 -o "$tmp/uneven_il.py" || die "export --torchtitan, pp 4 vpp 3 over 32 layers"
"$PLC" export --megatron "$ex/llama7b-a100.plan" -D layout.pp=4 -D layout.vpp=3 -D layout.schedule=interleaved \
    -o "$tmp/uneven_il.sh" 2>"$tmp/err" || die "export --megatron of unequal virtual stages: exit $?"
megatron_ok "$tmp/uneven_il.sh"
grep -q -- '--num-layers-per-virtual-pipeline-stage\|--decoder-first\|--account-for' "$tmp/uneven_il.sh" &&
    die "pp 4 vpp 3: split flags beside the layout"
# the layout unrolled as Megatron-Core reads it (pipeline_parallel_layer_layout.py,
# parse_str_to_list): the virtual stages 1, 3 x 10, 1, the embedding first, the loss last
/usr/bin/python3 - "$(sed -n 's/.*--pipeline-model-parallel-layout "\([^"]*\)".*/\1/p' "$tmp/uneven_il.sh")" <<'PY' ||
import re, sys
s = sys.argv[1].replace(",", "")
for pat in (r'\(([^)]+)\)\*(\d+)', r'(.)\*(\d+)'):
    s = re.sub(pat, lambda x: x.group(1) * int(x.group(2)), s)
stages = s.split("|")
assert [st.count("t") for st in stages] == [1] + [3] * 10 + [1], stages
assert stages[0].startswith("E") and stages[-1].endswith("L") and s.count("E") == 1 and s.count("L") == 1, stages
PY
    die "pp 4 vpp 3: the layout string is not plc's split"
/usr/bin/python3 - "$keys" "$tmp/uneven_tt.py" "$tmp/uneven_fqns.py" "$tmp/uneven_il.py" <<'PY' || die "torchtitan module, unequal stages"
import ast, sys
known = {l.strip() for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")}
def fields(path):
    got = {}
    for n in ast.walk(ast.parse(open(path).read())):
        if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Attribute) and ast.unparse(n.targets[0].value) == "p":
            key = "parallelism." + n.targets[0].attr
            assert key in known, (path, key)
            got[key] = ast.literal_eval(n.value)
    return got
def split(layers, pp, per, first_less, last_less):
    # torchtitan's _generate_llm_fqn_per_model_part: layers plus the two
    # weights dealt evenly, the extra to the first stages, the weights off the ends
    eff = layers + first_less + last_less
    assert -(-eff // per) == pp, "layers_per_stage gives another stage count"
    n = [eff // pp + (s < eff % pp) for s in range(pp)]
    n[0] -= first_less; n[-1] -= last_less
    return n
g = fields(sys.argv[2])
assert split(32, 6, g["parallelism.pipeline_parallel_layers_per_stage"],
             g["parallelism.pipeline_parallel_first_stage_less_layers"],
             g["parallelism.pipeline_parallel_last_stage_less_layers"]) == [4, 6, 6, 6, 6, 4], g
parts = fields(sys.argv[3])["parallelism.module_fqns_per_model_part"]
assert [len([m for m in p if m.startswith("layers.")]) for p in parts] == [2, 1, 1, 1, 1, 1, 1, 1], parts
assert parts[0][0] == "tok_embeddings" and parts[-1][-2:] == ["norm", "lm_head"]
assert [m for p in parts for m in p if m.startswith("layers.")] == ["layers.%d" % i for i in range(9)]
g = fields(sys.argv[4])
assert g["parallelism.pipeline_parallel_schedule"] == "Interleaved1F1B", g
n = split(32, 12, g["parallelism.pipeline_parallel_layers_per_stage"],
          g["parallelism.pipeline_parallel_first_stage_less_layers"],
          g["parallelism.pipeline_parallel_last_stage_less_layers"])
assert n == [1] + [3] * 10 + [1], n
# rank r runs stages r, r + 4, r + 8 (torchtitan's "loop" style)
assert [sum(n[r::4]) for r in range(4)] == [7, 9, 9, 7], n
PY
# plrun runs the same unequal stages (4, 6 x 4, 4): plc compile lowers them
"$PLC" compile "$ex/llama7b-a100.plan" -D cluster.nodes=3 -D layout.pp=6 -o "$tmp/uneven.bin" >"$tmp/out" 2>"$tmp/err" &&
    grep -q '^  stage 5   plan' "$tmp/out" || die "plc compile of unequal stages: $(cat "$tmp/err")"

# tiny (fp32, no pipeline): both exports work
"$PLC" export --megatron "$ex/tiny.plan" -o "$tmp/tiny.sh" || die "tiny megatron"
megatron_ok "$tmp/tiny.sh"
grep -q -- '--bf16' "$tmp/tiny.sh" && die "fp32 spec exported with --bf16"
"$PLC" export "$ex/tiny.plan" >/dev/null 2>&1; [ $? -eq 1 ] || die "no engine named: want exit 1"
"$PLC" export --megatron --torchtitan "$ex/tiny.plan" >/dev/null 2>&1; [ $? -eq 1 ] || die "two engines: want exit 1"
# fp8 (H100): Megatron's hybrid fp8 recipe over bf16; plrun cannot run it,
# so plc compile refuses it with exit 1
"$PLC" export --megatron -D train.precision=fp8 -D 'cluster.gpu="H100-SXM5-80GB"' "$ex/tiny.plan" -o "$tmp/fp8.sh" || die "fp8 megatron"
grep -q -- '--bf16' "$tmp/fp8.sh" && grep -q -- '--fp8-format hybrid' "$tmp/fp8.sh" || die "fp8: no --bf16 --fp8-format hybrid"
"$PLC" compile -D train.precision=fp8 -D 'cluster.gpu="H100-SXM5-80GB"' "$ex/tiny.plan" -o "$tmp/fp8.bin" 2>"$tmp/fp8.err"
[ $? -eq 1 ] && grep -q 'plrun has no fp8 kernels' "$tmp/fp8.err" || die "compile fp8: want exit 1 and the reason"
# mixture of experts under the current profile: Mixtral-8x7B's script carries
# the experts (count, top-k, width, router, aux loss) and the layout plc
# solved for megatron, its ep and etp with the profile's dispatcher and
# grouped GEMM, every flag on 0.19's list
"$PLC" export --megatron "$ex/mixtral-8x7b-h100.plan" -o "$tmp/mix.sh" 2>"$tmp/err" || die "mixtral: exit $?"
megatron_ok "$tmp/mix.sh"
"$PLC" solve "$ex/mixtral-8x7b-h100.plan" -D train.engine=megatron --top 1 >"$tmp/solvemix.txt" 2>&1 || die "solve mixtral megatron"
want=$(awk '$1 == "1" { print $2, $3, $4, $5, $6, $7, $9 }' "$tmp/solvemix.txt")
got="$(sed -n 's/^# Layout: dp=\([0-9]*\) tp=\([0-9]*\) pp=\([0-9]*\) cp=\([0-9]*\) .*vpp=\([0-9]*\).*/\1 \2 \3 \4/p' "$tmp/mix.sh") $(arg "$tmp/mix.sh" --expert-model-parallel-size) $(arg "$tmp/mix.sh" --expert-tensor-parallel-size) $(sed -n 's/^# Layout: .* vpp=\([0-9]*\).*/\1/p' "$tmp/mix.sh")"
[ -n "$want" ] && [ "$want" = "$got" ] || die "mixtral: exported dp tp pp cp ep etp vpp '$got', plc solve -D train.engine=megatron '$want'"
for fv in --num-experts:8 --moe-router-topk:2 --moe-ffn-hidden-size:14336 --moe-router-score-function:softmax \
          --moe-router-load-balancing-type:aux_loss --moe-aux-loss-coeff:0.02 --moe-token-dispatcher-type:alltoall; do
    [ "$(arg "$tmp/mix.sh" "${fv%%:*}")" = "${fv#*:}" ] || die "mixtral: ${fv%%:*} '$(arg "$tmp/mix.sh" "${fv%%:*}")', want ${fv#*:}"
done
grep -q -- '--moe-grouped-gemm' "$tmp/mix.sh" || die "mixtral: the profile's grouped GEMM not written"
grep -q -- '--moe-layer-freq\|--moe-shared-expert\|--moe-expert-capacity-factor\|--moe-router-enable-expert-bias' "$tmp/mix.sh" &&
    die "mixtral: flags of what the spec does not have"
# ep and etp pinned: the expert grid apart from the attention's (MoE parallel folding)
"$PLC" export --megatron "$ex/mixtral-8x7b-h100.plan" -D layout.ep=8 -D layout.etp=2 -o "$tmp/mixf.sh" 2>"$tmp/err" ||
    die "mixtral ep 8 etp 2: exit $?"
megatron_ok "$tmp/mixf.sh"
grep -q -- '--expert-model-parallel-size 8 --expert-tensor-parallel-size 2' "$tmp/mixf.sh" || die "mixtral: ep 8 etp 2 not written"
# r0.8 shards the experts over the attention's tp: with ep 8 and etp 2 the
# export takes the best layout whose tp is 2, saying why; with tp 1 pinned
# too nothing it can run fits (exit 2), with the reason
"$PLC" export --megatron -D train.engine=megatron_r0_8 "$ex/mixtral-8x7b-h100.plan" -D layout.ep=8 -D layout.etp=2 \
    -o "$tmp/mix08.sh" 2>"$tmp/err" || die "r0.8 ep 8 etp 2: exit $?"
megatron_ok "$tmp/mix08.sh" "$flags08"
grep -q '^# Layout: dp=[0-9]* tp=2 .*ep=8 etp=2 ' "$tmp/mix08.sh" && grep -q '^# Note: .*etp = 2 with tp = 1: Megatron-Core r0.8' "$tmp/mix08.sh" ||
    die "r0.8 ep 8 etp 2: not the best layout with tp = etp, or no note"
"$PLC" export --megatron -D train.engine=megatron_r0_8 "$ex/mixtral-8x7b-h100.plan" -D layout.ep=8 -D layout.etp=2 \
    -D layout.tp=1 -o "$tmp/mix08r.sh" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'etp = 2 with tp = 1: Megatron-Core r0.8 .*shards the experts over the attention' "$tmp/err" &&
    [ ! -e "$tmp/mix08r.sh" ] || die "r0.8 etp 2 tp 1: exit $rc, $(cat "$tmp/err")"
"$PLC" export --megatron -D train.engine=megatron_r0_8 "$ex/mixtral-8x7b-h100.plan" -D layout.ep=8 -D layout.etp=1 \
    -D layout.tp=1 -o "$tmp/mix08.sh" 2>"$tmp/err" || die "r0.8 mixtral ep 8: exit $?"
megatron_ok "$tmp/mix08.sh" "$flags08"
grep -q -- '--expert-model-parallel-size 8$' "$tmp/mix08.sh" && grep -q -- '--num-experts 8 --moe-router-topk 2' "$tmp/mix08.sh" ||
    die "r0.8 mixtral: experts not written"
# dense first layers and every n-th layer: --moe-layer-freq, evaluated as
# Megatron-Core 0.19's moe_freq_type does (arguments.py: digits, brackets,
# + and * only, then eval), is plc's list of MoE layers (docs/model.md)
for dm in 0:2 3:1 3:2 5:3; do
    d=${dm%%:*} e=${dm#*:}
    "$PLC" export --megatron "$ex/qwen3-30b-a3b-h100.plan" -D model.dense_layers=$d -D model.moe_every=$e \
        -o "$tmp/q.sh" 2>"$tmp/err" || die "qwen3 dense_layers $d moe_every $e: exit $?: $(cat "$tmp/err")"
    megatron_ok "$tmp/q.sh"
    freq=$(sed -n 's/.*--moe-layer-freq \("[^"]*"\|[0-9]*\).*/\1/p' "$tmp/q.sh" | tr -d '"')
    [ -n "$freq" ] || die "qwen3 dense_layers $d moe_every $e: no --moe-layer-freq"
    /usr/bin/python3 - "$freq" "$d" "$e" <<'PY' || die "qwen3 dense_layers $d moe_every $e: --moe-layer-freq $freq is not plc's layers"
import re, sys
x, d, e = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
if '[' in x:
    assert not re.search(r'[^,\d\[\]\(\)\+\*]', x), x
    pat = eval(x)
else:
    pat = [1 if i % int(x) == 0 else 0 for i in range(48)]
want = [1 if l >= d and (l - d) % e == 0 else 0 for l in range(48)]
assert pat == want, (pat, want)
PY
done
# what 0.19 cannot run is refused with the reason: one softmax expert a token
"$PLC" export --megatron "$ex/mixtral-8x7b-h100.plan" -D model.experts_per_token=1 -o "$tmp/k1.sh" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'moe-router-pre-softmax' "$tmp/err" && [ ! -e "$tmp/k1.sh" ] || die "top-1 softmax: exit $rc, $(cat "$tmp/err")"
echo "export: ok"
