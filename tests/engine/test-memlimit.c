/* atn_memlimit_probe (engine/core/memlimit.c) on made-up /proc and cgroup folders: cgroup v2
 * (memory.max - memory.current, the tightest of the cgroup and its ancestors, "max" is no
 * limit), v2 mounted at unified/ (hybrid), v1's memory controller (a huge limit is none),
 * each less the 64 MiB margin and only when below 3/4 of physical memory; RLIMIT_AS less the
 * address space in use (statm).  Figures worked out by hand below. */
#define _GNU_SOURCE
#include "check.h"
#include "core/memlimit.h"

#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

static void put(const char *rel, const char *text) {
    char path[512], dir[512];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + strlen(root) + 1; *p; p++)
        if (*p == '/') {
            *p = '\0';
            mkdir(dir, 0755);
            *p = '/';
        }
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
}

static atn_memlimit probe(void) {
    char proc[128], cg[128];
    snprintf(proc, sizeof proc, "%s/proc", root);
    snprintf(cg, sizeof cg, "%s/cg", root);
    atn_memlimit m;
    atn_memlimit_probe(proc, cg, &m);
    return m;
}

int main(void) {
    snprintf(root, sizeof root, "/tmp/atn-memlimit-XXXXXX");
    CHECK(mkdtemp(root) != NULL);
    const size_t MiB = 1 << 20;
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    size_t physical = (size_t)pages * (size_t)page / 4 * 3;

    /* no cgroup files, no rlimit: 3/4 of physical memory */
    put("proc/self/cgroup", "0::/a/b\n");
    atn_memlimit m = probe();
    CHECK(m.source == ATN_MEMLIMIT_PHYSICAL && m.bytes == physical);

    /* v2: 400 MiB limit, 100 MiB used -> 300 - 64 = 236 MiB; the parent's 1 GiB is looser */
    put("cg/a/b/memory.max", "419430400\n");
    put("cg/a/b/memory.current", "104857600\n");
    put("cg/a/memory.max", "1073741824\n");
    put("cg/a/memory.current", "104857600\n");
    put("cg/memory.max", "max\n");
    m = probe();
    CHECK(m.source == ATN_MEMLIMIT_CGROUP);
    CHECK_MSG(m.bytes == 236 * MiB, "%zu", m.bytes);
    CHECK(m.limit == 400 * MiB && m.used == 100 * MiB);
    char msg[200];
    atn_memlimit_describe(&m, msg, sizeof msg);
    CHECK_STR(msg, "the memory cgroup's limit of 0.42 GB with 0.10 GB in use");

    /* an ancestor tighter than the cgroup itself: 200 MiB limit, 100 used -> 36 MiB */
    put("cg/a/memory.max", "209715200\n");
    m = probe();
    CHECK_MSG(m.bytes == 36 * MiB && m.limit == 200 * MiB, "%zu", m.bytes);

    /* usage over the limit: nothing left */
    put("cg/a/b/memory.current", "500000000\n");
    put("cg/a/memory.max", "max\n");
    m = probe();
    CHECK(m.source == ATN_MEMLIMIT_CGROUP && m.bytes == 0);

    /* hybrid: v2 at unified/ */
    snprintf(msg, sizeof msg, "rm -rf %s/cg", root);
    CHECK(system(msg) == 0);
    put("cg/unified/x/memory.max", "314572800\n");
    put("cg/unified/x/memory.current", "0\n");
    put("proc/self/cgroup", "4:memory:/v1\n0::/x\n");
    m = probe();
    CHECK_MSG(m.source == ATN_MEMLIMIT_CGROUP && m.bytes == 236 * MiB, "%zu", m.bytes);

    /* v1: 9223372036854771712 (none) at the cgroup, 512 MiB at the top, 128 MiB used */
    CHECK(system(msg) == 0);
    put("proc/self/cgroup", "9:name=systemd:/\n4:cpu,memory:/v1/job\n0::/\n");
    put("cg/memory/v1/job/memory.limit_in_bytes", "9223372036854771712\n");
    put("cg/memory/v1/job/memory.usage_in_bytes", "134217728\n");
    put("cg/memory/memory.limit_in_bytes", "536870912\n");
    put("cg/memory/memory.usage_in_bytes", "134217728\n");
    m = probe();
    CHECK_MSG(m.source == ATN_MEMLIMIT_CGROUP && m.bytes == 320 * MiB, "%zu", m.bytes);

#ifndef __SANITIZE_ADDRESS__   /* ASan's shadow memory does not live under an RLIMIT_AS */
    /* RLIMIT_AS: 2 GiB, 500 MiB of address space in use (statm: pages) -> 1548 - 64 = 1484 MiB,
     * looser than the cgroup above: the cgroup stays the bound */
    char statm[64];
    snprintf(statm, sizeof statm, "%zu 100 0 0 0 0 0\n", 500 * MiB / (size_t)page);
    put("proc/self/statm", statm);
    struct rlimit old;
    getrlimit(RLIMIT_AS, &old);
    struct rlimit rl = {(rlim_t)2048 * MiB, old.rlim_max};
    CHECK(setrlimit(RLIMIT_AS, &rl) == 0);
    m = probe();
    CHECK(m.source == ATN_MEMLIMIT_CGROUP && m.bytes == 320 * MiB);
    /* without the cgroup's limit, RLIMIT_AS is the bound */
    put("cg/memory/memory.limit_in_bytes", "9223372036854771712\n");
    m = probe();
    CHECK_MSG(m.source == ATN_MEMLIMIT_RLIMIT_AS && m.bytes == 1484 * MiB, "%d %zu", m.source, m.bytes);
    CHECK(m.limit == 2048 * MiB && m.used == 500 * MiB);
    atn_memlimit_describe(&m, msg, sizeof msg);
    CHECK_STR(msg, "RLIMIT_AS (ulimit -v) of 2.15 GB with 0.52 GB of address space in use");
    setrlimit(RLIMIT_AS, &old);
#endif

    snprintf(msg, sizeof msg, "rm -rf %s", root);
    CHECK(system(msg) == 0);
    return check_summary("engine-memlimit");
}
