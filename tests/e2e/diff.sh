#!/usr/bin/env bash
# plc diff names every changed setting: plans whose train.lr.peak, train.seed
# or model.hidden differ list exactly those settings with old and new values;
# the layout block's constraints are settings too (memory_limit, a pin, a
# set), whether written in the spec or given with -D, and each changed
# dimension of the picked layout says whether the spec pinned it or the
# solver chose it; the exit status follows diff(1) (0 equal, 1 different, 2
# an error); spec texts that differ only in comments diff as equal; either
# side may be a spec (by content, not name), compiled in memory; --format
# short is five lines for a pull-request comment; --format yaml is valid
# YAML listing the same changes, the layout's attribution and the
# consequences (predictions with the bubble, each stage's arena).
set -u
. "$(dirname "$0")/plc_lib.bash"
spec=$PLC_ROOT/examples/tiny.plan
pin=(-D layout.dp=8 -D layout.tp=1 -D layout.pp=1 -D layout.cp=1 -D layout.micro_batch=4 -D layout.zero=0
     -D layout.sp=off -D layout.vpp=1 -D layout.recompute=none -D layout.attention=naive -D layout.fused_rmsnorm=off)
compile() { # NAME SPEC -D...
    local name=$1 s=$2; shift 2
    "$PLC" compile "$s" "${pin[@]}" "$@" -o "$tmp/$name.bin" >"$tmp/$name.log" 2>&1 ||
        { cat "$tmp/$name.log"; die "compile $name"; }
}
compile base "$spec"
compile lr "$spec" -D train.lr.peak=1e-3 -D train.lr.floor=3e-4
compile seed "$spec" -D train.seed=7
compile hidden "$spec" -D model.hidden=128 -D model.heads=4
{ echo "# a comment that sets nothing"; cat "$spec"; } >"$tmp/commented.plan"
compile commented "$tmp/commented.plan"

expect_changes() { # NAME want-lines...
    local name=$1; shift
    "$PLC" diff --no-listing "$tmp/base.bin" "$tmp/$name.bin" >"$tmp/$name.diff"; local rc=$?
    [ $rc -eq 1 ] || { cat "$tmp/$name.diff"; die "$name: exit $rc, want 1"; }
    for want in "$@"; do
        grep -Eq "^  $want\$" "$tmp/$name.diff" || { cat "$tmp/$name.diff"; die "$name: no line '$want'"; }
    done
    local n; n=$(sed -n 's/^settings: \([0-9]*\) changed$/\1/p' "$tmp/$name.diff")
    [ "$n" = "$#" ] || { cat "$tmp/$name.diff"; die "$name: $n settings changed, want $#"; }
}
expect_changes lr 'train.lr.peak +0.003 -> 0.001'
expect_changes seed 'train.seed +1 -> 7'
expect_changes hidden 'model.hidden +64 -> 128'
grep -q 'MATMUL\|instructions' "$tmp/hidden.diff" || die "hidden: no schedule differences"

"$PLC" diff "$tmp/base.bin" "$tmp/base.bin" >"$tmp/same.diff"; rc=$?
[ $rc -eq 0 ] || die "a plan against itself: exit $rc, want 0"
grep -q '^settings: all equal$' "$tmp/same.diff" || die "equal plans: no 'all equal'"
"$PLC" diff "$tmp/base.bin" "$tmp/commented.bin" >"$tmp/comment.diff"; rc=$?
[ $rc -eq 0 ] || { cat "$tmp/comment.diff"; die "a comment in the spec: exit $rc, want 0"; }
grep -q 'the spec texts differ where no setting does' "$tmp/comment.diff" || die "comment-only change not named"

