#!/usr/bin/env bash
# make bench: the solver's fidelity on the calibration data in calibration/
# (bench/fidelity's default: the Hagemann sheets), summary only.
here=$(cd "$(dirname "$0")" && pwd)
"$here/fidelity" --plc "$PLC_BIN/plc" > /dev/null
