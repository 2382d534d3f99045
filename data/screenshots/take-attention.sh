#!/bin/sh
# Takes the attention-file screenshots (issue 36): the window on a file written by
# `attnscope run -o x.safetensors` on the demo model, the Head view at 1280x720 and 1920x1080,
# the Trace of a file with q, k, v (run -o x.safetensors --qkv) at 1280x720 and 1920x1080, the
# What-if view saying why it is off at 1280x720, in English and Chinese.
# Usage (from the repository root, after building): data/screenshots/take-attention.sh [BUILD_DIR]
# The whole X screen by ImageMagick's import (shoot's root=), the window filling it; no window
# manager is needed (the window draws its own decorations).
set -e
build=${1:-build}
out=$(dirname "$0")
shoot="$build/tests/ui/shoot"
[ -x "$shoot" ] || { echo "take-attention.sh: $shoot not found; build first" >&2; exit 1; }
export GSK_RENDERER=cairo GTK_A11Y=none GSETTINGS_BACKEND=memory NO_AT_BRIDGE=1 LANG=C.UTF-8
export ATTNSCOPE_DATADIR="$PWD/data" ATN_SOURCE_ROOT="$PWD"
tmp=$(mktemp -d /tmp/atn-shots-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
text="The cat sat on the mat because it was tired."
echo "$text" > "$tmp/text.txt"
"$build/app/attnscope" run --model demo --text "$text" -o "$tmp/cat.safetensors"
"$build/app/attnscope" run --model demo --text "$text" -o "$tmp/qkv.safetensors" --qkv
take() {  # take LANGUAGE SUFFIX NAME WIDTH HEIGHT VIEW [FILE]
  lang=$1 suffix=$2 name=$3 w=$4 h=$5 view=$6 file=${7:-cat}
  LANGUAGE=$lang xvfb-run -a -s "-screen 0 ${w}x${h}x24" "$shoot" "$tmp/w.png" "$w" "$h" demo "$tmp/text.txt" head \
    "attention=$tmp/$file.safetensors" "view=$view" "root=$out/$name$suffix.png" >/dev/null 2>&1
  convert "$out/$name$suffix.png" -strip -dither None -colors 256 -define png:compression-level=9 \
    "PNG8:$out/$name$suffix.png"
}
for l in C zh_CN; do
  suffix=""; [ "$l" = C ] || suffix="-$l"
  take "$l" "$suffix" attention-head-1280 1280 720 head
  take "$l" "$suffix" attention-head-1920 1920 1080 head
  take "$l" "$suffix" attention-trace-1280 1280 720 trace qkv
  take "$l" "$suffix" attention-trace-1920 1920 1080 trace qkv
  take "$l" "$suffix" attention-whatif-1280 1280 720 whatif
done
