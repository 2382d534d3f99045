/* AtnSession's insides, shared by atn-session.c (the session: its state, running and
 * publishing results, the head statistics, opening models, the GPU probe, the GObject)
 * and atn-session-jobs.c (the work done off the main thread: a run, an open, and the
 * worker threads' priority).  Not for other files: they use atn-session.h. */
#pragma once

#include "atn-session.h"

#include "atn-whatif.h"

G_BEGIN_DECLS

struct _AtnSession {
    GObject parent_instance;

    AtnModelHandle *model;
    AtnResult *result;
    char *text, *text_pair;
    char *target;               /* an encoder-decoder's target text (atn_session_set_target) */
    int stack;                  /* the atn_stack_kind the views show (atn_session_set_stack) */
    GArray *ids;                /* token ids instead of text (models without a tokenizer), or NULL */
    char *run_notice;           /* what the window should say about the latest result, or NULL */
    int layer, head, query, hover_token;
    gboolean pick_clearest;     /* the next result chooses the head (nobody has chosen one yet) */
    atn_device device;
    atn_precision precision;    /* the runs' arithmetic (the preferences' "precision") */
    guint n_runs;
    AtnWhatif *whatif;          /* the what-if lab's changes every run gets, or NULL */
    gboolean thumb_style_set;   /* runs colour the Model view's thumbnails in: */
    atn_colormap thumb_cmap;
    gboolean thumb_shared;

    /* running */
    guint debounce_ms;
    guint debounce_id;
    gint64 last_change_us;      /* when the text last changed (monotonic) */
    gboolean start_pending;     /* debounce_id is a start on the next main-loop turn */
    GCancellable *run_cancel;   /* the run in flight, or NULL */
    struct run_job *run_job;    /* its job (owned by its task) while run_cancel is set */
    guint run_poll_id;          /* reads run_job's progress into run_fraction */
    double run_fraction;        /* layers done / layers of the run in flight */
    gboolean run_pending;       /* a newer request waits for the cancelled run to stop */
    GCancellable *gpu_probe_cancel;   /* the GPU probe, once per session (atn_worker) */
    GCancellable *stats_cancel; /* the head statistics of the result in flight (after it is
                                   published, see start_stats), or NULL */

    /* toy models with unsaved edits that are not shown now, by source: opening the same
       source again brings the edited model back instead of the file's */
    GHashTable *edited_toys;

    /* opening */
    GCancellable *open_cancel;
    char *opening;
    struct open_job *open_job;  /* the open in flight (owned by its task), or NULL */
    guint open_poll_id;         /* reads open_job's progress into open_fraction / open_stage */
    double open_fraction;
    const char *open_stage;

    /* GPU probe */
    gboolean gpu_available;
    char *gpu_reason;
};
/* A run of the model: what it needs, copied from the session when it starts. */
typedef struct run_job {
    AtnModelHandle *model;
    char *text, *text_pair;
    char *target;                /* an encoder-decoder's target text ("" the start token alone) */
    GArray *ids;
    atn_device device;
    atn_precision precision;
    AtnWhatif *whatif;
    gboolean thumbs;             /* colour the thumbnails in thumb_cmap / thumb_shared */
    atn_colormap thumb_cmap;
    gboolean thumb_shared;
    gboolean stats_now;          /* the head statistics before the result is published (the
                                    first result of a model picks its head with them) */
    GCancellable *cancellable;   /* the task's (not owned), or NULL on the main thread */
    gint permille;               /* written by the worker: how far the forward is, 0..1000 */
} run_job;

/* An open of a model: the sources to try, and the worker's progress. */
typedef struct open_job {
    char **sources;       /* tried in order */
    gboolean quiet;       /* sources[0] was not asked for by name: no notice when it fails */
    int opened;           /* index of the one that opened */
    char *first_error;    /* why sources[0] failed */
    GCancellable *cancellable;
    /* written by the worker, read by the main thread's poll */
    gint permille;        /* progress 0..1000 */
    gint stage;           /* the engine's atn_stage, or -1 before the first report */
} open_job;


/* atn-session.c, for atn-session-attention.c */
/* Starts an open of sources (taken) in a worker (thread), replacing any open in flight:
 * "opening" and its progress (the open_job's) follow it; done gets the GTask. */
void _atn_session_start_open(AtnSession *self, char **sources, gboolean quiet, GAsyncReadyCallback done,
                             GTaskThreadFunc thread);
/* In done: FALSE when a newer open replaced task's (then nothing more to do); else the
 * session stops "opening" and TRUE. */
gboolean _atn_session_end_open(AtnSession *self, GTask *task);
/* Shows an opened attention file (its handle) and its one result, as use_model does a model. */
void _atn_session_show_attention(AtnSession *self, AtnModelHandle *file, AtnResult *r);

/* atn-session-jobs.c */
void _atn_session_run_job_free(run_job *job);
/* The work itself: encode, run.  Any thread (the main thread for toy models). */
AtnResult *_atn_session_do_run(run_job *job, GCancellable *cancellable, GError **error);
/* A GTask thread function running _atn_session_do_run on the job (data) at worker priority. */
void _atn_session_run_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable);
void _atn_session_open_job_free(open_job *job);
/* The engine's stages, in the window's language ("" before the first report). */
const char *_atn_session_stage_title(gint stage);
/* A GTask thread function opening the job's (data) first source that opens. */
void _atn_session_open_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable);

G_END_DECLS
