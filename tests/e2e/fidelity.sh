#!/usr/bin/env bash
# The solver against measured runs: bench/fidelity on the Hagemann sheets in
# calibration/ must meet its targets (fits/OOM accuracy >= 0.90, MFU error
# <= 5 points, Spearman >= 0.8, the pick within 3 MFU points of the best run).
set -u
data="$PLC_ROOT/calibration"
sheets=("$data"/hagemann_*.csv)
[ -f "${sheets[0]}" ] || { echo "FAIL: no calibration sheets in $data"; exit 1; }
/usr/bin/python3 -c 'import yaml' 2> /dev/null || { echo "skip: /usr/bin/python3 lacks yaml (python3-yaml)"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$PLC_ROOT/bench/fidelity" --plc "$PLC_BIN/plc" --check "${sheets[@]}" > "$out"
rc=$?
rows=$(($(wc -l < "$out") - 1))
head -1 "$out" | grep -qx 'trial_id,status,pred_fits,mfu,pred_mfu,pred_memory_gib' || { echo "bad CSV header"; exit 1; }
expect=$(cat "${sheets[@]}" | grep -cE ',(ok|OOM[^,]*),')
[ "$rows" -eq "$expect" ] || { echo "fidelity printed $rows rows for $expect ok/OOM runs"; exit 1; }
exit $rc
