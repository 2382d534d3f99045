#!/bin/sh
# End-to-end: attnscope export / stats / similarity on the worked example and a tiny HF model.
# Usage: test-export.sh ATTNSCOPE SOURCE_ROOT
set -u
A="$1"
SRC="$2"
HF="$SRC/tests/hf/models/f32"
T=$(mktemp -d /tmp/atn-export-XXXXXX)
trap 'rm -rf "$T"' EXIT
fails=0
n=0
ok() { n=$((n + 1)); }
bad() { n=$((n + 1)); fails=$((fails + 1)); echo "FAIL: $*" >&2; }
check() { if "$@"; then ok; else bad "$*"; fi; }
# PNG width and height from the IHDR chunk (big-endian at bytes 16..23)
png_size() { od -An -tu1 -j16 -N8 "$1" | awk '{printf "%d %d\n", $1*16777216+$2*65536+$3*256+$4, $5*16777216+$6*65536+$7*256+$8}'; }
is_png() { [ "$(od -An -c -j1 -N3 "$1" | tr -d ' ')" = "PNG" ]; }
status() { "$@" >"$T/out" 2>"$T/err"; echo $?; }

# every figure kind, as PNG, SVG and PDF, and what each draws (check-figure.py): the
# heatmap, model grid and rollout show the capture's cells in the colours of their values,
# in place, in all three formats; every figure covers part of its page in many colours; the
# SVG's text is drawn (glyphs); the PDF's text holds the labels (tokens, each cell's number)
fig() { python3 "$SRC/tests/render/check-figure.py" "$@"; }
check test "$(status "$A" run --model worked-example -o "$T/w.json")" = 0
check fig matrix "$T/w.json" heatmap 0 0 "$T/heatmap.cells"
check fig matrix "$T/w.json" grid 0 0 "$T/grid.cells"
check fig matrix "$T/w.json" rollout 0 0 "$T/rollout.cells"
for kind in heatmap grid similarity headview trace rollout; do
  check test "$(status "$A" export $kind --model worked-example -o "$T/$kind.png")" = 0
  check is_png "$T/$kind.png"
  check test "$(status "$A" export $kind --model worked-example -o "$T/$kind.svg")" = 0
  check test "$(status "$A" export $kind --model worked-example -o "$T/$kind.pdf")" = 0
  if command -v xmllint >/dev/null 2>&1; then check xmllint --noout "$T/$kind.svg"; fi
  for f in "$T/$kind.png" "$T/$kind.svg" "$T/$kind.pdf"; do
    check fig drawn "$f" 0.05 100
    if [ -f "$T/$kind.cells" ]; then check fig cells "$f" "$T/$kind.cells" head 200; fi
  done
  case $kind in   # about half the glyphs each draws now
    heatmap) glyphs=60 words="--labels $T/heatmap.cells 我 爱 你 key query" ;;
    grid) glyphs=30 words="L0 H0 H1 broad" ;;
    similarity) glyphs=120 words=".1397 L0·H0 L0·H1" ;;
    headview) glyphs=20 words="我 爱 你" ;;
    trace) glyphs=600 words="我 0.5000 1.1000" ;;
    rollout) glyphs=60 words="--labels $T/rollout.cells 我 爱 你" ;;
  esac
  check fig svg "$T/$kind.svg" $glyphs 2
  # shellcheck disable=SC2086
  check fig pdf-text "$T/$kind.pdf" $words
done
# Han characters in the face of the user's language: with LANGUAGE=zh_CN a PDF embeds Noto
# Sans CJK SC (a C.UTF-8 locale alone made fontconfig pick the JP face), with ja the JP one
if command -v pdffonts >/dev/null 2>&1 && fc-list 2>/dev/null | grep -q "Noto Sans CJK SC"; then
  check test "$(status env LANGUAGE=zh_CN LANG=C.UTF-8 "$A" export heatmap --model worked-example -o "$T/zh.pdf")" = 0
  pdffonts "$T/zh.pdf" >"$T/zh.fonts" 2>&1
  check grep -q "NotoSansCJKsc" "$T/zh.fonts"
  check test "$(grep -c "NotoSansCJKjp" "$T/zh.fonts")" = 0
  check test "$(status env LANGUAGE=ja LANG=C.UTF-8 "$A" export heatmap --model worked-example -o "$T/ja.pdf")" = 0
  pdffonts "$T/ja.pdf" 2>&1 | grep -q "NotoSansCJKjp"; check test $? = 0
