#!/bin/sh
# Takes the screenshots of issue 33's rotary what-ifs: the model picker listing demo-llama, and
# the What-if page's rotary knobs on the random Llama folder tests/hf/models/llama-f32 (RoPE
# base 100, a window of 3 turned on in layer 1), at 1280x720 and 1920x1080, in English and
# Chinese.  Usage (from the repository root,
# after building):  data/screenshots/take-llama.sh [BUILD_DIR]
set -e
build=${1:-build}
out=$(dirname "$0")
shoot="$build/tests/ui/shoot"
[ -x "$shoot" ] || { echo "take-llama.sh: $shoot not found; build first" >&2; exit 1; }
export GSK_RENDERER=cairo GTK_A11Y=none GSETTINGS_BACKEND=memory NO_AT_BRIDGE=1 LANG=C.UTF-8
export ATTNSCOPE_DATADIR="$PWD/data" ATN_SOURCE_ROOT="$PWD"
tmp=$(mktemp -d /tmp/atn-shots-XXXXXX)
trap 'rm -rf "$tmp"' EXIT
echo "the cat sat on the mat." > "$tmp/en.txt"
echo "这个命令用来删除一个文件。" > "$tmp/zh_CN.txt"
small() { convert "$1" -strip -dither None -colors 256 -define png:compression-level=9 "PNG8:$2"; }
take() {  # take LANGUAGE SUFFIX WIDTH HEIGHT
  lang=$1 suffix=$2 w=$3 h=$4 t="$tmp/en.txt"
  [ "$lang" = zh_CN ] && t="$tmp/zh_CN.txt"
  LANGUAGE=$lang xvfb-run -a -s "-screen 0 ${w}x${h}x24" "$shoot" "$tmp/w.png" "$w" "$h" demo "$t" head \
    model-menu "root=$tmp/menu.png" >/dev/null 2>&1
  small "$tmp/menu.png" "$out/llama-picker-$w$suffix.png"
  LANGUAGE=$lang xvfb-run -a -s "-screen 0 ${w}x${h}x24" "$shoot" "$tmp/w.png" "$w" "$h" tests/hf/models/llama-f32 "$t" whatif \
    whatif-control=rope-theta-value:100 whatif-control=rope-theta:1 whatif-control=sliding-window:3 \
    whatif-control=sliding-on:1 whatif-scroll=520 >/dev/null 2>&1
  small "$tmp/w.png" "$out/llama-whatif-$w$suffix.png"
}
for l in C zh_CN; do
  suffix=""; [ "$l" = C ] || suffix="-$l"
  take "$l" "$suffix" 1280 720
  take "$l" "$suffix" 1920 1080
done
