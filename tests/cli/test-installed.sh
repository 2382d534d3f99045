#!/bin/sh
# The installed layout: `meson install --destdir` puts the program, the built-in models (not
# their training scripts), the man page, the desktop file, the metainfo, the schema, the
# icons and the translations where the package expects them; the installed program, run from
# outside the build tree, reads only its install prefix (never the source tree it was built
# from), and with that prefix's data (ATTNSCOPE_DATADIR) its demo run equals the torch figures
# committed with the demo model.
# Usage: test-installed.sh BUILD SOURCE NPY_DIFF
set -u
build=$1; src=$2; npy_diff=$3
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
meson install -C "$build" --no-rebuild --destdir "$d/root" --quiet > "$d/install.log" 2>&1 ||
  { cat "$d/install.log"; fail "meson install --destdir failed"; }
prefix=$(meson introspect "$build" --buildoptions | python3 -c \
  "import json,sys; print(next(o['value'] for o in json.load(sys.stdin) if o['name']=='prefix'))")
p="$d/root$prefix"
for f in bin/attnscope share/attnscope/models/demo/model.safetensors share/attnscope/models/demo/vocab.txt \
         share/attnscope/models/demo-gpt2/model.safetensors share/attnscope/models/demo-gpt2/merges.txt \
         share/attnscope/models/worked-example.json share/attnscope/examples.txt \
         share/man/man1/attnscope.1 share/applications/io.github.attnscope.Attnscope.desktop \
         share/metainfo/io.github.attnscope.Attnscope.metainfo.xml \
         share/mime/packages/io.github.attnscope.Attnscope.xml \
         share/glib-2.0/schemas/io.github.attnscope.Attnscope.gschema.xml \
         share/icons/hicolor/scalable/apps/io.github.attnscope.Attnscope.svg \
         share/locale/zh_CN/LC_MESSAGES/attnscope.mo; do
  [ -s "$p/$f" ] || fail "$prefix/$f is not installed"
done
# The desktop file opens the attention file's MIME type, which the installed package defines.
mime=$(sed -n 's/^MimeType=\([^;]*\);.*/\1/p' "$p/share/applications/io.github.attnscope.Attnscope.desktop")
[ -n "$mime" ] && grep -q "type=\"$mime\"" "$p/share/mime/packages/io.github.attnscope.Attnscope.xml" ||
  fail "the desktop file's MimeType ($mime) is not defined in share/mime/packages"
for t in demo demo-gpt2; do [ -e "$p/share/attnscope/models/$t/train" ] && fail "the $t training scripts are installed"; done

# Outside the build tree, with no ATTNSCOPE_DATADIR: only the prefix counts.
unset ATTNSCOPE_DATADIR
if [ ! -d "$prefix/share/attnscope/models" ]; then
  out=$("$p/bin/attnscope" run --model demo --text "the cat" -o "$d/x.npy" 2>&1); rc=$?
  [ $rc = 2 ] || fail "installed attnscope without its data exited $rc, not 2: $out"
  echo "$out" | grep -q "$prefix/share/attnscope" || fail "the message does not name $prefix/share/attnscope: $out"
  echo "without data: exit 2, $out"
else
  echo "note: $prefix/share/attnscope exists on this machine; the no-data case is not checked"
fi

text=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[0]['text'])" \
  "$src/data/models/demo/train/check/sentences.json")
ATTNSCOPE_DATADIR="$p/share/attnscope" "$p/bin/attnscope" run --model demo --text "$text" -o "$d/attn.npy" ||
  fail "installed attnscope run --model demo failed"
"$npy_diff" "$d/attn.npy" "$src/data/models/demo/train/check/attn_0.npy" 1e-5 ||
  fail "the installed program's demo attention differs from the torch figures"
echo "PASS"
