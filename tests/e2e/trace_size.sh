#!/usr/bin/env bash
# plc trace stays small on a large plan: Llama-3-70B on 64 H100 with 2M-token
# batches (dp 1, tp 4, pp 4, cp 4, interleaved vpp 2: 256 micro-batches of
# 80 layers), all 64 ranks in under 20 MB; every rank is on a track, and
# the event count printed is the number of events in the file.
set -u
. "$(dirname "$0")/plrun_lib.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$PLC" compile "$PLC_ROOT/examples/llama70b-h100.plan" -D model.vocab=128256 \
    -D model.seq_len=8192 -D model.rope_theta=500000 -D cluster.nodes=8 -D train.global_batch=256 \
    -D layout.dp=1 -D layout.tp=4 -D layout.pp=4 -D layout.cp=4 -D layout.schedule=interleaved \
    -D layout.vpp=2 -D layout.recompute=none -D layout.micro_batch=1 -o "$tmp/l70.bin" >"$tmp/compile.log" 2>&1 ||
    { cat "$tmp/compile.log"; die "plc compile failed"; }
"$PLC" trace "$tmp/l70.bin" -o "$tmp/trace.json" >"$tmp/trace.log" || { cat "$tmp/trace.log"; die "plc trace failed"; }
size=$(wc -c <"$tmp/trace.json")
[ "$size" -lt 20000000 ] || die "the trace of 64 ranks is $size bytes, not under 20 MB"
if [ -x /usr/bin/python3 ]; then
    /usr/bin/python3 - "$tmp/trace.json" <<'PY' || die "the trace does not cover every rank"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
ranks = sorted(r for e in ev if e.get("name") == "process_name" for r in e["args"].get("ranks", [e["pid"]]))
assert ranks == list(range(64)), ranks
PY
    # the count printed is the file's events, not the instructions simulated
    want=$(/usr/bin/python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["traceEvents"]))' "$tmp/trace.json")
    grep -q " $want events in the file" "$tmp/trace.log" || { cat "$tmp/trace.log"; die "plc trace does not print the file's $want events"; }
fi
if grep -q -- '-0\.0*%' "$tmp/trace.log"; then cat "$tmp/trace.log"; die "plc trace printed a negative zero percentage"; fi
echo "trace size: $size bytes for 64 ranks"
