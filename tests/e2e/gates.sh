#!/usr/bin/env bash
# CI gates of plc check and compile (--max-memory, --min-mfu, --baseline with
# --max-regression and --regression-on, --allow-different, the spec's gates
# block) with their distinct exit codes (1 spec error or refused baseline,
# 2 no layout, 4 gate failed), spec names on every gate line and the gate
# results in compile's YAML. examples/ci/compile-all.sh has its own test
# (ci_example.sh).
set -u
. "$(dirname "$0")/plc_lib.bash"
ex=$PLC_ROOT/examples
spec=$ex/llama7b-a100.plan
/usr/bin/python3 -c 'import yaml' 2>/dev/null || { echo "skip: /usr/bin/python3 lacks yaml (python3-yaml)"; exit 77; }
expect() { # RC CMD...
    local want=$1; shift
    "$@" >"$tmp/out" 2>"$tmp/err"; local rc=$?
    [ $rc -eq "$want" ] || { cat "$tmp/out" "$tmp/err"; die "$*: exit $rc, want $want"; }
}
# thresholds around the winner's own prediction, read from the YAML
read -r mfu mem <<<"$("$PLC" solve "$spec" --format yaml | /usr/bin/python3 -c '
import sys, yaml
d = yaml.safe_load(sys.stdin)
w = d["winner"]
print(100 * w["mfu"], 100 * w["memory"]["peak_bytes"] / (d["memory_limit_bytes"] / d["memory_limit"]))')"
pct() { /usr/bin/python3 -c "import math; print(str(math.$1($2)) + '%')"; }
expect 0 "$PLC" check "$spec" --max-memory "$(pct ceil "$mem")" --min-mfu "$(pct floor "$mfu")"
grep -q "^$spec: gate memory: .*: pass\$" "$tmp/out" && grep -q "^$spec: gate MFU: .*: pass\$" "$tmp/out" || die "check: no gate lines naming the spec"
expect 4 "$PLC" check "$spec" --min-mfu "$(pct ceil "$mfu")"
grep -q "gate failed: .*predicted MFU .*, below --min-mfu $(pct ceil "$mfu")" "$tmp/err" || die "check: MFU gate message"
expect 4 "$PLC" check "$spec" --max-memory "$(pct floor "$mem")"
grep -q 'gate failed: .*peak memory' "$tmp/err" || die "check: memory gate message"
expect 1 "$PLC" check "$spec" --min-mfu 45
grep -q 'takes a percentage' "$tmp/err" || die "bad percentage: no message"
expect 1 "$PLC" check "$ex/tiny.plan" -D layout.tp=3 --min-mfu 1%
expect 2 "$PLC" check "$spec" -D layout.tp=1 -D layout.pp=1 -D layout.dp=32 -D layout.zero=0 -D layout.micro_batch=64 \
    -D layout.recompute=none --min-mfu 1%
# compile's memory gate judges the plan's exact figure (the most loaded
# stage's arena plus the fixed costs it decides fit on), not the estimate
read -r exact pred <<<"$("$PLC" compile "$spec" --format yaml -o "$tmp/x.bin" | /usr/bin/python3 -c '
import sys, yaml
d = yaml.safe_load(sys.stdin)
dev = d["memory_limit_bytes"] / d["memory_limit"]
print(100 * d["exact_peak_bytes"] / dev, 100 * d["layout"]["memory"]["peak_bytes"] / dev)')"
expect 0 "$PLC" compile "$spec" -o "$tmp/x.bin" --max-memory "$(pct ceil "$exact")"
grep -q "^$spec: gate memory: exact peak .*: pass\$" "$tmp/out" || die "compile: no exact memory gate line"
expect 4 "$PLC" compile "$spec" -o "$tmp/x.bin" --max-memory "$(pct floor "$exact")"
grep -q 'gate failed: .*exact peak memory' "$tmp/err" || die "compile: exact memory gate message"
if /usr/bin/python3 -c "import math, sys; sys.exit(0 if math.ceil($exact) < math.floor($pred) else 1)"; then
    # a limit between the two: compile passes on the plan, check fails on the estimate
    expect 0 "$PLC" compile "$spec" -o "$tmp/x.bin" --max-memory "$(pct ceil "$exact")"
    expect 4 "$PLC" check "$spec" --max-memory "$(pct ceil "$exact")"
