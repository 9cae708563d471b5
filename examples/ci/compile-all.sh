#!/usr/bin/env bash
# compile-all.sh: compiles every .plan spec under a folder with plc's CI
# gates, the way examples/ci/plc.yml runs it on each pull request, and writes
# a report a reviewer can act on.
#
#   examples/ci/compile-all.sh SPECS_DIR OUT_DIR [BASELINE_DIR]
#
# Plans are named after their path: SPECS_DIR/a/x.plan is compiled to
# OUT_DIR/a/x.bin (so specs/a/x.plan and specs/b/x.plan do not collide), and
# the spec is copied beside it as OUT_DIR/a/x.plan. BASELINE_DIR is the
# OUT_DIR of the same script run on the target branch: BASELINE_DIR/a/x.bin
# is the spec's baseline plan (--baseline), BASELINE_DIR/a/x.plan its text.
#
# Gates: each spec's own gates block (docs/language.md), overridden for every
# spec by these variables when set: PLC_MAX_MEMORY (--max-memory),
# PLC_MIN_MFU (--min-mfu), PLC_MAX_REGRESSION (--max-regression; without it
# or the spec's max_regression no drop is allowed). PLC_REGRESSION_ON picks
# the regression gate's figure (mfu, the default, or tokens-per-gpu).
# PLC_ALLOW_DIFFERENT (default "cluster") is what a baseline may differ in:
# a spec moved to other hardware is judged on MFU, while a spec whose model
# changed is refused (exit 1) as a new spec; "none" refuses both.
#
# Report: OUT_DIR/report.md (also printed at the end), for a pull-request
# comment: every spec that failed, the most severe first, then every spec
# that changed, each with the diff of its plan against the baseline (`plc
# diff`: the settings that changed and the consequences: step time,
# tokens/s, MFU, memory) or, when no plan could be written, of its text.
# Each compile's output is in OUT_DIR/a/x.log, its messages in OUT_DIR/a/x.err.
#
# Exit status, the most severe of any spec's (not the largest number):
# 3 an internal error (or plc crashed) > 1 a spec error, a refused
# baseline, a missing SPECS_DIR > 2 no layout fits > 4 a gate failed > 0.
set -u
usage="usage: compile-all.sh SPECS_DIR OUT_DIR [BASELINE_DIR]"
specs=${1:?$usage}
out=${2:?$usage}
base=${3:-}
plc=${PLC:-plc}
specs=${specs%/}
[ -d "$specs" ] || { echo "compile-all.sh: error: no specs folder '$specs'" >&2; exit 1; }
[ -z "$base" ] || [ -d "$base" ] || echo "compile-all.sh: warning: no baseline folder '$base'; compiling without baselines" >&2
mkdir -p "$out" || exit 1
outabs=$(cd "$out" && pwd -P)

# severity of an exit status: higher is worse
severity() {
    case $1 in
        0) echo 0 ;; 4) echo 1 ;; 2) echo 2 ;; 1) echo 3 ;; *) echo 4 ;;
    esac
}
what() {
    case $1 in
        0) echo "ok" ;; 1) echo "spec error" ;; 2) echo "no layout fits" ;; 4) echo "gate failed" ;;
        3) echo "internal error" ;; *) echo "plc exited $1" ;;
    esac
}
# the diff of two plans without the per-stage program tables: the settings
# and the predicted consequences (plc diff --format short where it has it)
plan_diff() {
    if "$plc" diff --help 2>/dev/null | grep -q -- 'short'; then
        "$plc" diff --format short "$1" "$2"
    else
        "$plc" diff --no-listing "$1" "$2" >"$3.full"
        local rc=$?
        awk '/^(---|\+\+\+) / {next} /^stage [0-9]+:/ {skip=1; next} /^[^ ]/ {skip=0} !skip' "$3.full"
        rm -f "$3.full"
        return $rc
    fi
}

