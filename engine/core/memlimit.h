/* How much memory a run may take: the smallest of 3/4 of physical memory, what the process's
 * memory cgroup has left (cgroup v2 memory.max - memory.current, v1 memory.limit_in_bytes -
 * memory.usage_in_bytes, on the process's cgroup and every ancestor) and what RLIMIT_AS
 * (ulimit -v) leaves above the address space already in use, each of the last two less a
 * margin of ATN_MEMLIMIT_MARGIN for what is allocated outside the run (OpenBLAS's buffers,
 * thread stacks, the tokenizer).  A memory cgroup kills the process without a message when
 * it runs out, and OpenBLAS cannot fail cleanly under RLIMIT_AS: the run checks first. */
#ifndef ATN_MEMLIMIT_H
#define ATN_MEMLIMIT_H

#include <stddef.h>

enum { ATN_MEMLIMIT_MARGIN = 64 << 20 };

typedef enum atn_memlimit_source {
    ATN_MEMLIMIT_PHYSICAL = 0,   /* 3/4 of physical memory */
    ATN_MEMLIMIT_CGROUP,         /* the memory cgroup's limit less its usage */
    ATN_MEMLIMIT_RLIMIT_AS,      /* RLIMIT_AS less the address space in use */
} atn_memlimit_source;

typedef struct atn_memlimit {
    size_t bytes;                /* what a run may allocate */
    atn_memlimit_source source;  /* which bound it is */
    size_t limit, used;          /* that bound's limit and usage (0, 0 for physical) */
} atn_memlimit;

/* Fills *out.  proc_root ("/proc") holds self/cgroup and self/statm; cgroup_root
 * ("/sys/fs/cgroup") the cgroup file systems: v2 at its top or at "unified/", v1's memory
 * controller at "memory/".  Missing files mean no such bound.  Tests pass folders of their
 * own; NULL means the system's. */
void atn_memlimit_probe(const char *proc_root, const char *cgroup_root, atn_memlimit *out);

/* "the memory cgroup's limit of 0.40 GB with 0.12 GB in use", "RLIMIT_AS (ulimit -v) of 0.70
 * GB with 0.45 GB of address space in use"; "" for physical memory. */
void atn_memlimit_describe(const atn_memlimit *m, char *buf, size_t len);

#endif
