/* The window's memory budget for its runs (atn-memory-limit.h). */
#include "atn-memory-limit.h"

#include <glib/gi18n.h>

static size_t memory_limit;   /* written at startup, before any worker: atomics for the readers anyway */

bool atn_ui_parse_size(const char *text, size_t *out) { return atn_parse_size(text, out); }

void atn_ui_set_memory_limit(size_t bytes) { __atomic_store_n(&memory_limit, bytes, __ATOMIC_RELEASE); }

size_t atn_ui_get_memory_limit(void) { return __atomic_load_n(&memory_limit, __ATOMIC_ACQUIRE); }

void atn_ui_run_options_init(atn_run_options *o) {
    atn_run_options_init(o);
    o->memory_limit = atn_ui_get_memory_limit();
}

char *atn_ui_memory_limit_text(void) {
    size_t set = atn_ui_get_memory_limit();
    if (set) {
        g_autofree char *size = g_format_size_full(set, G_FORMAT_SIZE_IEC_UNITS);
        /* TRANSLATORS: the window's memory budget, as `attnscope --memory-limit SIZE` set it */
        return g_strdup_printf(_("%s, from --memory-limit"), size);
    }
    atn_memory_bound bound = ATN_MEMORY_BOUND_PHYSICAL;
    g_autofree char *size = g_format_size_full(atn_default_memory_budget(&bound), G_FORMAT_SIZE_IEC_UNITS);
    const char *why = bound == ATN_MEMORY_BOUND_CGROUP      ? _("what the memory cgroup leaves")
                      : bound == ATN_MEMORY_BOUND_RLIMIT_AS ? _("what ulimit -v leaves")
                                                            : _("3/4 of this computer's memory");
    /* TRANSLATORS: the default memory budget now, then which bound it is */
    return g_strdup_printf(_("%s now: the default, %s"), size, why);
}
