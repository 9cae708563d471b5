#!/usr/bin/env bash
# Error bars (docs/solver.md, "Error bars"): plc solve and explain give each
# prediction the range of its kind from examples/error_bars.csv and say which
# layouts lie within each other's range; the YAML carries lo and hi; with
# one range for the whole job the ranking is the point estimate's;
# PLC_ERROR_BARS names another table or none, and a malformed one is an
# error (exit 1). bench/fidelity --published writes the range and reads the
# board overrides gpu_memory_gib and hbm_tb_s; --error-bars writes a table
# plc reads, with the leave-one-source-out figures per data set.
set -u
: "${PLC_BIN:?}" "${PLC_ROOT:?}"
plc=$PLC_BIN/plc
/usr/bin/python3 -c 'import yaml' 2> /dev/null || { echo "skip: /usr/bin/python3 lacks yaml (python3-yaml)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
spec=$PLC_ROOT/examples/llama7b-a100.plan
unset PLC_ERROR_BARS

# solve: the range line, the column, the ranks within each other's error
"$plc" solve --top 5 "$spec" > "$tmp/solve.txt" || fail "solve exit $?"
grep -qE '^error bars: measured/predicted throughput [0-9.]+\.\.[0-9.]+, the 10th-90th percentile over [0-9]+ calibration runs of kind megatron|^error bars: measured/predicted throughput [0-9.]+\.\.[0-9.]+, the 10th-90th percentile over [0-9]+ calibration runs of kind any engine, A100, 1-64 GPUs' "$tmp/solve.txt" ||
    { cat "$tmp/solve.txt"; fail "no error-bar line of the A100 kind"; }
grep -q 'MFU range' "$tmp/solve.txt" || fail "no MFU range column"
[ "$(grep -cE '^ +[0-9]+ .* [0-9.]+% +[0-9.]+\.\.[0-9.]+%( |$)' "$tmp/solve.txt")" -eq 5 ] || { cat "$tmp/solve.txt"; fail "not 5 rows with a range"; }
grep -qE "^layouts? 1(-[0-9]+)?( are within the prediction's error of each other| is ahead of the others)" "$tmp/solve.txt" ||
    fail "no line on the layouts within each other's error"

# the YAML: the table's figures, each layout's lo and hi; the same ranking without a table
"$plc" solve --top 5 --format yaml "$spec" > "$tmp/with.yaml" || fail "yaml solve"
PLC_ERROR_BARS=none "$plc" solve --top 5 --format yaml "$spec" > "$tmp/without.yaml" || fail "yaml solve, no table"
PLC_ERROR_BARS=none "$plc" solve --top 2 "$spec" | grep -qx 'error bars: none (PLC_ERROR_BARS=none)' || fail "PLC_ERROR_BARS=none not said"
/usr/bin/python3 - "$tmp/with.yaml" "$tmp/without.yaml" <<'PY' || fail "yaml ranges"
import sys, yaml
L = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
w, wo = (yaml.load(open(p), Loader=L) for p in sys.argv[1:3])
b = w["error_bars"]
assert 0 < b["lo"] <= b["hi"] and b["runs"] >= 8 and b["table"].endswith("error_bars.csv"), b
assert "none" in wo["error_bars"] and all("tokens_per_s_lo" not in l for l in wo["layouts"])
for l in w["layouts"]:
    for k, f in (("tokens_per_s", 1), ("mfu", 1)):
        assert abs(l[k + "_lo"] - l[k] * b["lo"]) <= 2e-5 * l[k] and abs(l[k + "_hi"] - l[k] * b["hi"]) <= 2e-5 * l[k], l
    assert abs(l["step_time_s_lo"] - l["step_time_s"] / b["hi"]) <= 2e-5 * l["step_time_s"]
    assert abs(l["step_time_s_hi"] - l["step_time_s"] / b["lo"]) <= 2e-5 * l["step_time_s"]
# one range for the job: the pick rule keeps the point estimate's order
dims = "dp tp pp cp sp vpp micro_batch schedule recompute zero attention fused_rmsnorm".split()
key = lambda l: tuple(l[d] for d in dims)
assert [key(l) for l in w["layouts"]] == [key(l) for l in wo["layouts"]]
PY

# the kind follows the job: H100 at 1024 GPUs
"$plc" solve --top 1 "$PLC_ROOT/examples/llama70b-h100.plan" -D cluster.nodes=128 | grep -q '^error bars: .* H100, ' ||
    fail "an H100 job does not get an H100 kind"

# another table, and malformed ones
printf 'engine,gpu,gpus_min,gpus_max,runs,lo,hi,sources\n*,*,1,0,10,0.5,2,test\n' > "$tmp/wide.csv"
PLC_ERROR_BARS=$tmp/wide.csv "$plc" solve --top 2 "$spec" | grep -q "throughput 0.50..2.00, .* kind any engine, any GPU, any GPU count (test)" ||
    fail "PLC_ERROR_BARS's table not read"
printf '# comment\nengine,gpu,gpus_min,gpus_max,runs,lo,hi,sources\n*,*,1,0,10,1.2,0.8,test\n' > "$tmp/bad.csv"
PLC_ERROR_BARS=$tmp/bad.csv "$plc" solve "$spec" > /dev/null 2> "$tmp/bad.err"; rc=$?
[ $rc -eq 1 ] || fail "malformed table: exit $rc, want 1"
grep -q "^plc solve: error: $tmp/bad.csv:3: .*lo <= hi" "$tmp/bad.err" || { cat "$tmp/bad.err"; fail "malformed table: no file:line message"; }
PLC_ERROR_BARS=$tmp/missing.csv "$plc" explain "$spec" > /dev/null 2> "$tmp/missing.err"; rc=$?
[ $rc -eq 1 ] && grep -q "cannot read the error-bar table $tmp/missing.csv" "$tmp/missing.err" || fail "missing table: exit $rc"

# explain: the winner's range, the runners-up within it or not
"$plc" explain "$spec" > "$tmp/explain.txt" || fail "explain exit $?"
grep -qE '^predicted: [0-9]+ tokens/s \(range [0-9]+\.\.[0-9]+\), MFU [0-9.]+% \(range [0-9.]+\.\.[0-9.]+%\)' "$tmp/explain.txt" ||
    fail "explain: no predicted range"
grep -qE "; (within|beyond) the prediction's error$" "$tmp/explain.txt" || fail "explain: regions not placed against the range"
"$plc" explain --format yaml "$spec" | /usr/bin/python3 -c '
import sys, yaml
d = yaml.load(sys.stdin, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
r = d["winner_range"]; w = d["winner"]
assert r["tokens_per_s_lo"] <= w["tokens_per_s"] * d["error_bars"]["hi"] and r["mfu_lo"] < r["mfu_hi"]
assert any("within_error" in g for g in d["regions"])' || fail "explain yaml: no range"

# bench/fidelity --published: the range columns; the board overrides
data=$PLC_ROOT/calibration
/usr/bin/python3 - "$data/published_runs.csv" "$tmp/pub.csv" <<'PY'
import csv, sys
rows = {r["row_id"]: r for r in csv.DictReader(open(sys.argv[1], newline=""))}
base = rows["MH-2"]
out = [dict(base), dict(base, row_id="X-small", gpu_memory_gib="8"), dict(base, row_id="X-slow", hbm_tb_s="0.5"),
       dict(base, row_id="X-same", gpu_memory_gib="", hbm_tb_s="3.35"), dict(base, row_id="X-bad", hbm_tb_s="fast")]
cols = list(base.keys()) + ["gpu_memory_gib", "hbm_tb_s"]
with open(sys.argv[2], "w", newline="") as f:
    w = csv.DictWriter(f, fieldnames=cols)
    w.writeheader()
    for r in out:
        w.writerow({k: r.get(k, "") for k in cols})
PY
"$PLC_ROOT/bench/fidelity" --plc "$plc" --keep "$tmp/specs" --published "$tmp/pub.csv" > "$tmp/pred.csv" 2> "$tmp/pred.err" ||
    { cat "$tmp/pred.err"; fail "--published exit"; }
/usr/bin/python3 - "$tmp/pred.csv" <<'PY' || { cat "$tmp/pred.csv"; fail "--published ranges and overrides"; }
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1], newline="")))
assert list(rows[0].keys()) == ["row_id", "pred_fits", "pred_tok_s_gpu", "pred_mfu", "pred_memory_gib",
                                "pred_tok_s_gpu_lo", "pred_tok_s_gpu_hi"], rows[0].keys()
