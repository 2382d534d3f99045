#!/bin/sh
# The kind of machine, as far as the bits of a forward pass go: the OpenBLAS kernel in use
# (as the binary $1 reports it: OPENBLAS_CORETYPE included) and whether the engine's packed
# AVX-512 path runs.  The latter mirrors atn_cpu_kernels_usable (engine/forward/cpu-kernels.c):
# the CPU has AVX-512F and the OS saves its registers (Linux lists avx512f in /proc/cpuinfo
# only then), and ATTNSCOPE_CPU_KERNELS is not "blas".
"$1" devices 2>/dev/null | sed -n 's/.*kernel \([A-Za-z0-9]*\).*/openblas kernel \1/p'
if grep -q -w avx512f /proc/cpuinfo 2>/dev/null && [ "${ATTNSCOPE_CPU_KERNELS:-}" != blas ]; then
    echo "packed avx512 yes"
else
    echo "packed avx512 no"
fi
