#!/usr/bin/env bash
# Token files and reproducible plans (docs/data.md, "Where plrun finds the
# token file"): a plan stores train.data relative to the spec's directory
# with the file's size and CRC-32, so the same spec and data compile to
# byte-identical plans from any working directory and in two checkouts, and
# the plan holds no absolute path, host name or time. plrun finds the file
# with --data-root, beside the plan or in the working directory, and refuses
# a file that is not the one the plan was compiled with; plc compile and
# plc check refuse, at the data value, every file plrun would refuse.
set -u
. "$(dirname "$0")/plrun_lib.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tmp=$(cd "$tmp" && pwd -P)
mkdir -p "$tmp/one/dspec" "$tmp/two/dspec" "$tmp/elsewhere" "$tmp/third"

# write_tokens FILE HEADER_VOCAB MOD: 4096 uint16 ids below MOD (data.md's format)
write_tokens() {
    python3 - "$@" <<'EOF' || die "cannot write the token file $1"
import struct, sys
path, vocab, mod = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
toks = [(i * 7919 + i // 13) % mod for i in range(4096)]
with open(path, "wb") as f:
    f.write(struct.pack("<IIIIQQ", 0x4b544c50, 1, 2, vocab, len(toks), 0))
    f.write(struct.pack("<%dH" % len(toks), *toks))
EOF
}
write_tokens "$tmp/one/dspec/toks.bin" 256 256
sed 's|^\( *data *= *\)synthetic|\1"toks.bin"|' "$PLC_ROOT/examples/tiny.plan" >"$tmp/one/dspec/t.plan"
grep -q 'data *= *"toks.bin"' "$tmp/one/dspec/t.plan" || die "could not set data in the spec"
cp "$tmp/one/dspec/toks.bin" "$tmp/one/dspec/t.plan" "$tmp/two/dspec/"

one=(-D cluster.gpus_per_node=1 -D layout.dp=1 -D layout.tp=1 -D layout.pp=1 -D layout.cp=1 -D layout.micro_batch=4)
(cd "$tmp/one" && "$PLC" compile dspec/t.plan "${one[@]}" -o "$tmp/a.bin" >/dev/null) || die "compile from the parent failed"
(cd "$tmp/one/dspec" && "$PLC" compile t.plan "${one[@]}" -o "$tmp/b.bin" >/dev/null) || die "compile from the spec's directory failed"
(cd "$tmp/elsewhere" && "$PLC" compile ../one/dspec/./t.plan "${one[@]}" -o "$tmp/c.bin" >/dev/null) ||
    die "compile from a sibling directory failed"
cmp "$tmp/a.bin" "$tmp/b.bin" || die "plans compiled from two working directories differ"
cmp "$tmp/a.bin" "$tmp/c.bin" || die "plans compiled through ../ differ"
# a second checkout, a second later: the same bytes
sleep 1
(cd "$tmp/two" && "$PLC" compile dspec/t.plan "${one[@]}" -o "$tmp/two.bin" >/dev/null) || die "compile in the second checkout failed"
cmp "$tmp/a.bin" "$tmp/two.bin" || die "the same spec and data in two checkouts compiled to different plans"

"$PLC" dump "$tmp/a.bin" >"$tmp/dump" || die "plc dump failed"
grep -q '^spec t.plan ' "$tmp/dump" || { head -2 "$tmp/dump"; die "the plan should store the spec's file name"; }
size=$(wc -c <"$tmp/one/dspec/toks.bin")
crc=$(python3 -c 'import sys, zlib; print("%08x" % zlib.crc32(open(sys.argv[1], "rb").read()))' "$tmp/one/dspec/toks.bin")
grep -q "data=toks.bin ($size bytes, CRC-32 $crc)\$" "$tmp/dump" ||
    { grep data= "$tmp/dump"; die "the plan should store toks.bin with $size bytes, CRC-32 $crc"; }
# no absolute path, host name or time anywhere in the plan
for what in "$tmp" "$(hostname)" "$(date -u +%Y-%m-%d)" "$(date +%Y-%m-%d)"; do
    if strings -n 4 "$tmp/a.bin" | grep -qF "$what" || grep -qF "$what" "$tmp/dump"; then
        die "the plan holds '$what'"
    fi
done
if strings -n 4 "$tmp/a.bin" | grep -q '^/\|[^.]/tmp/\|/home/\|/work/'; then
    strings -n 4 "$tmp/a.bin" | grep '^/\|/tmp/\|/home/\|/work/' | head -3
    die "the plan holds an absolute path"
fi

# -D is relative to the working directory and stored relative to the spec
(cd "$tmp" && "$PLC" compile one/dspec/t.plan "${one[@]}" -D 'train.data="one/dspec/../dspec/toks.bin"' -o "$tmp/d.bin" >/dev/null) ||
    die "compile with -D train.data failed"
"$PLC" dump "$tmp/d.bin" | grep -q "data=toks.bin (" || die "-D train.data should be stored relative to the spec's directory"

# plrun: beside the plan (from any working directory)
cp "$tmp/a.bin" "$tmp/one/dspec/job.bin"
(cd "$tmp/third" && run_ranks 1 "$tmp/one/dspec/job.bin" --steps 3 --metrics m.jsonl >log 2>&1) ||
    { cat "$tmp/third/log"; die "plrun with the token file beside the plan failed"; }
[ "$(losses "$tmp/third/m.jsonl" | wc -l)" -eq 3 ] || die "expected 3 steps of metrics"
grep -q "token file $tmp/one/dspec/toks.bin" "$tmp/third/log" || { cat "$tmp/third/log"; die "plrun should name the file it read"; }
# ... with --data-root (the plan elsewhere), on two ranks
"$PLC" compile "$tmp/two/dspec/t.plan" -D cluster.gpus_per_node=2 -D layout.dp=2 -D layout.tp=1 -D layout.pp=1 \
    -D layout.cp=1 -D layout.micro_batch=4 -o "$tmp/dp2.bin" >/dev/null || die "compile for two ranks failed"
(cd "$tmp/third" && run_ranks 2 "$tmp/dp2.bin" --steps 2 --data-root "$tmp/two/dspec" >log 2>&1) ||
    { cat "$tmp/third/log"; die "plrun --data-root on two ranks failed"; }
# ... in the working directory
(cd "$tmp/one/dspec" && run_ranks 1 "$tmp/a.bin" --steps 1 >"$tmp/third/log" 2>&1) ||
    { cat "$tmp/third/log"; die "plrun with the token file in the working directory failed"; }
# ... and nowhere else: the places tried are named
if (cd "$tmp/third" && run_ranks 1 "$tmp/a.bin" --steps 1 >log 2>&1); then die "plrun ran without its token file"; fi
grep -q "token file toks.bin .*not found beside the plan ($tmp/toks.bin) nor in the working directory" "$tmp/third/log" ||
    { cat "$tmp/third/log"; die "the error should name the places tried"; }
if (cd "$tmp/one/dspec" && run_ranks 1 "$tmp/a.bin" --steps 1 --data-root "$tmp/third" >"$tmp/third/log" 2>&1); then
    die "plrun looked past --data-root"
fi
grep -q "$tmp/third/toks.bin: cannot open" "$tmp/third/log" || { cat "$tmp/third/log"; die "the error should name --data-root's file"; }

# a changed token file is refused, naming both fingerprints; rank 0 reports
printf 'x' | dd of="$tmp/two/dspec/toks.bin" bs=1 seek=100 conv=notrunc 2>/dev/null
ncrc=$(python3 -c 'import sys, zlib; print("%08x" % zlib.crc32(open(sys.argv[1], "rb").read()))' "$tmp/two/dspec/toks.bin")
rc=0; (cd "$tmp/third" && run_ranks 2 "$tmp/dp2.bin" --steps 1 --data-root "$tmp/two/dspec" >log 2>&1) || rc=$?
[ "$rc" -eq 1 ] || { cat "$tmp/third/log"; die "a changed token file: exit $rc, expected 1"; }
grep -q "the plan's toks.bin had $size bytes, CRC-32 $crc, this file has $size bytes, CRC-32 $ncrc" "$tmp/third/log" ||
    { cat "$tmp/third/log"; die "the error should name both files' sizes and checksums"; }
[ "$(grep -c 'not the one the plan was compiled with' "$tmp/third/log")" -eq 1 ] ||
    { cat "$tmp/third/log"; die "one rank should report the changed file"; }
# plc diff compares the data's content, not its location: the changed file
# under the same name is a change of train.data.crc32
(cd "$tmp/two" && "$PLC" compile dspec/t.plan "${one[@]}" -o "$tmp/changed.bin" >/dev/null) || die "compile of the changed data failed"
rc=0; "$PLC" diff --no-listing "$tmp/a.bin" "$tmp/changed.bin" >"$tmp/diff.out" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q "train.data.crc32 *$crc -> $ncrc" "$tmp/diff.out" ||
    { cat "$tmp/diff.out"; die "plc diff: a changed token file should be a change of train.data.crc32 (exit $rc)"; }
truncate -s 8000 "$tmp/two/dspec/toks.bin"
rc=0; run_ranks 1 "$tmp/a.bin" --steps 1 --data-root "$tmp/two/dspec" >"$tmp/third/log" 2>&1 || rc=$?
[ "$rc" -eq 1 ] && grep -q "had $size bytes, CRC-32 $crc, this file has 8000 bytes" "$tmp/third/log" ||
    { cat "$tmp/third/log"; die "a truncated token file: exit $rc"; }

# plc compile and plc check refuse what plrun would refuse, at the value
expect_refused() { # WHAT PATTERN CMD...
    local what=$1 pat=$2; shift 2
    local rc=0; (cd "$tmp/one" && "$@" >/dev/null 2>"$tmp/err") || rc=$?
    [ "$rc" -eq 1 ] || { cat "$tmp/err"; die "$what: exit $rc, expected 1"; }
    grep -q "$pat" "$tmp/err" || { cat "$tmp/err"; die "$what: expected '$pat'"; }
}
line=$(grep -n '^ *data *=' "$tmp/one/dspec/t.plan" | cut -d: -f1)
sed 's|"toks.bin"|"missing.bin"|' "$tmp/one/dspec/t.plan" >"$tmp/one/dspec/missing.plan"
expect_refused "missing file" "^dspec/missing.plan:$line:[0-9]*: error: token file \"missing.bin\": cannot open: No such file" \
    "$PLC" compile dspec/missing.plan "${one[@]}" -o "$tmp/x.bin"
[ -e "$tmp/x.bin" ] && die "a plan was written for a missing token file"
expect_refused "missing file (check)" "token file \"missing.bin\": cannot open" "$PLC" check dspec/missing.plan
write_tokens "$tmp/one/dspec/wide.bin" 0 300
expect_refused "token ids past the vocabulary" \
    "<command line>:1:12: error: token file \"dspec/wide.bin\": token id 299 (at index [0-9]*) is outside the model's vocab of 256" \
    "$PLC" compile dspec/t.plan "${one[@]}" -D 'train.data="dspec/wide.bin"' -o "$tmp/x.bin"
write_tokens "$tmp/one/dspec/gpt2.bin" 50257 256
expect_refused "a file for another vocabulary" "made for a vocabulary of 50257 but the model's vocab is 256" \
    "$PLC" check dspec/t.plan -D 'train.data="dspec/gpt2.bin"'
head -c 100 "$tmp/one/dspec/toks.bin" >"$tmp/one/dspec/cut.bin"
expect_refused "a truncated file" "token file \"dspec/cut.bin\": header says 4096 tokens of 2 bytes" \
    "$PLC" compile dspec/t.plan "${one[@]}" -D 'train.data="dspec/cut.bin"' -o "$tmp/x.bin"
echo "data_paths: identical plans from two checkouts and three working directories (toks.bin, $size bytes, CRC-32 $crc);" \
    "plrun finds it beside the plan, with --data-root and in the working directory, and refuses a changed one"
