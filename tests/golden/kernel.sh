#!/bin/sh
# What decides the bits of a forward pass on this machine: the OpenBLAS kernel and the
# CPU's vector extensions (the engine's own kernels pick their code path from them).
"$1" devices 2>/dev/null | sed -n 's/.*kernel \([A-Za-z0-9]*\).*/openblas kernel \1/p'
grep -o -w 'avx2\|fma\|avx512f\|avx512bw\|avx512vl\|avx512_bf16\|avx512_fp16' /proc/cpuinfo 2>/dev/null | sort -u | tr '\n' ' '
echo