fi
expect 1 "$PLC" compile "$spec" --max-regression 2% -o "$tmp/x.bin"
grep -q 'needs --baseline' "$tmp/err" || die "--max-regression alone: no message"

# spec names on every gate line when several specs are checked
expect 0 "$PLC" check -q "$spec" "$ex/llama13b-a100.plan" --max-memory 99%
[ "$(grep -c ': gate memory: ' "$tmp/out")" = 2 ] && grep -q "^$ex/llama13b-a100.plan: gate memory" "$tmp/out" \
    || { cat "$tmp/out"; die "check -q of two specs: a gate line without its spec"; }

# the regression gate: MFU (in points) and tokens/s per GPU against a
# baseline plan; a cluster change compared with --allow-different=cluster
expect 0 "$PLC" compile "$spec" -o "$tmp/best.bin"
expect 0 "$PLC" compile "$spec" -D layout.tp=2 -o "$tmp/tp2.bin" --baseline "$tmp/best.bin" --max-regression 100%
read -r mfu_old mfu_new tpg_old tpg_new <<<"$(sed -n 's/.*gate regression: MFU \([0-9.]*\)% -> \([0-9.]*\)% .*tokens\/s per GPU \([0-9.e+]*\) -> \([0-9.e+]*\) .*/\1 \2 \3 \4/p' "$tmp/out")"
[ -n "$tpg_new" ] || { cat "$tmp/out"; die "no regression line with MFU and tokens/s per GPU"; }
pts=$(/usr/bin/python3 -c "print($mfu_old - $mfu_new)")
rel=$(/usr/bin/python3 -c "print(100 * (1 - $tpg_new / $tpg_old))")
/usr/bin/python3 -c "import sys; sys.exit(0 if $pts > 0.01 and $rel > 0.01 else 1)" || die "tp=2 is not slower ($pts points, $rel%)"
expect 4 "$PLC" compile "$spec" -D layout.tp=2 -o "$tmp/tp2.bin" --baseline "$tmp/best.bin" --max-regression "$(pct floor "$pts")"
grep -q "gate failed: $spec: predicted MFU .* points below the baseline's .*, more than --max-regression" "$tmp/err" \
    || die "regression gate message"
grep -q "^$spec: gate regression: .*: FAIL$" "$tmp/out" || die "no failed regression line"
[ -s "$tmp/tp2.bin" ] || die "a failed gate must still write the plan"
expect 0 "$PLC" compile "$spec" -D layout.tp=2 -o "$tmp/tp2.bin" --baseline "$tmp/best.bin" --max-regression "$(pct ceil "$pts")"
grep -q "^$spec: headroom: exact peak .* to spare$" "$tmp/out" || die "no headroom line"
expect 4 "$PLC" compile "$spec" -D layout.tp=2 -o "$tmp/tp2.bin" --baseline "$tmp/best.bin" --regression-on tokens-per-gpu \
    --max-regression "$(pct floor "$rel")"
grep -q 'gate failed: .*tokens/s per GPU is .*% below the baseline' "$tmp/err" || die "tokens-per-gpu gate message"
expect 0 "$PLC" check "$spec" -D layout.tp=2 --baseline "$tmp/best.bin" --regression-on tokens-per-gpu --max-regression "$(pct ceil "$rel")"
expect 1 "$PLC" compile "$spec" -o "$tmp/y.bin" --baseline "$tmp/missing.bin"
expect 1 "$PLC" check "$spec" --regression-on flops --baseline "$tmp/best.bin"
expect 1 "$PLC" check "$spec" --allow-different
grep -q -- '--allow-different needs --baseline' "$tmp/err" || die "--allow-different alone: no message"

