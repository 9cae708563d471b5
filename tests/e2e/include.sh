#!/usr/bin/env bash
# include "path": a spec whose cluster block lives in a shared file solves
# exactly as the same spec written out whole, from any working directory;
# -D overrides reach the included block; plc fmt keeps the include line and
# --check accepts its own output; an error in the shared file is reported
# there (file:line:col, caret, "In file included from"). The golden cases of
# include errors are in tests/errors (include_*.plan).
set -u
. "$(dirname "$0")/plc_lib.bash"
ex=$PLC_ROOT/examples
mkdir -p "$tmp/repo/blocks" "$tmp/repo/specs"
cat >"$tmp/repo/blocks/a100x4.plan" <<'PLAN'
# the cluster the repository's specs share
cluster {
  gpu           = "A100-SXM4-80GB"
  nodes         = 4
  gpus_per_node = 8
}
PLAN
{ echo 'include "../blocks/a100x4.plan"'; echo; sed '/^cluster {/,/^}/d' "$ex/llama7b-a100.plan"; } >"$tmp/repo/specs/llama7b.plan"
grep -q '^cluster' "$tmp/repo/specs/llama7b.plan" && die "the spec still has its cluster block"

"$PLC" solve "$ex/llama7b-a100.plan" --top 5 | sed -n '/^rank/,$p' >"$tmp/whole.txt" || die "solve of the whole spec"
(cd / && "$PLC" solve "$tmp/repo/specs/llama7b.plan" --top 5) | sed -n '/^rank/,$p' >"$tmp/included.txt" ||
    die "solve of the spec with an include"
[ -s "$tmp/whole.txt" ] && cmp -s "$tmp/whole.txt" "$tmp/included.txt" ||
    { diff "$tmp/whole.txt" "$tmp/included.txt"; die "the included cluster does not solve as the written-out one"; }

# an override reaches the included block
(cd "$tmp/repo/specs" && "$PLC" solve llama7b.plan -D cluster.nodes=8 --top 1) | grep -Eq '^ +1 +64 ' ||
    die "-D cluster.nodes=8 did not reach the included cluster block"

# fmt keeps the include, first, and prints none of the included blocks
"$PLC" fmt "$tmp/repo/specs/llama7b.plan" >"$tmp/fmt.plan" || die "plc fmt"
[ "$(head -n 1 "$tmp/fmt.plan")" = 'include "../blocks/a100x4.plan"' ] || { head -3 "$tmp/fmt.plan"; die "fmt lost the include line"; }
grep -q '^cluster' "$tmp/fmt.plan" && die "fmt printed the included cluster block"
cp "$tmp/fmt.plan" "$tmp/repo/specs/canonical.plan"
"$PLC" fmt --check "$tmp/repo/specs/canonical.plan" >/dev/null || die "fmt --check rejects fmt's own output"

# an error in the shared file is reported there
sed -i 's/nodes         = 4/nodes         = 4 GiB/' "$tmp/repo/blocks/a100x4.plan"
(cd "$tmp/repo" && "$PLC" check specs/llama7b.plan) >"$tmp/err" 2>&1; rc=$?
[ $rc -eq 1 ] || { cat "$tmp/err"; die "an error in the included file: want exit 1, got $rc"; }
grep -qx 'In file included from specs/llama7b.plan:1:1:' "$tmp/err" &&
    grep -q '^blocks/a100x4.plan:4:21: error: ' "$tmp/err" && grep -q '^      |                     ^~~$' "$tmp/err" ||
    { cat "$tmp/err"; die "the error does not point into the included file"; }
echo "include: the included cluster solves as the written-out one; -D, fmt and errors in the included file work"
