#!/bin/sh
# valgrind on the command line's runs of the worked example and of a Hugging Face test
# model: no invalid read/write, no use of uninitialised memory, no definite leak.
# Usage: test-valgrind.sh ATTNSCOPE SOURCE_ROOT.  Skipped (77) without valgrind.
set -u
A="$1"
ROOT="$2"
command -v valgrind >/dev/null || { echo "valgrind not installed: skipped"; exit 77; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
# valgrind does not run AVX-512 code: pin OpenBLAS to its AVX2 kernel (this also keeps
# attnscope from re-executing itself to pick a kernel); one thread keeps the log short.
export OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=1
HF="$ROOT/tests/hf/models/f32"
[ -d "$HF" ] || HF="$ROOT/tests/bad/base"
fail=0
vg() {
  name=$1; shift
  if valgrind -q --error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite \
       --log-file="$T/$name.log" "$A" "$@" >/dev/null 2>"$T/$name.err"; then
    echo "ok   $name: valgrind clean"
  else
    echo "FAIL $name (exit $?): attnscope $*"; cat "$T/$name.log" "$T/$name.err"; fail=1
  fi
}
vg worked-example run --model worked-example -o "$T/a.npy"
vg hf-model run --model "$HF" --text "the cat sat on the mat" --text-pair "a dog ran" -o "$T/b.json"
vg hf-trace trace --model "$HF" --text "the cat sat" --layer 1 --head 0 --query 2
# pytorch_model.bin: the zip reader and unpickler, strided copies, the legacy stream
for m in bin-zip-f32 bin-legacy-bf16; do
  [ -d "$ROOT/tests/hf/models/$m" ] &&
    vg "$m" run --model "$ROOT/tests/hf/models/$m" --text "the cat sat on the mat" -o "$T/$m.npy"
done
exit $fail
