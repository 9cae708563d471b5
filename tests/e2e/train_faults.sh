#!/usr/bin/env bash
# Faults a run must survive or refuse before it starts, each with its
# message and exit status 1: unusable output paths (checked before the first
# step), a full disk under --metrics, periodic checkpoints (atomic, the newest
# K kept, resumed from the directory), a resume that would change the run
# (another seed, learning rate), a resume with nothing left to run, flipped
# bytes in a tensor and in the metadata (reported as corruption, naming the
# tensor), SIGTERM (the step finishes, a checkpoint is written), and a
# diverged loss (step, rank and instruction named; no checkpoint from it).
set -u
. "$(dirname "$0")/plrun_lib.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
# expect NAME PATTERN CMD...: CMD must exit 1, quickly, and say PATTERN
expect() {
    local name=$1 pattern=$2; shift 2
    timeout "${limit:-60}" "$@" >"$tmp/out" 2>&1
    local rc=$?
    if [ "$rc" -ne 1 ] || ! grep -q -- "$pattern" "$tmp/out"; then
        echo "FAIL $name (exit $rc), output:"; sed 's/^/    /' "$tmp/out" | tail -n 20
        fails=$((fails + 1))
    else
        echo "ok   $name: $(grep -m1 -- "$pattern" "$tmp/out")"
    fi
}
compile_tiny "$tmp/one.bin" 1
"$PLC" compile "$PLC_ROOT/examples/tiny.plan" -D cluster.gpus_per_node=1 -D layout.dp=1 -D layout.tp=1 \
    -D layout.pp=1 -D layout.cp=1 -D train.seed=2 -D train.lr.peak=1e-3 -o "$tmp/seed2.bin" >/dev/null ||
    die "plc compile failed"

# outputs are checked before the first step: no "step" line may appear
for args in "--checkpoint /nonexistent/dir/ck.st" "--trace /nonexistent/dir/t.json" "--trace /tmp" "--trace /dev/null" \
    "--metrics /tmp" "--metrics /nonexistent/m.jsonl" "--checkpoint-dir /nonexistent/a/b"; do
    # shellcheck disable=SC2086
    expect "output ${args%% *} ${args#* }" "${args#* }" "$PLRUN" "$tmp/one.bin" --steps 300 $args
    if grep -q '^step' "$tmp/out"; then echo "FAIL: $args: a step ran before the path was refused"; fails=$((fails + 1)); fi
done
[ -c /dev/null ] || die "/dev/null was replaced"
if [ -w /dev/full ]; then
    expect "metrics on a full disk" "--metrics /dev/full: write failed" "$PLRUN" "$tmp/one.bin" --steps 3 --metrics /dev/full
fi

# periodic checkpoints: every 2 steps, the newest 2 kept, the marker names
# the last, a stale temporary removed
mkdir "$tmp/ck"; echo partial >"$tmp/ck/step-00000099.safetensors.tmp.AbC123" # left by a killed writer
"$PLRUN" "$tmp/one.bin" --steps 7 --checkpoint-dir "$tmp/ck" --checkpoint-every 2 --checkpoint-keep 2 \
    --metrics "$tmp/full.jsonl" >"$tmp/log" 2>&1 || { cat "$tmp/log"; die "the checkpointed run failed"; }
ls "$tmp/ck" | sort >"$tmp/ls"
printf '%s\n' latest step-00000006.safetensors step-00000007.safetensors >"$tmp/want"
cmp -s "$tmp/ls" "$tmp/want" || { cat "$tmp/ls"; die "checkpoint directory: expected the newest two and the marker"; }
[ "$(cat "$tmp/ck/latest")" = step-00000007.safetensors ] || die "latest does not name the last checkpoint"
# resume from the directory's step-6 checkpoint continues the loss curve bitwise
rm "$tmp/ck/step-00000007.safetensors"; echo step-00000006.safetensors >"$tmp/ck/latest"
"$PLRUN" "$tmp/one.bin" --steps 7 --resume "$tmp/ck" --metrics "$tmp/resumed.jsonl" >"$tmp/log" 2>&1 ||
    { cat "$tmp/log"; die "resume from the directory failed"; }
[ "$(losses "$tmp/resumed.jsonl")" = "$(losses "$tmp/full.jsonl" | tail -n 1)" ] ||
    die "resume from the directory does not continue the loss curve"
ck=$tmp/ck/step-00000006.safetensors

expect "resume with another seed and lr" "train.seed: checkpoint 1, plan 2" "$PLRUN" "$tmp/seed2.bin" --resume "$ck"
grep -q "train.lr.peak: checkpoint 0.003, plan 0.001" "$tmp/out" || { echo "FAIL: the lr change is not named"; fails=$((fails + 1)); }
timeout 60 "$PLRUN" "$tmp/seed2.bin" --steps 7 --resume "$ck" --allow-changed train.seed --allow-changed train.lr.peak \
    --allow-changed train.lr.floor >"$tmp/log" 2>&1 || { cat "$tmp/log"; echo "FAIL: --allow-changed"; fails=$((fails + 1)); }
