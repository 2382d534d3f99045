#!/bin/sh
# The numbers the app shows do not change unless a commit means them to: every case in
# cases.sh, run with this build, is compared with the outputs recorded in expected/ (by
# tests/golden/make.sh from an earlier commit).
# Bits depend on the OpenBLAS kernel and on whether the engine's packed AVX-512 path runs,
# so expected/ holds one recorded set per kind of machine (expected/<set>/, its KERNEL
# saying which; kernel.sh tells this machine's).  The set of this kind is compared bit for
# bit.  On a kind with no set (another CPU, OPENBLAS_CORETYPE set to another kernel,
# ATTNSCOPE_CPU_KERNELS=blas on an AVX-512 machine) the nearest set (the same packed path,
# else any) is compared within TOL instead (compare-near.py: |a - b| <= TOL max(1, |a|, |b|),
# the text and integers exact); so is a build other than release or a sanitizer build,
# which compiles the arithmetic differently (on the AVX-512 VM an ASan build's similarity
# differed in the last bits).  Every other set is also compared within TOL: it may hold
# cases the compared set lacks.  TOL is 1e-5, about 10 times the largest difference
# between the two sets recorded so far (1.1e-6, in albert-pair.npy and demo-gpt2.npy).
# A set may hold fewer files than cases.sh has (outputs that changed since it was recorded
# on a machine not at hand are dropped from it): only its files are compared.
# ATN_GOLDEN_KIND, when set, stands for kernel.sh's answer (to try a kind with no set:
# ATN_GOLDEN_KIND="openblas kernel Haswell
# packed avx512 no").
# Usage: test-golden.sh ATTNSCOPE SOURCE_ROOT [BUILDTYPE [SANITIZE]]
set -u
bin="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; root="$2"
buildtype="${3:-release}"; sanitize="${4:-none}"
TOL=1e-5
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
here=${ATN_GOLDEN_KIND:-$("$root/tests/golden/kernel.sh" "$bin")}
packed=$(echo "$here" | grep '^packed')
exact=""; near=""; any=""
for k in "$root"/tests/golden/expected/*/KERNEL; do
    [ -f "$k" ] || continue
    d=$(dirname "$k")
    [ -n "$any" ] || any=$d
    [ "$here" = "$(cat "$k")" ] && exact=$d
    [ -z "$near" ] && grep -q -x "$packed" "$k" && near=$d
done
[ -n "$near" ] || near=$any
[ -n "$near" ] || { echo "FAIL no recorded set in $root/tests/golden/expected"; exit 1; }
"$root/tests/golden/run-cases.sh" "$bin" "$root" "$tmp/out" || exit 1
fail=0
# near SET WHAT: SET's outputs within TOL (compare-near.py); prints the ones that are not
near() {
    if python3 "$root/tests/golden/compare-near.py" "$1" "$tmp/out" "$TOL" >"$tmp/near"; then
        echo "ok: the $(grep -c '^ok ' "$tmp/near") outputs of $2, $(basename "$1"), within $TOL" \
             "(largest difference $(sed -n 's/.*largest difference \([^ ]*\).*/\1/p' "$tmp/near" | sort -g | tail -1))"
    else
        grep -v '^ok ' "$tmp/near"
        fail=1
    fi
}
if [ -n "$exact" ] && [ "$buildtype" = release ] && [ "$sanitize" = none ]; then
    n=0
    for f in "$exact"/*; do
        name=$(basename "$f"); [ "$name" = KERNEL ] && continue
        n=$((n + 1))
        if ! cmp -s "$f" "$tmp/out/$name"; then
            echo "FAIL $name differs from the recorded output ($(cmp "$f" "$tmp/out/$name" 2>&1 | head -1))"
            fail=1
        fi
    done
    [ "$fail" = 0 ] && echo "ok: $n outputs identical to the ones recorded in $(basename "$exact")"
    compared=$exact
else
    if [ -n "$exact" ]; then
        echo "a $buildtype build with sanitize=$sanitize: the sets come from release builds;" \
             "comparing with $(basename "$exact") within $TOL"
    else
        echo "no recorded set for this kind, '$(echo "$here" | tr '\n' ' ')'; recorded:"
        for k in "$root"/tests/golden/expected/*/KERNEL; do
            echo "  $(basename "$(dirname "$k")"): $(tr '\n' ' ' < "$k")"
        done
        echo "comparing with the nearest, $(basename "$near"), within $TOL"
        exact=$near
    fi
    near "$exact" "the set compared"
    compared=$exact
fi
for k in "$root"/tests/golden/expected/*/KERNEL; do
    d=$(dirname "$k")
    [ "$d" = "$compared" ] && continue
    near "$d" "the other set"
done
exit $fail
