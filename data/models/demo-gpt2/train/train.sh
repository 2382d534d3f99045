#!/bin/sh
# The shipped demo-gpt2 in one command: four phases of train.py, one seed (20261201), each
# phase starting from the one before (--init-from), the last written into the model folder.
#   sh data/models/demo-gpt2/train/train.sh [OUT] [WORK]
# OUT: the folder the model is written to (default: the model folder, data/models/demo-gpt2);
# WORK: where the first three phases are kept (default /tmp/demo-gpt2-phases).  Needs
# train/ids.json, which bpe.js writes (NODE_PATH=<npm folder with tokenizers> node bpe.js).
# About 8,550 steps: 13.5 minutes on one core of the AVX-512 VM it was made on (session 9),
# where it gave the shipped model.safetensors bit for bit.
# What each phase is for: README.md, "Training".
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$(dirname "$here")}
work=${2:-/tmp/demo-gpt2-phases}
py=${PYTHON:-/usr/bin/python3}
[ -f "$here/ids.json" ] || { echo "train.sh: $here/ids.json is missing: run bpe.js first" >&2; exit 2; }
T="$here/train.py"
C="--rows 16 --run 8 30 --init-std 0.1 --weight-decay 0.01 --eval-every 250 --heads 4"
# 1. an induction head: half the rows a random run repeated to fill the row
"$py" "$T" $C --lr 3e-3 --warmup 100 --stop 0.55 0.35 --out "$work/1-induction" --steps 3000 --repeat 0.5
# 2. triples (a, x, perm(a)): only the previous token predicts the third, so a layer-0 head sharpens
"$py" "$T" $C --lr 3e-3 --warmup 100 --stop 0.55 0.35 --out "$work/2-triples" --steps 5000 --repeat 0.4 \
    --triples 0.4 --init-from "$work/1-induction"
# 3. more triples and some chains, at the full learning rate again, until both heads clear the
#    targets with a margin (>= 0.55 and >= 0.35): 250 steps
"$py" "$T" $C --lr 3e-3 --warmup 100 --stop 0.55 0.35 --out "$work/3-sharpen" --steps 1500 --repeat 0.35 \
    --triples 0.5 --chains 0.1 --init-from "$work/2-triples"
# 4. a short low-rate phase with more text, which brings the held-out loss back (4.23 -> 3.58)
"$py" "$T" $C --lr 5e-4 --warmup 20 --out "$out" --steps 300 --repeat 0.3 --triples 0.45 --chains 0.1 \
    --init-from "$work/3-sharpen"
