#!/usr/bin/env bash
# README snippets are real output: every code block preceded by a line
# `<!-- output of: COMMAND -->` must be exactly what COMMAND prints, run with
# bash in the repository root, plc on PATH and $T a scratch directory.
set -u
: "${PLC_BIN:?}" "${PLC_ROOT:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
/usr/bin/python3 - "$PLC_ROOT/README.md" "$PLC_BIN" "$tmp" <<'PY'
import os, re, subprocess, sys, difflib
readme, bindir, scratch = sys.argv[1:4]
text = open(readme).read()
blocks = re.findall(r"<!-- output of: (.*?) -->\n```\n(.*?)```\n", text, re.S)
assert blocks, "README has no checked snippets"
env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"])
bad = 0
for i, (cmd, want) in enumerate(blocks):
    t = os.path.join(scratch, str(i))
    os.makedirs(t)
    env["T"] = t
    got = subprocess.run(["bash", "-c", cmd], cwd=os.path.dirname(readme), env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
    if got != want:
        bad += 1
        print(f"README snippet {i + 1} differs from the output of: {cmd}")
        sys.stdout.writelines(difflib.unified_diff(want.splitlines(True), got.splitlines(True), "README", "output"))
print(f"readme: {len(blocks)} snippets, {bad} stale")
sys.exit(1 if bad else 0)
PY
