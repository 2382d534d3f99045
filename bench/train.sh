#!/bin/sh
# The training lab's figures (issue 37), by hand or from `make bench`'s machine:
#  1. steps per second of `attnscope train` on the copy task (2 layers, d_model 64, 4 heads,
#     batch 32, length 16: 34 tokens) next to PyTorch eager training the same model
#     (bench/train_torch.py), same thread count, same run;
#  2. that run's accuracy (the issue asks >= 99% on copy of length 16);
#  3. the induction-head recipe (docs/training.md: 2-layer attention-only decoder, rotary,
#     RMSNorm, saved as Llama): its best layer-1 head's attention on the induction target
#     (the token after the current one's earlier occurrence) on held-out runs, measured
#     from `attnscope run` captures of the saved folder (the issue: >= 0.5).
# `make bench` runs it (tools/bench.sh) with STEPS 1000.
# Usage: bench/train.sh [BUILD] [STEPS]   (ATN_BENCH_THREADS: 2; ATN_BENCH_NO_TORCH=1)
set -u
BUILD=${1:-build}
STEPS=${2:-1000}
EXE="$BUILD/app/attnscope"
T=${ATN_BENCH_THREADS:-2}
OUT=$(mktemp -d)
trap 'rm -rf "$OUT"' EXIT
SRC=$(cd "$(dirname "$0")/.." && pwd)

echo "== copy, length 16, 2 layers, d_model 64, $STEPS steps, $T threads"
OPENBLAS_NUM_THREADS=$T /usr/bin/time -f "attnscope: %e s wall, %U s user" \
    "$EXE" train --task copy --length 16 --layers 2 --d-model 64 --heads 4 --steps "$STEPS" \
    --log-every "$STEPS" -o "$OUT/copy" 2>&1 | grep -v "^training"
if [ "${ATN_BENCH_NO_TORCH:-0}" != 1 ]; then
    /usr/bin/python3 "$SRC/bench/train_torch.py" --threads "$T" --steps "$STEPS"
fi

echo "== induction: the recipe (docs/training.md), runs of 5..10 over 62 symbols, 800 steps"
OPENBLAS_NUM_THREADS=$T /usr/bin/time -f "attnscope: %e s wall, %U s user" \
    "$EXE" train --task induction --length 10 --symbols 62 --attention-only --positions rotary --rms-norm \
    --steps 800 --seed 3 --log-every 800 -o "$OUT/ind" 2>&1 | grep -v "^training"
# held-out runs [CLS] r r (r: 10 tokens of a stream of their own); per head, the attention of
# the repeat's token j (j >= 1) on the token after its first occurrence
/usr/bin/python3 - "$EXE" "$OUT" <<'EOF'
import random, subprocess, sys
import numpy as np
exe, out = sys.argv[1], sys.argv[2]
rng = random.Random(2026)
L, S, scores = 10, 62, []
for k in range(20):
    r = [5 + rng.randrange(S) for _ in range(L)]
    path = f"{out}/a{k}.npy"
    subprocess.run([exe, "run", "--model", f"{out}/ind", "--ids", ",".join(map(str, [2] + r + r)), "-o", path],
                   check=True, stderr=subprocess.DEVNULL)
    a = np.load(path)                     # [layers][heads][n][n]
    scores.append([[np.mean([a[l, h, 1 + L + j, 2 + j] for j in range(1, L)]) for h in range(a.shape[1])]
                   for l in range(a.shape[0])])
m = np.mean(scores, axis=0)
for l in range(m.shape[0]):
    print(f"induction score, layer {l} heads:", " ".join(f"{x:.3f}" for x in m[l]))
print("best layer-1 head:", f"{m[1].max():.3f}", "(>= 0.5: yes)" if m[1].max() >= 0.5 else "(>= 0.5: NO)")
EOF