else
  echo "note: pdffonts or Noto Sans CJK SC missing; the PDF face check is skipped" >&2
fi
# figure budgets (ui/render/render.h): a PNG over ATN_RENDER_MAX_PIXELS is refused with its
# size; an SVG model grid 100000 pt wide (one enlarged cell image per head) stays within a
# bounded memory (it took 1.1 GB and 40 s before the budget, ~110 MB after)
check test "$(status "$A" export heatmap --model worked-example --width 2000 --height 2000 --scale 16 -o "$T/huge.png")" = 2
check grep -q "a PNG of 32000x32000 pixels (1024 million, 4.1 GB to draw) is over the 134-million-pixel budget" "$T/err"
check test ! -e "$T/huge.png"
if [ -x /usr/bin/time ]; then
  check test "$(status /usr/bin/time -f "%M" -o "$T/rss" "$A" export grid --model demo --text "我爱你" --width 100000 -o "$T/wide.svg")" = 0
  check test "$(cat "$T/rss")" -lt 600000
fi
# explicit size and --scale 2 (slides): twice the pixels
check test "$(status "$A" export heatmap --model worked-example --width 500 --height 400 -o "$T/s1.png")" = 0
check test "$(png_size "$T/s1.png")" = "500 400"
check test "$(status "$A" export heatmap --model worked-example --width 500 --height 400 --scale 2 --colormap magma -o "$T/s2.png")" = 0
check test "$(png_size "$T/s2.png")" = "1000 800"
# --all-heads: one file per head (1 layer x 2 heads)
check test "$(status "$A" export heatmap --model worked-example --all-heads -o "$T/heads/")" = 0
check test -f "$T/heads/heatmap-L00-H00.png"
check test -f "$T/heads/heatmap-L00-H01.png"
check test "$(ls "$T/heads" | wc -l)" = 2
check test "$(status "$A" export trace --model worked-example --all-heads --format svg -o "$T/tr")" = 0
check test -f "$T/tr/trace-L00-H01.svg"
# the names sort in layer/head order (zero-padded to the model's counts: 4 layers x 16 heads)
check test "$(status "$A" export heatmap --model demo --text "the cat sat" --all-heads -o "$T/demo-heads")" = 0
check test "$(ls "$T/demo-heads" | LC_ALL=C sort | tr '\n' ' ')" = "$(for l in 0 1 2 3; do for h in $(seq 0 15); do printf 'heatmap-L%02d-H%02d.png ' $l $h; done; done)"
# --color-scale: one head on its own 0..max scale by default, 0..1 with fixed; a folder of
# every head is on the shared fixed scale unless told otherwise
check test "$(status "$A" export heatmap --model worked-example -o "$T/own.png")" = 0
check test "$(status "$A" export heatmap --model worked-example --color-scale fixed -o "$T/fixed.png")" = 0
check test "$(status "$A" export heatmap --model worked-example --color-scale head -o "$T/head.png")" = 0
check cmp -s "$T/own.png" "$T/head.png"
check test "$(cmp -s "$T/own.png" "$T/fixed.png"; echo $?)" = 1
check cmp -s "$T/fixed.png" "$T/heads/heatmap-L00-H00.png"
check test "$(status "$A" export heatmap --model worked-example --all-heads --color-scale head -o "$T/own-heads")" = 0
check cmp -s "$T/own.png" "$T/own-heads/heatmap-L00-H00.png"
check test "$(status "$A" export heatmap --model worked-example --color-scale wide -o "$T/x.png")" = 2
check grep -q -- "--color-scale must be head, fixed, log or rank" "$T/err"

# errors: exit 2 with a message, and a good file is never replaced by a failed export
cp "$T/s1.png" "$T/keep.png"
check test "$(status "$A" export heatmap --model worked-example --head 5 -o "$T/keep.png")" = 2
check grep -q "head 5 is out of range" "$T/err"
check cmp -s "$T/s1.png" "$T/keep.png"
check test "$(status "$A" export heatmap --model worked-example -o "$T/x.jpg")" = 2
check test "$(status "$A" export pie --model worked-example -o "$T/x.png")" = 2
check test "$(status "$A" export heatmap --model worked-example --colormap jet -o "$T/x.png")" = 2
check test "$(status "$A" export heatmap --model worked-example --bogus 1 -o "$T/x.png")" = 2
check test ! -e "$T/x.png"
check test "$(ls "$T" | grep -c tmp)" = 0

