# plrun_lib.bash: helpers shared by the plrun end-to-end tests (sourced; not
# a test itself, so it does not end in .sh). Expects PLC_BIN, PLC_ROOT and
# PLC_MPIRUN from tests/run_e2e.sh.
: "${PLC_BIN:?PLC_BIN must name the directory holding plc and plrun}"
: "${PLC_ROOT:?PLC_ROOT must name the repository root}"
PLC_MPIRUN=${PLC_MPIRUN:-mpirun --allow-run-as-root --oversubscribe}
PLC=$PLC_BIN/plc
PLRUN=$PLC_BIN/plrun
# one thread per rank: the CI machine has 2 cores and up to 8 ranks
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}

# under the sanitizers: full malloc stacks, so that LeakSanitizer can match
# Open MPI's own exit-time leaks against tests/lsan.supp (the fast unwinder
# stops inside MPI's frame-pointer-less code and leaves them unnamed)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"

skip() { echo "$*"; exit 77; }
die() { echo "FAIL: $*"; exit 1; }

need_mpi() {
    command -v "${PLC_MPIRUN%% *}" >/dev/null 2>&1 || skip "skipped: ${PLC_MPIRUN%% *} not found"
}

# compile_tiny OUT DP: examples/tiny.plan compiled for DP data-parallel ranks
# (tp = pp = cp = 1) into the plan file OUT
compile_tiny() {
    "$PLC" compile "$PLC_ROOT/examples/tiny.plan" -D cluster.gpus_per_node="$2" -D layout.dp="$2" -D layout.tp=1 \
        -D layout.pp=1 -D layout.cp=1 -o "$1" || die "plc compile failed"
}

# run_ranks N ARGS...: plrun on N ranks (directly when N is 1)
run_ranks() {
    local n=$1; shift
    if [ "$n" -eq 1 ]; then "$PLRUN" "$@"; else $PLC_MPIRUN -np "$n" "$PLRUN" "$@"; fi
}

# losses FILE: the "loss" of every JSON line of a --metrics file, as printed
losses() { grep -o '"loss":[^,}]*' "$1" | cut -d: -f2; }

# max_rel_dev A B: largest |a - b| / |b| over the lines of two loss lists;
# "inf" when the lists differ in length
max_rel_dev() {
    paste -d' ' "$1" "$2" | awk -v na="$(wc -l <"$1")" -v nb="$(wc -l <"$2")" '
        { if ($1 == "" || $2 == "" || $1 == "null" || $2 == "null") bad = 1
          d = $1 - $2; if (d < 0) d = -d; r = $2 < 0 ? -$2 : $2; x = d / r; if (x > m) m = x }
        END { if (bad || na != nb || na == 0) print "inf"; else printf "%.3e\n", m }'
}
