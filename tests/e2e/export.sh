#!/usr/bin/env bash
# plc export --megatron / --torchtitan: every Megatron-LM flag written is one
# Megatron-LM's argument parser defines (docs/engines/megatron-lm-flags.txt,
# read from its arguments.py at the commit named there); every torchtitan
# field set is one of its Trainer.Config (docs/engines/torchtitan-keys.txt);
# the values are the plan's; a plan whose layout the engine cannot run is
# refused with the reason (exit 1); a spec whose best layout the engine
# cannot run exports the best one it can, saying so.
set -u
. "$(dirname "$0")/plc_lib.bash"
ex=$PLC_ROOT/examples
flags=$PLC_ROOT/docs/engines/megatron-lm-flags.txt
keys=$PLC_ROOT/docs/engines/torchtitan-keys.txt
grep -q '^# NVIDIA/Megatron-LM commit [0-9a-f]\{40\}' "$flags" || die "flag list names no commit"
grep -q 'pytorch/torchtitan commit [0-9a-f]\{40\}' "$keys" || die "key list names no commit"

megatron_ok() { # SCRIPT: bash syntax, every flag on the list
    bash -n "$1" || die "$1: not valid bash"
    sed -n '/^ARGS=(/,/^)/p' "$1" | grep -o -- '--[a-z0-9-]*' | sort -u >"$tmp/used"
    [ -s "$tmp/used" ] || die "$1: no flags"
    local bad; bad=$(grep -vxFf <(grep -v '^#' "$flags") "$tmp/used")
    [ -z "$bad" ] || die "$1: flags Megatron-LM does not define: $bad"
}
arg() { sed -n '/^ARGS=(/,/^)/p' "$1" | grep -o -- "$2 [^ ]*" | head -1 | cut -d' ' -f2; }

# a plan Megatron-LM can run: values are the plan's
"$PLC" compile "$ex/llama7b-a100.plan" -D layout.tp=2 -D layout.pp=2 -D layout.schedule=interleaved -D layout.vpp=2 \
    -D layout.recompute=full -o "$tmp/7b.bin" >/dev/null || die "compile 7b"
"$PLC" export --megatron "$tmp/7b.bin" -o "$tmp/7b.sh" || die "export --megatron plan"
megatron_ok "$tmp/7b.sh"
"$PLC" dump "$tmp/7b.bin" | grep '^layout:' >"$tmp/layout"
for pair in tp:--tensor-model-parallel-size pp:--pipeline-model-parallel-size cp:--context-parallel-size \
            vpp:--num-virtual-stages-per-pipeline-rank micro_batch:--micro-batch-size; do
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
# built-in r0.8 profile, none under the 2021 profile of calibration/
grep -q -- '--sequence-parallel --tp-comm-overlap' "$tmp/7b.sh" || die "r0.8 profile: no --tp-comm-overlap"
PLC_ENGINES="$PLC_ROOT/calibration/engines-megatron-lm-2021.yaml" "$PLC" export --megatron "$tmp/7b.bin" \
    -o "$tmp/7b-2021.sh" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'zero = 1, which Megatron-LM has no equivalent for (Megatron-LM 2021-2022 profile' "$tmp/err" ||
    die "2021 profile, zero 1 plan: exit $rc, want 1"
"$PLC" compile "$ex/llama7b-a100.plan" -D layout.tp=2 -D layout.pp=2 -D layout.schedule=interleaved -D layout.vpp=2 \
    -D layout.recompute=full -D layout.zero=0 -D layout.attention=fused -o "$tmp/7bz0.bin" >/dev/null || die "compile 7b zero 0"
PLC_ENGINES="$PLC_ROOT/calibration/engines-megatron-lm-2021.yaml" "$PLC" export --megatron "$tmp/7bz0.bin" \
    -o "$tmp/7b-2021.sh" || die "2021 profile, zero 0 plan"
