#!/usr/bin/env bash
# File names in plans do not depend on the working directory: a token file
# named in a spec is resolved against the spec's directory and stored
# absolute, the spec is stored by its file name, so the same spec compiled
# from two working directories gives byte-identical plans, and plrun finds
# the token file from a third one (docs/data.md, "Where plrun finds the
# token file").
set -u
. "$(dirname "$0")/plrun_lib.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tmp=$(cd "$tmp" && pwd -P)
mkdir -p "$tmp/work/dspec" "$tmp/elsewhere" "$tmp/third"

# a token file of 4096 uint16 ids below the vocabulary (data.md's format)
python3 - "$tmp/work/dspec/toks.bin" <<'EOF' || die "cannot write the token file"
import struct, sys
toks = [(i * 7919 + i // 13) % 256 for i in range(4096)]
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IIIIQQ", 0x4b544c50, 1, 2, 256, len(toks), 0))
    f.write(struct.pack("<%dH" % len(toks), *toks))
EOF
sed 's|^\( *data *= *\)synthetic|\1"toks.bin"|' "$PLC_ROOT/examples/tiny.plan" >"$tmp/work/dspec/t.plan"
grep -q 'data *= *"toks.bin"' "$tmp/work/dspec/t.plan" || die "could not set data in the spec"

one=(-D cluster.gpus_per_node=1 -D layout.dp=1 -D layout.tp=1 -D layout.pp=1 -D layout.cp=1 -D layout.micro_batch=4)
(cd "$tmp/work" && "$PLC" compile dspec/t.plan "${one[@]}" -o "$tmp/a.bin" >/dev/null) || die "compile from the parent failed"
(cd "$tmp/work/dspec" && "$PLC" compile t.plan "${one[@]}" -o "$tmp/b.bin" >/dev/null) || die "compile from the spec's directory failed"
(cd "$tmp/elsewhere" && "$PLC" compile ../work/dspec/./t.plan "${one[@]}" -o "$tmp/c.bin" >/dev/null) ||
    die "compile from a sibling directory failed"
cmp "$tmp/a.bin" "$tmp/b.bin" || die "plans compiled from two working directories differ"
cmp "$tmp/a.bin" "$tmp/c.bin" || die "plans compiled through ../ differ"

"$PLC" dump "$tmp/a.bin" >"$tmp/dump" || die "plc dump failed"
grep -q '^spec t.plan ' "$tmp/dump" || { head -2 "$tmp/dump"; die "the plan should store the spec's file name"; }
grep -q "data=$tmp/work/dspec/toks.bin\$" "$tmp/dump" || { grep data= "$tmp/dump"; die "the plan should store the token file's absolute path"; }

# plrun from a third directory reads the token file the plan names
(cd "$tmp/third" && run_ranks 1 "$tmp/a.bin" --steps 3 --metrics m.jsonl >log 2>&1) ||
    { cat "$tmp/third/log"; die "plrun from a third directory failed"; }
[ "$(losses "$tmp/third/m.jsonl" | wc -l)" -eq 3 ] || die "expected 3 steps of metrics"
# ... and nothing else: without it the run fails, naming the file
mv "$tmp/work/dspec/toks.bin" "$tmp/toks.bin"
if (cd "$tmp/third" && run_ranks 1 "$tmp/a.bin" --steps 1 >log 2>&1); then die "plrun ran without its token file"; fi
grep -q "$tmp/work/dspec/toks.bin" "$tmp/third/log" || { cat "$tmp/third/log"; die "the error should name the token file"; }

# in -D a relative path is relative to the working directory
(cd "$tmp" && "$PLC" compile work/dspec/t.plan "${one[@]}" -D 'train.data="toks.bin"' -o "$tmp/d.bin" >/dev/null) ||
    die "compile with -D train.data failed"
"$PLC" dump "$tmp/d.bin" | grep -q "data=$tmp/toks.bin\$" || die "-D train.data should be relative to the working directory"
echo "data_paths: plans identical from three working directories; plrun reads $tmp/work/dspec/toks.bin from elsewhere"
