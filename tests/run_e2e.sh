#!/usr/bin/env bash
# Runs every tests/e2e/*.sh against the built binaries in $PLC_BIN.
# Each script exits 0 (pass), 77 (skip, after printing why) or anything else (fail).
# Closes with the line "e2e: N passed, N failed, N skipped".
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${PLC_BIN:?PLC_BIN must name the directory holding plc and plrun}"
export PLC_BIN PLC_ROOT="$(cd "$here/.." && pwd)"
export PLC_MPIRUN="${PLC_MPIRUN:-mpirun --allow-run-as-root --oversubscribe}"
pass=0; fail=0; skip=0; failed=()
for t in "$here"/e2e/*.sh; do
    [ -e "$t" ] || continue
    name=$(basename "$t" .sh)
    log=$(mktemp)
    start=$(date +%s)
    bash "$t" >"$log" 2>&1
    rc=$?
    secs=$(( $(date +%s) - start ))
    case $rc in
        0)  pass=$((pass + 1)); echo "PASS  $name (${secs}s)" ;;
        77) skip=$((skip + 1)); echo "SKIP  $name: $(tail -n 1 "$log")" ;;
        *)  fail=$((fail + 1)); failed+=("$name"); echo "FAIL  $name (exit $rc, ${secs}s)"
            sed 's/^/      | /' "$log" | tail -n 40 ;;
    esac
    rm -f "$log"
done
echo "e2e: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