mapfile -d '' files < <(find "$specs" -name '*.plan' -type f -print0 | sort -z)
for i in "${!files[@]}"; do
    case $(realpath "${files[$i]}") in "$outabs"/*) unset "files[$i]" ;; esac # the copies this script wrote
done
[ ${#files[@]} -gt 0 ] || { echo "compile-all.sh: error: no .plan specs under '$specs'" >&2; exit 1; }

worst=0
declare -a names rcs changes
for spec in "${files[@]}"; do
    rel=${spec#"$specs"/}
    rel=${rel%.plan}
    plan=$out/$rel.bin
    mkdir -p "$(dirname "$plan")"
    rm -f "$plan" "$out/$rel.diff" "$out/$rel.err"
    cp "$spec" "$out/$rel.plan"
    args=()
    [ -n "${PLC_MAX_MEMORY:-}" ] && args+=(--max-memory "$PLC_MAX_MEMORY")
    [ -n "${PLC_MIN_MFU:-}" ] && args+=(--min-mfu "$PLC_MIN_MFU")
    if [ -n "$base" ] && [ -f "$base/$rel.bin" ]; then
        args+=(--baseline "$base/$rel.bin")
        [ -n "${PLC_MAX_REGRESSION:-}" ] && args+=(--max-regression "$PLC_MAX_REGRESSION")
        [ -n "${PLC_REGRESSION_ON:-}" ] && args+=(--regression-on "$PLC_REGRESSION_ON")
        allow=${PLC_ALLOW_DIFFERENT-cluster}
        [ -n "$allow" ] && [ "$allow" != none ] && args+=("--allow-different=$allow")
    fi
    echo "== $spec -> $plan"
    "$plc" compile "$spec" -o "$plan" "${args[@]}" >"$out/$rel.log" 2>"$out/$rel.err"
    rc=$?
    grep -E ': (gate [a-zA-Z]+|headroom): ' "$out/$rel.log"
    cat "$out/$rel.err"
    echo "   $(what $rc)"
    # what changed against the baseline: the plans when both exist, else the texts
    change=none
    if [ -n "$base" ] && [ -f "$base/$rel.bin" ] && [ -f "$plan" ]; then
        plan_diff "$base/$rel.bin" "$plan" "$out/$rel" >"$out/$rel.diff"
        case $? in
            0) change=none ;;
            1) change=plan ;;
            *) change=error; echo "   plc diff failed" ;;
        esac
    elif [ -n "$base" ] && [ -f "$base/$rel.plan" ]; then
        if ! diff -u --label "base/$rel.plan" --label "$spec" "$base/$rel.plan" "$spec" >"$out/$rel.diff"; then
            change=text
        fi
    elif [ -n "$base" ]; then
        change=new
    fi
    names+=("$spec"); rcs+=("$rc"); changes+=("$change")
    [ "$(severity $rc)" -gt "$(severity $worst)" ] && worst=$rc
done

# the report: failures (most severe first), then the changed specs
report=$out/report.md
{
    nfail=0
    for rc in "${rcs[@]}"; do [ "$rc" -ne 0 ] && nfail=$((nfail + 1)); done
    echo "## plc: ${#names[@]} specs, $nfail failed"
    section() { # INDEX
        local i=$1 spec=${names[$1]} rc=${rcs[$1]} rel
        rel=${spec#"$specs"/}; rel=${rel%.plan}
        echo
        if [ "$rc" -ne 0 ]; then echo "### $spec: $(what "$rc") (exit $rc)"; else echo "### $spec: changed"; fi
        local lines
        lines=$( (grep -E ': (gate [a-zA-Z]+|headroom): ' "$out/$rel.log"; cat "$out/$rel.err") | head -40)
        if [ -n "$lines" ]; then echo; echo '```'; echo "$lines"; echo '```'; fi
        case ${changes[$i]} in
            plan) echo; echo "What changed (plan against the baseline):"; echo; echo '```'; cat "$out/$rel.diff"; echo '```' ;;
            text) echo; echo "What changed (no plan was written; the spec's text):"; echo; echo '```diff'; cat "$out/$rel.diff"; echo '```' ;;
            new) echo; echo "A new spec (no baseline)." ;;
        esac
    }
    for sev in 4 3 2 1; do
        for i in "${!names[@]}"; do
            [ "$(severity "${rcs[$i]}")" -eq "$sev" ] && section "$i"
        done
    done
    unchanged=0
    for i in "${!names[@]}"; do
        [ "${rcs[$i]}" -eq 0 ] || continue
        case ${changes[$i]} in plan | text | new) section "$i" ;; *) unchanged=$((unchanged + 1)) ;; esac
    done
    [ "$unchanged" -gt 0 ] && { echo; echo "$unchanged spec(s) passed unchanged."; }
} >"$report"
echo
cat "$report"
exit "$worst"
