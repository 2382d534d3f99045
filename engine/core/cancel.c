/* The thread's cancel scope (cancel.h). */
#include "core/cancel.h"

#include <stddef.h>

static _Thread_local atn_cancel_scope *current;

void atn_cancel_enter(atn_cancel_scope *s, atn_progress_fn fn, void *user_data, double fraction,
                      atn_stage stage) {
    *s = (atn_cancel_scope){fn, user_data, fraction, stage, 0, false, current};
    current = s;
}

void atn_cancel_leave(atn_cancel_scope *s) {
    if (current == s)
        current = s->outer;
}

bool atn_cancel_now(void) {
    atn_cancel_scope *s = current;
    if (!s || !s->fn)
        return false;
    if (!s->stopped && !s->fn(s->fraction, s->stage, s->user_data))
        s->stopped = true;
    return s->stopped;
}

bool atn_cancel_poll(void) {
    atn_cancel_scope *s = current;
    if (!s || !s->fn)
        return false;
    if (s->stopped)
        return true;
    if (++s->tick % ATN_CANCEL_EVERY != 0)
        return false;
    return atn_cancel_now();
}

atn_status atn_cancel_error(atn_error *err, const char *what) {
    return atn_error_set(err, ATN_E_CANCELLED, "cancelled while %s", what);
}
