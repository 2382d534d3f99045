/* The SIGBUS guard over model file mappings: see mapguard.h. */
#include "core/mapguard.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef struct region {
    volatile uintptr_t start, end;   /* 0, 0: free; written under the lock, read by the handler */
    volatile sig_atomic_t *flag;
} region;

static region regions[ATN_MAPGUARD_MAX];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct sigaction previous;
static bool installed, install_failed;
static uintptr_t page_size = 4096;

static void on_sigbus(int sig, siginfo_t *si, void *uc) {
    uintptr_t a = (uintptr_t)si->si_addr;
    for (int i = 0; i < ATN_MAPGUARD_MAX; i++) {
        uintptr_t s = regions[i].start, e = regions[i].end;
        if (s && a >= s && a < e) {
            /* the file is shorter than the mapping: zeros from this page to its end, so the
               reads go on and the run reports the change afterwards */
            uintptr_t page = a & ~(page_size - 1);
            if (mmap((void *)page, e - page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) !=
                MAP_FAILED) {
                *regions[i].flag = 1;
                return;
            }
            break;
        }
    }
    /* not ours: whatever was there before */
    if ((previous.sa_flags & SA_SIGINFO) && previous.sa_sigaction) {
        previous.sa_sigaction(sig, si, uc);
    } else if (previous.sa_handler != SIG_DFL && previous.sa_handler != SIG_IGN && previous.sa_handler) {
        previous.sa_handler(sig);
    } else {
        signal(SIGBUS, SIG_DFL);   /* the faulting read happens again and ends the process */
    }
}

bool atn_mapguard_add(const void *ptr, size_t len, volatile sig_atomic_t *flag) {
    if (!ptr || !len || !flag)
        return false;
    pthread_mutex_lock(&lock);
    if (!installed && !install_failed) {
        long ps = sysconf(_SC_PAGESIZE);
        if (ps > 0)
            page_size = (uintptr_t)ps;
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_sigbus;
        sa.sa_flags = SA_SIGINFO | SA_NODEFER;
        sigemptyset(&sa.sa_mask);
        if (sigaction(SIGBUS, &sa, &previous) == 0)
            installed = true;
        else
            install_failed = true;
    }
    bool ok = false;
    for (int i = 0; installed && i < ATN_MAPGUARD_MAX && !ok; i++)
        if (!regions[i].start) {
            regions[i].flag = flag;
            regions[i].end = (uintptr_t)ptr + len;
            __atomic_store_n(&regions[i].start, (uintptr_t)ptr, __ATOMIC_RELEASE);
            ok = true;
        }
    pthread_mutex_unlock(&lock);
    return ok;
}

void atn_mapguard_remove(const void *ptr) {
    pthread_mutex_lock(&lock);
    for (int i = 0; i < ATN_MAPGUARD_MAX; i++)
        if (regions[i].start == (uintptr_t)ptr) {
            __atomic_store_n(&regions[i].start, (uintptr_t)0, __ATOMIC_RELEASE);
            regions[i].end = 0;
        }
    pthread_mutex_unlock(&lock);
}
