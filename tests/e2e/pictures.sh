#!/usr/bin/env bash
# Pictures: plc trace --svg, plc scale --svg and plc explain --svg write
# well-formed standalone SVG; the trace has one row per rank at 8 and at 64
# ranks with forward, backward, communication and idle time in distinct
# colours; scale draws its three panels; explain draws a bar per stage and
# the limit; the README's pictures (docs/pictures) are what plc draws today.
set -u
. "$(dirname "$0")/plc_lib.bash"
ex=$PLC_ROOT/examples
"$PLC" compile "$ex/tiny.plan" -D layout.dp=2 -D layout.tp=2 -D layout.pp=2 -D layout.cp=1 -o "$tmp/t8.bin" >/dev/null ||
    die "compile 8 ranks"
"$PLC" trace --svg "$tmp/t8.bin" -o "$tmp/t8.svg" >/dev/null || die "trace --svg 8"
"$PLC" compile "$ex/llama13b-a100.plan" -D layout.dp=16 -D layout.pp=4 -D layout.tp=1 -D layout.cp=1 -o "$tmp/t64.bin" \
    >/dev/null || die "compile 64 ranks"
"$PLC" trace --svg "$tmp/t64.bin" -o "$tmp/t64.svg" >/dev/null || die "trace --svg 64"
"$PLC" scale "$ex/llama7b-a100.plan" --gpus 8..256 --svg "$tmp/scale.svg" >/dev/null || die "scale --svg"
"$PLC" explain "$ex/llama65b-h100.plan" --svg "$tmp/mem.svg" >/dev/null || die "explain --svg"
"$PLC" trace --svg "$tmp/missing.bin" -o "$tmp/x.svg" 2>/dev/null; [ $? -eq 1 ] || die "trace --svg of a missing plan: want 1"

/usr/bin/python3 - "$tmp" <<'PY' || die "SVG content"
import sys, xml.etree.ElementTree as ET
t = sys.argv[1]
NS = "{http://www.w3.org/2000/svg}"
def load(n):
    root = ET.parse(f"{t}/{n}.svg").getroot()      # well-formed XML or it raises
    assert root.tag == NS + "svg" and root.get("viewBox"), n
    return root
def texts(r): return [e.text or "" for e in r.iter(NS + "text")]
def fills(r): return {e.get("fill") for e in r.iter(NS + "rect")}
colours = {"#4e79a7": "forward", "#f28e2b": "backward", "#e15759": "communication", "#f3ecc8": "idle"}
for n, ranks in (("t8", 8), ("t64", 64)):
    r = load(n)
    rows = [x for x in texts(r) if x.startswith("rank ")]
    assert len(rows) == ranks, (n, len(rows))
    missing = [v for k, v in colours.items() if k not in fills(r)]
    assert not missing, (n, missing)
    h = float(r.get("height"))
    assert h / ranks >= 10, "rows at least 10 px high"
s = load("scale")
tt = texts(s)
for title in ("throughput (thousand tokens/s)", "MFU", "per-GPU return"):
    assert title in tt, title
assert len(list(s.iter(NS + "polyline"))) == 3
m = load("mem")
tt = texts(m)
assert sum(1 for x in tt if x.startswith("stage ")) == 8 and any(x.startswith("limit ") for x in tt)
PY

PICTURES_OUT=$tmp bash "$PLC_ROOT/docs/pictures/make.sh" "$PLC" || die "docs/pictures/make.sh"
for f in "$PLC_ROOT"/docs/pictures/*.svg; do
    cmp -s "$f" "$tmp/$(basename "$f")" || die "$(basename "$f") is stale: run docs/pictures/make.sh"
done
echo "pictures: ok"
