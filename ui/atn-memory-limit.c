/* The window's memory budget for its runs (atn-memory-limit.h). */
#include "atn-memory-limit.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

static size_t memory_limit;   /* written at startup, before any worker: atomics for the readers anyway */

bool atn_ui_parse_size(const char *text, size_t *out) {
    char *end = NULL;
    errno = 0;
    double v = text && *text && !isspace((unsigned char)*text) ? strtod(text, &end) : -1;
    if (!end || end == text || errno || !isfinite(v) || v <= 0)
        return false;
    double unit = 1;
    if (*end) {
        switch (toupper((unsigned char)*end)) {
        case 'K': unit = 1024.0; break;
        case 'M': unit = 1024.0 * 1024; break;
        case 'G': unit = 1024.0 * 1024 * 1024; break;
        case 'T': unit = 1024.0 * 1024 * 1024 * 1024; break;
        default: return false;
        }
        end++;
        if (*end == 'i' && end[1] == 'B')
            end += 2;
        else if (toupper((unsigned char)*end) == 'B')
            end++;
        if (*end)
            return false;
    }
    v *= unit;
    if (v < 1 || v >= 9.0e18)
        return false;
    *out = (size_t)v;
    return true;
}

void atn_ui_set_memory_limit(size_t bytes) { __atomic_store_n(&memory_limit, bytes, __ATOMIC_RELEASE); }

size_t atn_ui_get_memory_limit(void) { return __atomic_load_n(&memory_limit, __ATOMIC_ACQUIRE); }

void atn_ui_run_options_init(atn_run_options *o) {
    atn_run_options_init(o);
    o->memory_limit = atn_ui_get_memory_limit();
}
