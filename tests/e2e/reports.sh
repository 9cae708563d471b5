#!/usr/bin/env bash
# YAML a CI script can trust and an explain that explains:
# - solve/explain/scale/compile --format yaml parse, carry plc_version and
#   tokens_per_step, and are byte-identical run to run (timings only with
#   --timing);
# - solve --all is ranked (rank 1 is the winner, every fitting row before
#   every other), every valid candidate carries its real prediction, those
#   that do not fit say fits: false; in the top-K listing exact ties share
#   one row;
# - explain names, per rejected region, the time components that make it
#   slower, the memory component of a region where nothing fits, and the
#   tie-break rule; the efficiencies it used (GEMM range, their catalog
#   figures) and the largest source of uncertainty, in text and YAML.
set -u
. "$(dirname "$0")/plc_lib.bash"
/usr/bin/python3 -c 'import yaml' 2>/dev/null || { echo "skip: /usr/bin/python3 lacks yaml (python3-yaml)"; exit 77; }
ex=$PLC_ROOT/examples
spec=$ex/llama7b-a100.plan

twice() { # NAME CMD... : runs twice, compares
    local name=$1; shift
    "$@" >"$tmp/$name.1" 2>"$tmp/$name.err"; local rc=$?
    "$@" >"$tmp/$name.2" 2>/dev/null
    cmp -s "$tmp/$name.1" "$tmp/$name.2" || die "$name: output differs between two runs"
    return $rc
}
twice solve "$PLC" solve "$spec" --all --format yaml || die "solve --all yaml"
# exact ties: under Megatron's profile selective recompute with flash
# attention costs nothing and keeps the same (plrun recomputes, so no tie)
twice top "$PLC" solve "$spec" -D train.engine=megatron --format yaml || die "solve yaml"
twice explain "$PLC" explain "$spec" --format yaml || die "explain yaml"
twice scale "$PLC" scale "$spec" --gpus 8..64 --format yaml || die "scale yaml"
twice compile "$PLC" compile "$ex/tiny.plan" -o "$tmp/t.bin" --format yaml || die "compile yaml"
"$PLC" solve "$spec" --timing --format yaml | grep -q '^search_seconds: ' || die "--timing gives no search_seconds"
grep -q 'search_seconds' "$tmp/solve.1" && die "search_seconds without --timing"

/usr/bin/python3 - "$tmp" <<'PY' || die "YAML content"
import sys, yaml
t = sys.argv[1]
load = lambda n: yaml.load(open(f"{t}/{n}.1"), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
s = load("solve")
for name in ("solve", "explain", "scale", "compile"):
    d = load(name)
    assert d["plc_version"] and d["command"] == name, (name, d.get("command"))
    assert d["tokens_per_step"] == d["sequences_per_step"] * 2048 or name == "compile", name
L = s["layouts"]
assert [x["rank"] for x in L] == list(range(1, len(L) + 1))
fits = [x["fits"] for x in L]
assert fits[0] and fits == sorted(fits, reverse=True), "fitting rows first"
assert any(not f for f in fits), "--all lists the layouts that do not fit"
w = s["winner"]
assert all(L[0][k] == v for k, v in w["layout"].items()) and L[0]["step_time_s"] == w["step_time_s"]
times = [x["step_time_s"] for x in L if x["fits"]]
assert times == sorted(times), "fitting rows by step time"
for x in L:
    if x["valid"] and not x["fits"]:
        assert x["step_time_s"] > 0 and x["mfu"] > 0 and x["memory_bytes"] > 0, x
        assert "over the" in x["reason"], x
    if not x["valid"]:
        assert "step_time_s" not in x and x["reason"], x
assert len(L) == s["enumerated"] - s["pruned"], "--all lists every candidate"
top = load("top")["layouts"]
assert len(top) == 10
ties = [x for x in top if x["ties"]]
assert ties and all(t2 != "" for x in ties for t2 in x["ties"]), "ties folded with their difference"
figs = [(x["fits"], x.get("step_time_s"), x.get("memory_bytes")) for x in top]
assert len(figs) == len(set(figs)), "exact ties not collapsed"
st = w["memory"]["stages"]
assert st and sum(st[0]["predicted_bytes"].values()) == st[0]["predicted_total_bytes"]
c = load("compile")
assert c["layout"]["memory"]["stages"][0]["plan_arena_bytes"] > 0
e = load("explain")
assert e["tie_rule"] and e["regions"] and all("where" in r for r in e["regions"])
sc = load("scale")
assert [p["gpus"] for p in sc["sizes"]] == [8, 16, 32, 64]
PY

# text: ties share a row, percentages exact
"$PLC" solve "$spec" -D train.engine=megatron >"$tmp/solve.txt" || die "solve"
grep -q 'tie: recompute=selective' "$tmp/solve.txt" || die "solve: ties not folded"
"$PLC" solve "$spec" -D layout.memory_limit=77.5% | grep -q '(77.5% of' || die "solve: memory_limit not exact"

# explain explains
"$PLC" explain "$spec" -D 'layout.micro_batch={1,64}' -D layout.recompute=none >"$tmp/explain.txt" || die "explain"
grep -Eq 's/step \(\+[0-9.]+%\), MFU [0-9.]+%: .*[+-][0-9.]+ s (compute|tp-comm|pp-comm|bubble)' "$tmp/explain.txt" ||
    { cat "$tmp/explain.txt"; die "explain: no per-component difference"; }
grep -q 'micro_batch = 64 (winner: micro_batch = 1)' "$tmp/explain.txt" || die "explain: no micro_batch region"
grep -A1 'micro_batch = 64 (winner' "$tmp/explain.txt" | grep -q 'nothing fits: .*; activations [0-9.]* GiB on stage' ||
    die "explain: the region where nothing fits does not name the component"
grep -q 'ties: exact ties .* plainer layout' "$tmp/explain.txt" || die "explain: no tie-break rule"
# a region the memory bound prunes whole (pp = 1 for llama-65b without ZeRO)
"$PLC" explain "$ex/llama65b-h100.plan" -D 'layout.pp={1,16}' -D layout.zero=0 >"$tmp/pruned.txt" || die "explain 65b"
grep -A1 '^  pp = 1 (winner: pp = 16)' "$tmp/pruned.txt" | grep -q 'nothing fits: pruned by the memory bound; .*; optimizer [0-9.]* GiB on stage 0' ||
    { cat "$tmp/pruned.txt"; die "explain: the pruned region pp = 1 is not explained"; }
# efficiencies and the largest uncertainty
grep -Eq '^  GEMMs [0-9]+-[0-9]+% of the bf16 peak \(matmul_efficiency 0\.[0-9]+ x framework_efficiency' "$tmp/explain.txt" ||
    { cat "$tmp/explain.txt"; die "explain: no GEMM efficiencies"; }
grep -Eq '^largest uncertainty \([0-9]+% of the step\): .+' "$tmp/explain.txt" || die "explain: no largest uncertainty"
/usr/bin/python3 - "$tmp/explain.1" <<'PY' || die "explain yaml: efficiencies"
import sys, yaml
e = yaml.safe_load(open(sys.argv[1]))["efficiencies"]
assert 0 < e["gemm_min"] <= e["gemm_max"] <= e["matmul_efficiency"] * e["framework_efficiency"] <= 0.85, e
assert 0 < e["uncertainty"]["step_share"] <= 1 and e["uncertainty"]["source"], e
assert e["uncertainty"]["alloc_share_bytes"] >= 0 and "memory_margin_bytes" in e["uncertainty"], e
PY
echo "reports: ok"
