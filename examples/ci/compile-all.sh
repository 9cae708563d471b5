#!/usr/bin/env bash
# compile-all.sh: compiles every .plan spec under a directory with plc's CI
# gates, the way examples/ci/plc.yml runs it on each pull request.
#
#   examples/ci/compile-all.sh SPECS_DIR OUT_DIR [BASELINE_DIR]
#
# Each SPECS_DIR/**/NAME.plan is compiled to OUT_DIR/NAME.bin with
#   --max-memory $PLC_MAX_MEMORY (default 90%)  --min-mfu $PLC_MIN_MFU (default 0%)
# and, when BASELINE_DIR/NAME.bin exists (the plans of the target branch),
#   --baseline BASELINE_DIR/NAME.bin --max-regression $PLC_MAX_REGRESSION (default 2%)
# then `plc diff` against the baseline shows what changed.
# Exit status: 0 every spec compiled and passed; otherwise the worst plc exit
# status seen (1 spec error, 2 no layout fits, 3 internal error, 4 gate failed).
set -u
specs=${1:?usage: compile-all.sh SPECS_DIR OUT_DIR [BASELINE_DIR]}
out=${2:?usage: compile-all.sh SPECS_DIR OUT_DIR [BASELINE_DIR]}
base=${3:-}
plc=${PLC:-plc}
mkdir -p "$out"
worst=0
while IFS= read -r -d '' spec; do
    name=$(basename "$spec" .plan)
    gates=(--max-memory "${PLC_MAX_MEMORY:-90%}")
    [ -n "${PLC_MIN_MFU:-}" ] && gates+=(--min-mfu "$PLC_MIN_MFU")
    if [ -n "$base" ] && [ -f "$base/$name.bin" ]; then
        gates+=(--baseline "$base/$name.bin" --max-regression "${PLC_MAX_REGRESSION:-2%}")
    fi
    echo "== $spec"
    "$plc" compile "$spec" -o "$out/$name.bin" "${gates[@]}"
    rc=$?
    if [ $rc -ne 0 ]; then
        echo "   FAILED: plc compile exit $rc"
    elif [ -n "$base" ] && [ -f "$base/$name.bin" ]; then
        "$plc" diff --no-listing "$base/$name.bin" "$out/$name.bin" >"$out/$name.diff"
        case $? in
            0) echo "   plan unchanged" ;;
            1) echo "   plan changed:"; sed -n '/^settings:/,/^predicted:/p' "$out/$name.diff" | sed 's/^/   /' ;;
            *) rc=3 ;;
        esac
    fi
    [ $rc -gt $worst ] && worst=$rc
done < <(find "$specs" -name '*.plan' -print0 | sort -z)
exit $worst
