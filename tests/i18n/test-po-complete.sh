#!/bin/sh
# Every string the program marks for translation has a Chinese translation: the strings are
# extracted afresh from the files po/POTFILES lists (as `ninja attnscope-pot` would), merged
# with po/zh_CN.po, and any msgid left untranslated or only fuzzily matched is named.  Also
# every source file that calls _() is in po/POTFILES, so no file is skipped by extraction.
# Usage: test-po-complete.sh SOURCE_ROOT
set -u
src=$1
d=$(mktemp -d); trap 'rm -rf "$d"' EXIT
command -v xgettext >/dev/null && command -v msgmerge >/dev/null || { echo "SKIP: no gettext tools"; exit 77; }
fail=0
for f in $(cd "$src" && { grep -lE '(^|[^A-Za-z0-9_])(_|N_|C_|g_dngettext|ngettext)\(' ui/*.c ui/render/*.c app/*.c;
                         grep -l 'translatable="yes"' ui/*.ui ui/gtk/*.ui; } 2>/dev/null); do
  grep -qx "$f" "$src/po/POTFILES" || { echo "FAIL: $f marks strings for translation but is not in po/POTFILES"; fail=1; }
done
(cd "$src" && xgettext --files-from=po/POTFILES --keyword=_ --keyword=N_ --keyword=C_:1c,2 \
   --keyword=NC_:1c,2 --keyword=g_dngettext:2,3 --keyword=ngettext:1,2 --from-code=UTF-8 \
   --add-comments -o "$d/attnscope.pot") || { echo "FAIL: xgettext"; exit 1; }
msgmerge -q "$src/po/zh_CN.po" "$d/attnscope.pot" -o "$d/zh_CN.po" || { echo "FAIL: msgmerge"; exit 1; }
untranslated=$(msgattrib --untranslated --no-obsolete "$d/zh_CN.po" | grep -c '^msgid ' )
fuzzy=$(msgattrib --only-fuzzy --no-obsolete "$d/zh_CN.po" | grep -c '^msgid ')
# msgattrib prints the header entry (msgid "") first when it prints anything
[ "$untranslated" -gt 0 ] && untranslated=$((untranslated - 1))
[ "$fuzzy" -gt 0 ] && fuzzy=$((fuzzy - 1))
if [ "$untranslated" -gt 0 ] || [ "$fuzzy" -gt 0 ]; then
  echo "FAIL: po/zh_CN.po lacks $untranslated translations and has $fuzzy only fuzzily matched:"
  msgattrib --untranslated --no-obsolete "$d/zh_CN.po" | sed -n '/^#:/,$p'
  msgattrib --only-fuzzy --no-obsolete "$d/zh_CN.po" | sed -n '/^#:/,$p'
  fail=1
fi
msgfmt -c -o "$d/zh_CN.mo" "$src/po/zh_CN.po" || { echo "FAIL: msgfmt -c po/zh_CN.po"; fail=1; }
total=$(grep -c '^msgid ' "$d/attnscope.pot")
[ $fail = 0 ] && echo "PASS: $((total - 1)) strings, all translated"
exit $fail
