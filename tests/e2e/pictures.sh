#!/usr/bin/env bash
# Pictures: plc trace --svg, plc scale --svg and plc explain --svg write
# well-formed standalone SVG; the trace has one row per rank at 8 and at 64
# ranks with forward, backward, communication and idle time in distinct
# colours; scale draws its three panels; explain draws a bar per stage and
# the limit; the trace legends (of a plan and of a spec) name every kind
# drawn, each in its own colour, and no header text is cut at the edge;
# -o - and --svg - write standard output (compile -o - is refused) and never
# a file named "-"; the README's pictures (docs/pictures) are what plc draws
# today.
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

# the engine timeline of a spec (tp, pp, dp and ZeRO-3 gathers all present)
"$PLC" trace "$ex/tiny.plan" -D layout.tp=2 -D layout.pp=2 -D layout.dp=2 -D layout.cp=1 -D layout.zero=3 --svg \
    -o "$tmp/eng.svg" >/dev/null || die "trace --svg of a spec"
# the legends: every entry has a colour (#rrggbb) no other entry comes near,
# a name, and room; no header text runs past the picture's edge
/usr/bin/python3 - "$tmp" <<'PY' || die "legend"
import sys, re, itertools, xml.etree.ElementTree as ET
t = sys.argv[1]
NS = "{http://www.w3.org/2000/svg}"
want = {"eng": {"forward", "backward", "recompute", "optimizer", "overlap slowdown", "exposed comm", "tp", "cp",
                "pp p2p", "dp reduce", "param gathers", "idle"},
        "t8": {"forward", "backward", "recompute", "communication", "optimizer", "other (data, loss)",
               "idle (bubble, waiting)"}}
rgb = lambda c: [int(c[i:i + 2], 16) for i in (1, 3, 5)]
for n, names in want.items():
    r = ET.parse(f"{t}/{n}.svg").getroot()
    width = float(r.get("width"))
    texts = {(float(e.get("x")), float(e.get("y"))): (e.text or "") for e in r.iter(NS + "text")}
    boxes = [e for e in r.iter(NS + "rect") if e.get("width") == "12.00" and e.get("height") == "12.00"]
    legend = {}
    for b in boxes:
        x, y = float(b.get("x")), float(b.get("y"))
        name = texts.get((x + 16, y + 10))
        assert name, (n, "a legend square without a name at", x, y)
        assert re.fullmatch("#[0-9a-f]{6}", b.get("fill") or ""), (n, name, "colour", b.get("fill"))
        assert name not in legend, (n, name, "twice")
        legend[name] = (b.get("fill"), x, y)
    assert set(legend) == names, (n, sorted(set(legend) ^ names))
    for (a, (ca, xa, ya)), (b, (cb, xb, yb)) in itertools.combinations(legend.items(), 2):
        dist = sum((p - q) ** 2 for p, q in zip(rgb(ca), rgb(cb))) ** 0.5
        assert dist >= 35, (n, a, ca, b, cb, "colours too alike", dist)
        if ya == yb:   # one row: the later entry starts after the earlier's name
            lo, hi = min(xa, xb), max(xa, xb)
            name = a if xa < xb else b
            assert hi >= lo + 16 + 0.55 * 11.5 * len(name), (n, a, b, "legend entries overlap")
    top = min(y for _, _, y in legend.values())
    for (x, y), s in texts.items():
        if y < top + 20:
            assert x + 0.55 * 11.5 * len(s) <= width, (n, "header text cut at the edge:", s)
PY

# -o - and --svg - write standard output, and never a file named "-"
mkdir -p "$tmp/cwd" && cd "$tmp/cwd" || die "cd"
"$PLC" trace "$tmp/t8.bin" -o - 2>"$tmp/err" | head -c 1 | grep -q '{' || die "trace -o - of a plan: no JSON on stdout"
"$PLC" trace "$tmp/t8.bin" --svg -o - 2>/dev/null | /usr/bin/python3 -c 'import sys, xml.etree.ElementTree as ET; ET.parse(sys.stdin)' ||
    die "trace --svg -o - of a plan: no SVG on stdout"
"$PLC" trace "$ex/tiny.plan" -o - 2>/dev/null | /usr/bin/python3 -c 'import sys, json; json.load(sys.stdin)' ||
    die "trace -o - of a spec: no JSON on stdout"
"$PLC" scale "$ex/tiny.plan" --gpus 1..4 --svg - 2>/dev/null | /usr/bin/python3 -c 'import sys, xml.etree.ElementTree as ET; ET.parse(sys.stdin)' ||
    die "scale --svg -: stdout is not the picture alone"
"$PLC" explain "$ex/tiny.plan" --svg - 2>/dev/null | /usr/bin/python3 -c 'import sys, xml.etree.ElementTree as ET; ET.parse(sys.stdin)' ||
    die "explain --svg -: stdout is not the picture alone"
"$PLC" explain "$ex/tiny.plan" --svg - --format yaml >/dev/null 2>&1; [ $? -eq 1 ] || die "explain --svg - --format yaml: want 1"
"$PLC" export --megatron "$ex/tiny.plan" -o - 2>/dev/null | grep -q . || die "export -o -: nothing on stdout"
"$PLC" compile "$ex/tiny.plan" -o - >/dev/null 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] && grep -q 'binary' "$tmp/err" || { cat "$tmp/err"; die "compile -o -: want exit 1 and why"; }
[ ! -e "$tmp/cwd/-" ] || die "a file named '-' was created"
cd - >/dev/null || die "cd -"

PICTURES_OUT=$tmp bash "$PLC_ROOT/docs/pictures/make.sh" "$PLC" || die "docs/pictures/make.sh"
for f in "$PLC_ROOT"/docs/pictures/*.svg; do
    cmp -s "$f" "$tmp/$(basename "$f")" || die "$(basename "$f") is stale: run docs/pictures/make.sh"
done
echo "pictures: ok"
