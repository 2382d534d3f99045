#!/bin/sh
# Takes the Train page's screenshots (issue 37): the Induction head preset trained to its
# end (800 steps, about 1-2 minutes each on two cores), at 1280x720 and 1920x1080, in
# English and Chinese.  Usage (from the repository root, after building):
# data/screenshots/take-train.sh [BUILD_DIR]
set -e
build=${1:-build}
out=$(dirname "$0")
shoot="$build/tests/ui/shoot"
[ -x "$shoot" ] || { echo "take-train.sh: $shoot not found; build first" >&2; exit 1; }
export GSK_RENDERER=cairo GTK_A11Y=none GSETTINGS_BACKEND=memory NO_AT_BRIDGE=1 LANG=C.UTF-8
export ATTNSCOPE_DATADIR="$PWD/data" ATN_SOURCE_ROOT="$PWD"
tmp=$(mktemp -d /tmp/atn-shots-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo "The cat sat on the mat." > "$tmp/text.txt"
take() {  # take LANGUAGE SUFFIX WIDTH HEIGHT
  lang=$1 suffix=$2 w=$3 h=$4
  LANGUAGE=$lang xvfb-run -a -s "-screen 0 ${w}x${h}x24" "$shoot" "$tmp/w.png" "$w" "$h" demo "$tmp/text.txt" train \
    train-control=preset:2 train-run >/dev/null 2>&1
  convert "$tmp/w.png" -strip -dither None -colors 256 -define png:compression-level=9 \
    "PNG8:$out/train-$w$suffix.png"
}
for l in C zh_CN; do
  suffix=""; [ "$l" = C ] || suffix="-$l"
  take "$l" "$suffix" 1280 720
  take "$l" "$suffix" 1920 1080
done
