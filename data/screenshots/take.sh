#!/bin/sh
# Takes the README / AppStream screenshots: one per view, in English and in Chinese, of the
# window under Xvfb at 1200x780.  Usage (from the repository root, after building):
#   data/screenshots/take.sh [BUILD_DIR] [MODEL] [TEXT]
# MODEL defaults to the demo model (the worked example when it is not installed); the Trace
# view is shot on the worked example (TRACE_MODEL), the lesson it was made for.  The Chinese
# shots read ZH_TEXT (a Chinese sentence, as a Chinese window starts with one).
# Needs xvfb-run, xauth, x11-utils (xwininfo), xdotool and imagemagick (import).
set -e
build=${1:-build}
model=${2:-demo}
text=${3:-The cat sat on the [MASK] because it was tired.}
zh_text=${ZH_TEXT:-这个命令用来删除一个[MASK]件，因为它太大了。}
out=$(dirname "$0")
exe="$build/app/attnscope"
[ -x "$exe" ] || { echo "take.sh: $exe not found; build first" >&2; exit 1; }
export GSK_RENDERER=cairo GTK_A11Y=none GSETTINGS_BACKEND=memory NO_AT_BRIDGE=1
wait_s=${WAIT_S:-6}

shoot() {  # shoot LANGUAGE SUFFIX VIEW
  m=$model
  [ "$3" = trace ] && m=${TRACE_MODEL:-worked-example}
  t=$text
  [ "$1" = zh_CN ] && t=$zh_text
  LANGUAGE=$1 LANG=C.UTF-8 "$exe" --model "$m" --text "$t" --view "$3" &
  pid=$!
  sleep "$wait_s"
  case $3 in
    similarity)  # click a cell below the diagonal (the matrix has the width until a pair is
                 # picked): the two heads side by side
      xdotool mousemove 443 474 click 1; sleep 2 ;;
    trace)       # walk to the softmax step with the Step button's mnemonic (Alt+S)
      xdotool mousemove 600 790
      for i in 1 2 3 4 5 6; do xdotool key alt+s; sleep 0.4; done
      sleep 1 ;;
    head)        # hover a cell: its tooltip shows query -> key: weight
      xdotool mousemove 470 375; sleep 2 ;;
    model|statistics)
      xdotool mousemove 600 790; sleep 1 ;;
  esac
  id=$(xwininfo -root -tree | awk '/"attnscope"/ && /[0-9][0-9][0-9][0-9]x[0-9]/ {print $1; exit}')
  import -window "$id" "$out/$3$2.png"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

if [ -z "$ATN_IN_XVFB" ]; then
  ATN_IN_XVFB=1 exec xvfb-run -a -s '-screen 0 1280x800x24' "$0" "$@"
fi
for view in head model similarity trace statistics; do
  shoot C "" "$view"
  shoot zh_CN "-zh_CN" "$view"
done
# smaller files: the UI has few colours apart from the heatmaps
for view in head model similarity trace statistics; do
  for f in "$out/$view.png" "$out/$view-zh_CN.png"; do convert "$f" -strip -define png:compression-level=9 "$f"; done
done
ls -l "$out"/*.png