megatron_ok "$tmp/7b-2021.sh"
sed -n '/^ARGS=(/,/^)/p' "$tmp/7b-2021.sh" | grep -q -- '--overlap\|--tp-comm-overlap' && die "2021 profile: overlap flags written"
grep -q -- '--no-overlap-p2p-communication' "$tmp/7b-2021.sh" || die "2021 profile: p2p overlap not turned off"

# a plan it cannot run is refused; its spec exports the best it can run
"$PLC" compile "$ex/llama70b-h100.plan" -o "$tmp/70b.bin" >/dev/null || die "compile 70b"
"$PLC" dump "$tmp/70b.bin" | grep -q 'schedule=modular' || die "test premise: the 70b plan is modular"
"$PLC" export --megatron "$tmp/70b.bin" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'schedule = modular (modular pipeline placement), which Megatron-LM has no equivalent' "$tmp/err" ||
    die "modular plan: exit $rc, want 1 and the reason"
grep -q 'hint: export the spec instead' "$tmp/err" || die "modular plan: no hint"
"$PLC" export --megatron "$ex/llama70b-h100.plan" -o "$tmp/70b.sh" 2>"$tmp/err" || die "export --megatron spec"
megatron_ok "$tmp/70b.sh"
grep -q "^# Note: plc's best layout .*schedule=modular.*best layout Megatron-LM can run" "$tmp/70b.sh" || die "no note"
grep -q 'note:' "$tmp/err" || die "no note on stderr"
[ "$(arg "$tmp/70b.sh" --num-query-groups)" = 8 ] || die "GQA"

# torchtitan: a module Python compiles, only known keys, the plan's values
"$PLC" export --torchtitan "$tmp/7b.bin" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'zero = 1, which torchtitan has no equivalent' "$tmp/err" || die "zero 1 plan for torchtitan: exit $rc"
"$PLC" compile "$ex/llama7b-a100.plan" -D layout.tp=2 -D layout.pp=2 -D layout.schedule=interleaved -D layout.vpp=2 \
    -D layout.recompute=full -D layout.zero=3 -o "$tmp/7bz3.bin" >/dev/null || die "compile 7b zero 3"
"$PLC" export --torchtitan "$tmp/7bz3.bin" -o "$tmp/tt.py" || die "export --torchtitan"
"$PLC" export --torchtitan "$ex/llama70b-h100.plan" -D layout.zero=auto -o "$tmp/tt70.py" 2>/dev/null || die "export --torchtitan 70b"
"$PLC" export --torchtitan "$ex/llama70b-h100.plan" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'no layout torchtitan can run fits' "$tmp/err" || die "zero = 1 for torchtitan: exit $rc, want 2"
/usr/bin/python3 - "$keys" "$tmp/tt.py" "$tmp/tt70.py" <<'PY' || die "torchtitan module"
import ast, sys
known = {l.strip() for l in open(sys.argv[1]) if l.strip() and not l.startswith("#")}
alias = {"p": "parallelism", "tr": "training", "config.debug": "debug"}
for path in sys.argv[2:]:
    tree = ast.parse(open(path).read())
    got = {}
    for n in ast.walk(tree):
        if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Attribute):
            t = n.targets[0]
            owner = ast.unparse(t.value)
            if owner == "config" and t.attr == "activation_checkpoint":
                v = ast.unparse(n.value)
                key = "activation_checkpoint = " + ("None" if v == "None" else v.split(".")[0])
            else:
                key = alias[owner] + "." + t.attr
            assert key in known, (path, key)
            got[key] = ast.literal_eval(n.value) if not key.startswith("activation") else n.value
    if path.endswith("tt.py"):
        assert got["parallelism.tensor_parallel_degree"] == 2 and got["parallelism.pipeline_parallel_degree"] == 2
        assert got["parallelism.pipeline_parallel_schedule"] == "Interleaved1F1B"
        assert got["parallelism.pipeline_parallel_layers_per_stage"] == 32 // (2 * 2)
        assert got["parallelism.data_parallel_shard_degree"] == 8, "zero 3 -> FSDP2 over dp = 8"
        assert got["parallelism.data_parallel_replicate_degree"] == 1
        assert ast.unparse(got["activation_checkpoint = FullAC"]) == "FullAC.Config()"
        assert got["training.num_tokens_per_train_step"] == 2048 * 2048
