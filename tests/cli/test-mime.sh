#!/bin/sh
# The attention file's MIME type (data/io.github.attnscope.Attnscope.mime.xml), as a file
# manager sees it: with the package's XML in a MIME database of its own (update-mime-database),
# a file from `attnscope run -o x.safetensors` is application/x-attnscope-attention and the
# demo model's weights (also .safetensors) are not, and a merged corpus statistics file
# (stats -o X.safetensors) is application/x-attnscope-corpus-stats.  The database holds our XML alone (the
# freedesktop.org one is not needed to tell the two apart, and costs seconds).  Skipped (77)
# without update-mime-database or gio.
# Usage: test-mime.sh ATTNSCOPE SOURCE_ROOT
set -u
A="$1"; R="$2"
command -v update-mime-database >/dev/null && command -v gio >/dev/null ||
  { echo "update-mime-database or gio missing: skipped"; exit 77; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$T/mime/packages"
cp "$R/data/io.github.attnscope.Attnscope.mime.xml" "$T/mime/packages/io.github.attnscope.Attnscope.xml"
PKGSYSTEM_ENABLE_FSYNC=0 update-mime-database "$T/mime" >/dev/null 2>&1 || fail "update-mime-database refused the XML"
"$A" run --model demo --text "The cat sat on the mat." -o "$T/a.safetensors" 2>/dev/null || fail "run -o"
type_of() { XDG_DATA_DIRS="$T" XDG_DATA_HOME="$T/none" gio info -a standard::content-type "$1" |
  sed -n 's/.*standard::content-type: //p'; }
got=$(type_of "$T/a.safetensors")
[ "$got" = application/x-attnscope-attention ] || fail "an attention file is '$got'"
got=$(type_of "$R/data/models/demo/model.safetensors")
[ "$got" != application/x-attnscope-attention ] || fail "the demo model's weights are taken for an attention file"
# a merged corpus statistics file (stats --corpus -o X.safetensors) is its own type
printf 'the cat sat on the mat .\na dog ran .\n' > "$T/c.txt"
"$A" stats --model demo --corpus "$T/c.txt" -o "$T/s.safetensors" 2>/dev/null || fail "stats -o"
got=$(type_of "$T/s.safetensors")
[ "$got" = application/x-attnscope-corpus-stats ] || fail "a corpus statistics file is '$got'"
got=$(type_of "$T/a.safetensors")
[ "$got" = application/x-attnscope-attention ] || fail "an attention file is '$got' beside the statistics type"
grep -q '^MimeType=.*application/x-attnscope-corpus-stats;' "$R/data/io.github.attnscope.Attnscope.desktop.in" ||
  fail "the desktop file does not open application/x-attnscope-corpus-stats"
# the desktop file opens that type
grep -q '^MimeType=application/x-attnscope-attention;' "$R/data/io.github.attnscope.Attnscope.desktop.in" ||
  fail "the desktop file does not open application/x-attnscope-attention"
# a session file (docs/session-file.md) by its glob and by its magic; a toy model's JSON is not one
printf '{\n\t"format":\t"attnscope-session/1",\n\t"model":\t{"builtin": "demo"}\n}\n' > "$T/s.attnscope-session"
cp "$T/s.attnscope-session" "$T/renamed.json"
got=$(type_of "$T/s.attnscope-session")
[ "$got" = application/x-attnscope-session ] || fail "a session file is '$got'"
got=$(type_of "$T/renamed.json")
[ "$got" = application/x-attnscope-session ] || fail "a session file named .json is '$got' (the magic)"
got=$(type_of "$R/data/models/worked-example.json")
[ "$got" != application/x-attnscope-session ] || fail "a toy model's JSON is taken for a session"
grep -q '^MimeType=.*application/x-attnscope-session;' "$R/data/io.github.attnscope.Attnscope.desktop.in" ||
  fail "the desktop file does not open application/x-attnscope-session"
# the desktop file's Exec (attnscope %F) on a bad session: exit 2 naming the file and the key,
# before any window (no display needed)
printf '{"format": "attnscope-session/1", "model": {"builtin": "demo"}, "head": "two"}' > "$T/bad.attnscope-session"
err=$(env -u DISPLAY -u WAYLAND_DISPLAY "$A" "$T/bad.attnscope-session" 2>&1); rc=$?
[ $rc = 2 ] || fail "attnscope BAD-SESSION exits $rc, not 2"
case "$err" in *"$T/bad.attnscope-session: key “head”"*) ;; *) fail "the message '$err' does not name the file and key";; esac
err=$(env -u DISPLAY -u WAYLAND_DISPLAY "$A" --session "$T/renamed.json" --model demo 2>&1); rc=$?
[ $rc = 2 ] || fail "--session with --model exits $rc, not 2"
# a teacher's lesson file with a malformed placeholder: --lesson exits 2 naming the step and key
printf '{"format": "attnscope-lesson/1", "title": "t", "steps": [{"question": "q", "answer": "{attn layer=0}"}]}' > "$T/bad-lesson.json"
err=$(env -u DISPLAY -u WAYLAND_DISPLAY "$A" --lesson "$T/bad-lesson.json" 2>&1); rc=$?
[ $rc = 2 ] || fail "--lesson BAD exits $rc, not 2"
case "$err" in *"$T/bad-lesson.json: steps[0]: key “answer”: {attn}: key “head” is missing"*) ;; *) fail "the message '$err' does not name the step and key";; esac
echo "ok: attention, statistics and session files typed, weights and toy models not"
