#!/bin/sh
# The layering, checked on the source tree ROOT:
#  - engine/ may use libc, libm, OpenBLAS and cJSON only (no GLib/GTK/GIO/cairo/pango), and no
#    networking: no curl, no sockets, not engine/hub/ (the Hub client, a
#    library beside the engine proper that only app/ and ui/ link);
#  - ui/render/ draws with cairo and pango only (no GLib, GIO, GTK or GDK);
#  - app/, ui/ and engine/hub/ reach the engine through its public headers (engine/include/)
#    only: every other header of engine/ (and engine/cuda/) is internal.  One exception:
#    engine/hub/ may include json.h, the engine's one JSON parser (rule 2 of
#    docs/ARCHITECTURE.md: all JSON goes through engine/core/json.c), which needs only
#    attnscope.h and cJSON; app/ and ui/ may not;
#  - ui/atn-X-test.h (the functions a widget keeps for tests/ui/) is included by no file of
#    app/ and, in ui/, only by the .c files that define them: atn-X.c and atn-X-*.c.
# Usage: test-layering.sh ROOT          (exit 1 and the offending files on stderr)
# test-layering-planted.sh runs this on copies with planted violations.
root="$1"
status=0
bad=$(grep -rlE '#include *[<"](gtk|gdk|glib|gio|cairo|pango)' "$root/engine" 2>/dev/null)
[ -n "$bad" ] && { echo "engine/ includes GLib/GTK/cairo: $bad" >&2; status=1; }
bad=$(grep -rlE --exclude-dir=hub '#include *[<"](curl/|sys/socket[.]h|netdb[.]h|arpa/inet[.]h|netinet/|([^">]*/)?hub[.]h)' "$root/engine" 2>/dev/null)
[ -n "$bad" ] && { echo "engine/ includes networking (curl, sockets or engine/hub/): $bad" >&2; status=1; }
if [ -d "$root/ui/render" ]; then
  bad=$(grep -rlE '#include *[<"](gtk|gdk|glib|gio)[-/.a-z0-9]*' "$root/ui/render" 2>/dev/null)
  [ -n "$bad" ] && { echo "ui/render/ includes GLib/GIO/GTK: $bad" >&2; status=1; }
fi
# internal engine headers: the engine's own .h files outside engine/include
internal=$(cd "$root/engine" && find . -name '*.h' ! -path './include/*' ! -path './hub/*' | sed 's|.*/||' | sort -u)
for h in $internal; do
  # a header of the same name in app/, ui/ or engine/hub/ is theirs, not the engine's
  [ -n "$(find "$root/app" "$root/ui" "$root/engine/hub" -name "$h" 2>/dev/null)" ] && continue
  hre=$(printf '%s' "$h" | sed 's/[.]/[.]/g')
  if [ "$h" = json.h ]; then   # the Hub client parses JSON with the engine's parser
    bad=$(grep -rlE "#include *[<\"]([^\">]*/)?$hre[\">]" "$root/app" "$root/ui" 2>/dev/null)
  else
    bad=$(grep -rlE "#include *[<\"]([^\">]*/)?$hre[\">]" "$root/app" "$root/ui" "$root/engine/hub" 2>/dev/null)
  fi
  [ -n "$bad" ] && { echo "app/, ui/ or engine/hub/ include the engine-internal $h: $bad" >&2; status=1; }
done
bad=$(grep -rlE '#include *[<"]([^">]*/)?atn-[-a-z0-9]*-test[.]h' "$root/app" 2>/dev/null)
[ -n "$bad" ] && { echo "app/ includes a test header of ui/: $bad" >&2; status=1; }
for f in $(grep -lE '#include *"atn-[-a-z0-9]*-test[.]h"' "$root"/ui/*.c 2>/dev/null); do
  base=$(basename "$f" .c)
  for h in $(sed -n 's/^#include *"\(atn-[-a-z0-9]*\)-test[.]h".*/\1/p' "$f"); do
    case "$base" in "$h"|"$h"-*) ;; *) echo "ui/$base.c includes $h-test.h, a test header of another widget" >&2; status=1 ;; esac
  done
done
exit $status
