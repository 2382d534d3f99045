#!/bin/sh
# The GPU check, in one go, for a machine with an NVIDIA GPU (sm_75 or newer) and nvcc:
#   1. builds with the CUDA module (release, -Dcuda=enabled) in $BUILD (default build-gpu)
#   2. lists the devices and runs the cuda test suite; then cuda-agreement: its CPU half
#      (every kernel of kernels.cu on the CPU launcher against the reference ops) and its
#      device half, which compares the GPU's capture with the CPU's (1e-4 in fp32; BERT
#      shapes, toy fixtures, GPT-2, ALBERT, ELECTRA, the what-if terms) and prints how far
#      fp16 / bf16 move each head's map (the device half must PASS here, not SKIP)
#   3. times forward passes of random-weight bert-base and bert-large shapes at 128 and 512
#      tokens: the CPU with 2 OpenBLAS threads (the 2-core CPU of docs/ARCHITECTURE.md, "Targets"), the GPU in fp32
#      with the full capture copied to page-locked host memory, fp32 without the capture,
#      fp16 with it, and fp32 copying to ordinary (pageable) memory for comparison
#   4. prints a table to paste into docs/PERFORMANCE.md ("GPU")
# Usage: tools/gpu-check.sh [--quick] [--lent]
#   --quick: 128 tokens only, fewer repetitions
#   --lent:  for a machine lent for minutes (about 15 in all, start-up included): build only
#            the program, the module and the two test programs (ninja -j$(nproc)), skip the
#            rest of the cuda suite, CPU timings with one repetition; run it under a time
#            limit that leaves room for one rerun, e.g. `timeout 540 tools/gpu-check.sh --lent`
# Everything it prints is also written to $BUILD/gpu-check.txt.  Takes about 3-6 minutes
# on a 16-core machine, most of it the CPU timings of bert-large.
set -u
BUILD=${BUILD:-build-gpu}
QUICK=0
LENT=0
for arg in "$@"; do
  case "$arg" in
    --quick) QUICK=1 ;;
    --lent) LENT=1 ;;
    *) echo "usage: tools/gpu-check.sh [--quick] [--lent]" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.." || exit 1
mkdir -p "$BUILD"
LOG="$BUILD/gpu-check.txt"
: >"$LOG"
say() { echo "$*" | tee -a "$LOG"; }
step() { say ""; say "== $* ($(date +%H:%M:%S))"; }

step "machine"
command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version,compute_cap \
  --format=csv 2>&1 | tee -a "$LOG"
say "CPU: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2)"
for tool in meson ninja; do
  command -v $tool >/dev/null || { say "gpu-check: $tool is missing (tools/install-deps.sh installs it)"; exit 1; }
done

step "build ($BUILD)"
if [ ! -f "$BUILD/build.ninja" ]; then
  meson setup "$BUILD" --buildtype=release -Dcuda=enabled 2>&1 | tail -5 | tee -a "$LOG" || exit 1
fi
if [ $LENT = 1 ]; then
  ninja -C "$BUILD" -j"$(nproc)" app/attnscope engine/cuda/attnscope-cuda.so tests/cuda/test-cuda-agreement \
    tests/cuda/bench-cuda 2>&1 | tail -3 | tee -a "$LOG"
else
  ninja -C "$BUILD" 2>&1 | tail -3 | tee -a "$LOG"
fi
[ -f "$BUILD/engine/cuda/attnscope-cuda.so" ] || { say "gpu-check: the CUDA module was not built"; exit 1; }

step "devices"
"$BUILD/app/attnscope" devices 2>&1 | tee -a "$LOG"

if [ $LENT = 0 ]; then
  step "tests (suite cuda)"
  meson test -C "$BUILD" --suite cuda --no-rebuild --print-errorlogs 2>&1 | grep -E "^ *[0-9]+/|^(Ok|Fail|Skipped)" \
    | tee -a "$LOG"
fi

step "GPU against CPU (the agreement test's report: CPU half, then device half)"
export ATTNSCOPE_DATADIR="$PWD/data" ATN_SOURCE_ROOT="$PWD"
"$BUILD/tests/cuda/test-cuda-agreement" >"$BUILD/agreement.txt" 2>&1
AGREE=$?
grep -E "^GPU|^module|^CPU half|cpu launcher|fp32 |fp16|bf16|reused|cancel|NaN|threads|checks|device half|SKIP|CHECK" \
  "$BUILD/agreement.txt" | tee -a "$LOG"
# the per-head fp16 / bf16 differences, for docs/PERFORMANCE.md ("GPU", "Precision")
grep -A3 -E "^  (fp16|bf16) .*per head" "$BUILD/agreement.txt" >"$BUILD/precision-per-head.txt"
say "per-head fp16/bf16 differences: $BUILD/precision-per-head.txt"
if grep -q "device half: NOT RUN" "$BUILD/agreement.txt"; then
  say "agreement: the device half did NOT RUN -- no usable GPU; stopping (the timings would be CPU only)"
  exit 1
fi
case $AGREE in
  0) say "agreement: PASS (CPU half and device half)" ;;
  77) say "agreement: SKIPPED -- no usable GPU; stopping"; exit 1 ;;
  *) say "agreement: FAIL (exit $AGREE); see $BUILD/agreement.txt" ;;
esac

step "timings (median ms per forward)"
B="$BUILD/tests/cuda/bench-cuda"
if [ $QUICK = 1 ]; then SIZES="128"; GR=10; else SIZES="128 512"; GR=30; fi
ROWS=""
for shape in base large; do
  for n in $SIZES; do
    case "$shape-$n" in
      base-128) CR=5 ;; base-512) CR=3 ;; large-128) CR=3 ;; *) CR=2 ;;
    esac
    [ $QUICK = 1 ] && CR=2
    [ $LENT = 1 ] && CR=1
    ms() { echo "$1" | awk '{print $6}'; }
    cpu=$(OPENBLAS_NUM_THREADS=2 "$B" --shape $shape --tokens $n --device cpu --reps $CR 2>>"$LOG")
    say "$cpu"
    g32=$("$B" --shape $shape --tokens $n --device cuda --reps $GR 2>>"$LOG"); say "$g32"
    g32p=$("$B" --shape $shape --tokens $n --device cuda --reps $GR --pageable 2>>"$LOG"); say "$g32p"
    g32n=$("$B" --shape $shape --tokens $n --device cuda --reps $GR --no-capture 2>>"$LOG"); say "$g32n"
    g16=$("$B" --shape $shape --tokens $n --device cuda --reps $GR --precision fp16 2>>"$LOG"); say "$g16"
    ROWS="$ROWS
bert-$shape $n $(ms "$cpu") $(ms "$g32") $(ms "$g32n") $(ms "$g16") $(ms "$g32p")"
  done
done

step "table"
{
  printf '%s%s\n' "| shape | tokens | CPU, 2 threads (ms) | GPU fp32, full capture (ms) | speed-up " \
    "| GPU fp32, no capture (ms) | GPU fp16, full capture (ms) | GPU fp32, capture to pageable memory (ms) |"
  echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
  echo "$ROWS" | awk 'NF == 7 { s = ($4 > 0) ? sprintf("%.0fx", $3 / $4) : "?";
    printf("| %s | %s | %s | %s | %s | %s | %s | %s |\n", $1, $2, $3, $4, s, $5, $6, $7) }'
} | tee -a "$LOG"
say ""
say "targets (docs/ARCHITECTURE.md, Targets): bert-base 512 full capture >= 20x the 2-thread CPU; bert-large 512 < 30 ms"
say "log: $LOG"
[ $AGREE = 0 ]