# a baseline of another model or cluster is refused, naming each difference
expect 1 "$PLC" compile "$spec" -D model.layers=40 -D model.hidden=5120 -o "$tmp/z.bin" --baseline "$tmp/best.bin"
grep -q 'the baseline .* is for another model' "$tmp/err" && grep -q 'model.layers  *32 -> 40' "$tmp/err" \
    && grep -q 'model.hidden  *4096 -> 5120' "$tmp/err" || { cat "$tmp/err"; die "another model: not refused by name"; }
[ ! -e "$tmp/z.bin" ] || die "a refused baseline must stop before the plan is written"
expect 1 "$PLC" check "$spec" -D cluster.nodes=8 --baseline "$tmp/best.bin" --allow-different=model
grep -q 'is for another cluster' "$tmp/err" && grep -q 'cluster.nodes  *4 -> 8' "$tmp/err" || die "another cluster: not refused"
expect 0 "$PLC" check "$spec" -D cluster.nodes=8 --baseline "$tmp/best.bin" --allow-different=cluster --max-regression 100%
grep -q 'note: .*another cluster (allowed' "$tmp/err" || die "allowed difference: no note"
expect 1 "$PLC" check "$spec" -D train.engine=megatron --baseline "$tmp/best.bin"
grep -q 'train.engine  *plrun -> megatron' "$tmp/err" || die "another engine: not refused"
expect 0 "$PLC" check "$spec" -D train.engine=megatron -D layout.zero=1 --baseline "$tmp/best.bin" --allow-different --max-regression 100%

# the spec's gates block; an option overrides its key
cp "$spec" "$tmp/g.plan"
printf 'gates {\n  max_memory = 99%%\n  min_mfu = %s\n}\n' "$(pct ceil "$mfu")" >>"$tmp/g.plan"
expect 4 "$PLC" check "$tmp/g.plan"
grep -q "gate failed: .*below gates.min_mfu = " "$tmp/err" || die "spec gate: message names gates.min_mfu"
grep -q "^$tmp/g.plan: gate memory: .*limit 99%: pass$" "$tmp/out" || die "spec gate: no memory line"
expect 0 "$PLC" check "$tmp/g.plan" --min-mfu 1%
expect 4 "$PLC" check "$tmp/g.plan" -D gates.min_mfu=100%

# gate results in compile's YAML (the lines go to stderr then)
expect 4 "$PLC" compile "$tmp/g.plan" -o "$tmp/g.bin" --format yaml --baseline "$tmp/best.bin" --max-regression 1%
/usr/bin/python3 - "$tmp/out" <<'PY' || die "compile --format yaml: gates"
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
g = {x["name"]: x for x in d["gates"]}
assert set(g) == {"memory", "mfu", "regression", "headroom"}, g
assert g["mfu"]["verdict"] == "fail" and g["mfu"]["value"] < g["mfu"]["threshold"], g["mfu"]
assert g["memory"]["verdict"] == "pass" and g["memory"]["threshold"] == 0.99, g["memory"]
r = g["regression"]
assert r["verdict"] == "pass" and r["value"] == 0 and r["figure"] == "mfu" and r["mfu"]["baseline"] == r["mfu"]["plan"], r
assert r["from"] == "--max-regression 1%", r
assert g["headroom"]["peak_bytes"] <= g["headroom"]["limit_bytes"]
PY
grep -q 'gate MFU: .*: FAIL$' "$tmp/err" || die "yaml: gate lines not on stderr"
"$PLC" compile "$spec" -o "$tmp/x.bin" --format yaml | /usr/bin/python3 -c '
import sys, yaml; assert yaml.safe_load(sys.stdin)["gates"] == []' || die "yaml without gates: no empty gates list"
echo "gates: ok"
