#!/usr/bin/env bash
# A short run of every libFuzzer harness (fuzz/fuzz.mk: the spec front end,
# the plan loader, the checkpoint loader), 5 s each from the seed corpora,
# after replaying the inputs of tests/fuzz_regress/NAME/ (each a crash once
# found and fixed). Needs clang and libFuzzer (scripts/install-deps.sh).
set -u
. "$(dirname "$0")/plrun_lib.bash"
command -v "${FUZZ_CC:-clang}" >/dev/null 2>&1 || skip "skipped: clang not found"
echo 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }' |
    "${FUZZ_CC:-clang}" -fsanitize=fuzzer -x c - -o /dev/null 2>/dev/null || skip "skipped: no libFuzzer for ${FUZZ_CC:-clang}"
cd "$PLC_ROOT" || die "no $PLC_ROOT"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
nice make --no-print-directory fuzz-build >"$log" 2>&1 || { tail -n 40 "$log"; die "building the harnesses failed"; }
for n in spec plan ckpt; do
    if [ -d "tests/fuzz_regress/$n" ]; then
        build-fuzz/fuzz_$n -runs=1 tests/fuzz_regress/$n/* >"$log" 2>&1 || { tail -n 40 "$log"; die "fuzz_$n: a regression input fails again"; }
        echo "fuzz_$n: $(ls "tests/fuzz_regress/$n" | wc -l) regression input(s) pass"
    fi
done
nice make --no-print-directory fuzz FUZZ_SECONDS=5 >"$log" 2>&1 || { tail -n 60 "$log"; die "a harness found a crash (build-fuzz/crash-*)"; }
grep -h 'executed_units\|^fuzz_' "$log"
echo "fuzz smoke: every harness ran 5 s without a crash"
