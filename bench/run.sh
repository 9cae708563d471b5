#!/usr/bin/env bash
# Runs every benchmark: each built bench/NAME.c ($PLC_BIN/bench_NAME) and each
# bench/NAME.sh script, in name order, printing their figures.
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${PLC_BIN:?PLC_BIN must name the directory holding the binaries}"
export PLC_BIN PLC_ROOT="$(cd "$here/.." && pwd)"
export PLC_MPIRUN="${PLC_MPIRUN:-mpirun --allow-run-as-root --oversubscribe}"
status=0
for b in "$here"/*.c "$here"/*.sh; do
    [ -e "$b" ] || continue
    name=$(basename "$b"); name=${name%.*}
    [ "$name" = run ] && continue
    echo "== bench: $name"
    case "$b" in
        *.c)  "$PLC_BIN/bench_$name" || status=1 ;;
        *.sh) bash "$b" || status=1 ;;
    esac
done
exit $status
