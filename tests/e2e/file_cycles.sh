#!/usr/bin/env bash
# No two files of compiler/, common/ or kernels/ depend on each other in a
# cycle (docs/design-notes.md): scripts/file-cycles.py over the built objects
# (which file's symbols each object uses, from nm) and over the headers'
# #include lines finds none. Skipped without the objects, nm or python3.
set -u
. "$(dirname "$0")/plc_lib.bash"
objdir=$(cd "$PLC_BIN/.." && pwd)/obj   # build-san/bin -> build-san/obj
[ -d "$objdir" ] || objdir=$PLC_ROOT/build/obj
[ -d "$objdir/common" ] || { echo "skipped: no objects in $objdir"; exit 77; }
command -v nm >/dev/null || { echo "skipped: nm not installed"; exit 77; }
py=/usr/bin/python3; [ -x "$py" ] || py=$(command -v python3) || { echo "skipped: no python3"; exit 77; }
"$py" "$PLC_ROOT/scripts/file-cycles.py" --objdir "$objdir" compiler common kernels >"$tmp/out" 2>&1
rc=$?
cat "$tmp/out"
[ $rc -eq 0 ] || die "file cycles (exit $rc)"
grep -Eq '^file-cycles: [0-9]{2,} objects checked' "$tmp/out" || die "too few objects checked"
echo "file cycles: none"
