/* The window's memory budget for its runs (atn-memory-limit.h). */
#include "atn-memory-limit.h"

static size_t memory_limit;   /* written at startup, before any worker: atomics for the readers anyway */

bool atn_ui_parse_size(const char *text, size_t *out) { return atn_parse_size(text, out); }

void atn_ui_set_memory_limit(size_t bytes) { __atomic_store_n(&memory_limit, bytes, __ATOMIC_RELEASE); }

size_t atn_ui_get_memory_limit(void) { return __atomic_load_n(&memory_limit, __ATOMIC_ACQUIRE); }

void atn_ui_run_options_init(atn_run_options *o) {
    atn_run_options_init(o);
    o->memory_limit = atn_ui_get_memory_limit();
}
