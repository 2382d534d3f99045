/* Engine errors in the window's language: see atn-error-text.h. */
#include "atn-error-text.h"

#include "config.h"

#include <glib/gi18n.h>

char *atn_error_text(const atn_error *err) {
    if (!err)
        return g_strdup("");
    if (err->format && err->format[0]) {
        const char *tr = g_dgettext(GETTEXT_PACKAGE, err->format);
        char out[ATN_ERROR_MAX * 2];
        if (tr != err->format && atn_error_translate(err, tr, out, sizeof out))
            return g_strdup(out);
    }
    return g_strdup(err->message[0] ? err->message : atn_status_str(err->status));
}