# constraints: memory_limit edited in the spec, and given with -D; a pin and
# a set of the layout block. The picked layout stays the same here, so the
# constraint alone makes the plans differ.
sed 's/memory_limit = 90%/memory_limit = 80%/' "$spec" >"$tmp/mem80.plan"
grep -q 'memory_limit = 80%' "$tmp/mem80.plan" || die "the example's memory_limit line moved"
compile mem80 "$tmp/mem80.plan"
compile memd "$spec" -D layout.memory_limit=80%
expect_changes mem80 'layout.memory_limit +90% -> 80%'
expect_changes memd 'layout.memory_limit +90% -> 80%'
grep -q '^layout: unchanged$' "$tmp/mem80.diff" || { cat "$tmp/mem80.diff"; die "mem80: the layout changed"; }
compile pinset "$spec" -D 'layout.micro_batch in {2, 4}'
expect_changes pinset 'layout.micro_batch +4 -> \{2, 4\}'

# attribution: the solver's own pick against a pinned tp = 2
"$PLC" compile "$spec" -o "$tmp/free.bin" >/dev/null 2>&1 || die "compile free"
"$PLC" compile "$spec" -D layout.tp=2 -o "$tmp/tp2.bin" >/dev/null 2>&1 || die "compile tp2"
"$PLC" diff --no-listing "$tmp/free.bin" "$tmp/tp2.bin" >"$tmp/tp2.diff"; rc=$?
[ $rc -eq 1 ] || { cat "$tmp/tp2.diff"; die "tp2: exit $rc, want 1"; }
grep -Eq '^  layout.tp +auto -> 2$' "$tmp/tp2.diff" || { cat "$tmp/tp2.diff"; die "tp2: the pin is not a setting"; }
grep -Eq '^  layout.tp +1 -> 2 +pinned by the spec$' "$tmp/tp2.diff" || { cat "$tmp/tp2.diff"; die "tp2: tp not pinned"; }
grep -Eq '^  layout.dp +8 -> 4 +chosen by the solver$' "$tmp/tp2.diff" || { cat "$tmp/tp2.diff"; die "tp2: dp not the solver's"; }
[ "$(grep -c 'pinned by the spec' "$tmp/tp2.diff")" = 1 ] || { cat "$tmp/tp2.diff"; die "tp2: more than tp pinned"; }

# a spec is compiled in memory as plc compile would: a spec against its own
# plan is equal, two specs compare by their settings, -D applies to specs,
# and a file is a plan by its magic bytes, whatever its name
"$PLC" diff "$spec" "$tmp/free.bin" >"$tmp/own.diff"; rc=$?
[ $rc -eq 0 ] || { cat "$tmp/own.diff"; die "a spec against its own plan: exit $rc, want 0"; }
grep -q '^settings: all equal$' "$tmp/own.diff" || die "a spec against its own plan: settings differ"
cp "$spec" "$tmp/spec-named.bin"
cp "$tmp/free.bin" "$tmp/plan-named.plan"
"$PLC" diff "$tmp/spec-named.bin" "$tmp/plan-named.plan" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 0 ] || { cat "$tmp/err"; die "spec and plan by content, not name: exit $rc, want 0"; }
"$PLC" diff --no-listing "$spec" "$tmp/mem80.plan" >"$tmp/specs.diff"; rc=$?
[ $rc -eq 1 ] || { cat "$tmp/specs.diff"; die "two specs: exit $rc, want 1"; }
grep -Eq '^  layout.memory_limit +90% -> 80%$' "$tmp/specs.diff" || { cat "$tmp/specs.diff"; die "two specs: memory_limit"; }
"$PLC" diff --no-listing "$tmp/free.bin" "$spec" -D layout.tp=2 >"$tmp/specd.diff"; rc=$?
[ $rc -eq 1 ] || die "plan against spec -D layout.tp=2: exit $rc, want 1"
grep -Eq '^  layout.tp +1 -> 2 +pinned by the spec$' "$tmp/specd.diff" || { cat "$tmp/specd.diff"; die "-D on a spec"; }
"$PLC" diff "$tmp/free.bin" "$tmp/tp2.bin" -D layout.tp=2 >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'apply to specs' "$tmp/err" || { cat "$tmp/err"; die "-D with two plans: exit $rc, want 2"; }
printf 'model "m" {\n  layers = two\n}\n' >"$tmp/broken.plan"
"$PLC" diff "$spec" "$tmp/broken.plan" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'broken.plan:2:' "$tmp/err" || { cat "$tmp/err"; die "a spec with errors: exit $rc, want 2 and its diagnostic"; }

