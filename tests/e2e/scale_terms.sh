#!/usr/bin/env bash
# The time model's terms that grow with the run, set from a spec's cluster
# block (docs/solver.md, "Losses of large runs"): gpus_per_nic (NICs
# shared by the groups that communicate at once) slows the inter-node
# collectives and nothing else; straggler_cv adds the wait for the slowest
# node, growing with the nodes, nothing on one node.
set -u
. "$(dirname "$0")/plc_lib.bash"

spec() { # spec FILE NODES CLUSTER-LINES...
    local f=$1 nodes=$2; shift 2
    {
        printf 'model "llama-13b" {\n  layers = 40\n  hidden = 5120\n  ffn_hidden = 13824\n  heads = 40\n  vocab = 128000\n  seq_len = 2048\n}\n'
        printf 'cluster {\n  gpu = "A100-SXM4-80GB"\n  nodes = %s\n  gpus_per_node = 8\n' "$nodes"
        for l in "$@"; do printf '  %s\n' "$l"; done
        printf '}\ntrain {\n  global_batch = 2048\n  steps = 1000\n}\n'
        printf 'layout {\n  dp = %s\n  tp = 2\n  pp = 2\n  cp = 1\n  sp = off\n  vpp = 1\n  micro_batch = 1\n' $((nodes * 2))
        printf '  schedule = 1f1b\n  recompute = none\n  zero = 1\n  attention = flash2\n  fused_rmsnorm = on\n}\n'
    } > "$f"
}

solve() { "$PLC" solve --format yaml "$1" > "$2" || die "solve $1 exit $?"; }

spec "$tmp/base.plan" 8
spec "$tmp/nic.plan" 8 "gpus_per_nic = 2"
spec "$tmp/cv.plan" 8 "straggler_cv = 0.01"
spec "$tmp/one.plan" 1 "straggler_cv = 0.01"
spec "$tmp/one0.plan" 1
for n in base nic cv one one0; do solve "$tmp/$n.plan" "$tmp/$n.yaml"; done

# two GPUs a NIC: the data-parallel reduction (across the 8 nodes) slower,
# the tensor-parallel collectives (inside a node) unchanged
python3 - "$tmp" <<'PY' || die "gpus_per_nic or straggler_cv had not the expected effect"
import math, sys, yaml
t = sys.argv[1]
L = lambda n: yaml.load(open("%s/%s.yaml" % (t, n)), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))["winner"]
b, n, c, o, o0 = L("base"), L("nic"), L("cv"), L("one"), L("one0")
def part(l, k): return l["time_s"][k]
assert part(n, "dp-comm") > 1.5 * part(b, "dp-comm"), (part(n, "dp-comm"), part(b, "dp-comm"))
assert abs(part(n, "tp-comm") - part(b, "tp-comm")) < 1e-6
assert n["step_time_s"] > b["step_time_s"]
# the slowest of 8 nodes: 1% x sqrt(2 ln 8) of the step, as overhead
want = b["step_time_s"] * (1 + 0.01 * math.sqrt(2 * math.log(8)))
assert abs(c["step_time_s"] - want) < 1e-3 * want, (c["step_time_s"], want)
assert abs(part(c, "overhead") - part(b, "overhead") - (want - b["step_time_s"])) < 1e-3 * want
# one node: no one to wait for
assert abs(o["step_time_s"] - o0["step_time_s"]) < 1e-9
PY
echo "scale_terms: ok"