# stats: table, csv, json
check test "$(status "$A" stats --model worked-example)" = 0
check grep -q "pattern" "$T/out"
check test "$(status "$A" stats --model worked-example --format csv)" = 0
check test "$(wc -l < "$T/out")" = 3
check test "$(status "$A" stats --model worked-example -o "$T/stats.json")" = 0
check grep -q '"pattern": "broad"' "$T/stats.json"
if command -v python3 >/dev/null 2>&1; then check python3 -m json.tool "$T/stats.json" >/dev/null; fi

# similarity: json, npy, csv
check test "$(status "$A" similarity --model worked-example --metric cosine -o "$T/sim.json")" = 0
check grep -q '"order": \[' "$T/sim.json"
if command -v python3 >/dev/null 2>&1; then check python3 -m json.tool "$T/sim.json" >/dev/null; fi
check test "$(status "$A" similarity --model worked-example -o "$T/sim.npy")" = 0
check test "$(od -An -c -j1 -N5 "$T/sim.npy" | tr -d ' ')" = "NUMPY"
check test "$(status "$A" similarity --model worked-example --layer 0 -o "$T/sim.csv")" = 0
check test "$(head -1 "$T/sim.csv")" = "head,H0,H1"

# corpus mode on a small real (random-weight) BERT: the same line three times averages to
# the one-line numbers; two different lines average to the mean of their numbers
if [ -f "$HF/config.json" ]; then
  printf 'the cat sat on the mat\n\nthe cat sat on the mat\nthe cat sat on the mat\n' > "$T/c1.txt"
  check test "$(status "$A" stats --model "$HF" --text "the cat sat on the mat" --format csv -o "$T/one.csv")" = 0
  check test "$(status "$A" stats --model "$HF" --corpus "$T/c1.txt" --format csv -o "$T/three.csv")" = 0
  check grep -q "3 sentences" "$T/err"
  check cmp -s "$T/one.csv" "$T/three.csv"
  printf 'the cat sat on the mat\nwe like tea and it was very happy today\n' > "$T/c2.txt"
  "$A" stats --model "$HF" --text "we like tea and it was very happy today" --format csv -o "$T/two.csv" 2>/dev/null
  check test "$(status "$A" stats --model "$HF" --corpus "$T/c2.txt" --format csv -o "$T/mean.csv")" = 0
  # column 9 is prev: mean.csv = (one.csv + two.csv) / 2 for every head
  check awk -F, 'FNR == 1 { next } FILENAME == ARGV[1] { a[FNR] = $9; next } FILENAME == ARGV[2] { b[FNR] = $9; next }
       { d = $9 - (a[FNR] + b[FNR]) / 2; if (d < 0) d = -d; if (d > 1e-6) bad = 1 } END { exit bad }' \
       "$T/one.csv" "$T/two.csv" "$T/mean.csv"
  check test "$(status "$A" similarity --model "$HF" --corpus "$T/c2.txt" -o "$T/csim.json")" = 0
  check grep -q '"sentences": 2' "$T/csim.json"
  # SIGINT stops a long corpus run: exit 130 (as every command; issue 19 item 4), a message,
  # and no output file
  awk 'BEGIN { for (i = 0; i < 200000; i++) print "the cat sat on the mat" }' > "$T/long.txt"
  "$A" stats --model "$HF" --corpus "$T/long.txt" -o "$T/long.json" 2>"$T/int.err" &
  pid=$!
  sleep 1
  kill -INT $pid
  wait $pid
  check test $? = 130
  check grep -q "interrupted after" "$T/int.err"
  check test ! -e "$T/long.json"
  check test "$(status "$A" stats --model "$HF" --corpus "$T/missing.txt")" = 2
  check test "$(status "$A" stats --model worked-example --corpus "$T/c1.txt")" = 2
else
  echo "note: $HF missing; corpus checks skipped" >&2
fi

echo "export-cli: $n checks, $fails failed" >&2
[ "$fails" = 0 ]