PY
grep -q "^Note: plc's best layout" "$tmp/tt70.py" || die "torchtitan: no note"

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
[ $rc -eq 2 ] && grep -q 'hint: Megatron-LM runs schedule 1f1b;.* zero 0 1;' "$tmp/err" ||
    die "narrowed profile, pinned spec: exit $rc, want 2 and what it runs"

# unequal stages (uneven_stages, docs/engines.md): 32 layers on pp 6 run as
# 4, 6 x 4, 4; Megatron-LM names the ends' counts, torchtitan the middle's
# and what the ends hold less; with few layers a stage (9 on pp 8: 2, 1 x 6,
# 1) torchtitan gets each stage's modules; plc compile (plrun) refuses.
# Interleaved (uneven_stages 2): 32 layers on pp 4 with vpp 3 run as 12
# virtual stages 1, 3 x 10, 1 (ranks 7, 9, 9, 7), which torchtitan takes
# as layers_per_stage 3 with 2 less on each end; Megatron-LM runs unequal
# stages with vpp 1 only
"$PLC" export --megatron "$ex/llama7b-a100.plan" -D cluster.nodes=3 -D layout.pp=6 -D train.engine=megatron \
    -o "$tmp/uneven.sh" || die "export --megatron, pp 6 over 32 layers"
megatron_ok "$tmp/uneven.sh"
[ "$(arg "$tmp/uneven.sh" --decoder-first-pipeline-num-layers)" = 4 ] &&
    [ "$(arg "$tmp/uneven.sh" --decoder-last-pipeline-num-layers)" = 4 ] || die "uneven stages: the ends' layer counts"
grep -q -- '--decoder-first' "$tmp/7b.sh" && die "equal stages exported with --decoder-first-pipeline-num-layers"
"$PLC" export --torchtitan "$ex/llama7b-a100.plan" -D cluster.nodes=3 -D layout.pp=6 -D train.engine=fsdp2 \
    -D layout.zero=3 -o "$tmp/uneven_tt.py" || die "export --torchtitan, pp 6 over 32 layers"
"$PLC" export --torchtitan "$ex/tiny.plan" -D model.layers=9 -D layout.pp=8 -D train.engine=fsdp2 -D layout.zero=3 \
    -D train.precision=bf16 -o "$tmp/uneven_fqns.py" || die "export --torchtitan, pp 8 over 9 layers"
"$PLC" export --torchtitan "$ex/llama7b-a100.plan" -D layout.pp=4 -D layout.vpp=3 -D layout.schedule=interleaved \
    -D train.engine=fsdp2 -D layout.zero=3 -o "$tmp/uneven_il.py" || die "export --torchtitan, pp 4 vpp 3 over 32 layers"
"$PLC" export --megatron "$ex/llama7b-a100.plan" -D layout.pp=4 -D layout.vpp=3 -D layout.schedule=interleaved \
    -D train.engine=fsdp2 -D layout.zero=3 -o "$tmp/uneven_il.sh" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'pp \* vpp = 12 virtual stages of unequal layer counts (layers = 32), which Megatron-LM runs with vpp 1 only' "$tmp/err" ||
    die "export --megatron of unequal virtual stages: exit $rc, want 2 and the reason"
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
"$PLC" compile "$ex/llama7b-a100.plan" -D cluster.nodes=3 -D layout.pp=6 -o "$tmp/uneven.bin" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'pp = 6 does not divide layers = 32; engine plrun runs equal stages only' "$tmp/err" ||
    die "plc compile of unequal stages: exit $rc, want 1 and the reason"

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
echo "export: ok"
