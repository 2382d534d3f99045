/* A widget's work in a GTask worker, its answer taken only while still awaited: see
 * atn-worker.h. */
#include "atn-worker.h"

#include "atn-session.h"

typedef struct worker {
    GCancellable **slot;   /* in the owner's instance struct: the owner outlives the task */
    AtnWorkerFlags flags;
    const char *name;      /* static storage: the worker's name for its priority, or NULL */
    AtnWorkerFunc run;     /* one of run and run_fallible */
    AtnWorkerFallibleFunc run_fallible;
    AtnWorkerDoneFunc done;   /* one of done and done_fallible */
    AtnWorkerFallibleDoneFunc done_fallible;
    gpointer job;
    GDestroyNotify job_free, answer_free;
} worker;

static void worker_free(worker *w) {
    if (w->job_free)
        w->job_free(w->job);
    g_free(w);
}

static void worker_thread(GTask *task, gpointer source, gpointer data, GCancellable *cancellable) {
    worker *w = data;
    if ((w->flags & ATN_WORKER_NICE) && w->name)
        atn_session_lower_worker_priority(w->name);   /* the main thread comes first */
    else if (w->flags & ATN_WORKER_NICE)
        atn_session_lower_thread_priority();
    if (!w->run_fallible) {
        g_task_return_pointer(task, w->run(w->job, cancellable), w->answer_free);
        return;
    }
    GError *error = NULL;
    gpointer answer = w->run_fallible(w->job, cancellable, &error);
    if (error) {
        if (answer && w->answer_free)
            w->answer_free(answer);
        g_task_return_error(task, error);
    } else {
        g_task_return_pointer(task, answer, w->answer_free);
    }
}

static void worker_done(GObject *source, GAsyncResult *res, gpointer user_data) {
    GTask *task = G_TASK(res);
    worker *w = g_task_get_task_data(task);
    g_autoptr(GError) error = NULL;
    gpointer answer = g_task_propagate_pointer(task, &error);   /* NULL once cancelled */
    gboolean taken = FALSE;
    if (g_task_get_cancellable(task) == *w->slot) {
        g_clear_object(w->slot);
        if (w->done_fallible)
            w->done_fallible(source, answer, error, w->job);
        else
            w->done(source, answer, w->job);
        taken = (w->flags & ATN_WORKER_TAKE) != 0;
    }   /* else cancelled (the owner's state moved on) and maybe replaced: dropped */
    if (answer && !taken && w->answer_free)
        w->answer_free(answer);
}

static void start(gpointer owner, GCancellable **slot, worker *w) {
    *slot = g_cancellable_new();
    g_autoptr(GTask) task = g_task_new(owner, *slot, worker_done, NULL);
    g_task_set_source_tag(task, atn_worker_start);
    g_task_set_task_data(task, w, (GDestroyNotify)worker_free);
    g_task_run_in_thread(task, worker_thread);
}

/* A worker with what both kinds share; the caller sets its run and done. */
static worker *worker_new(GCancellable **slot, AtnWorkerFlags flags, gpointer job, GDestroyNotify job_free,
                          GDestroyNotify answer_free) {
    worker *w = g_new0(worker, 1);
    w->slot = slot;
    w->flags = flags;
    w->job = job;
    w->job_free = job_free;
    w->answer_free = answer_free;
    return w;
}

void atn_worker_start(gpointer owner, GCancellable **slot, AtnWorkerFlags flags, AtnWorkerFunc run,
                      gpointer job, GDestroyNotify job_free, GDestroyNotify answer_free, AtnWorkerDoneFunc done) {
    g_return_if_fail(G_IS_OBJECT(owner));
    g_return_if_fail(slot != NULL && *slot == NULL);
    g_return_if_fail(run != NULL && done != NULL);
    worker *w = worker_new(slot, flags, job, job_free, answer_free);
    w->run = run;
    w->done = done;
    start(owner, slot, w);
}

void atn_worker_start_fallible(gpointer owner, GCancellable **slot, AtnWorkerFlags flags,
                               const char *name, AtnWorkerFallibleFunc run, gpointer job,
                               GDestroyNotify job_free, GDestroyNotify answer_free,
                               AtnWorkerFallibleDoneFunc done) {
    g_return_if_fail(G_IS_OBJECT(owner));
    g_return_if_fail(slot != NULL && *slot == NULL);
    g_return_if_fail(run != NULL && done != NULL);
    worker *w = worker_new(slot, flags, job, job_free, answer_free);
    w->name = name;
    w->run_fallible = run;
    w->done_fallible = done;
    start(owner, slot, w);
}

void atn_worker_cancel(GCancellable **slot) {
    g_return_if_fail(slot != NULL);
    if (*slot)
        g_cancellable_cancel(*slot);
    g_clear_object(slot);
}
