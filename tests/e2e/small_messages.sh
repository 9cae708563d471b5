#!/usr/bin/env bash
# Small messages (issue 39): a model's parameter count in a unit that shows
# it (tiny: "125.2 K parameters", not "0.00 B"); plrun --steps past the
# spec's train.steps warns that the learning rate stays at lr.floor, and
# not at or below it.
set -u
. "$(dirname "$0")/plrun_lib.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$PLC" solve "$PLC_ROOT/examples/tiny.plan" > "$tmp/tiny.txt" || die "solve tiny failed"
grep -q "model tiny (125.2 K parameters)" "$tmp/tiny.txt" || die "tiny: parameter count $(head -1 "$tmp/tiny.txt")"
"$PLC" solve "$PLC_ROOT/examples/gpt2-small.plan" > "$tmp/gpt2.txt" || die "solve gpt2-small failed"
grep -q "model gpt2-small (124.4 M parameters)" "$tmp/gpt2.txt" || die "gpt2-small: $(head -1 "$tmp/gpt2.txt")"

compile_tiny "$tmp/t.bin" 1
steps=$(sed -n 's/^ *steps *= *\([0-9]*\).*/\1/p' "$PLC_ROOT/examples/tiny.plan")
run_ranks 1 "$tmp/t.bin" --steps $((steps + 2)) > "$tmp/past.out" 2> "$tmp/past.err" || die "plrun --steps past failed"
grep -q "plrun: warning: --steps $((steps + 2)) runs past the spec's train.steps = $steps" "$tmp/past.err" ||
    die "no warning for --steps past train.steps: $(cat "$tmp/past.err")"
run_ranks 1 "$tmp/t.bin" --steps 2 > "$tmp/short.out" 2> "$tmp/short.err" || die "plrun --steps 2 failed"
grep -q "warning" "$tmp/short.err" && die "a warning for --steps within train.steps: $(cat "$tmp/short.err")"
echo "small_messages e2e: ok"
