#!/usr/bin/env bash
# make install stands alone: the binaries under test are installed with
# DESTDIR and a PREFIX, the installed tree is moved to another prefix, and
# there, with the source tree hidden (a tmpfs over it in a private mount
# namespace, where unshare allows one), the installed plc checks, solves and
# compiles a spec with the catalog it finds beside itself and plrun runs the
# plan. The installed binaries hold no source-tree path, the man pages
# render, a missing catalog is an error naming what was tried, and make
# uninstall removes everything it installed.
# make install-plc stands alone too: it builds nothing of plrun (nor MPI,
# OpenBLAS or CUDA code), and its prefix, copied elsewhere with the source
# tree hidden, solves examples/llama7b-a100.plan; a copied lone bin/plc says
# what it looked for and where, and finds the engine profiles beside a
# catalog named by PLC_CATALOG; plc --version names the commit and the
# catalog's CRC-32.
set -u
. "$(dirname "$0")/plrun_lib.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
root=$(cd "$PLC_ROOT" && pwd -P)
bin=$(cd "$PLC_BIN" && pwd -P)
stage=$tmp/stage prefix=/opt/plc-test

# the binaries under test, as they are (-o all: no rebuild)
make -s -C "$root" --no-print-directory install -o all BIN="$bin" DESTDIR="$stage" PREFIX="$prefix" >"$tmp/log" 2>&1 ||
    { cat "$tmp/log"; die "make install failed"; }
for f in bin/plc bin/plrun share/plc/catalog.yaml share/plc/engines.yaml share/man/man1/plc.1 share/man/man1/plrun.1 share/man/man5/plan.5; do
    [ -f "$stage$prefix/$f" ] || die "make install did not install $f"
done

# no path of the source tree in what was installed
for b in plc plrun; do
    if command -v strings >/dev/null 2>&1; then strings -a "$stage$prefix/bin/$b"; else cat "$stage$prefix/bin/$b"; fi >"$tmp/strings"
    if grep -aF -e "$root" -e "$PLC_ROOT" "$tmp/strings" | head -3 | grep -a .; then die "bin/$b holds a source-tree path"; fi
done

