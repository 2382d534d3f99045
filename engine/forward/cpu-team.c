/* The CPU forward's thread team (engine/forward/cpu-team.h).  OpenBLAS's own threads spin with
 * sched_yield between calls, which on a 2-core machine steals the core the other phase
 * needs; this team instead runs the whole forward as one parallel region, and its waits
 * spin for at most SPIN_NS before sleeping on a condition variable. */
#include "forward/cpu-team.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

enum { SPIN_NS = 200000 };   /* 0.2 ms: longer than a phase boundary, short next to a time slice */

typedef struct worker {
    atn_team *team;
    int tid;
} worker;

struct atn_team {
    int n;
    pthread_t *threads;
    worker *workers;
    int started;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_int sleepers;
    atomic_uint job_gen;
    void (*fn)(void *arg, int tid, int n);
    void *arg;
    atomic_bool quit;
    atomic_uint bar_gen;
    atomic_int bar_count;
};

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* Waits until *gen differs from old: spins, then sleeps. */
static void wait_change(atn_team *t, atomic_uint *gen, unsigned old) {
    long long start = 0;
    for (unsigned i = 0;; i++) {
        if (atomic_load(gen) != old)
            return;
        cpu_relax();
        if ((i & 63) == 63) {
            long long now = now_ns();
            if (!start)
                start = now;
            else if (now - start > SPIN_NS)
                break;
        }
    }
    pthread_mutex_lock(&t->mu);
    atomic_fetch_add(&t->sleepers, 1);
    while (atomic_load(gen) == old)
        pthread_cond_wait(&t->cv, &t->mu);
    atomic_fetch_sub(&t->sleepers, 1);
    pthread_mutex_unlock(&t->mu);
}

/* After changing a generation counter: wakes the threads that went to sleep on it.  The
 * sleeper increments `sleepers` before re-reading the counter under the mutex, so either
 * it sees the new value or we see it and broadcast (both accesses are sequentially
 * consistent). */
static void notify(atn_team *t) {
    if (atomic_load(&t->sleepers) > 0) {
        pthread_mutex_lock(&t->mu);
        pthread_cond_broadcast(&t->cv);
        pthread_mutex_unlock(&t->mu);
    }
}

void atn_team_barrier(atn_team *t) {
    if (t->n <= 1)
        return;
    unsigned g = atomic_load(&t->bar_gen);
    if (atomic_fetch_add(&t->bar_count, 1) == t->n - 1) {
        atomic_store(&t->bar_count, 0);
        atomic_fetch_add(&t->bar_gen, 1);
        notify(t);
    } else {
        wait_change(t, &t->bar_gen, g);
    }
}

static void *worker_main(void *p) {
    worker *w = p;
    atn_team *t = w->team;
    unsigned seen = 0;
    for (;;) {
        wait_change(t, &t->job_gen, seen);
        seen = atomic_load(&t->job_gen);
        if (atomic_load(&t->quit))
            return NULL;
        t->fn(t->arg, w->tid, t->n);
        atn_team_barrier(t);
    }
}

atn_team *atn_team_new(int n) {
    if (n < 1)
        n = 1;
    atn_team *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->n = n;
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    t->threads = calloc((size_t)n, sizeof *t->threads);
    t->workers = calloc((size_t)n, sizeof *t->workers);
    if (!t->threads || !t->workers) {
        atn_team_free(t);
        return NULL;
    }
    for (int i = 1; i < n; i++) {
        t->workers[i] = (worker){t, i};
        if (pthread_create(&t->threads[i], NULL, worker_main, &t->workers[i]) != 0) {
            atn_team_free(t);
            return NULL;
        }
        t->started = i;
    }
    return t;
}

void atn_team_free(atn_team *t) {
    if (!t)
        return;
    atomic_store(&t->quit, true);
    atomic_fetch_add(&t->job_gen, 1);
    pthread_mutex_lock(&t->mu);
    pthread_cond_broadcast(&t->cv);
    pthread_mutex_unlock(&t->mu);
    for (int i = 1; i <= t->started; i++)
        pthread_join(t->threads[i], NULL);
    pthread_mutex_destroy(&t->mu);
    pthread_cond_destroy(&t->cv);
    free(t->threads);
    free(t->workers);
    free(t);
}

int atn_team_size(const atn_team *t) { return t->n; }

void atn_team_run(atn_team *t, void (*fn)(void *arg, int tid, int n), void *arg) {
    if (t->n <= 1) {
        fn(arg, 0, 1);
        return;
    }
    t->fn = fn;
    t->arg = arg;
    atomic_fetch_add(&t->job_gen, 1);   /* publishes fn and arg (sequentially consistent) */
    notify(t);
    fn(arg, 0, t->n);
    atn_team_barrier(t);
}
