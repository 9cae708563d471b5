# plc_lib.bash: the preamble of the plc end-to-end tests (sourced; not a
# test itself, so it does not end in .sh). Checks PLC_BIN and PLC_ROOT
# (tests/run_e2e.sh sets them), names the binary ($PLC), makes the scratch
# directory $tmp (removed on exit) and defines die. The plrun tests use
# plrun_lib.bash instead.
: "${PLC_BIN:?PLC_BIN must name the directory holding plc}"
: "${PLC_ROOT:?PLC_ROOT must name the repository root}"
PLC=$PLC_BIN/plc
# under the sanitizers: full malloc stacks, so that LeakSanitizer matches
# Open MPI's exit-time leaks against tests/lsan.supp (as plrun_lib.bash does)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
die() { echo "FAIL: $*"; exit 1; }
