/* The window's memory budget for its runs: `attnscope --memory-limit SIZE` (as every command
 * that runs a model takes it), set once at startup before any run, read by every place in the
 * window that fills atn_run_options (atn_ui_run_options_init). */
#ifndef ATN_MEMORY_LIMIT_H
#define ATN_MEMORY_LIMIT_H

#include "attnscope.h"

#include <stdbool.h>
#include <stddef.h>

/* "800M", "2G", "1.5GiB", "1500000000": bytes (K, M, G, T are powers of 1024; an optional B or
 * iB after them), as the command line's --memory-limit reads it.  false for anything else, NULL,
 * zero or negative (out untouched).  atn_parse_size, the one parser. */
bool atn_ui_parse_size(const char *text, size_t *out);

/* The budget for the window's runs (0: the engine's default, from physical memory and any
 * cgroup limit).  Set from the main thread before runs start; read from any thread. */
void atn_ui_set_memory_limit(size_t bytes);
size_t atn_ui_get_memory_limit(void);

/* The budget in words for the Preferences window, translated: "800.0 MiB, from --memory-limit",
 * or "17.6 GiB now: the default, 3/4 of this computer's memory" (the cgroup's or ulimit -v's
 * bound named when that is the least).  Newly allocated (g_free).  The main thread. */
char *atn_ui_memory_limit_text(void);

/* atn_run_options_init, then the window's memory budget. */
void atn_ui_run_options_init(atn_run_options *o);

#endif
