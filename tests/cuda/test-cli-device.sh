#!/bin/sh
# --device on the command line when the GPU cannot be used, one case per invocation:
#   --device cuda exits 2 with a message naming the problem; --device auto writes exactly
#   what --device cpu writes and says once that it ran on the CPU, and why (the engine's
#   atn_run_fallback_reason, in parentheses).
# Usage: test-cli-device.sh ATTNSCOPE CASE [MODULE]
#   MODULE: the real CUDA module (nodevice case) or the mock one (mock cases).
set -u
A="$1"
CASE="$2"
MOD="${3:-}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL ($CASE): $*" >&2; exit 1; }
# expect_error CODE PATTERN cmd...: exit code CODE and PATTERN (grep -E) on stderr
expect_error() {
  code=$1; pat=$2; shift 2
  "$@" >"$T/out" 2>"$T/err"; rc=$?
  [ "$rc" = "$code" ] || fail "exit $rc, expected $code: $* ; stderr: $(cat "$T/err")"
  grep -Eq -- "$pat" "$T/err" || fail "stderr lacks '$pat': $(cat "$T/err")"
  grep -qi "segmentation\|abort\|sanitizer" "$T/err" && fail "crash report: $(cat "$T/err")"
  cat "$T/err" >&2
  return 0
}
# auto_is_cpu ARGS...: --device auto gives the CPU's bytes and one notice; with WHY set
# (grep -E), the notice's reason must match it
auto_is_cpu() {
  "$A" run "$@" --device cpu -o "$T/cpu.npy" 2>"$T/err" || fail "cpu run: $(cat "$T/err")"
  "$A" run "$@" --device auto -o "$T/auto.npy" 2>"$T/err" || fail "auto run: $(cat "$T/err")"
  cmp -s "$T/cpu.npy" "$T/auto.npy" || fail "auto differs from cpu for $*"
  n=$(grep -c "no usable GPU; running on the CPU" "$T/err")
  [ "$n" = 1 ] || fail "expected one notice, got $n: $(cat "$T/err")"
  if [ -n "${WHY:-}" ]; then
    grep -Eq "no usable GPU; running on the CPU \(.*($WHY)" "$T/err" || fail "notice lacks the reason '$WHY': $(cat "$T/err")"
  fi
}
WE="--model worked-example --mask 1,1,0"
FX="--model $(dirname "$0")/../reference/fixtures/five-heads-masked.json --mask 1,1,1,1,1,1,0,0,0"

case "$CASE" in
missing)
  export ATTNSCOPE_CUDA_MODULE="$T/nonexistent/attnscope-cuda.so"
  expect_error 2 "CUDA module is missing" "$A" run $WE --device cuda -o "$T/a.npy"
  [ -e "$T/a.npy" ] && fail "output written after a failure"
  expect_error 2 "CUDA module is missing" "$A" trace $WE --layer 0 --head 1 --query 0 --device cuda
  expect_error 2 "CUDA module is missing" "$A" run $WE --device gpu -o "$T/a.json"
  WHY="the CUDA module is missing" auto_is_cpu $WE
  WHY="the CUDA module is missing" auto_is_cpu $FX
  "$A" devices >"$T/out" 2>&1 || fail "devices: $(cat "$T/out")"
  grep -q "^cuda .*not usable: the CUDA module is missing" "$T/out" || fail "devices: $(cat "$T/out")"
  # it says plainly what has run on a GPU (nothing) and what only on the CPU launcher
  grep -q "^cuda    run on a real GPU so far: nothing" "$T/out" || fail "devices: no hardware line: $(cat "$T/out")"
  grep -q "the CPU launcher in the test suite: every kernel of kernels.cu" "$T/out" || fail "devices: $(cat "$T/out")"
  ;;
badmodule)
  printf 'not a shared object\n' >"$T/attnscope-cuda.so"
  export ATTNSCOPE_CUDA_MODULE="$T/attnscope-cuda.so"
  expect_error 2 "could not be loaded" "$A" run $WE --device cuda -o "$T/a.npy"
  WHY="could not be loaded" auto_is_cpu $WE
  ;;
nodevice)
  # the real module; CUDA_VISIBLE_DEVICES="" hides any GPU, so this is "no device" on a
  # GPU machine and "no driver" on one without the NVIDIA driver
  export ATTNSCOPE_CUDA_MODULE="$MOD" CUDA_VISIBLE_DEVICES=
  expect_error 2 "no usable CUDA driver|no CUDA device" "$A" run $WE --device cuda -o "$T/a.npy"
  expect_error 2 "no usable CUDA driver|no CUDA device" "$A" trace $FX --layer 1 --head 4 --query 2 --device cuda
  WHY="no usable CUDA driver|no CUDA device" auto_is_cpu $WE
  WHY="no usable CUDA driver|no CUDA device" auto_is_cpu $FX
  "$A" devices >"$T/out" 2>&1 || fail "devices: $(cat "$T/out")"
  grep -Eq "^cuda .*not usable: (no usable CUDA driver|no CUDA device)" "$T/out" || fail "devices: $(cat "$T/out")"
  ;;
