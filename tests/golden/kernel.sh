#!/bin/sh
# The kind of machine, as far as the bits of a forward pass go: the OpenBLAS kernel in use
# (as the binary $1 reports it: OPENBLAS_CORETYPE included) and whether the engine's packed
# AVX-512 path runs, both from `attnscope devices`: the latter is the engine's one CPU probe
# (atn_cpu_features: AVX-512F with its registers saved by the OS, and ATTNSCOPE_CPU_KERNELS
# not "blas"), so the script and the engine cannot disagree.
out=$("$1" devices 2>/dev/null)
echo "$out" | sed -n 's/.*kernel \([A-Za-z0-9]*\).*/openblas kernel \1/p'
if echo "$out" | grep -q '^cpu  *features:.*packed AVX-512 path: yes'; then
    echo "packed avx512 yes"
else
    echo "packed avx512 no"
fi
