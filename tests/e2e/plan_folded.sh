#!/usr/bin/env bash
# Folded plans: the same spec compiled folded (the default) and with
# --expand trains to bitwise identical losses through plrun, and the two
# files load to the same instruction streams (plc dump --expand). A model of
# 4 layers in 2 pipeline stages with 8 micro-batches, so layers and
# micro-batches both fold. plc trace writes one event per unit (a stream's
# run of one micro-batch and phase), ranks with identical timelines on one
# track, unless --full: the units account for every instruction event of the
# full timeline, on the same ranks and streams.
set -u
. "$(dirname "$0")/plrun_lib.bash"
need_mpi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
set_spec=(-D model.layers=4 -D cluster.gpus_per_node=2 -D train.global_batch=8 -D layout.dp=1 -D layout.tp=1
          -D layout.pp=2 -D layout.cp=1 -D layout.micro_batch=1)
"$PLC" compile "$PLC_ROOT/examples/tiny.plan" "${set_spec[@]}" -o "$tmp/folded.bin" >/dev/null ||
    die "plc compile failed"
"$PLC" compile "$PLC_ROOT/examples/tiny.plan" "${set_spec[@]}" --expand -o "$tmp/expanded.bin" >/dev/null ||
    die "plc compile --expand failed"
fs=$(wc -c <"$tmp/folded.bin"); xs=$(wc -c <"$tmp/expanded.bin")
[ $((2 * fs)) -lt "$xs" ] || die "folded plan $fs bytes is not half the expanded $xs"
"$PLC" dump --expand "$tmp/folded.bin" >"$tmp/folded.dump" || die "plc dump failed"
"$PLC" dump --expand "$tmp/expanded.bin" >"$tmp/expanded.dump" || die "plc dump failed"
cmp -s "$tmp/folded.dump" "$tmp/expanded.dump" ||
    { diff "$tmp/folded.dump" "$tmp/expanded.dump" | head; die "the two forms load to different plans"; }
grep -q '^ *loop ' "$tmp/folded.dump" && die "dump --expand still shows loops"
"$PLC" dump "$tmp/folded.bin" >"$tmp/folded-view.dump" || die "plc dump failed"
grep -q '^ *loop ' "$tmp/folded-view.dump" || die "plc dump shows no loop of the folded plan"
"$PLC" trace "$tmp/folded.bin" -o "$tmp/units.json" >/dev/null || die "plc trace failed"
"$PLC" trace "$tmp/folded.bin" --full -o "$tmp/full.json" >/dev/null || die "plc trace --full failed"
/usr/bin/python3 - "$tmp/units.json" "$tmp/full.json" <<'PY' || die "trace units do not add up to the full timeline"
import json, sys
ut = json.load(open(sys.argv[1]))["traceEvents"]
units = [e for e in ut if e.get("ph") == "X"]
full = [e for e in json.load(open(sys.argv[2]))["traceEvents"] if e.get("ph") == "X"]
# the ranks each track stands for
ranks = {e["pid"]: e["args"].get("ranks", [e["pid"]]) for e in ut if e.get("name") == "process_name"}
assert len(units) * 4 < len(full), (len(units), len(full))
assert sum(e["args"].get("instrs", 1) * len(ranks[e["pid"]]) for e in units) == len(full)
assert sorted(r for rs in ranks.values() for r in rs) == sorted({e["pid"] for e in full})
assert {e["tid"] for e in units} == {e["tid"] for e in full}
end = lambda evs: max(e["ts"] + e["dur"] for e in evs)
assert abs(end(units) - end(full)) < 1e-3 * end(full)
PY
for form in folded expanded; do
    run_ranks 2 "$tmp/$form.bin" --steps 6 --threads 1 --metrics "$tmp/$form.jsonl" >"$tmp/$form.log" 2>&1 ||
        { cat "$tmp/$form.log"; die "plrun failed on the $form plan"; }
    losses "$tmp/$form.jsonl" >"$tmp/$form.loss"
done
[ "$(wc -l <"$tmp/folded.loss")" -eq 6 ] || die "expected 6 steps of metrics"
cmp -s "$tmp/folded.loss" "$tmp/expanded.loss" ||
    { paste "$tmp/folded.loss" "$tmp/expanded.loss"; die "folded and expanded plans train differently"; }
echo "folded plans: $fs bytes folded, $xs expanded; same instructions; 6 steps bitwise identical losses; trace units add up"
