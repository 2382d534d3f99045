/* ui/atn-worker.c, the GTask helper of the Model grid's recolour and the Token lines' drawing,
 * with GLib alone (no display): the awaited work's answer reaches done once, on the main
 * thread, with its job; a cancelled one is dropped (done not called) and its answer and job
 * freed; a cancelled work replaced in the same slot gives only the new one's answer; a NICE
 * worker runs at the workers' nice value, the main thread keeps its own; work that can fail
 * gives done its error, ATN_WORKER_TAKE hands done the answer, a named worker's nice is
 * recorded under its name.
 *
 * Run with --tap (meson does). */
#include "atn-session.h"
#include "atn-session-test.h"
#include "atn-worker.h"

#include <errno.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

static int thread_nice(void) {
    errno = 0;
    int v = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
    g_assert_cmpint(errno, ==, 0);
    return v;
}

/* a job that waits at a gate until the test opens it, so that cancelling comes first */
typedef struct gate {
    GMutex lock;
    GCond cond;
    gboolean open;
} gate;

static void gate_wait(gate *g) {
    g_mutex_lock(&g->lock);
    while (!g->open)
        g_cond_wait(&g->cond, &g->lock);
    g_mutex_unlock(&g->lock);
}

static void gate_open(gate *g) {
    g_mutex_lock(&g->lock);
    g->open = TRUE;
    g_cond_broadcast(&g->cond);
    g_mutex_unlock(&g->lock);
}

typedef struct job {
    int id;
    gate *gate;              /* NULL: no waiting */
    int nice;                /* the worker thread's, written there */
    gboolean on_main;        /* written by done */
} job;

static int jobs_freed, answers_freed, dones, last_done_id, last_answer;
static GCancellable *slot;

static void job_free(gpointer p) {
    g_atomic_int_inc(&jobs_freed);
    g_free(p);
}

static void answer_free(gpointer p) {
    g_atomic_int_inc(&answers_freed);
    g_free(p);
}

static gpointer run(gpointer data, GCancellable *cancellable) {
    job *j = data;
    g_assert_true(cancellable != NULL);
    if (j->gate)
        gate_wait(j->gate);
    j->nice = thread_nice();
    int *answer = g_new(int, 1);
    *answer = 100 + j->id;
    return answer;
}

static void done(gpointer owner, gpointer answer, gpointer data) {
    job *j = data;
    g_assert_true(G_IS_OBJECT(owner));
    g_assert_null(slot);   /* cleared before done */
    j->on_main = g_main_context_is_owner(g_main_context_default());
    dones++;
    last_done_id = j->id;
    last_answer = answer ? *(int *)answer : -1;
}

static job *new_job(int id, gate *g) {
    job *j = g_new0(job, 1);
    j->id = id;
    j->gate = g;
    return j;
}

/* iterate the main context until *counter reaches want (10 s at most) */
static void wait_for(int *counter, int want) {
    gint64 end = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;
    while (g_atomic_int_get(counter) < want && g_get_monotonic_time() < end) {
        if (!g_main_context_iteration(NULL, FALSE))
            g_usleep(1000);
    }
    g_assert_cmpint(g_atomic_int_get(counter), ==, want);
}

static void reset(void) {
    jobs_freed = answers_freed = dones = 0;
    last_done_id = last_answer = -1;
}

/* The awaited work: done once, on the main thread, with its own job and answer; the answer
 * freed after done, the job with the task; a NICE worker at the workers' nice value. */
