/* An engine error as the window shows it: the engine's messages are English printf formats
 * with arguments (atn_error.format / args); when the translation catalogue has the format,
 * the message is rebuilt from the translation (atn_error_translate), else it is shown as
 * the engine wrote it. */
#pragma once

#include "attnscope.h"

#include <glib.h>

/* A new string (g_free) with err's message in the window's language; "" for NULL. */
char *atn_error_text(const atn_error *err);
