"""scripts/gpu/trace_summary.py TRACE: where one step's time goes in a
`plrun --trace` timeline (the last step it holds), summed by instruction name
on rank 0's compute track, largest first."""
import json, sys
from collections import defaultdict

ev = json.load(open(sys.argv[1]))["traceEvents"]
ev = [e for e in ev if e.get("ph") == "X" and e.get("pid") == 0 and e.get("tid") == 0]
last = max(e["args"]["step"] for e in ev)
tot, cnt = defaultdict(float), defaultdict(int)
for e in ev:
    if e["args"]["step"] == last:
        tot[e["name"]] += e["dur"] / 1e6
        cnt[e["name"]] += 1
span = sum(tot.values())
print(f"step {last}: {span:.3f} s of synchronised compute")
for name, t in sorted(tot.items(), key=lambda x: -x[1])[:12]:
    print(f"  {name:24s} {cnt[name]:5d} x  {t:8.3f} s  {100 * t / span:5.1f}%")
