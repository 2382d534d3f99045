#!/bin/sh
# The numbers the app shows do not change unless a commit means them to: every case in
# cases.sh, run with this build, must give exactly the bytes recorded in expected/ (by
# tests/golden/make.sh from an earlier commit).  Captures are compared bit for bit.
# Bits depend on the BLAS kernel and the CPU's vector extensions: on a machine whose
# KERNEL line differs from the recorded one the test is skipped (exit 77) and says why.
set -u
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; root="$2"
exp="$root/tests/golden/expected"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
here=$("$root/tests/golden/kernel.sh" "$bin")
if [ "$here" != "$(cat "$exp/KERNEL")" ]; then
    echo "skip: recorded on '$(cat "$exp/KERNEL" | tr '\n' ' ')', this machine is '$(echo "$here" | tr '\n' ' ')'"
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
[ "$fail" = 0 ] && echo "ok: $n outputs identical to the recorded ones"
exit $fail
