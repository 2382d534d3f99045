#!/bin/sh
# Records the golden outputs from a build: tests/golden/make.sh [build folder].
# Run it only when a change is meant to change the numbers, and say so in the commit.
# It writes this machine's set, expected/<openblas kernel>-<avx512 where the packed path
# runs, else avx2 or sse2>/ (made or replaced), its KERNEL from kernel.sh; the other machines' sets stay as they are (see README.md).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build="${1:-$root/build}"
kernel=$("$root/tests/golden/kernel.sh" "$build/app/attnscope")
name=$(echo "$kernel" | sed -n 's/^openblas kernel //p' | tr 'A-Z' 'a-z')
case "$kernel" in
    *"packed avx512 yes"*) vec=avx512 ;;
    *) if "$build/app/attnscope" devices 2>/dev/null | grep -q '^cpu  *features:.* avx2\b'; then
           vec=avx2; else vec=sse2; fi ;;
esac
set_dir="$root/tests/golden/expected/${name:-unknown}-$vec"
rm -rf "$set_dir"
"$root/tests/golden/run-cases.sh" "$build/app/attnscope" "$root" "$set_dir"
echo "$kernel" > "$set_dir/KERNEL"
echo "recorded $(ls "$set_dir" | wc -l) files in $set_dir"