static void test_done(void) {
    reset();
    int main_nice = thread_nice();
    GObject *owner = g_object_new(G_TYPE_OBJECT, NULL);
    job *j = new_job(1, NULL);
    atn_worker_start(owner, &slot, ATN_WORKER_NICE, run, j, NULL, answer_free, done);
    g_assert_nonnull(slot);
    wait_for(&dones, 1);
    g_assert_null(slot);
    g_assert_cmpint(last_done_id, ==, 1);
    g_assert_cmpint(last_answer, ==, 101);
    g_assert_true(j->on_main);
    g_assert_cmpint(j->nice, ==, MAX(main_nice, atn_session_get_worker_nice()));
    g_assert_cmpint(thread_nice(), ==, main_nice);
    wait_for(&answers_freed, 1);
    g_free(j);   /* no job_free given: the caller's */
    g_object_unref(owner);
}

/* Cancelled before it returns: the slot is cleared at once, done is never called, the answer
 * and the job are freed. */
static void test_cancelled(void) {
    reset();
    GObject *owner = g_object_new(G_TYPE_OBJECT, NULL);
    gate g = {0};
    atn_worker_start(owner, &slot, ATN_WORKER_NORMAL, run, new_job(2, &g), job_free, answer_free, done);
    GCancellable *c = g_object_ref(slot);
    atn_worker_cancel(&slot);
    g_assert_null(slot);
    g_assert_true(g_cancellable_is_cancelled(c));
    g_object_unref(c);
    atn_worker_cancel(&slot);   /* an empty slot: nothing */
    gate_open(&g);
    wait_for(&jobs_freed, 1);
    g_assert_cmpint(dones, ==, 0);
    g_assert_cmpint(answers_freed, ==, 1);
    g_object_unref(owner);
}

/* A work cancelled and replaced in the same slot while it runs: only the new one's answer
 * reaches done, though the old one returns last. */
static void test_replaced(void) {
    reset();
    GObject *owner = g_object_new(G_TYPE_OBJECT, NULL);
    gate old_gate = {0};
    atn_worker_start(owner, &slot, ATN_WORKER_NORMAL, run, new_job(3, &old_gate), job_free, answer_free, done);
    atn_worker_cancel(&slot);
    atn_worker_start(owner, &slot, ATN_WORKER_NORMAL, run, new_job(4, NULL), job_free, answer_free, done);
    wait_for(&dones, 1);
    g_assert_cmpint(last_done_id, ==, 4);
    g_assert_cmpint(last_answer, ==, 104);
    gate_open(&old_gate);
    wait_for(&jobs_freed, 2);
    g_assert_cmpint(dones, ==, 1);
    g_assert_cmpint(answers_freed, ==, 2);
    g_object_unref(owner);
}

/* The owner kept alive by the task: dropping the caller's reference while the work runs is
 * safe, and the answer still comes (the widgets cancel in dispose). */
static void test_owner_kept(void) {
    reset();
    GObject *owner = g_object_new(G_TYPE_OBJECT, NULL);
    GWeakRef weak;
    g_weak_ref_init(&weak, owner);
    gate g = {0};
    atn_worker_start(owner, &slot, ATN_WORKER_NORMAL, run, new_job(5, &g), job_free, answer_free, done);
    g_object_unref(owner);
    GObject *still = g_weak_ref_get(&weak);
    g_assert_nonnull(still);
    g_object_unref(still);
    gate_open(&g);
    wait_for(&dones, 1);
    g_assert_cmpint(last_answer, ==, 105);
    wait_for(&jobs_freed, 1);
    g_assert_null(g_weak_ref_get(&weak));
    g_weak_ref_clear(&weak);
}

/* Work that can fail (atn_worker_start_fallible): a failure reaches done as its error with no
 * answer; a success with no error; with ATN_WORKER_TAKE done keeps the answer (not freed
 * after it) while a dropped answer is still freed; a named NICE worker is recorded under its
 * name (atn_session_get_worker_nice_of). */
static int failing_dones;
static char *last_error;

static gpointer run_fallible(gpointer data, GCancellable *cancellable, GError **error) {
    job *j = data;
    if (j->gate)
        gate_wait(j->gate);
    j->nice = thread_nice();
    if (j->id < 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED, "job %d failed", j->id);
        return NULL;
    }
    int *answer = g_new(int, 1);
    *answer = 100 + j->id;
    return answer;
}

