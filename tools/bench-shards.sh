#!/bin/bash
# make bench's "corpus statistics in shards" (docs/PERFORMANCE.md, docs/cluster.md): sentences
# per second per core of stats --corpus and of a partial (one process pinned to one core, CPU
# seconds), with one forward each and stacked, on the demo model over a generated corpus; then
# P one-line partials made by GNU parallel and the time to merge them, checked against one
# process's partial byte for byte.
# Usage: tools/bench-shards.sh ATTNSCOPE OUTDIR [SENTENCES] [PARTIALS]
set -u
NS=${3:-2000} NP=${4:-1000}
A=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mkdir -p "$2/shards"
OUT=$(cd "$2" && pwd)
cd "$OUT/shards" || exit 1
python3 - "$NS" <<'PY'
import random, sys
rng = random.Random(38)
words = ("the cat sat on a mat , and dog ran to park . she said that he would come home soon ; birds fly "
         "over river while children play in garden ?").split()
with open("corpus.txt", "w") as f:
    for _ in range(int(sys.argv[1])):
        f.write(" ".join(rng.choice(words) for _ in range(rng.randint(3, 25))) + "\n")
PY
cpu() {   # CPU seconds (user + sys) of one command pinned to core 0
    /usr/bin/time -f "%U %S" -o t.txt taskset -c 0 "$@" >/dev/null 2>&1 || { echo "FAILED: $*"; return 1; }
    awk '{ printf "%.2f", $1 + $2 }' t.txt
}
echo "demo model, $NS sentences of 3-25 words, one core:"
for b in off fast; do
    for o in "--format csv -o s.csv" "-o part.safetensors"; do
        s=$(cpu "$A" stats --model demo --corpus corpus.txt --batch $b $o) || continue
        printf '  --batch %-4s %-22s %6s s CPU  %6.0f sentences/s/core\n' $b "${o#--format csv }" "$s" \
            "$(awk -v n="$NS" -v s="$s" 'BEGIN { print n / s }')"
    done
done
if ! command -v parallel >/dev/null; then
    echo "merge: skipped (GNU parallel is not installed)"
    exit 0
fi
head -n "$NP" corpus.txt >small.txt
rm -rf parts && mkdir parts
seq 0 $((NP - 1)) | parallel --will-cite -j "$(nproc)" "$A" stats --model demo --corpus small.txt \
    --shard {}/"$NP" -o parts/p{}.safetensors 2>/dev/null
"$A" stats --model demo --corpus small.txt -o whole.safetensors 2>/dev/null
s=$(cpu "$A" stats merge parts/p*.safetensors -o all.safetensors) || exit 1
same=$(cmp -s whole.safetensors all.safetensors && echo "equal to one process's, byte for byte" || echo "DIFFERENT from one process's")
echo "merge of $NP partials ($(du -sh parts | cut -f1)): $s s CPU; $same"
