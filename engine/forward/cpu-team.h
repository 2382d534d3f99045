/* A small team of threads for the CPU forward pass: the caller plus n-1 workers run one
 * function together and meet at barriers between its phases.  Waits spin briefly (the
 * phases of a forward follow each other within microseconds) and then sleep, so an idle
 * team or a descheduled partner costs no CPU. */
#ifndef ATN_CPU_TEAM_H
#define ATN_CPU_TEAM_H

#include <stdbool.h>

typedef struct atn_team atn_team;

/* A team of n threads (the caller counts as one; n-1 are started).  NULL on failure. */
atn_team *atn_team_new(int n);
void atn_team_free(atn_team *team);   /* joins the workers; NULL is a no-op */
int atn_team_size(const atn_team *team);

/* Runs fn(arg, tid, n) on every thread of the team, the caller as tid 0, and returns when
 * all have returned.  Not reentrant: one run at a time per team. */
void atn_team_run(atn_team *team, void (*fn)(void *arg, int tid, int n), void *arg);

/* Called by every thread of a run: returns when all have arrived. */
void atn_team_barrier(atn_team *team);

/* The rows [*lo, *hi) of `count` that thread tid of n takes (contiguous, balanced). */
static inline void atn_team_split(int count, int tid, int n, int *lo, int *hi) {
    *lo = (int)((long long)count * tid / n);
    *hi = (int)((long long)count * (tid + 1) / n);
}

#endif
