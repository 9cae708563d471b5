#!/usr/bin/env bash
# make bench: the solver's fidelity on the calibration data (summary only).
here=$(cd "$(dirname "$0")" && pwd)
data="$here/../calibration"
ls "$data"/hagemann_*.csv > /dev/null 2>&1 || { echo "fidelity: no calibration sheets in $data"; exit 1; }
"$here/fidelity" --plc "$PLC_BIN/plc" "$data"/hagemann_*.csv > /dev/null
