#!/bin/sh
# test-layering.sh must fail on each kind of violation: runs it on a small copy of the
# tree's layout (the real engine/app/ui files) with one violation planted at a time.
set -u
script="$1"; root="$2"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/layering.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
fail=0
fresh() {
  rm -rf "$tmp/t"; mkdir -p "$tmp/t"
  cp -r "$root/engine" "$root/app" "$root/ui" "$tmp/t/"
}
expect() {   # expect ok|fail WHAT
  if sh "$script" "$tmp/t" 2>"$tmp/err"; then got=ok; else got=fail; fi
  if [ "$got" != "$1" ]; then
    echo "not ok: $2: layering check said $got, expected $1" >&2; cat "$tmp/err" >&2; fail=1
  else
    echo "ok: $2"
  fi
}
fresh; expect ok "the tree as it is"
fresh; printf '#include "backend.h"\n' >> "$tmp/t/app/cmd-info.c"; expect fail "app/ includes backend.h"
fresh; printf '#include "model-private.h"\n' >> "$tmp/t/ui/atn-session.c"; expect fail "ui/ includes model-private.h"
fresh; printf '#include "../engine/forward/encoder.h"\n' >> "$tmp/t/ui/render/output.c"; expect fail "ui/render includes ../engine/forward/encoder.h"
fresh; printf '#include "kernels.h"\n' >> "$tmp/t/app/main.c"; expect fail "app/ includes engine/cuda/kernels.h"
fresh; printf '#include <glib.h>\n' >> "$tmp/t/ui/render/text.c"; expect fail "ui/render includes glib.h"
fresh; printf '#include <gio/gio.h>\n' >> "$tmp/t/ui/render/text.c"; expect fail "ui/render includes gio/gio.h"
fresh; printf '#include <gtk/gtk.h>\n' >> "$tmp/t/ui/render/text.c"; expect fail "ui/render includes gtk/gtk.h"
fresh; printf '#include <glib.h>\n' >> "$tmp/t/engine/forward/run.c"; expect fail "engine includes glib.h"
fresh; printf '#include <curl/curl.h>\n' >> "$tmp/t/engine/formats/hf-cache.c"; expect fail "engine includes curl/curl.h"
fresh; printf '#include <sys/socket.h>\n' >> "$tmp/t/engine/core/model.c"; expect fail "engine includes sys/socket.h"
fresh; printf '#include "hub.h"\n' >> "$tmp/t/engine/core/model.c"; expect fail "engine includes engine/hub/hub.h"
fresh; printf '#include "model-private.h"\n' >> "$tmp/t/engine/hub/hub.c"; expect fail "engine/hub/ includes model-private.h"
fresh; printf '#include "files.h"\n' >> "$tmp/t/engine/hub/sha256.c"; expect fail "engine/hub/ includes files.h"
fresh; printf '#include "json.h"\n' >> "$tmp/t/app/cmd-info.c"; expect fail "app/ includes json.h"
fresh; printf '#include "json.h"\n' >> "$tmp/t/ui/atn-session.c"; expect fail "ui/ includes json.h"
fresh; printf '#include "atn-heatmap-test.h"\n' >> "$tmp/t/app/gui-main.c"; expect fail "app/ includes atn-heatmap-test.h"
fresh; printf '#include "atn-heatmap-test.h"\n' >> "$tmp/t/ui/atn-session.c"; expect fail "ui/atn-session.c includes atn-heatmap-test.h"
fresh; printf '#include "atn-window-test.h"\n' >> "$tmp/t/ui/atn-window-export.c"; expect ok "ui/atn-window-export.c includes atn-window-test.h"
fresh; printf '#include "attnscope.h"\n#include "analysis.h"\n' >> "$tmp/t/app/main.c"; expect ok "app/ includes the public headers"
exit $fail
