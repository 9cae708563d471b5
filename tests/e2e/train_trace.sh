#!/usr/bin/env bash
# plrun --trace: the measured timeline, Chrome trace-event JSON with one pid
# per rank and one tid per stream, and the measured peak memory per rank
# reported next to the planned arena.
set -u
. "$(dirname "$0")/plrun_lib.bash"
need_mpi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
compile_tiny "$tmp/tiny.bin" 2
run_ranks 2 "$tmp/tiny.bin" --steps 2 --trace "$tmp/trace.json" >"$tmp/log" 2>&1 || { cat "$tmp/log"; die "plrun failed"; }
cat "$tmp/log"
[ -s "$tmp/trace.json" ] || die "no trace written"
grep -q "planned arena" "$tmp/log" || die "no memory report"
grep -Eq '^  rank 1 ' "$tmp/log" || die "the memory report lacks rank 1"
if [ -x /usr/bin/python3 ]; then
    /usr/bin/python3 - "$tmp/trace.json" <<'PY' || die "the trace is not what Perfetto expects"
import json, sys
t = json.load(open(sys.argv[1]))
ev = [e for e in t["traceEvents"] if e.get("ph") == "X"]
pids = {e["pid"] for e in ev}
tids = {e["tid"] for e in ev}
assert pids == {0, 1}, pids
assert 0 in tids, tids
assert all(e["dur"] >= 0 and e["ts"] >= 0 for e in ev)
names = {e["name"] for e in ev}
assert "MATMUL" in names and "ADAMW" in names, names
print("trace: %d events, ranks %s, streams %s" % (len(ev), sorted(pids), sorted(tids)))
PY
else
    grep -q '"ph":"X"' "$tmp/trace.json" || die "no complete events in the trace"
fi
echo "trace: ok"
