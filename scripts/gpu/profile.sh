#!/usr/bin/env bash
# scripts/gpu/profile.sh [GLOBAL_BATCH]: the unit suite cuda_kernels, then
# the Llama-1B-class plan (scripts/gpu/llama1b.plan) at a small global batch,
# traced with every kernel synchronised, and where its last step's time goes.
set -u
cd "$(dirname "$0")/../.."
. scripts/gpu/env.sh
(cd tests && timeout 60 ../bin/unit_tests cuda_kernels) 2>&1 | grep -E "failures|^ +[0-9]+\. |tests |asserts "
t=$(mktemp -d)
case "$(nvidia-smi --query-gpu=name --format=csv,noheader)" in *H100*) gpu=H100-SXM5-80GB ;; *) gpu=H200-SXM-141GB ;; esac
bin/plc compile scripts/gpu/llama1b.plan -D "cluster.gpu=\"$gpu\"" -D "train.global_batch=${1:-2}" -o "$t/p.bin" |
    grep -E '^layout|^predicted'
timeout 150 bin/plrun "$t/p.bin" --backend cuda --steps 3 --trace "$t/trace.json" --metrics "$t/m.jsonl" | grep -E '^time'
grep -o '"step_time_s":[^,}]*' "$t/m.jsonl"
env -u LD_LIBRARY_PATH python3 scripts/gpu/trace_summary.py "$t/trace.json"