# the man pages render without warnings
pages=("$stage$prefix"/share/man/man1/*.1 "$stage$prefix"/share/man/man5/*.5)
if command -v groff >/dev/null 2>&1; then
    for p in "${pages[@]}"; do
        warn=$(groff -man -Tutf8 -ww -z "$p" 2>&1)
        [ -z "$warn" ] || { echo "$warn"; die "$(basename "$p") renders with warnings"; }
        groff -man -Tutf8 -P-cbou "$p" 2>/dev/null | grep -q '^SYNOPSIS' || die "$(basename "$p") does not render"
    done
elif command -v man >/dev/null 2>&1; then
    for p in "${pages[@]}"; do MAN_KEEP_FORMATTING= man -l "$p" 2>/dev/null | grep -q 'SYNOPSIS' || die "$(basename "$p") does not render"; done
else
    echo "note: neither groff nor man is installed; the man pages were not rendered"
fi

# moved to another prefix: plc finds the catalog relative to itself
moved=$tmp/moved
cp -a "$stage$prefix" "$moved"
mkdir -p "$tmp/spec"
cp "$root/examples/tiny.plan" "$tmp/spec/tiny.plan"
cat >"$tmp/run.sh" <<EOF
set -eu
unset PLC_CATALOG
cd "$tmp/spec"
"$moved/bin/plc" check tiny.plan
"$moved/bin/plc" solve tiny.plan --top 2
"$moved/bin/plc" compile tiny.plan -D cluster.gpus_per_node=1 -D layout.dp=1 -D layout.tp=1 -D layout.pp=1 -D layout.cp=1 -o job.bin
OMP_NUM_THREADS=1 "$moved/bin/plrun" job.bin --steps 2 --metrics m.jsonl
EOF
hidden=no
# under the sanitizers LeakSanitizer reads its suppressions from the source
# tree at start-up: give it a copy outside
case ${LSAN_OPTIONS:-} in *suppressions=*)
    supp=${LSAN_OPTIONS#*suppressions=}; supp=${supp%%:*}
    cp "$supp" "$tmp/lsan.supp" && export LSAN_OPTIONS=${LSAN_OPTIONS/suppressions=$supp/suppressions=$tmp/lsan.supp} ;;
esac
if unshare -m true 2>/dev/null; then
    # the source tree (and the build directory in it) replaced by an empty tmpfs
    unshare -m bash -c "mount -t tmpfs none '$root' && [ ! -e '$root/examples/catalog.yaml' ] && bash '$tmp/run.sh'" \
        >"$tmp/log" 2>&1 || { cat "$tmp/log"; die "the installed plc failed with the source tree hidden"; }
    hidden=yes
else
    bash "$tmp/run.sh" >"$tmp/log" 2>&1 || { cat "$tmp/log"; die "the installed plc failed after the move"; }
fi
grep -q 'tiny.plan: ok' "$tmp/log" || { cat "$tmp/log"; die "plc check printed no ok"; }
[ "$(losses "$tmp/spec/m.jsonl" | wc -l)" -eq 2 ] || { cat "$tmp/log"; die "plrun did not run 2 steps"; }

# without its catalog: exit 1, the places tried, and what to do
rm "$moved/share/plc/catalog.yaml"
(unset PLC_CATALOG; "$moved/bin/plc" check "$tmp/spec/tiny.plan") >"$tmp/log" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat "$tmp/log"; die "a missing catalog should exit 1, not $rc"; }
grep -q "$moved/share/plc/catalog.yaml" "$tmp/log" && grep -q -- '--catalog' "$tmp/log" && grep -q PLC_CATALOG "$tmp/log" ||
    { cat "$tmp/log"; die "the error should name the place tried and --catalog / PLC_CATALOG"; }
PLC_CATALOG="$root/examples/catalog.yaml" "$moved/bin/plc" check -q "$tmp/spec/tiny.plan" || die "PLC_CATALOG is not used"

# ---- plc alone ----------------------------------------------------------------
# what install-plc would build from nothing: no plrun, runtime or kernel code
make -n -C "$root" --no-print-directory install-plc BUILD="$tmp/dry" BIN="$tmp/dry/bin" DESTDIR="$tmp/dry" PREFIX=/p \
    >"$tmp/dry.log" 2>&1 || { cat "$tmp/dry.log"; die "make -n install-plc failed"; }
grep -q 'libplc_compiler.a' "$tmp/dry.log" || { cat "$tmp/dry.log"; die "make -n install-plc shows no build of plc"; }
if grep -E 'bin/plrun|libplc_runtime|obj/runtime/|obj/kernels/|nvcc|openmpi|openblas|fopenmp|lcuda' "$tmp/dry.log" | head -3 | grep .; then
    die "make install-plc would build plrun or its libraries"
fi
stage2=$tmp/stage-plc
make -s -C "$root" --no-print-directory install-plc -o "$bin/plc" BIN="$bin" DESTDIR="$stage2" PREFIX="$prefix" >"$tmp/log" 2>&1 ||
    { cat "$tmp/log"; die "make install-plc failed"; }
for f in bin/plc share/plc/catalog.yaml share/plc/engines.yaml share/man/man1/plc.1 share/man/man5/plan.5; do
    [ -f "$stage2$prefix/$f" ] || die "make install-plc did not install $f"
done
[ ! -e "$stage2$prefix/bin/plrun" ] && [ ! -e "$stage2$prefix/share/man/man1/plrun.1" ] ||
    die "make install-plc installed plrun"
# copied elsewhere, as a multi-stage container would hold it
copied=$tmp/elsewhere/plc-prefix
mkdir -p "$tmp/elsewhere"
cp -r "$stage2$prefix" "$copied"
cp "$root/examples/llama7b-a100.plan" "$tmp/spec/"
cat >"$tmp/run-plc.sh" <<EOF
set -eu
unset PLC_CATALOG PLC_ENGINES
cd "$tmp/spec"
"$copied/bin/plc" solve llama7b-a100.plan --top 1
"$copied/bin/plc" --version
EOF
if [ "$hidden" = yes ]; then
    unshare -m bash -c "mount -t tmpfs none '$root' && bash '$tmp/run-plc.sh'" >"$tmp/log" 2>&1 ||
        { cat "$tmp/log"; die "the plc-only install failed with the source tree hidden"; }
else
    bash "$tmp/run-plc.sh" >"$tmp/log" 2>&1 || { cat "$tmp/log"; die "the copied plc-only install failed"; }
fi
grep -Eq '^ +1 +32 +1 +1 +1 ' "$tmp/log" || { cat "$tmp/log"; die "the copied plc did not rank dp=32 first"; }
# --version: release, commit (12 hex digits, -dirty, or unknown), the data
# files found beside it with their CRC-32
grep -Eq '^plc [0-9.]+ \(commit ([0-9a-f]{12}(-dirty)?|unknown)\)$' "$tmp/log" || { cat "$tmp/log"; die "plc --version names no commit"; }
grep -q "^catalog: $copied/share/plc/catalog.yaml (crc32 [0-9a-f]\{8\})$" "$tmp/log" &&
    grep -q "^engines: $copied/share/plc/engines.yaml (crc32 [0-9a-f]\{8\})$" "$tmp/log" ||
    { cat "$tmp/log"; die "plc --version does not name the catalog and engine profiles beside it"; }
if command -v python3 >/dev/null 2>&1; then
    want=$(python3 -c 'import sys, zlib; print("%08x" % zlib.crc32(open(sys.argv[1], "rb").read()))' "$copied/share/plc/catalog.yaml")
    grep -q "^catalog: .* (crc32 $want)$" "$tmp/log" || { cat "$tmp/log"; die "plc --version: the catalog's CRC-32 is not $want"; }
fi
# a lone bin/plc: each error says what it looked for and where
lone=$tmp/lone
mkdir -p "$lone/bin" "$lone/data"
cp "$copied/bin/plc" "$lone/bin/plc"
(cd "$tmp/spec" && env -u PLC_CATALOG -u PLC_ENGINES "$lone/bin/plc" solve llama7b-a100.plan) >"$tmp/log" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat "$tmp/log"; die "a lone plc should exit 1, not $rc"; }
grep -qF "no hardware catalog found: looked for the built-in one at $lone/share/plc/catalog.yaml" "$tmp/log" ||
    { cat "$tmp/log"; die "a lone plc does not say where it looked for the catalog"; }
cp "$root/examples/catalog.yaml" "$lone/data/catalog.yaml"
(cd "$tmp/spec" && env -u PLC_ENGINES PLC_CATALOG="$lone/data/catalog.yaml" "$lone/bin/plc" solve llama7b-a100.plan) >"$tmp/log" 2>&1
rc=$?
[ "$rc" -eq 1 ] || { cat "$tmp/log"; die "a lone plc without engine profiles should exit 1, not $rc"; }
grep -qF "no engine profiles found: looked for engines.yaml at $lone/data/engines.yaml (beside the catalog), $lone/share/plc/engines.yaml" "$tmp/log" &&
    grep -q PLC_ENGINES "$tmp/log" || { cat "$tmp/log"; die "a lone plc does not say where it looked for the engine profiles"; }
cp "$root/examples/engines.yaml" "$lone/data/engines.yaml"
(cd "$tmp/spec" && env -u PLC_ENGINES PLC_CATALOG="$lone/data/catalog.yaml" "$lone/bin/plc" solve llama7b-a100.plan --top 1) >"$tmp/log" 2>&1 ||
    { cat "$tmp/log"; die "a lone plc does not find engines.yaml beside the catalog PLC_CATALOG names"; }

# make uninstall leaves nothing behind
for st in "$stage" "$stage2"; do
    make -s -C "$root" --no-print-directory uninstall BIN="$bin" DESTDIR="$st" PREFIX="$prefix" >"$tmp/log" 2>&1 ||
        { cat "$tmp/log"; die "make uninstall failed"; }
done
left=$(find "$stage" "$stage2" -type f)
[ -z "$left" ] || { echo "$left"; die "make uninstall left files"; }
echo "install: installed, moved and run (source tree hidden: $hidden); plc alone installed, copied and solved; a lone plc names the places tried; no source path in the binaries; uninstalled"
