#!/usr/bin/env bash
# No input, however broken or large, crashes plc or makes it hang: every run
# of `plc check` and `plc fmt` (and the catalog reader) exits 0 or 1 within
# the time limit. Inputs are generated from fixed seeds, so a failure repeats;
# a failing input is kept and named.
set -u
: "${PLC_BIN:?}" "${PLC_ROOT:?}"
plc="$PLC_BIN/plc"
unset PLC_CATALOG
# under ASan/UBSan (make test SANITIZE=1) a finding must not pass for exit 1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}exitcode=86"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}exitcode=87"
tmp=$(mktemp -d)
keep=0
trap '[ "$keep" = 1 ] || rm -rf "$tmp"' EXIT
/usr/bin/python3 - "$tmp" "$PLC_ROOT/examples" <<'PY'
import os, random, sys
out, examples = sys.argv[1], sys.argv[2]
def w(name, data):
    with open(os.path.join(out, name), 'wb') as f:
        f.write(data)
rng = random.Random(20261122)
specs = sorted(f for f in os.listdir(examples) if f.endswith('.plan'))
texts = [open(os.path.join(examples, f), 'rb').read() for f in specs]
tiny = open(os.path.join(examples, 'tiny.plan'), 'rb').read()
# binary junk of several sizes
for i, n in enumerate([1, 7, 100, 4096, 65536, 1 << 20]):
    w('junk%d.plan' % i, bytes(rng.randrange(256) for _ in range(min(n, 65536))) * max(1, n // 65536))
# huge lines and values
M = 10 * 1024 * 1024
w('long_ident.plan', b'model "m" { ' + b'a' * M + b' = 1 }\n')
w('long_number.plan', b'model "m" { layers = ' + b'9' * M + b' }\n')
w('long_decimal.plan', b'train { lr.peak = 0.' + b'0' * M + b'1 }\n')
w('long_string.plan', b'cluster { gpu = "' + b'x' * M + b'\n')
w('long_comment.plan', b'#' + b'c' * M + b'\n' + tiny)
w('long_blank.plan', b'model "m" { layers = 1' + b' ' * M + b'}\n')
w('many_pairs.plan', b'model "m" {\n' + b'  layers = 1\n' * 200000 + b'}\n')
w('many_blocks.plan', b'layout { tp = 1 }\n' * 200000)
w('many_errors.plan', b'@' * M)
w('bad_escapes.plan', b'x { a = ' + b'"\\q"' * (M // 4) + b' }\n')
w('deep_braces.plan', b'layout { tp = ' + b'{' * M + b'\n')
w('big_set.plan', b'layout { tp in {' + b'1, ' * 1000000 + b'2} }\n')
w('huge_numbers.plan', tiny.replace(b'layers = 2', b'layers = 99999999999999999999999').replace(b'64', b'1e999999'))
w('nul_bytes.plan', tiny.replace(b'=', b'=\0', 3) + b'\0\0\0')
w('unterminated.plan', b'model "m')
w('empty.plan', b'')
w('only_comment.plan', b'# nothing')
w('crlf.plan', tiny.replace(b'\n', b'\r\n'))
w('utf8.plan', tiny.replace(b'tiny', 'tïny ✓'.encode()))
# every prefix of tiny.plan
for i in range(0, len(tiny), 7):
    w('prefix%04d.plan' % i, tiny[:i])
# random mutations of every example
for k in range(150):
    t = bytearray(rng.choice(texts))
    for _ in range(rng.randrange(1, 8)):
        op = rng.randrange(3)
        p = rng.randrange(len(t))
        if op == 0: t[p] = rng.randrange(256)
        elif op == 1: del t[p:p + rng.randrange(1, 20)]
        else: t[p:p] = rng.choice([b'{', b'}', b'=', b'"', b'..', b' in ', b'\n', b'#', b'%', b'GiB', b'1e400', b'-', b'\0'])
    w('mutant%03d.plan' % k, bytes(t))
# broken catalogs (used with --catalog)
cat = open(os.path.join(examples, 'catalog.yaml'), 'rb').read()
for k in range(60):
    t = bytearray(cat)
    for _ in range(rng.randrange(1, 6)):
        p = rng.randrange(len(t))
        op = rng.randrange(3)
        if op == 0: t[p] = rng.randrange(256)
        elif op == 1: del t[p:p + rng.randrange(1, 30)]
        else: t[p:p] = rng.choice([b'[', b'{', b':', b'- ', b'&a ', b'*a', b'\t', b'"', b'\n  x: 1', b'!!map '])
    w('catalog%03d.yaml' % k, bytes(t))
w('catalog_deep.yaml', b'[' * 100000)
w('catalog_big.yaml', b'x%d:\n  memory: 1 GiB\n' % 0 + b''.join(b'e%d:\n  memory: 1 GiB\n' % i for i in range(100000)))
w('catalog_scalar.yaml', b'just a string\n')
PY
fail=0
runs=0
check_rc() { # rc what file
    runs=$((runs + 1))
    if [ "$1" -ne 0 ] && [ "$1" -ne 1 ]; then
        echo "FAIL: $2 $3 exited $1 (124: timeout; >128: signal)"
        fail=1
        keep=1
    fi
}
for f in "$tmp"/*.plan; do
    timeout 20 "$plc" check "$f" >/dev/null 2>&1; check_rc $? "plc check" "$f"
    timeout 20 "$plc" fmt "$f" >/dev/null 2>&1; check_rc $? "plc fmt" "$f"
done
for f in "$tmp"/*.yaml; do
    timeout 20 "$plc" check --catalog "$f" "$PLC_ROOT/examples/tiny.plan" >/dev/null 2>&1; check_rc $? "plc check --catalog" "$f"
done
# hostile overrides
for d in 'layout.tp=' '=' '.' 'a.b.c.d=1' 'layout.tp={' "layout.tp=$(head -c 100000 /dev/zero | tr '\0' 9)" 'model.name="x' 'train.data="'; do
    timeout 20 "$plc" check -D "$d" "$PLC_ROOT/examples/tiny.plan" >/dev/null 2>&1; check_rc $? "plc check -D" "$d"
done
[ "$keep" = 1 ] && echo "failing inputs kept in $tmp"
[ "$fail" -eq 0 ] && echo "robustness: $runs runs, all exited 0 or 1"
exit "$fail"