r = {x["row_id"]: x for x in rows}
m = r["MH-2"]
assert m["pred_fits"] == "1" and 0 < float(m["pred_tok_s_gpu_lo"]) <= float(m["pred_tok_s_gpu_hi"])
assert float(m["pred_tok_s_gpu_lo"]) < float(m["pred_tok_s_gpu"]) * 1.5 and float(m["pred_tok_s_gpu_hi"]) > float(m["pred_tok_s_gpu"]) * 0.5
assert r["X-small"]["pred_fits"] == "0" and r["X-small"]["pred_tok_s_gpu_lo"] == "", r["X-small"]   # 8 GiB: nothing fits
assert r["X-slow"]["pred_fits"] == "1" and float(r["X-slow"]["pred_tok_s_gpu"]) < float(m["pred_tok_s_gpu"])  # slower HBM
assert r["X-same"]["pred_tok_s_gpu"] == m["pred_tok_s_gpu"]  # the catalog's own 3.35 TB/s
assert r["X-bad"]["pred_fits"] == "n/a"
PY
grep -qx '  memory = 8 GiB   # the row'"'"'s gpu_memory_gib' "$tmp/specs/pub-Xsmall.plan" &&
    grep -qx '  hbm_bw = 0.5 TB/s   # the row'"'"'s hbm_tb_s' "$tmp/specs/pub-Xslow.plan" || fail "the overrides are not cluster keys of the spec"
grep -q "row X-bad: n/a: hbm_tb_s 'fast' is not a positive number" "$tmp/pred.err" || fail "no reason for a bad override"

# --error-bars: a table plc reads, and the figures per data set (one grid point, to be quick)
"$PLC_ROOT/bench/fidelity" --plc "$plc" --fit framework_efficiency=0.8 --error-bars "$tmp/bars.csv" > /dev/null 2> "$tmp/bars.err" ||
    { tail "$tmp/bars.err"; fail "--error-bars exit"; }
grep -qx 'engine,gpu,gpus_min,gpus_max,runs,lo,hi,sources' "$tmp/bars.csv" && grep -q '^\*,\*,1,0,' "$tmp/bars.csv" ||
    fail "--error-bars wrote no table"
for set in hagemann_llama13b_2k_32gpu_sp hagemann_llama13b_2k_64gpu Korthikanti Megatron-LM Narayanan; do
    grep -qE "^  $set +ran +[0-9]+  throughput error .* Spearman .* inside the range" "$tmp/bars.err" ||
        { cat "$tmp/bars.err"; fail "--error-bars lacks $set"; }
done
PLC_ERROR_BARS=$tmp/bars.csv "$plc" solve --top 1 "$spec" | grep -q "^error bars: .*table $tmp/bars.csv" || fail "plc does not read the written table"
echo "error_bars: ok"
