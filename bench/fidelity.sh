#!/usr/bin/env bash
# make bench: the solver's fidelity on the calibration data (summary only).
here=$(cd "$(dirname "$0")" && pwd)
data="$here/../../shared/calibration"
ls "$data"/*.csv > /dev/null 2>&1 || { echo "fidelity: no calibration data at $data, skipped"; exit 0; }
"$here/fidelity" --plc "$PLC_BIN/plc" "$data"/*.csv > /dev/null