expect "unknown --allow-changed" "not a setting a resume compares" "$PLRUN" "$tmp/one.bin" --resume "$ck" --allow-changed lr
expect "resume past the end" "nothing to run: the checkpoint .* is at step 6 and this run ends at step 5" \
    "$PLRUN" "$tmp/one.bin" --resume "$ck" --steps 5
expect "resume at the end" "is at step 6 and this run ends at step 6" "$PLRUN" "$tmp/one.bin" --resume "$ck" --steps 6

# corruption: a flipped byte in tensor data, then in the metadata's config
size=$(stat -c %s "$ck")
cp "$ck" "$tmp/data.st"
printf '\x55' | dd of="$tmp/data.st" bs=1 seek=$((size - 100)) conv=notrunc 2>/dev/null
expect "flipped tensor byte" "tensor tok_emb is corrupt" "$PLRUN" "$tmp/one.bin" --resume "$tmp/data.st"
cp "$ck" "$tmp/meta.st"
off=$(grep -abo 'seq_len' "$tmp/meta.st" | head -n 1 | cut -d: -f1)
printf '7' | dd of="$tmp/meta.st" bs=1 seek=$((off + 11)) conv=notrunc 2>/dev/null
cmp -s "$ck" "$tmp/meta.st" && die "the metadata flip did not change the file"
expect "flipped metadata byte" "the metadata is corrupt" "$PLRUN" "$tmp/one.bin" --resume "$tmp/meta.st"
mkdir "$tmp/empty"
expect "resume from a directory without a checkpoint" "without a completed checkpoint" "$PLRUN" "$tmp/one.bin" --resume "$tmp/empty"

# SIGTERM: the step finishes, a checkpoint is written, exit 1 with a message
"$PLRUN" "$tmp/one.bin" --steps 300 --checkpoint-dir "$tmp/sig" >"$tmp/sig.log" 2>&1 &
pid=$!
for _ in $(seq 300); do grep -q '^step *2/' "$tmp/sig.log" && break; sleep 0.1; done
kill -TERM "$pid"; wait "$pid"; rc=$?
if [ "$rc" -ne 1 ] || ! grep -q "stopped by SIGTERM after step" "$tmp/sig.log" || [ ! -s "$tmp/sig/latest" ]; then
    echo "FAIL SIGTERM (exit $rc)"; tail -n 5 "$tmp/sig.log"; fails=$((fails + 1))
else
    echo "ok   SIGTERM: $(grep -m1 'stopped by' "$tmp/sig.log"), checkpoint $(cat "$tmp/sig/latest")"
    timeout 60 "$PLRUN" "$tmp/one.bin" --steps "$(( $(sed 's/step-0*//; s/\..*//' "$tmp/sig/latest") + 1 ))" \
        --resume "$tmp/sig" >"$tmp/log" 2>&1 || { cat "$tmp/log"; echo "FAIL: resume after SIGTERM"; fails=$((fails + 1)); }
fi

# a diverged loss names step, rank and instruction; the last good checkpoint stays
"$PLC" compile "$PLC_ROOT/examples/tiny.plan" -D cluster.gpus_per_node=1 -D layout.dp=1 -D layout.tp=1 \
    -D layout.pp=1 -D layout.cp=1 -D train.lr.peak=100 -D train.lr.warmup=0 -D train.grad_clip=0 \
    -o "$tmp/nan.bin" >/dev/null || die "plc compile failed"
limit=600 expect "diverged loss" "rank 0: instruction [0-9]* (XENT_LOSS.*at step [0-9]*: training diverged" \
    "$PLRUN" "$tmp/nan.bin" --steps 50 --checkpoint-dir "$tmp/nan" --checkpoint-every 1
grep -q "no checkpoint written from this state" "$tmp/out" || { echo "FAIL: no word on the checkpoint"; fails=$((fails + 1)); }
bad=$(grep -o 'at step [0-9]*' "$tmp/out" | head -n 1 | grep -o '[0-9]*')
last=$(sed 's/step-0*//; s/\..*//' "$tmp/nan/latest" 2>/dev/null)
[ -n "$bad" ] && [ "${last:-0}" -le "$bad" ] || { echo "FAIL: a checkpoint after the diverged step ($last > $bad)"; fails=$((fails + 1)); }

[ "$fails" -eq 0 ] || die "$fails fault case(s) misbehaved"
echo "faults: every case refused before the first step or handled with its message"