static gpointer kept_answer;

static void done_fallible(gpointer owner, gpointer answer, const GError *error, gpointer data) {
    g_assert_null(slot);
    g_assert_true(!answer != !error);   /* one or the other */
    g_free(last_error);
    last_error = error ? g_strdup(error->message) : NULL;
    last_answer = answer ? *(int *)answer : -1;
    kept_answer = answer;
    g_atomic_int_inc(&failing_dones);
}

static void test_fallible(void) {
    reset();
    failing_dones = 0;
    GObject *owner = g_object_new(G_TYPE_OBJECT, NULL);
    atn_worker_start_fallible(owner, &slot, ATN_WORKER_NORMAL, NULL, run_fallible, new_job(-7, NULL), job_free,
                              answer_free, done_fallible);
    wait_for(&failing_dones, 1);
    g_assert_cmpstr(last_error, ==, "job -7 failed");
    g_assert_cmpint(last_answer, ==, -1);
    wait_for(&jobs_freed, 1);
    g_assert_cmpint(answers_freed, ==, 0);

    /* taken: done owns the answer */
    job *j = new_job(8, NULL);
    atn_worker_start_fallible(owner, &slot, ATN_WORKER_NICE | ATN_WORKER_TAKE, "test-worker", run_fallible, j, NULL,
                              answer_free, done_fallible);
    wait_for(&failing_dones, 2);
    g_assert_null(last_error);
    g_assert_cmpint(last_answer, ==, 108);
    g_assert_cmpint(answers_freed, ==, 0);
    answer_free(kept_answer);
    g_assert_cmpint(atn_session_get_worker_nice_of("test-worker"), ==, j->nice);
    g_assert_cmpint(j->nice, ==, MAX(thread_nice(), atn_session_get_worker_nice()));
    g_free(j);

    /* taken, but dropped: still freed */
    gate g = {0};
    atn_worker_start_fallible(owner, &slot, ATN_WORKER_TAKE, NULL, run_fallible, new_job(9, &g), job_free,
                              answer_free, done_fallible);
    atn_worker_cancel(&slot);
    gate_open(&g);
    wait_for(&jobs_freed, 2);
    g_assert_cmpint(failing_dones, ==, 2);
    g_assert_cmpint(answers_freed, ==, 2);
    g_clear_pointer(&last_error, g_free);
    g_object_unref(owner);
}

/* The session's GPU probe runs through atn_worker: its answer reaches the session (here,
 * with no GPU, a reason other than the placeholder and no GPU available), once. */
static int gpu_notified;
static void on_gpu(GObject *obj, GParamSpec *pspec, gpointer data) { g_atomic_int_inc(&gpu_notified); }

static void test_gpu_probe(void) {
    gpu_notified = 0;
    AtnSession *s = atn_session_new();
    g_signal_connect(s, "notify::gpu-available", G_CALLBACK(on_gpu), NULL);
    wait_for(&gpu_notified, 1);
    g_assert_false(atn_session_get_gpu_available(s));
    const char *why = atn_session_get_gpu_reason(s);
    g_test_message("gpu reason: %s", why);
    g_assert_nonnull(why);
    g_assert_cmpstr(why, !=, "Looking for a GPU…");
    g_assert_cmpuint(strlen(why), >, 0);
    g_object_unref(s);
}

int main(int argc, char **argv) {
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/ui/worker/done", test_done);
    g_test_add_func("/ui/worker/cancelled", test_cancelled);
    g_test_add_func("/ui/worker/replaced", test_replaced);
    g_test_add_func("/ui/worker/owner-kept", test_owner_kept);
    g_test_add_func("/ui/worker/fallible", test_fallible);
    g_test_add_func("/ui/worker/gpu-probe", test_gpu_probe);
    return g_test_run();
}
