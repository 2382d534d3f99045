#!/bin/sh
# Records the golden outputs from a build: tests/golden/make.sh [build folder].
# Run it only when a change is meant to change the numbers, and say so in the commit.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
build="${1:-$root/build}"
rm -rf "$root/tests/golden/expected"
"$root/tests/golden/run-cases.sh" "$build/app/attnscope" "$root" "$root/tests/golden/expected"
"$root/tests/golden/kernel.sh" "$build/app/attnscope" > "$root/tests/golden/expected/KERNEL"
echo "recorded $(ls "$root/tests/golden/expected" | wc -l) files"
