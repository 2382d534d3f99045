#!/bin/sh
# Takes the long-input screenshots of the Head view (issue 14): a 512-token input on a
# bert-base-sized random model at 1600x1000, whole and zoomed, and the one-query bar chart
# (on the demo model, whose heads have patterns, and at 512 tokens), in English and Chinese.
# Usage (from the repository root, after building):
#   /usr/bin/python3 tests/hf/gen_models.py --bert-base /tmp/attnscope-bert-base   # once, 440 MB
#   data/screenshots/take-long.sh [BUILD_DIR] [BERT_BASE_DIR]
# Uses the build's tests/ui/shoot (the window drawn by its own renderer: no window manager
# needed) under xvfb-run; imagemagick's convert makes the files smaller.
set -e
build=${1:-build}
bert=${2:-/tmp/attnscope-bert-base}
out=$(dirname "$0")
shoot="$build/tests/ui/shoot"
[ -x "$shoot" ] || { echo "take-long.sh: $shoot not found; build first" >&2; exit 1; }
[ -f "$bert/config.json" ] || { echo "take-long.sh: no model in $bert (see the usage)" >&2; exit 1; }
export GSK_RENDERER=cairo GTK_A11Y=none GSETTINGS_BACKEND=memory NO_AT_BRIDGE=1 LANG=C.UTF-8
export ATTNSCOPE_DATADIR="$PWD/data" ATN_SOURCE_ROOT="$PWD"
tmp=$(mktemp -d /tmp/atn-shots-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# 510 words of the random model's vocabulary: [CLS] + 510 + [SEP] = 512 positions
/usr/bin/python3 -c "
import random
w = '''the cat sat on mat a dog ran to park and it was very happy today we like tea bert reads text
one two three four five six seven eight nine ten red blue green big small old new sun moon star
tree house river road book'''.split()
random.seed(1)
print(' '.join(random.choice(w) for _ in range(510)))" > "$tmp/512.txt"
for i in 1 2 3 4 5 6 7 8 9 10; do printf 'the cat sat on the mat because it was tired. '; done > "$tmp/demo.txt"

take() {  # take LANGUAGE SUFFIX NAME MODEL TEXT ACTION...
  lang=$1 suffix=$2 name=$3 model=$4 text=$5
  shift 5
  LANGUAGE=$lang xvfb-run -a -s '-screen 0 1920x1080x24' "$shoot" "$out/$name$suffix.png" 1600 1000 "$model" \
    "$text" head "$@" >/dev/null 2>&1
  # 256 colours, no dithering: a third of the size; the heatmaps keep their cells flat
  convert "$out/$name$suffix.png" -strip -dither None -colors 256 -define png:compression-level=9 \
    "PNG8:$out/$name$suffix.png"
}
for l in C zh_CN; do
  s=""; [ $l = zh_CN ] && s="-zh_CN"
  take $l "$s" long-512 "$bert" "$tmp/512.txt" layer=11 head=3 query=100
  take $l "$s" long-512-zoomed "$bert" "$tmp/512.txt" layer=11 head=3 query=100 zoom=16 hover=260,255
  take $l "$s" one-query demo "$tmp/demo.txt" layer=1 head=15 query=40 one-query hover=40,39
done
take C "" one-query-512 "$bert" "$tmp/512.txt" layer=11 head=3 query=100 one-query
ls -l "$out"/long-512*.png "$out"/one-query*.png
