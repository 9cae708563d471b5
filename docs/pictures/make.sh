#!/usr/bin/env bash
# Draws the README's pictures (the tiny example; memory of llama-65b too) into docs/pictures/:
#   docs/pictures/make.sh [PLC]        (PLC defaults to bin/plc)
# tests/e2e/pictures.sh redraws them and fails when they differ, so the
# committed pictures are always what plc draws today.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
plc=${1:-$root/bin/plc}
out=${PICTURES_OUT:-$here}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root"   # spec paths in the pictures are relative to the repository
pipe=(-D layout.dp=2 -D layout.tp=1 -D layout.pp=2 -D layout.cp=1 -D cluster.gpus_per_node=4)
"$plc" compile examples/tiny.plan "${pipe[@]}" -o "$tmp/tiny-pp2.bin" >/dev/null
"$plc" trace "$tmp/tiny-pp2.bin" --svg -o "$out/tiny-trace.svg" >/dev/null
"$plc" explain examples/tiny.plan "${pipe[@]}" --svg "$out/tiny-memory.svg" >/dev/null
"$plc" explain examples/llama65b-h100.plan --svg "$out/llama65b-memory.svg" >/dev/null
"$plc" scale examples/tiny.plan --gpus 1..8 --svg "$out/tiny-scale.svg" >/dev/null
