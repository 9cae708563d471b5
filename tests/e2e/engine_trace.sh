#!/usr/bin/env bash
# plc trace SPEC: one step of a spec's layout simulated under its engine
# (compiler/plantools/engine_trace.c). Under plrun, megatron and fsdp2, the
# solver's pick and pinned layouts (pp 1 and 2, 1f1b and interleaved, ZeRO 1
# and 3, tp with sp) give a Chrome trace whose last event is the simulated
# step the command prints, one process per stage; where pp = 1 the step
# equals the solver's. Megatron's overlapped tensor-parallel collectives run
# on their own track; with the profile's overlaps off (PLC_ENGINES) nothing
# is hidden and the exposed track carries all the communication the
# overlapped run had, exposed and hidden. --svg draws it; options that
# apply to plans only are refused for a spec, and spec options for a plan.
set -u
. "$(dirname "$0")/plc_lib.bash"
py=/usr/bin/python3

cat > "$tmp/s.plan" <<'EOF'
# a Llama-2-7B-sized model on 2 nodes of 8 H100
model "l7" {
  layers = 32
  hidden = 4096
  ffn_hidden = 11008
  heads = 32
  vocab = 32000
  seq_len = 4096
}
cluster {
  gpu = "H100-SXM5-80GB"
  nodes = 2
  gpus_per_node = 8
}
train {
  global_batch = 128
  steps = 10
}
layout {
  tp in {1, 2, 4}
  pp in {1, 2}
}
EOF

# JSON: parses, one process per stage, the last event ends at the printed
# simulated step; prints "TOTALS exposed hidden tp_hidden" (seconds)
check_json() { # json log stages
    "$py" - "$1" "$2" "$3" <<'PY'
import json, re, sys
d = json.load(open(sys.argv[1]))
log = open(sys.argv[2]).read()
stages = int(sys.argv[3])
names = {e["pid"]: e["args"]["name"] for e in d["traceEvents"] if e.get("name") == "process_name"}
assert len(names) == stages and all(n.startswith("stage ") for n in names.values()), names
threads = {(e["pid"], e["tid"]): e["args"]["name"] for e in d["traceEvents"] if e.get("name") == "thread_name"}
assert set(threads.values()) == {"compute", "tp/cp collectives", "exposed comm", "param gathers",
                                 "dp grad reduce", "pipeline p2p"}, threads
ev = [e for e in d["traceEvents"] if e["ph"] == "X"]
end = max(e["ts"] + e["dur"] for e in ev) / 1e6
m = re.search(r"step +([0-9.e+-]+) s simulated \(the solver's estimate: ([0-9.e+-]+) s", log)
assert m, log
sim = float(m.group(1))
assert abs(end / sim - 1) < 1e-4, (end, sim)
names_0 = [e["name"] for e in ev if e["tid"] == 0]
assert any(n.startswith("fwd m0 ") for n in names_0) and any(n.startswith("bwd m0 ") for n in names_0), names_0[:5]
assert "optimizer" in names_0
dur = lambda tids: sum(e["dur"] for e in ev if e["tid"] in tids) / 1e6
exposed_on_compute = sum(e["dur"] for e in ev if e["tid"] == 0 and e["name"].startswith("exposed ")) / 1e6
assert abs(exposed_on_compute - dur({2})) <= 1e-6 * max(1.0, dur({2})), (exposed_on_compute, dur({2}))
print("TOTALS", dur({2}), dur({1, 3, 4, 5}), dur({1}), sim, float(m.group(2)))
PY
}

# the solver's pick under each engine
for e in plrun megatron fsdp2; do
    "$PLC" trace "$tmp/s.plan" -D train.engine=$e -o "$tmp/$e.json" > "$tmp/$e.log" 2>&1 || { cat "$tmp/$e.log"; die "trace under $e"; }
    grep -qF "engine $e, " "$tmp/$e.log" || { cat "$tmp/$e.log"; die "$e not named"; }
    pp=$(sed -n 's/.* pp=\([0-9]*\) .*/\1/p' "$tmp/$e.log" | head -1)
    check_json "$tmp/$e.json" "$tmp/$e.log" "$pp" > "$tmp/$e.tot" || die "trace JSON under $e"
done

# pinned layouts: pp 1 is exact; pp 2 is within the pipeline bound (unit tests)
pin="-D layout.recompute_layers=0 -D layout.cp=1 -D layout.recompute=none -D layout.attention=flash2 -D layout.fused_rmsnorm=on -D layout.micro_batch=1"
"$PLC" trace "$tmp/s.plan" -D train.engine=fsdp2 $pin -D layout.dp=8 -D layout.tp=2 -D layout.sp=on -D layout.pp=1 -D layout.zero=3 \
    -D layout.schedule=1f1b -D layout.vpp=1 -o "$tmp/f1.json" > "$tmp/f1.log" 2>&1 || { cat "$tmp/f1.log"; die "fsdp2 pp1"; }
grep -qF "(pinned)" "$tmp/f1.log" || { cat "$tmp/f1.log"; die "pinned layout not taken"; }
read -r _ _ _ _ sim pred < <(check_json "$tmp/f1.json" "$tmp/f1.log" 1) || die "fsdp2 pp1 JSON"
"$py" -c "import sys; s, p = float(sys.argv[1]), float(sys.argv[2]); assert abs(s / p - 1) < 1e-6, (s, p)" "$sim" "$pred" ||
    die "pp 1 under fsdp2: simulated $sim s, predicted $pred s"
