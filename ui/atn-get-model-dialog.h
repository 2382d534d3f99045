/* "Get a Model…": type a Hugging Face model id, see the files attnscope would fetch and their
 * sizes, download them into the shared cache (engine/hub/hub.h) with a progress bar and Cancel, and
 * open the model when done.  The lookup and the download run on worker threads (GTask); the
 * dialog's fields belong to the main thread. */
#pragma once

#include <gtk/gtk.h>

#include "atn-window.h"

G_BEGIN_DECLS

#define ATN_TYPE_GET_MODEL_DIALOG (atn_get_model_dialog_get_type())
G_DECLARE_FINAL_TYPE(AtnGetModelDialog, atn_get_model_dialog, ATN, GET_MODEL_DIALOG, GtkWindow)

typedef enum {
    ATN_GET_MODEL_IDLE = 0,     /* nothing asked yet, or the id was edited */
    ATN_GET_MODEL_LOOKING_UP,   /* asking the Hub for the file list */
    ATN_GET_MODEL_READY,        /* the files are listed; Download is possible */
    ATN_GET_MODEL_DOWNLOADING,
    ATN_GET_MODEL_DONE,         /* downloaded; the window is opening it */
    ATN_GET_MODEL_FAILED,       /* the message says why */
    ATN_GET_MODEL_CANCELLED,    /* the partial file is kept for the next try */
} AtnGetModelState;

/* A dialog transient for parent; the model it downloads opens in parent's session. */
AtnGetModelDialog *atn_get_model_dialog_new(AtnWindow *parent);

G_END_DECLS
