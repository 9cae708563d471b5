#!/usr/bin/env bash
# CI gates of plc check and compile (--max-memory, --min-mfu, --baseline with
# --max-regression) with their distinct exit codes (1 spec error, 2 no
# layout, 4 gate failed), and examples/ci/compile-all.sh: it compiles every
# spec of a directory and fails on a throughput regression against baseline
# plans.
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
grep -q '^gate memory: .*: pass$' "$tmp/out" && grep -q '^gate MFU: .*: pass$' "$tmp/out" || die "check: no gate lines"
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
grep -q '^gate memory: exact peak .*: pass$' "$tmp/out" || die "compile: no exact memory gate line"
expect 4 "$PLC" compile "$spec" -o "$tmp/x.bin" --max-memory "$(pct floor "$exact")"
grep -q 'gate failed: .*exact peak memory' "$tmp/err" || die "compile: exact memory gate message"
if /usr/bin/python3 -c "import math, sys; sys.exit(0 if math.ceil($exact) < math.floor($pred) else 1)"; then
    # a limit between the two: compile passes on the plan, check fails on the estimate
    expect 0 "$PLC" compile "$spec" -o "$tmp/x.bin" --max-memory "$(pct ceil "$exact")"
    expect 4 "$PLC" check "$spec" --max-memory "$(pct ceil "$exact")"
fi
expect 1 "$PLC" compile "$spec" --max-regression 2% -o "$tmp/x.bin"
grep -q 'needs --baseline' "$tmp/err" || die "--max-regression alone: no message"

# baseline: the solver's best against a slower pinned layout
expect 0 "$PLC" compile "$spec" -o "$tmp/best.bin"
expect 0 "$PLC" compile "$spec" -D layout.tp=2 -o "$tmp/tp2.bin"
drop=$(/usr/bin/python3 - "$PLC" "$tmp/best.bin" "$tmp/tp2.bin" <<'PY'
import re, subprocess, sys
tps = [float(re.search(r"predicted: step \S+ s, (\S+) tokens/s", subprocess.run([sys.argv[1], "dump", f, "--no-buffers"],
       capture_output=True, text=True).stdout).group(1)) for f in sys.argv[2:]]
print(100 * (1 - tps[1] / tps[0]))
PY
)
expect 4 "$PLC" compile "$spec" -D layout.tp=2 -o "$tmp/tp2.bin" --baseline "$tmp/best.bin" --max-regression "$(pct floor "$drop")"
grep -q 'gate failed: .*% below the baseline' "$tmp/err" || die "regression gate message"
[ -s "$tmp/tp2.bin" ] || die "a failed gate must still write the plan"
expect 0 "$PLC" compile "$spec" -D layout.tp=2 -o "$tmp/tp2.bin" --baseline "$tmp/best.bin" --max-regression "$(pct ceil "$drop")"
expect 1 "$PLC" compile "$spec" -o "$tmp/y.bin" --baseline "$tmp/missing.bin"

# examples/ci/compile-all.sh over a repository of specs
mkdir -p "$tmp/specs/team" "$tmp/base"
cp "$ex/tiny.plan" "$tmp/specs/tiny.plan"
cp "$spec" "$tmp/specs/team/llama7b.plan"
export PLC
expect 0 "$ex/ci/compile-all.sh" "$tmp/specs" "$tmp/base"
sed -i 's/^  tp  *in .*/  tp = 2/' "$tmp/specs/team/llama7b.plan"
grep -q '^  tp = 2$' "$tmp/specs/team/llama7b.plan" || die "test setup: tp not pinned"
PLC_MAX_REGRESSION=$(pct floor "$drop") expect 4 "$ex/ci/compile-all.sh" "$tmp/specs" "$tmp/new" "$tmp/base"
grep -q 'layout.tp  *1 -> 2' "$tmp/out" || grep -q 'FAILED: plc compile exit 4' "$tmp/out" || die "compile-all: no failure shown"
grep -q 'gate failed' "$tmp/err" || die "compile-all: no gate message"
echo "gates: ok"