grep -q "exposed zero-3 gather m0 c0" "$tmp/f1.json" || die "no ZeRO-3 gather under fsdp2"

meg="-D train.engine=megatron $pin -D layout.dp=2 -D layout.tp=4 -D layout.sp=on -D layout.pp=2 -D layout.zero=1 -D layout.schedule=interleaved -D layout.vpp=2"
"$PLC" trace "$tmp/s.plan" $meg -o "$tmp/on.json" > "$tmp/on.log" 2>&1 || { cat "$tmp/on.log"; die "megatron interleaved"; }
read -r _ ex_on hid_on tp_on sim_on _ < <(check_json "$tmp/on.json" "$tmp/on.log" 2) || die "megatron JSON"
"$py" -c "import sys; assert float(sys.argv[1]) > 0" "$tp_on" || die "megatron hides no tp collective"

# the overlaps off: nothing hidden, everything exposed, the step longer
sed -e 's/^\(  \(tp_overlap\|grad_reduce_overlap\|param_gather_overlap\|p2p_overlap\):\)$/\1/' \
    "$PLC_ROOT/examples/engines.yaml" | "$py" -c '
import sys
out, eng = [], None
lines = sys.stdin.read().split("\n")
for i, l in enumerate(lines):
    if l and not l.startswith(" ") and l.endswith(":"): eng = l[:-1]
    if eng == "megatron" and l.strip() == "value: 1" and lines[i - 1].strip() in (
            "tp_overlap:", "grad_reduce_overlap:", "param_gather_overlap:", "p2p_overlap:"):
        l = l.replace("value: 1", "value: 0")
    out.append(l)
print("\n".join(out))' > "$tmp/off.yaml"
[ "$(grep -c 'value: 0' "$tmp/off.yaml")" -gt "$(grep -c 'value: 0' "$PLC_ROOT/examples/engines.yaml")" ] || die "overlaps not turned off"
PLC_ENGINES="$tmp/off.yaml" "$PLC" trace "$tmp/s.plan" $meg -o "$tmp/off.json" > "$tmp/off.log" 2>&1 ||
    { cat "$tmp/off.log"; die "megatron, overlaps off"; }
read -r _ ex_off hid_off _ sim_off _ < <(check_json "$tmp/off.json" "$tmp/off.log" 2) || die "overlaps-off JSON"
"$py" - "$ex_on" "$hid_on" "$ex_off" "$hid_off" "$sim_on" "$sim_off" <<'PY' || die "overlaps off: ex_on $ex_on hid_on $hid_on ex_off $ex_off hid_off $hid_off"
import sys
ex_on, hid_on, ex_off, hid_off, sim_on, sim_off = map(float, sys.argv[1:])
assert hid_off == 0, hid_off
assert abs(ex_off - (ex_on + hid_on)) <= 1e-6 * ex_off, (ex_off, ex_on + hid_on)
assert sim_off > sim_on
PY

# the picture, and the options that do not apply
"$PLC" trace "$tmp/s.plan" $meg --svg -o "$tmp/t.svg" > "$tmp/svg.log" 2>&1 || { cat "$tmp/svg.log"; die "--svg"; }
grep -q "<svg" "$tmp/t.svg" && grep -q "Simulated step under megatron" "$tmp/t.svg" || die "svg content"
"$PLC" trace "$tmp/s.plan" --ranks all -o "$tmp/x.json" 2> "$tmp/err.txt"; rc=$?
[ $rc -eq 1 ] && grep -qF "error: --ranks applies to compiled plans" "$tmp/err.txt" || die "--ranks with a spec: exit $rc"
"$PLC" trace "$tmp/s.plan" -D layout.tp=3 -o "$tmp/x.json" > "$tmp/err.txt" 2>&1; rc=$?
[ $rc -eq 1 ] || { cat "$tmp/err.txt"; die "a bad -D: exit $rc"; }
"$PLC" compile "$PLC_ROOT/examples/tiny.plan" -o "$tmp/tiny.bin" > /dev/null 2>&1 || die "compile tiny"
# a step too long to draw is refused with the figures and what to change
"$PLC" trace "$tmp/s.plan" -D train.global_batch=1000000000000 -o "$tmp/x.json" 2> "$tmp/err.txt"; rc=$?
[ $rc -eq 1 ] && grep -qF "a timeline draws at most 1000000: pin a larger layout.micro_batch" "$tmp/err.txt" &&
    [ ! -e "$tmp/x.json" ] || { cat "$tmp/err.txt"; die "a step of 1e12 sequences: exit $rc"; }
"$PLC" trace "$tmp/tiny.bin" -D layout.tp=2 -o "$tmp/x.json" 2> "$tmp/err.txt"; rc=$?
[ $rc -eq 1 ] && grep -qF "error: -D and --catalog apply to specs" "$tmp/err.txt" || die "-D with a plan: exit $rc"
"$PLC" trace "$tmp/tiny.bin" -o "$tmp/plan.json" > "$tmp/plan.log" || die "a plan's trace"
grep -q "ranks simulated" "$tmp/plan.log" || die "a plan's trace changed"
echo "engine trace e2e: ok"