# the short form for a pull-request comment: five lines with the changed
# settings, the layout with attribution and the consequences
"$PLC" diff --format short "$tmp/free.bin" "$tmp/tp2.bin" >"$tmp/short"; rc=$?
[ $rc -eq 1 ] || die "short: exit $rc, want 1"
[ "$(wc -l <"$tmp/short")" -eq 5 ] || { cat "$tmp/short"; die "short: not five lines"; }
grep -Eq '^settings +layout.tp auto -> 2$' "$tmp/short" || { cat "$tmp/short"; die "short: settings"; }
grep -Eq '^layout +dp 8 -> 4 \(chosen by the solver\), tp 1 -> 2 \(pinned by the spec\)' "$tmp/short" ||
    { cat "$tmp/short"; die "short: layout"; }
grep -Eq '^predicted +step [0-9.e-]+ s -> [0-9.e-]+ s \([-+][0-9.]+%\), MFU [0-9.]+% -> [0-9.]+%, bubble [0-9.]+% -> [0-9.]+%$' \
    "$tmp/short" || { cat "$tmp/short"; die "short: predictions"; }
grep -Eq '^memory +stage 0 [0-9.]+ MiB -> [0-9.]+ MiB' "$tmp/short" || { cat "$tmp/short"; die "short: memory"; }
"$PLC" diff --format short "$tmp/free.bin" "$spec" >"$tmp/short-eq"; rc=$?
[ $rc -eq 0 ] && grep -q ': equal$' "$tmp/short-eq" || { cat "$tmp/short-eq"; die "short, equal: exit $rc"; }

"$PLC" diff "$tmp/base.bin" "$tmp/missing.bin" >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] && grep -q 'error:' "$tmp/err" || die "a missing plan: exit $rc, want 2 and a message"
"$PLC" diff "$tmp/base.bin" >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || die "one plan: exit $rc, want 2"

"$PLC" diff --format yaml "$tmp/base.bin" "$tmp/hidden.bin" >"$tmp/d.yaml"; rc=$?
[ $rc -eq 1 ] || die "yaml diff: exit $rc, want 1"
/usr/bin/python3 - "$tmp/d.yaml" <<'PY' || die "yaml diff content"
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
assert d["equal"] is False and d["command"] == "diff", d
ch = {c["setting"]: (c["old"], c["new"]) for c in d["changes"]}
assert ch == {"model.hidden": ("64", "128")}, ch
assert d["stages"][0]["instructions"]["old"] > 0
assert d["layout"] == [], d["layout"]
PY
"$PLC" compile "$spec" -D layout.pp=2 -o "$tmp/pp2.bin" >/dev/null 2>&1 || die "compile pp2"
"$PLC" diff --format yaml "$tmp/free.bin" "$tmp/pp2.bin" >"$tmp/pp2.yaml"; rc=$?
[ $rc -eq 1 ] || die "yaml pp2: exit $rc, want 1"
/usr/bin/python3 - "$tmp/pp2.yaml" <<'PY' || die "yaml pp2 content"
import sys, yaml
d = yaml.safe_load(open(sys.argv[1]))
ch = {c["setting"]: (c["old"], c["new"]) for c in d["changes"]}
assert ch == {"layout.pp": ("{1, 2}", "2")}, ch
by = {l["dimension"]: (l["old"], l["new"], l["by"]) for l in d["layout"]}
assert by["pp"] == ("1", "2", "spec") and by["dp"][2] == "solver", by
p = d["predicted"]
for k in ("step_time_s", "tokens_per_s", "mfu", "bubble_fraction", "peak_bytes_plan"):
    assert p[k]["old"] >= 0 and p[k]["new"] >= 0, k
assert p["bubble_fraction"]["old"] == 0 and p["bubble_fraction"]["new"] > 0, p["bubble_fraction"]
st = d["stages"]
assert st[0]["arena_bytes"]["old"] > 0 and st[0]["arena_bytes"]["new"] > 0
assert st[1]["only_in"].endswith("pp2.bin") and st[1]["arena_bytes"]["new"] > 0, st[1]
PY
echo "diff: ok"
