#!/usr/bin/env bash
# Errors a user can cause get a clear message and a non-zero exit, never a
# crash or a hang: options, missing or damaged plans, a world size that
# differs from the plan's, a checkpoint of something else, cuda without a GPU.
set -u
. "$(dirname "$0")/plrun_lib.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
# expect NAME PATTERN CMD...: CMD must exit non-zero (not by a signal) and say PATTERN
expect() {
    local name=$1 pattern=$2; shift 2
    timeout 120 "$@" >"$tmp/out" 2>&1
    local rc=$?
    if [ "$rc" -eq 0 ] || [ "$rc" -ge 124 ] || ! grep -q -- "$pattern" "$tmp/out"; then
        echo "FAIL $name (exit $rc), output:"; sed 's/^/    /' "$tmp/out" | head -n 20
        fails=$((fails + 1))
    else
        echo "ok   $name: $(grep -m1 -- "$pattern" "$tmp/out")"
    fi
}
compile_tiny "$tmp/one.bin" 1
compile_tiny "$tmp/two.bin" 2

expect "no plan"        "no plan given"          "$PLRUN"
expect "unknown option" "unknown option"         "$PLRUN" "$tmp/one.bin" --frobnicate
expect "bad --steps"    "--steps"                "$PLRUN" "$tmp/one.bin" --steps many
expect "bad backend"    "valid backends"         "$PLRUN" "$tmp/one.bin" --backend tpu
expect "missing plan"   "nothing.bin"            "$PLRUN" "$tmp/nothing.bin"
head -c 100 "$tmp/one.bin" >"$tmp/short.bin"
expect "truncated plan" "error"                  "$PLRUN" "$tmp/short.bin"
cp "$tmp/one.bin" "$tmp/flipped.bin"
size=$(stat -c %s "$tmp/flipped.bin")
printf '\xff\xfe\xfd' | dd of="$tmp/flipped.bin" bs=1 seek=$((size / 2)) conv=notrunc 2>/dev/null
expect "damaged plan"   "error"                  "$PLRUN" "$tmp/flipped.bin"
expect "world size 1 for a 2-rank plan" "the plan is for 2 ranks" "$PLRUN" "$tmp/two.bin"
if command -v "${PLC_MPIRUN%% *}" >/dev/null 2>&1; then
    expect "world size 2 for a 1-rank plan" "the plan is for 1 rank " $PLC_MPIRUN -np 2 "$PLRUN" "$tmp/one.bin"
fi
echo "not a checkpoint" >"$tmp/bogus.safetensors"
expect "bad checkpoint" "bogus.safetensors"      "$PLRUN" "$tmp/one.bin" --resume "$tmp/bogus.safetensors"
if ! command -v nvidia-smi >/dev/null 2>&1 || ! nvidia-smi -L >/dev/null 2>&1; then
    expect "cuda without a GPU" "cuda\|CUDA\|GPU"  "$PLRUN" "$tmp/one.bin" --backend cuda --steps 1
fi
[ "$fails" -eq 0 ] || die "$fails error case(s) misbehaved"
echo "errors: every case exits non-zero with its message"
