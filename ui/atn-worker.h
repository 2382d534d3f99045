/* A widget's work in a GTask worker thread whose answer the widget takes only while it still
 * waits for it: the window's one helper for its workers (docs/ARCHITECTURE.md, "Threads"):
 * the Model grid's recolour, the Token lines' drawing, the head statistics, the Similarity
 * view's comparison, the What-if comparison, the Half Precision window's runs, the Get a
 * Model dialog's lookup and download, and the session's GPU probe.  The widget keeps one
 * GCancellable pointer per kind of work in its instance struct (the slot): set while the
 * work is in flight, cleared when it is cancelled, replaced or done, so a stale answer is
 * recognised by its cancellable no longer being the slot's.
 * The others keep their own GTask on purpose, because their done must run for work the
 * slot rule would drop: the session's run (one in flight and one pending: its done starts
 * the pending one, atn-session.c run_done), the session's open (its done says that a
 * cancelled open was cancelled and falls back to the demo), and the _async/_finish pairs
 * whose caller owns the cancellable (atn_corpus_pass_async, the exports). */
#ifndef ATN_WORKER_H
#define ATN_WORKER_H

#include <gio/gio.h>

G_BEGIN_DECLS

/* The work, on the worker thread: reads job (and nothing of the widget), returns the answer
 * (NULL for none); cancellable is the slot's, for the engine's progress callbacks. */
typedef gpointer (*AtnWorkerFunc)(gpointer job, GCancellable *cancellable);
/* On the main thread, for the work still in the slot only (the slot already cleared): answer
 * is borrowed (NULL when the work returned none), job is the one given to the work. */
typedef void (*AtnWorkerDoneFunc)(gpointer owner, gpointer answer, gpointer job);

typedef enum {
    ATN_WORKER_NORMAL = 0,
    ATN_WORKER_NICE = 1 << 0,   /* the worker thread lowers its priority first
                                   (atn_session_lower_thread_priority: nice 10) */
    ATN_WORKER_TAKE = 1 << 1,   /* done takes the answer (answer_free frees only answers
                                   that are dropped) */
} AtnWorkerFlags;

/* Starts run(job, cancellable) in a GTask worker for owner (a GObject, kept alive until the
 * task is done).  *slot must be NULL: it gets a new GCancellable, the task's.  When the work
 * returns, on the main thread: if *slot is still that cancellable, it is cleared and
 * done(owner, answer, job) is called; otherwise (cancelled through atn_worker_cancel, or
 * another work put in the slot) the answer is dropped and done is not called.  The answer is
 * freed with answer_free (may be NULL) after done returns (unless ATN_WORKER_TAKE) or when
 * dropped; job with job_free (may be NULL) when the task is freed. */
void atn_worker_start(gpointer owner, GCancellable **slot, AtnWorkerFlags flags, AtnWorkerFunc run,
                      gpointer job, GDestroyNotify job_free, GDestroyNotify answer_free, AtnWorkerDoneFunc done);

/* Work that can fail: returns the answer, or NULL and sets *error (G_IO_ERROR_CANCELLED when
 * the engine stopped at the cancellable).  Its done gets the error (NULL on success): */
typedef gpointer (*AtnWorkerFallibleFunc)(gpointer job, GCancellable *cancellable, GError **error);
typedef void (*AtnWorkerFallibleDoneFunc)(gpointer owner, gpointer answer, const GError *error,
                                          gpointer job);

/* atn_worker_start for work that can fail, with the same slot rule (done only for the work
 * still in the slot; a failure of work no longer awaited is dropped with it).  With
 * ATN_WORKER_NICE and a name, the thread lowers its priority under that name
 * (atn_session_lower_worker_priority: "whatif", "precision" ..., which tests read back);
 * name NULL: as atn_worker_start. */
void atn_worker_start_fallible(gpointer owner, GCancellable **slot, AtnWorkerFlags flags,
                               const char *name, AtnWorkerFallibleFunc run, gpointer job,
                               GDestroyNotify job_free, GDestroyNotify answer_free,
                               AtnWorkerFallibleDoneFunc done);

/* Cancels the work in *slot, if any, and clears *slot: its answer will be dropped.  NULL
 * *slot: nothing. */
void atn_worker_cancel(GCancellable **slot);

G_END_DECLS

#endif
