#!/bin/sh
# The numbers the app shows do not change unless a commit means them to: every case in
# cases.sh, run with this build, must give exactly the bytes recorded in expected/ (by
# tests/golden/make.sh from an earlier commit).  Captures are compared bit for bit.
# Bits depend on the BLAS kernel and the CPU's vector extensions, so expected/ holds one
# recorded set per kind of machine (expected/<set>/, its KERNEL line saying which); the set
# whose KERNEL matches this machine is compared, and with none the test is skipped (exit 77)
# and says why.  A set may hold fewer files than cases.sh has (outputs that changed since it
# was recorded on a machine not at hand are dropped from it): only its files are compared.
# The sets come from release builds: another build type or a sanitizer build compiles the
# arithmetic differently (on the AVX-512 VM an ASan build's similarity differed in the last
# bits), so there the cases run, for the sanitizers' checks, and nothing is compared (exit 77).
# Usage: test-golden.sh ATTNSCOPE SOURCE_ROOT [BUILDTYPE [SANITIZE]]
set -u
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; root="$2"
buildtype="${3:-release}"; sanitize="${4:-none}"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
if [ "$buildtype" != release ] || [ "$sanitize" != none ]; then
    "$root/tests/golden/run-cases.sh" "$bin" "$root" "$tmp/out" || exit 1
    echo "skip: ran every case, compared nothing: the sets were recorded from release builds, this is" \
         "a $buildtype build with sanitize=$sanitize"
    exit 77
fi
here=$("$root/tests/golden/kernel.sh" "$bin")
exp=""
for k in "$root"/tests/golden/expected/*/KERNEL; do
    [ -f "$k" ] && [ "$here" = "$(cat "$k")" ] && exp=$(dirname "$k")
done
if [ -z "$exp" ]; then
    echo "skip: no recorded set for this machine, '$(echo "$here" | tr '\n' ' ')'; recorded on:"
    for k in "$root"/tests/golden/expected/*/KERNEL; do
        echo "  $(basename "$(dirname "$k")"): $(tr '\n' ' ' < "$k")"
    done
    exit 77
fi
"$root/tests/golden/run-cases.sh" "$bin" "$root" "$tmp/out" || exit 1
fail=0; n=0
for f in "$exp"/*; do
    name=$(basename "$f"); [ "$name" = KERNEL ] && continue
    n=$((n + 1))
    if ! cmp -s "$f" "$tmp/out/$name"; then
        echo "FAIL $name differs from the recorded output ($(cmp "$f" "$tmp/out/$name" 2>&1 | head -1))"
        fail=1
    fi
done
[ "$fail" = 0 ] && echo "ok: $n outputs identical to the ones recorded in $(basename "$exp")"
exit $fail
