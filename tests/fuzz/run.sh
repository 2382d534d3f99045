#!/bin/sh
# Runs each fuzz target for FUZZ_SECONDS (default 60), one at a time and nice'd, with its
# seed corpus (tests/fuzz/corpus/<target>, read only) and a working corpus in
# OUT/corpus/<target>.  Crash inputs land in OUT/crashes/; a line per run is appended to
# OUT/fuzz-stats.txt (date, target, seconds, executions, result).  Exit 1 if any crashed.
# Usage: tests/fuzz/run.sh [TARGET...]        (OUT=build-fuzz, FUZZ_SECONDS=60)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/build-fuzz}
SECONDS_EACH=${FUZZ_SECONDS:-60}
"$ROOT/tests/fuzz/build.sh" "$OUT" || exit 1
TARGETS=${*:-$(cd "$ROOT/tests/fuzz" && ls fuzz-*.c | sed 's/^fuzz-//; s/\.c$//')}
mkdir -p "$OUT/crashes" "$OUT/logs"
failed=0
for t in $TARGETS; do
  case $t in
    safetensors|attention-file|config|index|toy|tok-bpe|tok-unigram|tokcfg) dict="-dict=$ROOT/tests/fuzz/json.dict" ;;
    vocab|tokenize|corpus) dict="-dict=$ROOT/tests/fuzz/text.dict" ;;
    cli-options) dict="-dict=$ROOT/tests/fuzz/cli.dict" ;;
    *) dict="" ;;
  esac
  mkdir -p "$OUT/corpus/$t"
  log="$OUT/logs/$t.log"
  start=$(date +%s)
  # OpenBLAS threads would only fight the fuzzer for the cores
  OPENBLAS_NUM_THREADS=1 OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-Haswell} \
  ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1} UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1} \
    nice -n 15 "$OUT/fuzz-$t" $dict -max_total_time="$SECONDS_EACH" -timeout=20 -print_final_stats=1 \
      -artifact_prefix="$OUT/crashes/$t-" "$OUT/corpus/$t" "$ROOT/tests/fuzz/corpus/$t" >"$log" 2>&1
  rc=$?
  runs=$(sed -n 's/^Done \([0-9]*\) runs.*/\1/p' "$log" | tail -n 1)
  secs=$(( $(date +%s) - start ))
  if [ $rc -eq 0 ]; then result=ok; else result="CRASH (see $log)"; failed=1; fi
  echo "$(date -u +%Y-%m-%dT%H:%M:%SZ) $t ${secs}s ${runs:-0} runs $result" | tee -a "$OUT/fuzz-stats.txt"
done
exit $failed
