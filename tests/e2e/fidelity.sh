#!/usr/bin/env bash
# The solver against measured runs: bench/fidelity on the Hagemann sheets in
# calibration/ must meet its targets (fits/OOM accuracy >= 0.90, MFU error
# <= 5 points, Spearman >= 0.8, the pick within 3 MFU points of the best run);
# --published writes one prediction per row of published_runs.csv, n/a with
# a reason for a row plc cannot express; --report gives every data set.
set -u
data="$PLC_ROOT/calibration"
sheets=("$data"/hagemann_*.csv)
[ -f "${sheets[0]}" ] || { echo "FAIL: no calibration sheets in $data"; exit 1; }
/usr/bin/python3 -c 'import yaml' 2> /dev/null || { echo "skip: /usr/bin/python3 lacks yaml (python3-yaml)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out.csv
"$PLC_ROOT/bench/fidelity" --plc "$PLC_BIN/plc" --check "${sheets[@]}" > "$out"
rc=$?
rows=$(($(wc -l < "$out") - 1))
head -1 "$out" | grep -qx 'trial_id,status,pred_fits,mfu,pred_mfu,pred_memory_gib' || { echo "bad CSV header"; exit 1; }
expect=$(cat "${sheets[@]}" | grep -cE ',(ok|OOM[^,]*),')
[ "$rows" -eq "$expect" ] || { echo "fidelity printed $rows rows for $expect ok/OOM runs"; exit 1; }
[ "$rc" -eq 0 ] || exit "$rc"

# --published: the published rows plus one plc cannot express (an SSM), one
# far too large to fit, two whose pp does not divide the layers (run by
# Megatron-Core, which splits them unequally, and by the Megatron-LM of
# 2021, which cannot), two of Llama 3.1 405B's shape (126 layers) on pp 8
# with the interleaved schedule, vpp 2, invented (not measurements: the
# layout Meta's torchtitan runs are reported with), run by torchtitan,
# which splits the 16 virtual stages unequally (7, 8 x 14, 7), and by
# Megatron-Core, which does not with virtual stages, two spelled as other
# sources write them (the arch as a family name, FlashAttention-3,
# "bf16-mixed"; recompute block:K), and an extra column, which is ignored.
# Then rows of other frameworks, invented (not measurements): Megatron-
# DeepSpeed with tp, pp and ZeRO 1 (equal and unequal stages), ZeRO 0 in
# bf16 and fp16, with ZeRO 2
# on a pipeline (which DeepSpeed's pipeline engine refuses) and with ZeRO 3
# without one (DeepSpeed's data parallelism), DeepSpeed ZeRO-3 training a
# Llama on 8 GPUs, and LLM Foundry (PyTorch FSDP1)
pub=$tmp/pub.csv
/usr/bin/python3 - "$data/published_runs.csv" "$pub" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
for r in rows:
    r.pop(None, None)  # cells beyond the header
odd = dict(rows[0], row_id="X-ssm", arch="mamba")
# a layout far too large for the GPU: predicted not to fit, with its memory
big = dict(rows[0], row_id="X-oom", micro_batch="64", recompute="none", global_batch=str(64 * int(rows[0]["dp"])))
by_id = {r["row_id"]: r for r in rows}
# one layer more than MH-5 (pp 2 then no longer divides it), on the current
# Megatron-Core, which splits unequal stages (r0.8, MH-5's own, does not)
uneven = dict(by_id["MH-5"], row_id="X-uneven", layers=str(int(by_id["MH-5"]["layers"]) + 1),
              framework="Megatron-Core 0.19")
uneven21 = dict(by_id["NA-5"], row_id="X-uneven-2021", layers=str(int(by_id["NA-5"]["layers"]) + 1))
spelled = dict(by_id["MH-2"], row_id="X-spelled", arch="GPT-3", attention="flash3", precision="bf16-mixed",
               gpu="NVIDIA H100 80GB HBM3", schedule="{PipeDream-Flush, Interleaved1F1B}")
nobatch = dict(by_id["MH-2"], row_id="X-nobatch", global_batch="")
pcie = dict(by_id["MH-2"], row_id="X-pcie", gpu="H100 PCIe")  # other clocks and links: not the SXM entry
block = dict(by_id["MH-2"], row_id="X-block", recompute="block:2")
titan = dict(by_id["MH-5"], row_id="X-405b-titan", source="invented for tests/e2e/fidelity.sh (not a measurement)",
             model="Llama 405B", arch="llama", layers="126", hidden="16384", ffn_hidden="53248", heads="128",
             kv_heads="8", vocab="128256", seq_len="8192", gpus="512", global_batch="512", tp="8", pp="8", dp="8",
             cp="1", vpp="2", micro_batch="1", schedule="interleaved", recompute="full", sp="1", zero="3",
             framework="torchtitan", notes="invented row: Llama 3.1 405B's shape and layout, no measurement")
titan_mc = dict(titan, row_id="X-405b-mcore", zero="1", framework="Megatron-Core r0.8")
titan_mc19 = dict(titan, row_id="X-405b-mcore19", zero="1", framework="Megatron-Core 0.19")
invented = dict(source="invented for tests/e2e/fidelity.sh (not a measurement)", notes="invented row, no measurement")
mds = dict(by_id["MH-3"], row_id="X-mds", tp="4", pp="4", dp="12", vpp="1", schedule="1f1b", sp="0", zero="1",
           attention="fused", framework="Megatron-DeepSpeed", **invented)
mds_uneven = dict(mds, row_id="X-mds-uneven", layers="30")
mds_zero2 = dict(mds, row_id="X-mds-zero2", zero="2")
mds_zero0 = dict(mds, row_id="X-mds-zero0", zero="0")
mds_zero0_fp16 = dict(mds, row_id="X-mds-zero0-fp16", zero="0", precision="fp16")
mds_zero3 = dict(mds, row_id="X-mds-zero3", pp="auto", dp="auto", cp="auto", zero="3")
ds3 = dict(by_id["MH-1"], row_id="X-ds-zero3", model="Llama 2 7B", arch="llama", layers="32", hidden="4096",
           ffn_hidden="11008", heads="32", kv_heads="32", vocab="32000", seq_len="4096", gpu="A100-SXM4-80GB",
           gpus="8", global_batch="64", tp="1", pp="1", dp="8", cp="1", vpp="1", schedule="auto", recompute="full",
           sp="0", zero="3", attention="flash2", framework="DeepSpeed ZeRO-3", **invented)
foundry = dict(ds3, row_id="X-foundry", model="MPT 7B", arch="gpt", ffn_hidden="16384", vocab="50432",
               seq_len="2048", global_batch="256", tp="auto", pp="auto", cp="auto", framework="LLM Foundry (Composer)")
cols = list(rows[0].keys()) + ["extra"]
with open(sys.argv[2], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=cols)
    w.writeheader()
    for r in rows + [odd, big, uneven, uneven21, titan, titan_mc, titan_mc19, spelled, pcie, nobatch, block, mds, mds_uneven, mds_zero2,
                     mds_zero0, mds_zero0_fp16, mds_zero3, ds3, foundry]:
        w.writerow(dict(r, extra="ignored"))
PY
mkdir "$tmp/specs"
"$PLC_ROOT/bench/fidelity" --plc "$PLC_BIN/plc" --keep "$tmp/specs" --published "$pub" > "$tmp/pred.csv" 2> "$tmp/pred.err" ||
    { echo "FAIL: --published exited $?"; cat "$tmp/pred.err"; exit 1; }
head -1 "$tmp/pred.csv" | grep -qx 'row_id,pred_fits,pred_tok_s_gpu,pred_mfu,pred_memory_gib,pred_tok_s_gpu_lo,pred_tok_s_gpu_hi' || { echo "FAIL: bad --published header"; exit 1; }
n=$(($(wc -l < "$pub") - 1)); got=$(($(wc -l < "$tmp/pred.csv") - 1))
[ "$got" -eq "$n" ] || { echo "FAIL: --published wrote $got rows for $n"; exit 1; }
grep -qx 'X-ssm,n/a,,,,,' "$tmp/pred.csv" || { echo "FAIL: the SSM row is not n/a"; exit 1; }
grep -q 'X-ssm.*architecture' "$tmp/pred.err" || { echo "FAIL: no reason on stderr for the n/a row"; exit 1; }
grep -qE '^X-oom,0,,,[0-9]+\.[0-9]{2},,$' "$tmp/pred.csv" ||
    { echo "FAIL: the row too large to fit is not pred_fits 0 with its memory"; grep X-oom "$tmp/pred.csv"; exit 1; }
grep -qE '^X-uneven,1,[0-9.]+,0\.[0-9]+,[0-9.]+,[0-9.]+,[0-9.]+$' "$tmp/pred.csv" ||
    { echo "FAIL: Megatron-Core 0.19's row of unequal stages has no prediction"; grep X-uneven "$tmp/pred.csv"; exit 1; }
grep -qx 'X-uneven-2021,n/a,,,,,' "$tmp/pred.csv" && grep -q 'engine megatron runs equal stages only' "$tmp/pred.err" ||
    { echo "FAIL: the 2021 profile's row of unequal stages is not n/a with its reason"; exit 1; }
# other spellings: modelled as what they name, with a warning; the same
# prediction as the row they respell
[ "$(grep '^X-spelled,' "$tmp/pred.csv" | cut -d, -f2-)" = "$(grep '^MH-2,' "$tmp/pred.csv" | cut -d, -f2-)" ] &&
    grep -q "row X-spelled: attention 'flash3' modelled as flash2" "$tmp/pred.err" &&
    grep -q "row X-spelled: arch 'GPT-3' modelled as plc's gpt block" "$tmp/pred.err" &&
    grep -q "row X-spelled: GPU 'NVIDIA H100 80GB HBM3' read as the catalog's H100-SXM5-80GB" "$tmp/pred.err" ||
    { echo "FAIL: the respelled row is not MH-2's prediction with its warnings"; grep 'X-spelled\|MH-2' "$tmp/pred.csv" "$tmp/pred.err"; exit 1; }
grep -qx 'X-pcie,n/a,,,,,' "$tmp/pred.csv" && grep -q "GPU 'H100 PCIe' is not in the catalog" "$tmp/pred.err" ||
    { echo "FAIL: a PCIe board borrowed the SXM entry's figures"; grep X-pcie "$tmp/pred.csv" "$tmp/pred.err"; exit 1; }
grep -qx 'X-nobatch,n/a,,,,,' "$tmp/pred.csv" && grep -q "row X-nobatch: n/a: the row does not give global_batch" "$tmp/pred.err" ||
    { echo "FAIL: a row without its global batch is not n/a with a reason"; grep X-nobatch "$tmp/pred.csv" "$tmp/pred.err"; exit 1; }
grep -qE '^X-block,1,' "$tmp/pred.csv" ||
    { echo "FAIL: recompute block:2 is not predicted"; grep X-block "$tmp/pred.csv"; exit 1; }
grep -qE '^X-405b-titan,1,[0-9.]+,0\.[0-9]+,[0-9.]+,[0-9.]+,[0-9.]+$' "$tmp/pred.csv" ||
    { echo "FAIL: torchtitan's interleaved row of unequal stages has no prediction"; grep X-405b "$tmp/pred.csv"; exit 1; }
grep -qx 'X-405b-mcore,n/a,,,,,' "$tmp/pred.csv" &&
    grep -q 'engine megatron_r0_8 runs equal stages only' "$tmp/pred.err" ||
    { echo "FAIL: Megatron-Core r0.8's interleaved row of unequal stages is not n/a with its reason"; exit 1; }
grep -qE '^X-405b-mcore19,1,[0-9.]+,0\.[0-9]+,[0-9.]+,[0-9.]+,[0-9.]+$' "$tmp/pred.csv" ||
    { echo "FAIL: Megatron-Core 0.19's interleaved row of unequal stages has no prediction"; grep X-405b "$tmp/pred.csv"; exit 1; }
# other frameworks: each row predicted under its framework's engine and
# profile (the generated spec says which), with the warning where a
# framework is modelled by another's profile
engine_is() { # row, engine, profile as the spec's comment names it
    grep -qx "  engine = $2     # profile: $3" "$tmp/specs/pub-$(echo "$1" | tr -d -- -).plan" ||
        { echo "FAIL: row $1 is not modelled as engine $2 with profile $3"; grep -h 'engine' "$tmp/specs/pub-$(echo "$1" | tr -d -- -).plan"; exit 1; }
}
for row in X-mds X-mds-uneven X-mds-zero0 X-mds-zero0-fp16 X-mds-zero3 X-ds-zero3 X-foundry; do
    grep -qE "^$row,1,[0-9.]+,0\.[0-9]+,[0-9.]+,[0-9.]+,[0-9.]+\$" "$tmp/pred.csv" ||
        { echo "FAIL: $row has no prediction"; grep "$row" "$tmp/pred.csv" "$tmp/pred.err"; exit 1; }
done
engine_is X-mds megatron engines-deepspeed.yaml
engine_is X-mds-uneven megatron engines-deepspeed.yaml
engine_is X-mds-zero3 fsdp2 engines-deepspeed.yaml
engine_is X-ds-zero3 fsdp2 engines-deepspeed.yaml
engine_is X-foundry fsdp2 examples/engines.yaml
grep -q "framework 'Megatron-DeepSpeed'" "$tmp/pred.err" &&
    { echo "FAIL: Megatron-DeepSpeed is warned about, as if it had no profile"; grep Megatron-DeepSpeed "$tmp/pred.err"; exit 1; }
grep -q "framework 'LLM Foundry (Composer)' (row X-foundry): its FSDP1 (PyTorch's FullyShardedDataParallel, or FairScale's) modelled as FSDP2" "$tmp/pred.err" ||
    { echo "FAIL: no warning that LLM Foundry's FSDP1 is modelled as FSDP2"; exit 1; }
# ZeRO 3 and pp auto: DeepSpeed's data parallelism, which runs no pipeline (pp 1)
grep -qx '  pp = 1' "$tmp/specs/pub-Xmdszero3.plan" ||
    { echo "FAIL: Megatron-DeepSpeed's ZeRO 3 row is not pinned to pp 1"; exit 1; }
# cp left to plc: DeepSpeed (Ulysses is not plc's cp) and the FSDP1
# trainers run cp 1; LLM Foundry runs neither tp nor pp
grep -qx '  cp = 1' "$tmp/specs/pub-Xmdszero3.plan" && grep -qx '  cp = 1' "$tmp/specs/pub-Xfoundry.plan" &&
    grep -qx '  tp = 1' "$tmp/specs/pub-Xfoundry.plan" && grep -qx '  pp = 1' "$tmp/specs/pub-Xfoundry.plan" ||
    { echo "FAIL: DeepSpeed's or LLM Foundry's row left to plc is not pinned to cp 1 (Foundry: tp 1, pp 1)";
      grep -h '^  [tpc]p' "$tmp/specs/pub-Xmdszero3.plan" "$tmp/specs/pub-Xfoundry.plan"; exit 1; }
# ZeRO 0 in bf16 is BF16_Optimizer's sharded optimizer state, ZeRO 1's
# memory; in fp16 it is ZeRO 0
grep -q "row X-mds-zero0: ZeRO 0 in bf16 is DeepSpeed's BF16_Optimizer, which shards the optimizer state: modelled as ZeRO 1" "$tmp/pred.err" &&
    grep -qx '  zero = 1' "$tmp/specs/pub-Xmdszero0.plan" && grep -qx '  zero = 0' "$tmp/specs/pub-Xmdszero0fp16.plan" ||
    { echo "FAIL: Megatron-DeepSpeed's bf16 ZeRO 0 is not modelled as ZeRO 1 (or its fp16 one not as ZeRO 0)"; exit 1; }
# DeepSpeed's pipeline engine refuses ZeRO 2 and 3
grep -qx 'X-mds-zero2,n/a,,,,,' "$tmp/pred.csv" && grep -q 'engine megatron does not run zero = 2; it runs 0, 1' "$tmp/pred.err" ||
    { echo "FAIL: Megatron-DeepSpeed's ZeRO 2 row on a pipeline is not n/a with its reason"; grep X-mds-zero2 "$tmp/pred.csv"; exit 1; }
# every expressible row that fits has a prediction: throughput, MFU, memory
bad=$(grep -v '^row_id\|^X-ssm\|^X-oom\|^X-uneven-2021\|^X-405b-mcore\|^X-mds-zero2\|^X-pcie\|^X-nobatch' "$tmp/pred.csv" | grep -cvE '^[^,]+,1,[0-9.]+,0\.[0-9]+,[0-9.]+,[0-9.]+,[0-9.]+$')
[ "$bad" -eq 0 ] || { echo "FAIL: $bad malformed prediction rows"; cat "$tmp/pred.csv"; exit 1; }

# --report: one line per data set (each sheet, each published source)
"$PLC_ROOT/bench/fidelity" --plc "$PLC_BIN/plc" --report > /dev/null 2> "$tmp/rep.err" || { echo "FAIL: --report"; exit 1; }
for set in hagemann_llama13b_2k_32gpu_sp hagemann_llama13b_2k_64gpu Korthikanti Megatron-LM Narayanan; do
    grep -q "^  $set .*MFU MAE .*Spearman" "$tmp/rep.err" || { echo "FAIL: --report lacks $set"; cat "$tmp/rep.err"; exit 1; }
done
exit 0
