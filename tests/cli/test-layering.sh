#!/bin/sh
# engine/ may use libc, libm, OpenBLAS and cJSON only; ui/render/ may not use GTK.
root="$1"
bad=$(grep -rlE '#include *[<"](gtk|gdk|glib|gio|cairo|pango)' "$root/engine" 2>/dev/null)
[ -n "$bad" ] && { echo "engine/ includes GLib/GTK/cairo: $bad" >&2; exit 1; }
if [ -d "$root/ui/render" ]; then
  bad=$(grep -rlE '#include *[<"](gtk|gdk)/' "$root/ui/render" 2>/dev/null)
  [ -n "$bad" ] && { echo "ui/render/ includes GTK: $bad" >&2; exit 1; }
fi
exit 0
