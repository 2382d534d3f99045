#!/bin/sh
# Runs every golden case with the attnscope binary $1 from the source root $2 and writes
# the results into folder $3 (stdout of a case without OUT goes to the file itself).
set -u
bin="$1"; root="$2"; out="$3"
. "$root/tests/golden/cases.sh"
mkdir -p "$out"
cd "$root" || exit 2
status=0
golden_cases | while IFS='|' read -r name args; do
    [ -n "$name" ] || continue
    case "$args" in
        *OUT*) cmd=$(printf '%s' "$args" | sed "s|OUT|'$out/$name'|"); eval "\"$bin\" $cmd" >/dev/null 2>"$out/$name.err" ;;
        *) eval "\"$bin\" $args" >"$out/$name" 2>"$out/$name.err" ;;
    esac || { echo "golden case $name failed: $(cat "$out/$name.err")" >&2; exit 1; }
    rm -f "$out/$name.err"
done
