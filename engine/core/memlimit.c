/* The memory a run may allocate: see memlimit.h. */
#include "core/memlimit.h"
#include "attnscope.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* A file's first number; false when absent or not a number ("max" included). */
static bool read_number(const char *path, unsigned long long *out) {
    FILE *f = fopen(path, "r");
    if (!f)
        return false;
    bool ok = fscanf(f, "%llu", out) == 1;
    fclose(f);
    return ok;
}

/* The tightest limit - usage of dir/NAME_LIMIT, dir/NAME_USAGE over cgroup path and its
 * ancestors (under base).  Values of 2^62 or more (v1's "no limit") count as none. */
static void walk(const char *base, const char *path, const char *limit_name, const char *usage_name, bool *found,
                 size_t *best, size_t *best_limit, size_t *best_used) {
    char p[4096], file[4200];
    snprintf(p, sizeof p, "%s", strcmp(path, "/") ? path : "");
    for (;;) {   /* "/a/b", then "/a", then "" (base itself) */
        unsigned long long lim, use = 0;
        snprintf(file, sizeof file, "%s%s/%s", base, p, limit_name);
        if (read_number(file, &lim) && lim < (1ULL << 62)) {
            snprintf(file, sizeof file, "%s%s/%s", base, p, usage_name);
            if (!read_number(file, &use))
                use = 0;
            size_t left = use < lim ? (size_t)(lim - use) : 0;
            if (!*found || left < *best) {
                *found = true;
                *best = left;
                *best_limit = (size_t)lim;
                *best_used = (size_t)use;
            }
        }
        char *slash = p[0] ? strrchr(p, '/') : NULL;
        if (!slash)
            break;
        *slash = '\0';
    }
}

static void cgroup_left(const char *proc_root, const char *cg, bool *found, size_t *left, size_t *limit,
                        size_t *used) {
    char path[4096];
    snprintf(path, sizeof path, "%s/self/cgroup", proc_root);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        line[strcspn(line, "\n")] = '\0';
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (!c2)
            continue;
        *c1 = *c2 = '\0';
        const char *controllers = c1 + 1, *cpath = c2 + 1;
        char base[4200];
        if (!strcmp(line, "0") && !controllers[0]) {   /* cgroup v2 */
            snprintf(base, sizeof base, "%s", cg);
            walk(base, cpath, "memory.max", "memory.current", found, left, limit, used);
            snprintf(base, sizeof base, "%s/unified", cg);
            walk(base, cpath, "memory.max", "memory.current", found, left, limit, used);
        } else {
            bool memory = false;
            char list[256];
            snprintf(list, sizeof list, "%s", controllers);
            for (char *save = NULL, *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save))
                memory |= !strcmp(t, "memory");
            if (!memory)
                continue;
            snprintf(base, sizeof base, "%s/memory", cg);
            walk(base, cpath, "memory.limit_in_bytes", "memory.usage_in_bytes", found, left, limit, used);
        }
    }
    fclose(f);
}

void atn_memlimit_probe(const char *proc_root, const char *cgroup_root, atn_memlimit *out) {
    if (!proc_root)
        proc_root = "/proc";
    if (!cgroup_root)
        cgroup_root = "/sys/fs/cgroup";
    memset(out, 0, sizeof *out);
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    out->bytes = pages > 0 && page > 0 ? (size_t)pages * (size_t)page / 4 * 3 : (size_t)8 << 30;
    out->source = ATN_MEMLIMIT_PHYSICAL;

    bool found = false;
    size_t left = 0, limit = 0, used = 0;
    cgroup_left(proc_root, cgroup_root, &found, &left, &limit, &used);
    if (found) {
        size_t may = left > ATN_MEMLIMIT_MARGIN ? left - ATN_MEMLIMIT_MARGIN : 0;
        if (may < out->bytes)
            *out = (atn_memlimit){may, ATN_MEMLIMIT_CGROUP, limit, used};
    }

    struct rlimit rl;
    if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
        char path[4096];
        snprintf(path, sizeof path, "%s/self/statm", proc_root);
        unsigned long long vm_pages = 0;
        size_t in_use = read_number(path, &vm_pages) && page > 0 ? (size_t)vm_pages * (size_t)page : 0;
        size_t lim = (size_t)rl.rlim_cur;
        size_t rest = in_use < lim ? lim - in_use : 0;
        size_t may = rest > ATN_MEMLIMIT_MARGIN ? rest - ATN_MEMLIMIT_MARGIN : 0;
        if (may < out->bytes)
            *out = (atn_memlimit){may, ATN_MEMLIMIT_RLIMIT_AS, lim, in_use};
    }
}

void atn_memlimit_describe(const atn_memlimit *m, char *buf, size_t len) {
    if (m->source == ATN_MEMLIMIT_CGROUP)
        snprintf(buf, len, "the memory cgroup's limit of %.2f GB with %.2f GB in use", m->limit / 1e9, m->used / 1e9);
    else if (m->source == ATN_MEMLIMIT_RLIMIT_AS)
        snprintf(buf, len, "RLIMIT_AS (ulimit -v) of %.2f GB with %.2f GB of address space in use", m->limit / 1e9,
                 m->used / 1e9);
    else if (len)
        buf[0] = '\0';
}

size_t atn_default_memory_budget(atn_memory_bound *bound) {
    atn_memlimit m;
    atn_memlimit_probe(NULL, NULL, &m);
    if (bound)
        *bound = m.source == ATN_MEMLIMIT_CGROUP      ? ATN_MEMORY_BOUND_CGROUP
                 : m.source == ATN_MEMLIMIT_RLIMIT_AS ? ATN_MEMORY_BOUND_RLIMIT_AS
                                                      : ATN_MEMORY_BOUND_PHYSICAL;
    return m.bytes;
}

bool atn_parse_size(const char *text, size_t *out) {
    char *end = NULL;
    errno = 0;
    double v = text && *text && !isspace((unsigned char)*text) ? strtod(text, &end) : -1;
    if (!end || end == text || errno || !isfinite(v) || v <= 0)
        return false;
    double unit = 1;
    if (*end) {
        switch (toupper((unsigned char)*end)) {
        case 'K': unit = 1024.0; break;
        case 'M': unit = 1024.0 * 1024; break;
        case 'G': unit = 1024.0 * 1024 * 1024; break;
        case 'T': unit = 1024.0 * 1024 * 1024 * 1024; break;
        default: return false;
        }
        end++;
        if (*end == 'i' && end[1] == 'B')
            end += 2;
        else if (toupper((unsigned char)*end) == 'B')
            end++;
        if (*end)
            return false;
    }
    v *= unit;
    if (v < 1 || v >= 9.0e18)
        return false;
    *out = (size_t)v;
    return true;
}
