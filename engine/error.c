/* Status codes and the error messages the engine hands back to callers. */
#include "attnscope.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

const char *atn_stage_name(atn_stage stage) {
    switch (stage) {
    case ATN_STAGE_READ_CONFIG: return "reading config.json";
    case ATN_STAGE_MAP_WEIGHTS: return "mapping weights";
    case ATN_STAGE_CONVERT_WEIGHTS: return "converting weights";
    case ATN_STAGE_READ_VOCAB: return "reading vocab.txt";
    case ATN_STAGE_LAYER: return "layer";
    case ATN_STAGE_CORPUS: return "reading the corpus";
    case ATN_STAGE_SIMILARITY: return "similarity";
    case ATN_STAGE_DONE: return "done";
    case ATN_STAGE_COUNT: break;
    }
    return "?";
}

const char *atn_status_str(atn_status status) {
    switch (status) {
    case ATN_OK: return "ok";
    case ATN_E_INVALID: return "invalid input";
    case ATN_E_IO: return "input/output error";
    case ATN_E_FORMAT: return "malformed file";
    case ATN_E_SHAPE: return "wrong shape";
    case ATN_E_NOMEM: return "out of memory";
    case ATN_E_CANCELLED: return "cancelled";
    case ATN_E_DEVICE: return "device not usable";
    case ATN_E_UNSUPPORTED: return "unsupported";
    }
    return "unknown status";
}

atn_status atn_error_set(atn_error *err, atn_status status, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        va_end(ap);
        err->status = status;
    }
    return status;
}

atn_status atn_error_prefix(atn_error *err, const char *fmt, ...) {
    if (!err)
        return ATN_OK;
    char prefix[ATN_ERROR_MAX], old[ATN_ERROR_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, err->message, sizeof old);
    size_t pl = strlen(prefix);
    if (pl > sizeof err->message - 3)
        pl = sizeof err->message - 3;
    memcpy(err->message, prefix, pl);
    memcpy(err->message + pl, ": ", 2);
    size_t room = sizeof err->message - pl - 3;
    size_t ol = strnlen(old, room);
    memcpy(err->message + pl + 2, old, ol);
    err->message[pl + 2 + ol] = '\0';
    return err->status;
}

void atn_error_clear(atn_error *err) {
    if (err) {
        err->status = ATN_OK;
        err->message[0] = '\0';
    }
}
