"""scripts/gpu/csv_row.py: one row of bench/gpu-results.csv from the logs of a
scripts/gpu/check.sh call, so that the results are read by a program and not
only by people (issue 38).

    python3 scripts/gpu/csv_row.py OUT [CSV]

OUT is check.sh's log folder; the row goes to OUT/gpu-results.csv (with the
header) and is appended to CSV (default bench/gpu-results.csv), which is
created with the header when absent and refused when its header differs.
Columns (empty where this call did not measure the figure):
  date                 UTC date of the call
  gpu                  nvidia-smi's name of the GPU
  plan                 llama1b (scripts/gpu/llama1b.plan)
  plrun_tok_s          plrun's mean tokens/s over the steps after the first
  torch_eager_tok_s    scripts/gpu/torch_llama.py, eager
  torch_compile_tok_s  the same under torch.compile (TORCH_COMPILE=1)
  plrun_attn_ms        plrun's attention forward+backward alone at the plan's
                       shape (bench/cuda_attention.c, head dim 64)
  sdpa_attn_ms         PyTorch's SDPA forward+backward at the same shape
                       (scripts/gpu/peer.py)
  pred_step_s          plc's predicted step (plc compile's "predicted" line)
  meas_step_s          plrun's mean step time after the first
  mfu                  the measured MFU: plc's predicted MFU scaled by
                       predicted / measured step time (the same FLOPs)"""
import datetime, json, os, re, sys

HEADER = ("date,gpu,plan,plrun_tok_s,torch_eager_tok_s,torch_compile_tok_s,plrun_attn_ms,sdpa_attn_ms,"
          "pred_step_s,meas_step_s,mfu")


def lines(path):
    try:
        with open(path) as f:
            return f.read().splitlines()
    except OSError:
        return []


def json_lines(path):
    out = []
    for line in lines(path):
        line = line.strip()
        if line.startswith("{"):
            try:
                out.append(json.loads(line))
            except ValueError:
                pass
    return out


def fmt(x, digits=4):
    return "" if x is None else ("%.*g" % (digits + 2, x))


def row(out):
    gpu = (lines(os.path.join(out, "gpu.txt")) or [""])[0].split(",")[0].strip()
    steps = [j for j in json_lines(os.path.join(out, "l1b.jsonl")) if "step_time_s" in j]
    rest = steps[1:] or steps
    meas = sum(j["step_time_s"] for j in rest) / len(rest) if rest else None
    tok = sum(j["tokens_per_s"] for j in rest) / len(rest) if rest else None
    pred = pred_mfu = None
    for line in lines(os.path.join(out, "l1b.compile.log")):
        m = re.match(r"predicted\s+step ([0-9.e+-]+) s, .* MFU ([0-9.]+)%", line)
        if m:
            pred, pred_mfu = float(m.group(1)), float(m.group(2)) / 100
    mfu = pred_mfu * pred / meas if pred and pred_mfu and meas else None

    def what(path, name, key):
        for j in json_lines(os.path.join(out, path)):
            if j.get("what") == name and key in j:
                return j[key]
        return None
    eager = what("torch.log", "pytorch eager step", "tokens_per_s")
    comp = what("torch_compile.log", "pytorch compile step", "tokens_per_s")
    plrun_attn = what("attn.log", "plrun flash forward+backward, hd 64", "s")
    sdpa = what("peer.log", "sdpa forward+backward", "s")
    return ",".join([datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"), gpu.replace(",", " "),
                     "llama1b", fmt(tok), fmt(eager), fmt(comp),
                     fmt(plrun_attn * 1e3 if plrun_attn is not None else None),
                     fmt(sdpa * 1e3 if sdpa is not None else None), fmt(pred), fmt(meas), fmt(mfu, 3)])


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit("usage: csv_row.py OUT [CSV]")
    out = sys.argv[1]
    csv = sys.argv[2] if len(sys.argv) == 3 else "bench/gpu-results.csv"
    if not os.path.isdir(out):
        sys.exit("csv_row.py: %s: no such folder (check.sh's logs)" % out)
    r = row(out)
    with open(os.path.join(out, "gpu-results.csv"), "w") as f:
        f.write(HEADER + "\n" + r + "\n")
    have = lines(csv)
    if have and have[0] != HEADER:
        sys.exit("csv_row.py: %s: its header is not %s; the row is in %s/gpu-results.csv" % (csv, HEADER, out))
    with open(csv, "a") as f:
        if not have:
            f.write(HEADER + "\n")
        f.write(r + "\n")
    print(r)


if __name__ == "__main__":
    main()
