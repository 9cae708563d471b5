#!/usr/bin/env bash
# Exit codes as documented (0 ok, 1 input, usage or environment, 2 no layout,
# 3 internal error only): errors a user causes never exit 3. plc compile to
# a missing directory, onto a directory or a device (never replaced), and out of memory while
# compiling (under a small address-space limit), exit 1 with a message.
set -u
. "$(dirname "$0")/plrun_lib.bash"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
expect() {
    local name=$1 code=$2 pattern=$3; shift 3
    "$@" >"$tmp/out" 2>&1
    local rc=$?
    if [ "$rc" -ne "$code" ] || ! grep -q -- "$pattern" "$tmp/out"; then
        echo "FAIL $name (exit $rc, expected $code):"; sed 's/^/    /' "$tmp/out" | tail -n 8; fails=$((fails + 1))
    else
        echo "ok   $name: exit $rc: $(grep -m1 -- "$pattern" "$tmp/out")"
    fi
}
tiny=$PLC_ROOT/examples/tiny.plan
expect "compile into a missing directory" 1 "error" "$PLC" compile "$tiny" -o /nonexistent/x.bin
expect "compile onto a directory" 1 "is a directory" "$PLC" compile "$tiny" -o "$tmp"
expect "compile onto /dev/null" 1 "not a regular file" "$PLC" compile "$tiny" -o /dev/null
[ -c /dev/null ] || die "/dev/null was replaced"
expect "compile, no layout fits" 2 "no layout fits\|does not fit" "$PLC" compile "$tiny" -D cluster.memory="1 MiB"
case "$PLC_BIN" in
*san*) echo "skip out of memory: the sanitizers reserve more address space than the limit" ;;
# 20 MB of address space: plc reaches the lowering within 8 MB, and
# compiling Llama 7B peaks at about 31 MB resident (37 MB before the
# lowering kept its tables instead of copying them)
*) expect "out of memory while compiling" 1 "plc compile: error: out of memory while" bash -c "ulimit -v 20000; exec \"$PLC\" compile \"$PLC_ROOT/examples/llama7b-a100.plan\" -o \"$tmp/x.bin\"" ;;
esac
[ "$fails" -eq 0 ] || die "$fails exit code(s) wrong"
echo "exit codes: every case as documented"
