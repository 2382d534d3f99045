#!/bin/sh
# Takes the presentation-mode screenshots (issue 14): the Head, Trace and Similarity views
# after F11, at 1920x1080 and at 1280x720, in English and in Chinese, each on an Xvfb screen of
# that size with openbox as the window manager (so F11 really makes the window fullscreen).
# Usage (from the repository root, after building):
#   data/screenshots/take-present.sh [BUILD_DIR] [MODEL] [TEXT]
# MODEL defaults to the demo model; the Trace view is shot on the worked example in reveal
# mode at step 6 (the softmax).
# VIEWS="similarity" takes only those.
# Needs xvfb-run, xauth, openbox, x11-utils (xwininfo), xdotool and imagemagick (import).
set -e
build=${1:-build}
model=${2:-demo}
text=${3:-The cat sat on the [MASK] because it was tired.}
out=$(dirname "$0")
exe="$build/app/attnscope"
[ -x "$exe" ] || { echo "take-present.sh: $exe not found; build first" >&2; exit 1; }
export GSK_RENDERER=cairo GTK_A11Y=none GSETTINGS_BACKEND=memory NO_AT_BRIDGE=1 LANG=C.UTF-8
export ATTNSCOPE_DATADIR="${ATTNSCOPE_DATADIR:-$PWD/data}"
wait_s=${WAIT_S:-6}

shoot() {  # shoot LANGUAGE SUFFIX VIEW WIDTH HEIGHT
  lang=$1 suffix=$2 view=$3 w=$4 h=$5
  m=$model where="--layer 1 --head 15"
  [ "$view" = trace ] && m=${TRACE_MODEL:-worked-example} where="--layer 0 --head 0"
  # shellcheck disable=SC2086
  LANGUAGE=$lang "$exe" --model "$m" --text "$text" --view "$view" $where &
  pid=$!
  sleep "$wait_s"
  xdotool key F11
  sleep 2
  case $view in
    trace)      # Reveal (Alt+R) from step 1, five Steps (Alt+S) to the softmax
      xdotool key alt+r; sleep 0.5
      for i in 1 2 3 4 5; do xdotool key alt+s; sleep 0.4; done
      sleep 0.5 ;;
    similarity) # a cell well below the diagonal (lower left; until a pair is picked the matrix
                # has the whole width): two heads side by side
      if [ "$w" = 1920 ]; then xdotool mousemove 645 905 click 1; else xdotool mousemove 192 597 click 1; fi
      sleep 2 ;;
    head)       # hover a cell: its tooltip and the hovered labels
      xdotool mousemove $((w * 760 / 1920)) $((h * 560 / 1080)); sleep 1 ;;
  esac
  sleep 7   # the one-time keys hint fades
  [ "$view" = head ] && { xdotool mousemove $((w * 760 / 1920 + 2)) $((h * 560 / 1080 + 2)); sleep 1; }
  import -window root "$out/presentation-$view-$w$suffix.png"
  kill "$pid"; wait "$pid" 2>/dev/null || true
}

if [ -z "$ATN_IN_XVFB" ]; then
  for size in 1920x1080 1280x720; do
    ATN_IN_XVFB=$size xvfb-run -a -s "-screen 0 ${size}x24" "$0" "$@"
  done
  ls -l "$out"/presentation-*.png
  exit 0
fi
openbox >/dev/null 2>&1 &
wm=$!
sleep 1
w=${ATN_IN_XVFB%x*} h=${ATN_IN_XVFB#*x}
for view in ${VIEWS:-head trace similarity}; do
  shoot C "" "$view" "$w" "$h"
  shoot zh_CN "-zh_CN" "$view" "$w" "$h"
done
kill "$wm"
for f in "$out"/presentation-*-"$w".png "$out"/presentation-*-"$w"-zh_CN.png; do
  convert "$f" -strip -dither None -colors 256 -define png:compression-level=9 "PNG8:$f"
done
