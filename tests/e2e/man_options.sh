#!/usr/bin/env bash
# The manual pages name the options --help names, and no others (issue 39).
# For each plc command, the options of `plc CMD --help` (its lines that
# start with "  -") against those man/plc.1 gives the command: its
# SYNOPSIS entry (from ".B plc CMD" to ".br"), its paragraph under COMMANDS
# (from ".B CMD" after a .TP to the next .TP, .PP or .SH), and the tags of
# the GATES and SPEC OPTIONS sections where the entry names [GATES] or
# [SPEC-OPTIONS]. -h/--help is left out of the plc comparison: every
# command takes it and the page says so once. For plrun, the options of
# `plrun --help` against the tags of man/plrun.1's OPTIONS section (the
# line after each .TP); its SYNOPSIS may name no option --help lacks (the
# launchers' own, on the mpirun and srun lines, aside).
# Options are the -x and --long words of the groff request lines (\- read
# as -, font escapes dropped). Every option one side has and the other
# lacks is named; the script fails if there is any.
set -u
export LC_ALL=C # sort and comm agree on the order
. "$(dirname "$0")/plc_lib.bash"
PLRUN=$PLC_BIN/plrun
MAN_PLC=$PLC_ROOT/man/plc.1
MAN_PLRUN=$PLC_ROOT/man/plrun.1

# the option words of text on stdin, one a line, sorted
opt_words() {
    sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' |
        grep -oE '(^|[^A-Za-z0-9_-])--?[A-Za-z][A-Za-z0-9-]*' | sed -E 's/^[^-]+//' | sort -u
}
# the options of a --help text on stdin: the first column of "  -" lines
help_opts() { grep -E '^  -' | sed -E 's/^  //; s/  .*//' | opt_words; }
# the request lines of one section of a man page ($2 the .SH title)
man_section() {
    awk -v t="$2" '/^\.SH/ { on = ($0 == ".SH " t || $0 == ".SH \"" t "\"") ; next } on' "$1"
}
# the line after each .TP of a section
tp_tags() { man_section "$1" "$2" | awk 'tag { print; tag = 0 } /^\.TP/ { tag = 1 }'; }
# plc CMD's SYNOPSIS entry
plc_synopsis() {
    man_section "$MAN_PLC" SYNOPSIS |
        awk -v c="$1" '$0 == ".B plc " c { on = 1; print; next } on && /^\.br/ { on = 0 } on'
}
# plc CMD's paragraph under COMMANDS
plc_paragraph() {
    man_section "$MAN_PLC" COMMANDS |
        awk -v c="$1" 'on && /^\.(TP|PP|SH)/ { on = 0 } prev && $0 == ".B " c { on = 1 } { prev = /^\.TP/ } on'
}
# prints every option one list ($1) has and the other ($2) lacks; $3 the subject
compare() {
    local bad=0 o
    for o in $(comm -23 "$1" "$2"); do echo "$3: --help has $o, the man page lacks it"; bad=1; done
    for o in $(comm -13 "$1" "$2"); do echo "$3: the man page has $o, --help lacks it"; bad=1; done
    return $bad
}

fails=0
commands=$("$PLC" --help | awk '/^commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }')
[ -n "$commands" ] || die "no commands in plc --help"
for c in $commands; do
    "$PLC" "$c" --help > "$tmp/help.txt" || die "plc $c --help failed"
    help_opts < "$tmp/help.txt" | grep -vxE -- '-h|--help' > "$tmp/help.opts"
    [ -s "$tmp/help.opts" ] || die "plc $c --help lists no option"
    plc_synopsis "$c" > "$tmp/man.txt"
    [ -s "$tmp/man.txt" ] || { echo "plc $c: no SYNOPSIS entry '.B plc $c' in man/plc.1"; fails=1; }
    plc_paragraph "$c" > "$tmp/para.txt"
    [ -s "$tmp/para.txt" ] || { echo "plc $c: no paragraph '.B $c' under COMMANDS in man/plc.1"; fails=1; }
    cat "$tmp/para.txt" >> "$tmp/man.txt"
    grep -q 'GATES' "$tmp/man.txt" && tp_tags "$MAN_PLC" GATES >> "$tmp/man.txt"
    grep -q 'SPEC-OPTIONS' "$tmp/man.txt" && tp_tags "$MAN_PLC" "SPEC OPTIONS" >> "$tmp/man.txt"
    grep '^\.' "$tmp/man.txt" | opt_words | grep -vxE -- '-h|--help' > "$tmp/man.opts"
    compare "$tmp/help.opts" "$tmp/man.opts" "plc $c" || fails=1
done

"$PLRUN" --help > "$tmp/help.txt" || die "plrun --help failed"
help_opts < "$tmp/help.txt" > "$tmp/help.opts"
[ -s "$tmp/help.opts" ] || die "plrun --help lists no option"
tp_tags "$MAN_PLRUN" OPTIONS | grep '^\.' | opt_words > "$tmp/man.opts"
compare "$tmp/help.opts" "$tmp/man.opts" "plrun" || fails=1
man_section "$MAN_PLRUN" SYNOPSIS | grep '^\.' | grep -vE '^\.B (mpirun|srun) ' | opt_words > "$tmp/syn.opts"
for o in $(comm -13 "$tmp/help.opts" "$tmp/syn.opts"); do
    echo "plrun: the man page's SYNOPSIS has $o, --help lacks it"; fails=1
done

[ "$fails" -eq 0 ] || die "the man pages and --help disagree (above)"
echo "man_options e2e: ok"
