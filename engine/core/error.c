/* Status codes and the error messages the engine hands back to callers. */
#include "attnscope.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
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
    case ATN_STAGE_STATISTICS: return "statistics";
    case ATN_STAGE_TOKENIZE: return "tokenizing";
    case ATN_STAGE_FLOW: return "attention flow";
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

static uint32_t message_hash(const char *s) {
    uint32_t h = 2166136261u;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 16777619u;
    return h;
}

/* Prints each conversion of fmt with its argument into err->args (see attnscope.h).
 * False when a conversion is one the engine does not use (%n, numbered ones), there are
 * too many, or one does not fit. */
static bool capture_args(atn_error *err, const char *fmt, va_list ap) {
    err->n_args = 0;
    for (const char *p = fmt; *p; p++) {
        if (*p != '%')
            continue;
        if (p[1] == '%') {
            p++;
            continue;
        }
        if (err->n_args >= ATN_ERROR_ARGS)
            return false;
        char spec[64];
        size_t n = 0;
        spec[n++] = '%';
        p++;
        while (*p && strchr("-+ #0'", *p) && n < 20)
            spec[n++] = *p++;
        for (int part = 0; part < 2; part++) {   /* width, then .precision */
            if (part == 1) {
                if (*p != '.')
                    break;
                spec[n++] = *p++;
            }
            if (*p == '*') {
                n += (size_t)snprintf(spec + n, sizeof spec - n, "%d", va_arg(ap, int));
                p++;
            } else {
                while (*p >= '0' && *p <= '9' && n < 40)
                    spec[n++] = *p++;
            }
            if (n >= 44)
                return false;
        }
        int longs = 0;
        char len = 0;
        while (*p && strchr("hlLzjt", *p) && n < 48) {
            if (*p == 'l')
                longs++;
            len = *p;
            spec[n++] = *p++;
        }
        char conv = *p;
        if (!conv)
            return false;
        spec[n++] = conv;
        spec[n] = '\0';
        char *out = err->args[err->n_args];
        int w;
        if (conv == 'd' || conv == 'i') {
            if (len == 'z' || len == 't')
                w = snprintf(out, ATN_ERROR_ARG_MAX, spec, va_arg(ap, ptrdiff_t));
            else if (len == 'j')
                w = snprintf(out, ATN_ERROR_ARG_MAX, spec, va_arg(ap, intmax_t));
            else if (longs >= 2)
                w = snprintf(out, ATN_ERROR_ARG_MAX, spec, va_arg(ap, long long));
            else if (longs == 1)
                w = snprintf(out, ATN_ERROR_ARG_MAX, spec, va_arg(ap, long));
            else
                w = snprintf(out, ATN_ERROR_ARG_MAX, spec, va_arg(ap, int));
        } else if (conv == 'u' || conv == 'x' || conv == 'X' || conv == 'o') {
            if (len == 'z' || len == 't')
                w = snprintf(out, ATN_ERROR_ARG_MAX, spec, va_arg(ap, size_t));
            else if (len == 'j')
                w = snprintf(out, ATN_ERROR_ARG_MAX, spec, va_arg(ap, uintmax_t));
            else if (longs >= 2)
                w = snprintf(out, ATN_ERROR_ARG_MAX, spec, va_arg(ap, unsigned long long));
            else if (longs == 1)
                w = snprintf(out, ATN_ERROR_ARG_MAX, spec, va_arg(ap, unsigned long));
            else
                w = snprintf(out, ATN_ERROR_ARG_MAX, spec, va_arg(ap, unsigned));
        } else if (conv == 'c') {
            w = snprintf(out, ATN_ERROR_ARG_MAX, spec, va_arg(ap, int));
        } else if (conv == 's') {
            const char *v = va_arg(ap, const char *);
            w = snprintf(out, ATN_ERROR_ARG_MAX, spec, v ? v : "(null)");
        } else if (conv == 'p') {
            w = snprintf(out, ATN_ERROR_ARG_MAX, spec, va_arg(ap, void *));
        } else if (strchr("eEfFgGaA", conv)) {
            if (len == 'L')
                w = snprintf(out, ATN_ERROR_ARG_MAX, spec, va_arg(ap, long double));
            else
                w = snprintf(out, ATN_ERROR_ARG_MAX, spec, va_arg(ap, double));
        } else {
            return false;
        }
        if (w < 0 || w >= ATN_ERROR_ARG_MAX)
            return false;
        err->n_args++;
    }
    return true;
}

atn_status atn_error_set(atn_error *err, atn_status status, const char *fmt, ...) {
    if (err) {
        va_list ap, aq;
        va_start(ap, fmt);
        va_copy(aq, ap);
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        err->format = capture_args(err, fmt, aq) ? fmt : NULL;
        va_end(aq);
        va_end(ap);
        err->status = status;
        err->prefix_len = 0;
        err->check = message_hash(err->message);
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
    bool whole = ol == strlen(old) && err->check == message_hash(old);
    if (!whole)
        err->format = NULL;   /* cut, or written by hand since: not rebuilt */
    err->prefix_len += (int32_t)(pl + 2);
    err->check = message_hash(err->message);
    return err->status;
}

bool atn_error_translate(const atn_error *err, const char *translated, char *out, size_t size) {
    if (!out || !size)
        return false;
    out[0] = '\0';
    if (!err)
        return false;
    snprintf(out, size, "%s", err->message);
    if (!err->format || !translated || err->check != message_hash(err->message) || err->prefix_len < 0 ||
        (size_t)err->prefix_len > strlen(err->message) || err->n_args < 0 || err->n_args > ATN_ERROR_ARGS)
        return false;
    char buf[ATN_ERROR_MAX * 2];
    size_t n = 0;
    int next = 0;
#define PUT(s, len)                                                                        \
    do {                                                                                   \
        size_t l_ = (len);                                                                 \
        if (n + l_ >= sizeof buf)                                                          \
            return false;                                                                  \
        memcpy(buf + n, (s), l_);                                                          \
        n += l_;                                                                           \
    } while (0)
    PUT(err->message, (size_t)err->prefix_len);
    for (const char *p = translated; *p; p++) {
        if (*p != '%') {
            PUT(p, 1);
            continue;
        }
        if (p[1] == '%') {
            PUT("%", 1);
            p++;
            continue;
        }
        p++;
        int idx = next++;
        const char *q = p;
        int num = 0;
        while (*q >= '0' && *q <= '9')
            num = num * 10 + (*q++ - '0');
        if (*q == '$' && q > p) {   /* "%2$s" */
            idx = num - 1;
            p = q + 1;
        }
        while (*p && strchr("-+ #0'.123456789hlLzjt", *p))
            p++;
        if (!*p || *p == '*' || !strchr("diuxXocspeEfFgGaA", *p))
            return false;
        if (idx < 0 || idx >= err->n_args)
            return false;
        PUT(err->args[idx], strlen(err->args[idx]));
    }
#undef PUT
    buf[n] = '\0';
    snprintf(out, size, "%s", buf);
    return true;
}

void atn_error_clear(atn_error *err) {
    if (err) {
        err->status = ATN_OK;
        err->message[0] = '\0';
        err->format = NULL;
        err->n_args = err->prefix_len = 0;
        err->check = message_hash(err->message);
    }
}
