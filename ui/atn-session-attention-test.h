/* For tests: the size from which the window opens an attention file lazily
 * (ui/atn-session-attention.c). */
#ifndef ATN_SESSION_ATTENTION_TEST_H
#define ATN_SESSION_ATTENTION_TEST_H

#include <glib.h>

/* An attention file whose attention ([L][H][n][n] floats) takes at least this many bytes is
 * opened lazily: no layer read at open, each checked when first shown. */
#define ATN_SESSION_ATTENTION_LAZY_BYTES ((guint64)256 << 20)

/* Every later open in this process uses bytes instead (0: every file lazily).  Any thread. */
void atn_session_set_attention_lazy_bytes(guint64 bytes);

#endif