mock-run)
  # the CPU stand-in for CUDA: the whole command-line path through the module
  export ATTNSCOPE_CUDA_MODULE="$MOD"
  "$A" run $FX --device cpu -o "$T/cpu.json" 2>"$T/err" || fail "cpu: $(cat "$T/err")"
  "$A" run $FX --device cuda -o "$T/gpu.json" 2>"$T/err" || fail "cuda: $(cat "$T/err")"
  grep -q "running on the CPU" "$T/err" && fail "cuda run says it ran on the CPU"
  "$A" run $FX --device auto -o "$T/auto.json" 2>"$T/err" || fail "auto: $(cat "$T/err")"
  grep -q "running on the CPU" "$T/err" && fail "auto used the CPU although a (mock) GPU is there"
  python3 - "$T/cpu.json" "$T/gpu.json" "$T/auto.json" <<'PY' || fail "gpu and cpu attention differ"
import json, sys
def flat(x):
    return [v for y in x for v in flat(y)] if isinstance(x, list) else [x]
c, g, a = (flat(json.load(open(p))["attentions"]) for p in sys.argv[1:4])
assert len(c) == len(g) == len(a) == 2 * 5 * 9 * 9, len(c)
d = max(max(abs(x - y) for x, y in zip(c, g)), max(abs(x - y) for x, y in zip(c, a)))
assert d < 1e-5, d
PY
  "$A" devices >"$T/out" 2>&1 || fail "devices"
  grep -q "^cuda:0  Mock GPU.*compute capability 9.0" "$T/out" || fail "devices: $(cat "$T/out")"
  grep -q "CUDA runtime 13.0" "$T/out" || fail "devices: $(cat "$T/out")"
  ;;
mock-gpt2)
  # a GPT-2 (pre-LN, causal, ln_f) folder runs on the CUDA walk (the stand-in: kernels.cu on
  # the CPU launcher) with no notice, and gives the CPU's attention within 1e-5; so does a
  # what-if run (ALiBi, temperature, a head off)
  export ATTNSCOPE_CUDA_MODULE="$MOD"
  G="--model $(dirname "$0")/../hf/models/gpt2-f32 --ids 10,11,12,13,14,0 --mask 1,1,1,1,1,0"
  for extra in "" "--alibi --temperature 0.8 --heads-off 1:0"; do
    "$A" run $G $extra --device cpu -o "$T/cpu.npy" 2>"$T/err" || fail "cpu run: $(cat "$T/err")"
    "$A" run $G $extra --device cuda -o "$T/gpu.npy" 2>"$T/err" || fail "cuda run $extra: $(cat "$T/err")"
    grep -q "running on the CPU" "$T/err" && fail "cuda run fell back: $(cat "$T/err")"
    python3 - "$T/cpu.npy" "$T/gpu.npy" <<'PY' || fail "GPT-2 $extra: the CUDA walk differs from the CPU"
import struct, sys
def load(p):
    b = open(p, 'rb').read()
    hl = struct.unpack('<H', b[8:10])[0]
    return struct.unpack('<%df' % ((len(b) - 10 - hl) // 4), b[10 + hl:])
a, g = load(sys.argv[1]), load(sys.argv[2])
worst = max(abs(x - y) for x, y in zip(a, g))
print('gpt2 on the CUDA walk (CPU launcher): %d probabilities, max |diff| %.2e' % (len(a), worst), file=sys.stderr)
sys.exit(0 if len(a) == len(g) and worst <= 1e-5 else 1)
PY
  done
  ;;
mock-oom)
  export ATTNSCOPE_CUDA_MODULE="$MOD" ATN_MOCK_CUDA_MEMORY=1024
  expect_error 2 "out of GPU memory" "$A" run $FX --device cuda -o "$T/a.npy"
  expect_error 2 "out of GPU memory: a run of 3 tokens" "$A" run $WE --device cuda -o "$T/a.npy"
  WHY="out of GPU memory" auto_is_cpu $FX
  ;;
mock-nodriver)
  export ATTNSCOPE_CUDA_MODULE="$MOD" ATN_MOCK_CUDA_DEVICES=driver
  expect_error 2 "no usable CUDA driver: the NVIDIA driver is missing" "$A" run $WE --device cuda -o "$T/a.npy"
  WHY="no usable CUDA driver: the NVIDIA driver is missing" auto_is_cpu $WE
  export ATN_MOCK_CUDA_DEVICES=0
  expect_error 2 "no CUDA device" "$A" run $WE --device cuda -o "$T/a.npy"
  WHY="no CUDA device" auto_is_cpu $WE
  ;;
no-cuda-link)
  # the program itself never links CUDA: it must start where the libraries are absent
  if command -v readelf >/dev/null; then
    readelf -d "$A" | grep NEEDED >"$T/needed" || fail "readelf"
    grep -Ei "cuda|cublas|nvidia" "$T/needed" && fail "the program links CUDA: $(cat "$T/needed")"
  fi
  env -u LD_LIBRARY_PATH ATTNSCOPE_CUDA_MODULE=/nonexistent "$A" run $WE -o "$T/a.npy" || fail "cpu run"
  ;;
*)
  fail "unknown case"
  ;;
esac
exit 0
