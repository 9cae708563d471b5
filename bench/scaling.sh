#!/usr/bin/env bash
# Scaling of plrun's tokens/s from 1 to 8 ranks for each of dp, tp and pp on
# this machine (CPU backend, one thread per rank, same global batch: strong
# scaling). Prints a table of tokens/s, speed-up and efficiency per rank
# count. On a machine with C cores, ranks beyond C share cores, so the
# speed-up is bounded by C; tp adds two all-reduces per layer and pp a
# pipeline bubble on top, which is what the table shows.
set -u
: "${PLC_BIN:?PLC_BIN must name the directory holding plc and plrun}"
PLC_MPIRUN=${PLC_MPIRUN:-mpirun --allow-run-as-root --oversubscribe}
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
STEPS=${SCALING_STEPS:-6}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/scale.plan" <<PLAN
model "scale" {
  layers = 8
  hidden = 256
  ffn_hidden = 704
  heads = 8
  kv_heads = 8
  vocab = 1024
  seq_len = 128
}
cluster { gpu = "host-cpu"  nodes = 1  gpus_per_node = 8 }
train { global_batch = 16  steps = $STEPS  precision = fp32  seed = 1  data = synthetic }
PLAN
cores=$(nproc --all)
echo "plrun scaling: model 8 x 256 (vocab 1024, seq 128), global batch 16, $STEPS steps, 1 thread per rank, $cores cores"
printf '%-4s %5s %14s %9s %11s\n' dim ranks tokens/s speed-up efficiency
for dim in dp tp pp; do
    base=""
    for n in 1 2 4 8; do
        over="-D cluster.gpus_per_node=$n -D layout.cp=1 -D layout.dp=1 -D layout.tp=1 -D layout.pp=1 -D layout.micro_batch=1"
        over=${over/layout.$dim=1/layout.$dim=$n}
        # shellcheck disable=SC2086
        if ! "$PLC_BIN/plc" compile "$tmp/scale.plan" $over -o "$tmp/p.bin" >"$tmp/log" 2>&1; then
            printf '%-4s %5d %14s\n' "$dim" "$n" "(no plan: $(tail -n 1 "$tmp/log" | cut -c1-50))"; continue
        fi
        if [ "$n" -eq 1 ]; then cmd=("$PLC_BIN/plrun"); else cmd=($PLC_MPIRUN -np "$n" "$PLC_BIN/plrun"); fi
        if ! "${cmd[@]}" "$tmp/p.bin" --steps "$STEPS" --metrics "$tmp/m.jsonl" >"$tmp/log" 2>&1; then
            printf '%-4s %5d %14s\n' "$dim" "$n" "(plrun failed)"; tail -n 3 "$tmp/log"; continue
        fi
        # median tokens/s of the steps after the first (warm-up)
        tps=$(grep -o '"tokens_per_s":[^,}]*' "$tmp/m.jsonl" | cut -d: -f2 | tail -n +2 | sort -g |
              awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}')
        [ -z "$base" ] && base=$tps
        awk -v d="$dim" -v n="$n" -v t="$tps" -v b="$base" \
            'BEGIN { printf "%-4s %5d %14.0f %8.2fx %10.0f%%\n", d, n, t, t / b, 100 * t / b / n }'
    done
done
echo "limits: $cores cores are shared by all ranks (ranks > cores time-share); tp pays 2 all-reduces per layer"
echo "in forward and backward, pp a bubble of (pp-1)/(micro-batches+pp-1) and activation transfers."
