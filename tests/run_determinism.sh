#!/usr/bin/env bash
# The CPU backend's determinism checks (docs/runtime.md, "Determinism") under
# each sgemm the CPU can run, so a developer on one kind of machine sees
# what fails on another: for each OpenBLAS core type below that this CPU
# can run, the unit suite kernels_threads and the e2e test
# train_determinism run with OPENBLAS_CORETYPE set to it and PLC_GEMM=openblas
# (plrun's matmuls through OpenBLAS); "plc" is plc's own AVX-512 sgemm
# (kernels/cpu/gemm.c). A kind the CPU cannot run is skipped.
# Closes with the line "determinism: N passed, N failed, N skipped".
set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${PLC_BIN:?PLC_BIN must name the directory holding plc, plrun and unit_tests}"
export PLC_BIN PLC_ROOT="$(cd "$here/.." && pwd)"

# core type and the CPU flags its kernels need (/proc/cpuinfo names)
cores=(
    "Haswell avx2 fma"
    "SkylakeX avx512f avx512bw avx512dq avx512vl"
    "plc avx512f"
)
flags=" $(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | cut -d: -f2) "
pass=0; fail=0; skip=0
for entry in "${cores[@]}"; do
    read -r core need <<<"$entry"
    missing=""
    for f in $need; do
        case "$flags" in *" $f "*) ;; *) missing="$missing $f" ;; esac
    done
    if [ -n "$missing" ]; then
        skip=$((skip + 1))
        echo "SKIP  determinism, sgemm $core: this CPU lacks$missing"
        continue
    fi
    log=$(mktemp)
    ok=1
    # OPENBLAS_VERBOSE=2 makes OpenBLAS name the core it loaded: a core
    # type it does not take must not pass unnoticed
    if [ "$core" = plc ]; then
        (cd "$here" && env -u PLC_GEMM "$PLC_BIN/unit_tests" kernels_threads) >"$log" 2>&1 || ok=0
        env -u PLC_GEMM bash "$here/e2e/train_determinism.sh" >>"$log" 2>&1 || ok=0
    else
        (cd "$here" && PLC_GEMM=openblas OPENBLAS_CORETYPE=$core OPENBLAS_VERBOSE=2 "$PLC_BIN/unit_tests" kernels_threads) \
            >"$log" 2>&1 || ok=0
        grep -q "^Core: $core\$" "$log" || { ok=0; echo "OpenBLAS did not load core $core" >>"$log"; }
        PLC_GEMM=openblas OPENBLAS_CORETYPE=$core bash "$here/e2e/train_determinism.sh" >>"$log" 2>&1 || ok=0
    fi
    if [ "$ok" = 1 ]; then
        pass=$((pass + 1))
        echo "PASS  determinism, sgemm $core (unit kernels_threads, e2e train_determinism)"
    else
        fail=$((fail + 1))
        echo "FAIL  determinism, sgemm $core"
        sed 's/^/      | /' "$log" | tail -n 40
    fi
    rm -f "$log"
done
echo "determinism: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
