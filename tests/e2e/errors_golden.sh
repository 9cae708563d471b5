#!/usr/bin/env bash
# Golden diagnostics: for each tests/errors/NAME.plan, `plc check` (with the
# extra arguments of NAME.args, if any) must print exactly NAME.stderr on
# stderr, and exit 1 when that holds an error (0 for warnings only).
# Runs in tests/errors so that file names in messages are stable.
# UPDATE=1 rewrites the .stderr files from the current output (review the diff!).
set -u
: "${PLC_BIN:?}" "${PLC_ROOT:?}"
cd "$PLC_ROOT/tests/errors" || exit 1
unset PLC_CATALOG
fail=0; n=0
for spec in *.plan; do
    name=${spec%.plan}
    args=()
    [ -f "$name.args" ] && read -r -a args < "$name.args"
    actual=$(mktemp)
    timeout 20 "$PLC_BIN/plc" check "${args[@]}" "$spec" >/dev/null 2>"$actual"
    rc=$?
    n=$((n + 1))
    if [ "${UPDATE:-0}" = 1 ]; then cp "$actual" "$name.stderr"; fi
    want_rc=0
    grep -q ': error: ' "$name.stderr" 2>/dev/null && want_rc=1
    if [ ! -f "$name.stderr" ]; then
        echo "FAIL $name: no $name.stderr (run with UPDATE=1 to create it)"; fail=$((fail + 1))
    elif ! cmp -s "$actual" "$name.stderr"; then
        echo "FAIL $name: stderr differs from $name.stderr:"
        diff -u "$name.stderr" "$actual" | head -40
        fail=$((fail + 1))
    elif [ "$rc" -ne "$want_rc" ]; then
        echo "FAIL $name: exit status $rc, expected $want_rc"; fail=$((fail + 1))
    fi
    rm -f "$actual"
done
echo "errors_golden: $((n - fail)) of $n cases match"
[ "$fail" -eq 0 ] && [ "$n" -ge 20 ]
