#!/bin/sh
# `make bench-decoders`: attnscope's forward with full capture on random models of three
# decoders' shapes (attnscope bench --shape qwen2.5-0.5b|smollm2-135m|llama-3.2-1b) next to
# the PyTorch peer of the same shapes (bench/peer_torch.py: transformers' eager LlamaModel /
# Qwen2Model with output_attentions), at 128 and 512 tokens, measured in the same run (compare
# the ratios of one run: the machine is shared).  Writes JSON and results.md under
# BUILD/bench-decoders/.  Usage: tools/bench-decoders.sh [BUILD]
#
# Both tools at their best setup: threads = cores (ATN_BENCH_THREADS), OpenBLAS choosing its
# own kernel (OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset for the measured commands only),
# glibc's malloc keeping freed memory (see tools/bench.sh: torch otherwise faults every
# freed temporary in again), each command in its own session at autogroup nice -19 when run
# as root (as ATN_BENCH_PRIORITY=1 does in tools/bench.sh), so that other sessions' builds
# take little of the cores mid-measurement.
# Environment: ATN_BENCH_THREADS (cores), ATN_BENCH_SHAPES ("smollm2-135m qwen2.5-0.5b
# llama-3.2-1b"), ATN_BENCH_LENGTHS ("128,512"), ATN_BENCH_REPEAT (3), ATN_BENCH_NO_TORCH=1.
# Memory: llama-3.2-1b holds 4.9 GB of F32 weights in each tool (one at a time).
set -u
BUILD=${1:-build}
EXE="$BUILD/app/attnscope"
OUT="$BUILD/bench-decoders"
SRC=$(cd "$(dirname "$0")/.." && pwd)
PY=/usr/bin/python3
T=${ATN_BENCH_THREADS:-$(nproc)}
SHAPES=${ATN_BENCH_SHAPES:-"smollm2-135m qwen2.5-0.5b llama-3.2-1b"}
LENGTHS=${ATN_BENCH_LENGTHS:-"128,512"}
R=${ATN_BENCH_REPEAT:-3}
export GLIBC_TUNABLES="${GLIBC_TUNABLES:+$GLIBC_TUNABLES:}glibc.malloc.mmap_threshold=4294967295:glibc.malloc.trim_threshold=4294967295"
BOOST=0
if command -v setsid >/dev/null 2>&1 && setsid -w sh -c 'echo -19 >/proc/self/autogroup' 2>/dev/null &&
    nice -n -19 true 2>/dev/null; then
    BOOST=1
fi
# measured COMMAND...: one measurement, OpenBLAS on its own kernel, boosted when possible, at most 30 minutes
measured() {
    if [ $BOOST = 1 ]; then
        env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE setsid -w sh -c \
            'echo -19 >/proc/self/autogroup; exec nice -n -19 timeout 1800 "$@"' sh "$@"
    else
        env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE timeout 1800 "$@"
    fi
}
if [ ! -x "$EXE" ]; then
    echo "bench-decoders: $EXE is not built (run make build first)" >&2
    exit 1
fi
rm -rf "$OUT"
mkdir -p "$OUT"
echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) cores;" \
    "load average $(cut -d' ' -f1-3 /proc/loadavg); threads $T; priority $([ $BOOST = 1 ] && echo 'autogroup nice -19' || echo normal)"
have_torch=0
if [ "${ATN_BENCH_NO_TORCH:-0}" != 1 ] && "$PY" -c 'import torch, numpy' 2>/dev/null; then
    have_torch=1
fi
for shape in $SHAPES; do
    printf '%s, tokens %s: attnscope' "$shape" "$LENGTHS"
    measured "$EXE" bench --shape "$shape" --length "$LENGTHS" --repeat "$R" --threads "$T" --json --no-bandwidth \
        --no-capture >"$OUT/attnscope-$shape.json" 2>"$OUT/attnscope-$shape.err" ||
        { echo " FAILED:"; cat "$OUT/attnscope-$shape.err"; }
    if [ $have_torch = 1 ]; then
        printf ', torch'
        OPENBLAS_NUM_THREADS=$T OMP_WAIT_POLICY=PASSIVE measured "$PY" "$SRC/bench/peer_torch.py" --shape "$shape" \
            --length "$LENGTHS" --repeat "$R" --threads "$T" --json >"$OUT/torch-$shape.json" 2>"$OUT/torch-$shape.err" ||
            echo " (torch failed: $(tail -1 "$OUT/torch-$shape.err"))"
    fi
    echo
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" "$SRC/bench/decoder_report.py" "$OUT"
