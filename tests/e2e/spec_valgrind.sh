#!/usr/bin/env bash
# plc under valgrind on the examples: `plc check` of every example spec and
# `plc compile` of examples/tiny.plan report no invalid access, no use of
# uninitialised memory and no leak (--error-exitcode). Also: a directory
# given as a spec is refused with the reason.
set -u
. "$(dirname "$0")/plrun_lib.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/dir.plan"
"$PLC" check "$tmp/dir.plan" >"$tmp/out" 2>&1; rc=$?
[ "$rc" -eq 1 ] && grep -q "cannot read '.*dir.plan': Is a directory" "$tmp/out" || { cat "$tmp/out"; die "a directory as a spec (exit $rc)"; }
command -v valgrind >/dev/null 2>&1 || skip "skipped: valgrind not found"
case "$PLC_BIN" in *san*) skip "skipped: the sanitizer build does not run under valgrind" ;; esac
vg() { valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite,indirect "$@"; }
for spec in "$PLC_ROOT"/examples/*.plan; do
    vg "$PLC" check "$spec" >"$tmp/out" 2>&1; rc=$?
    [ "$rc" -eq 0 ] || { cat "$tmp/out"; die "valgrind: plc check $(basename "$spec") (exit $rc)"; }
done
vg "$PLC" compile "$PLC_ROOT/examples/tiny.plan" -o "$tmp/tiny.bin" >"$tmp/out" 2>&1; rc=$?
[ "$rc" -eq 0 ] || { cat "$tmp/out"; die "valgrind: plc compile tiny.plan (exit $rc)"; }
vg "$PLC" check "$PLC_ROOT/tests/errors/binary_junk.plan" >"$tmp/out" 2>&1; rc=$?
[ "$rc" -eq 1 ] || { cat "$tmp/out"; die "valgrind: plc check of a damaged spec (exit $rc)"; }
echo "valgrind: plc check of $(ls "$PLC_ROOT"/examples/*.plan | wc -l) examples, plc compile tiny.plan: clean"
