#!/usr/bin/env bash
# Every example passes `plc check`, is in canonical form (`plc fmt --check`),
# and `plc fmt` is idempotent on it; -D overrides are checked like the file.
set -u
: "${PLC_BIN:?}" "${PLC_ROOT:?}"
plc="$PLC_BIN/plc"
unset PLC_CATALOG
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
n=0
for spec in "$PLC_ROOT"/examples/*.plan; do
    name=$(basename "$spec")
    n=$((n + 1))
    "$plc" check -q "$spec" || { echo "FAIL: plc check $name"; fail=1; }
    "$plc" fmt --check "$spec" || { echo "FAIL: $name is not in canonical form"; fail=1; }
    "$plc" fmt "$spec" > "$tmp/once.plan" || { echo "FAIL: plc fmt $name"; fail=1; continue; }
    "$plc" fmt "$tmp/once.plan" > "$tmp/twice.plan" || { echo "FAIL: plc fmt (fmt $name)"; fail=1; continue; }
    cmp -s "$tmp/once.plan" "$tmp/twice.plan" || { echo "FAIL: plc fmt is not idempotent on $name"; diff "$tmp/once.plan" "$tmp/twice.plan" | head; fail=1; }
done
[ "$n" -ge 7 ] || { echo "FAIL: expected at least 7 examples, found $n"; fail=1; }

# the formatted form of a messy spec checks the same and is canonical
cp "$PLC_ROOT/examples/tiny.plan" "$tmp/messy.plan"
sed -i 's/^  //; s/ = / =   /' "$tmp/messy.plan"
if "$plc" fmt --check "$tmp/messy.plan" 2>/dev/null; then echo "FAIL: fmt --check accepts a messy spec"; fail=1; fi
"$plc" fmt --write "$tmp/messy.plan" && "$plc" fmt --check "$tmp/messy.plan" || { echo "FAIL: fmt --write"; fail=1; }
cmp -s "$tmp/messy.plan" "$PLC_ROOT/examples/tiny.plan" || { echo "FAIL: fmt of the messy tiny.plan differs from tiny.plan"; fail=1; }

# overrides: a valid one passes, an invalid one fails with the override shown
tiny="$PLC_ROOT/examples/tiny.plan"
"$plc" check -q "$tiny" -D layout.tp=2 -D train.steps=50 || { echo "FAIL: valid -D rejected"; fail=1; }
if "$plc" check -q "$tiny" -D layout.tp=3 2>"$tmp/err"; then echo "FAIL: tp=3 accepted for 4 heads"; fail=1; fi
grep -q "^<command line>:1:11: error: tp = 3 does not divide heads = 4; valid: 1, 2" "$tmp/err" || { echo "FAIL: -D error text:"; cat "$tmp/err"; fail=1; }

# catalog lookup: cluster.catalog is relative to the spec; $PLC_CATALOG and
# --catalog come first, in that order of precedence (--catalog wins)
mkdir -p "$tmp/specs"
sed 's/^host-cpu:/MY-GPU:/' "$PLC_ROOT/examples/catalog.yaml" > "$tmp/specs/mine.yaml"
sed 's/gpu           = "host-cpu"/gpu = "MY-GPU" catalog = "mine.yaml"/' "$tiny" > "$tmp/specs/custom.plan"
(cd / && "$plc" check -q "$tmp/specs/custom.plan") || { echo "FAIL: cluster.catalog relative to the spec"; fail=1; }
if PLC_CATALOG="$PLC_ROOT/examples/catalog.yaml" "$plc" check -q "$tmp/specs/custom.plan" 2>/dev/null; then
    echo "FAIL: PLC_CATALOG does not take precedence over cluster.catalog"; fail=1
fi
PLC_CATALOG=/nonexistent.yaml "$plc" check -q --catalog "$tmp/specs/mine.yaml" "$tmp/specs/custom.plan" ||
    { echo "FAIL: --catalog does not take precedence over PLC_CATALOG"; fail=1; }
if PLC_CATALOG=/nonexistent.yaml "$plc" check -q "$tiny" 2>/dev/null; then echo "FAIL: a missing PLC_CATALOG is accepted"; fail=1; fi

# help texts
for cmd in "" check fmt; do
    "$plc" $cmd --help >/dev/null || { echo "FAIL: plc $cmd --help"; fail=1; }
done
"$plc" --version | grep -q '^plc ' || { echo "FAIL: plc --version"; fail=1; }
if "$plc" check 2>/dev/null; then echo "FAIL: check without files succeeds"; fail=1; fi
if "$plc" check "$tmp/missing.plan" 2>/dev/null; then echo "FAIL: check of a missing file succeeds"; fail=1; fi

[ "$fail" -eq 0 ] && echo "examples: $n specs check, are canonical and format idempotently"
exit "$fail"
