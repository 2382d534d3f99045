/* The CPU launcher for kernels.cu compiled for the host (cuda-host.h says what it offers).
 *
 * A launch runs its blocks in order on the calling thread.  A block's CUDA threads are
 * fibers: each has its own stack and runs until it reaches a barrier (__syncthreads, the
 * warp barrier of a shuffle) or ends, then hands the thread back to the block's scheduler,
 * which resumes the next fiber round-robin.  A barrier lets its fibers on only once all of
 * its group (the block, or the warp) have arrived; a whole round in which no fiber arrives,
 * leaves a barrier or ends is a deadlock (a barrier some threads never reach), reported as
 * cudaErrorLaunchFailure.  Deterministic: the same launch gives the same bits every time.
 *
 * The switch is a few instructions of x86-64 assembly (callee-saved registers and the stack
 * pointer); elsewhere ucontext.  Under AddressSanitizer every switch is announced with
 * __sanitizer_start_switch_fiber / __sanitizer_finish_switch_fiber, so ASan knows which
 * stack is current. */
#include "cuda-host.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define ATN_CUH_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ATN_CUH_ASAN 1
#endif
#endif
#ifdef ATN_CUH_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if !defined(__x86_64__)
#include <ucontext.h>
#endif

namespace atn_cuh {
namespace {

enum { kMaxThreads = 1024, kWarp = 32 };
#ifdef ATN_CUH_ASAN
constexpr size_t kStack = 256 * 1024;   /* instrumented frames are larger */
#else
constexpr size_t kStack = 64 * 1024;
#endif

struct group;

struct fiber {
#if defined(__x86_64__)
    void *sp;
#else
    ucontext_t ctx;
#endif
    char *stack;
    uint32_t tid;
    bool done;
    unsigned shuffles, ors;   /* how many of each this thread did: picks the exchange buffer */
    const struct group *waiting;   /* the barrier it waits at (not resumed until it opens), or null */
    unsigned wait_generation;
    void *fake_stack;         /* ASan's, while switched out */
};

struct group {   /* a barrier: the block, or one warp */
    int size, arrived;
    unsigned generation;
};

struct block_run {
    fiber *fibers;
    uint32_t n;
    void (*body)(void *);
    void *ctx;
    uint3 block;
    dim3 block_dim, grid_dim;
    group all, warps[kMaxThreads / kWarp];
    uint32_t xch[2][kMaxThreads];   /* shuffle exchange, float or int bits, by parity */
    int or_slot[2];
    unsigned long events;     /* arrivals, releases and ends: progress */
#if defined(__x86_64__)
    void *sched_sp;
#else
    ucontext_t sched;
#endif
    const void *sched_bottom;  /* the scheduler's stack, for ASan */
    size_t sched_size;
};

thread_local block_run *cur_block;
thread_local fiber *cur_fiber;
thread_local cudaError_t last_status = cudaSuccess;

/* The fibers' stacks, kept per OS thread for the next launch. */
struct stack_cache {
    char *base = nullptr;
    uint32_t count = 0;
    ~stack_cache() { free(base); }
    char *get(uint32_t n) {
        if (n > count) {
            free(base);
            base = static_cast<char *>(malloc((size_t)n * kStack));
            count = base ? n : 0;
        }
        return base;
    }
};
thread_local stack_cache stacks;

#if defined(__x86_64__)
extern "C" void atn_cuh_switch(void **save_sp, void *to_sp);
__asm__(".text\n"
        ".globl atn_cuh_switch\n"
        ".hidden atn_cuh_switch\n"
        ".type atn_cuh_switch,@function\n"
        "atn_cuh_switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        ".size atn_cuh_switch,.-atn_cuh_switch\n");
#endif

/* ---- switching, announced to ASan ---------------------------------------------------- */

void to_fiber(block_run *b, fiber *f) {
    cur_fiber = f;
#ifdef ATN_CUH_ASAN
    void *fake = nullptr;
    __sanitizer_start_switch_fiber(&fake, f->stack, kStack);
#endif
#if defined(__x86_64__)
    atn_cuh_switch(&b->sched_sp, f->sp);
#else
    swapcontext(&b->sched, &f->ctx);
#endif
#ifdef ATN_CUH_ASAN
    __sanitizer_finish_switch_fiber(fake, nullptr, nullptr);
#endif
}

/* From the running fiber back to the scheduler; returns when the scheduler resumes it
 * (never, when the fiber has ended). */
void to_scheduler(bool ending) {
    block_run *b = cur_block;
    fiber *f = cur_fiber;
#ifdef ATN_CUH_ASAN
    __sanitizer_start_switch_fiber(ending ? nullptr : &f->fake_stack, b->sched_bottom, b->sched_size);
#else
    (void)ending;
#endif
#if defined(__x86_64__)
    atn_cuh_switch(&f->sp, b->sched_sp);
#else
    swapcontext(&f->ctx, &b->sched);
#endif
#ifdef ATN_CUH_ASAN
    __sanitizer_finish_switch_fiber(f->fake_stack, nullptr, nullptr);
#endif
}

void fiber_main() {
    block_run *b = cur_block;
#ifdef ATN_CUH_ASAN
    __sanitizer_finish_switch_fiber(nullptr, &b->sched_bottom, &b->sched_size);
#endif
    b->body(b->ctx);
    cur_fiber->done = true;
    b->events++;
    to_scheduler(true);
    abort();   /* an ended fiber is never resumed */
}

#if !defined(__x86_64__)
void fiber_main_uc() { fiber_main(); }
#endif

void start_fiber(fiber *f) {
#if defined(__x86_64__)
    /* the stack atn_cuh_switch pops: six saved registers, then the return address; at
       fiber_main's first instruction rsp is 8 below a 16-byte boundary, as after a call */
    uintptr_t top = ((uintptr_t)(f->stack + kStack)) & ~(uintptr_t)15;
    void **sp = reinterpret_cast<void **>(top - 64);
    for (int i = 0; i < 6; i++)
        sp[i] = nullptr;
    sp[6] = reinterpret_cast<void *>(&fiber_main);
    sp[7] = nullptr;
    f->sp = sp;
#else
    getcontext(&f->ctx);
    f->ctx.uc_stack.ss_sp = f->stack;
    f->ctx.uc_stack.ss_size = kStack;
    f->ctx.uc_link = nullptr;
    makecontext(&f->ctx, fiber_main_uc, 0);
#endif
}

/* Waits at barrier g; the last to arrive runs release (may be null) before letting the
 * others on. */
template <class F> void barrier(group *g, F release) {
    block_run *b = cur_block;
    unsigned gen = g->generation;
    b->events++;
    if (++g->arrived == g->size) {
        release();
        g->arrived = 0;
        g->generation++;
        return;
    }
    fiber *f = cur_fiber;
    f->waiting = g;
    f->wait_generation = gen;
    while (g->generation == gen)
        to_scheduler(false);
    f->waiting = nullptr;
}

void warp_barrier() {
    barrier(&cur_block->warps[cur_fiber->tid / kWarp], [] {});
}

/* Runs one block to the end; false on a deadlock. */
bool run_block(block_run *b) {
    for (uint32_t t = 0; t < b->n; t++) {
        fiber *f = &b->fibers[t];
        f->tid = t;
        f->done = false;
        f->shuffles = f->ors = 0;
        f->fake_stack = nullptr;
        f->waiting = nullptr;
        start_fiber(f);
    }
    b->all = group{(int)b->n, 0, 0};
    for (uint32_t w = 0; w * kWarp < b->n; w++)
        b->warps[w] = group{(int)(b->n - w * kWarp < (uint32_t)kWarp ? b->n - w * kWarp : (uint32_t)kWarp), 0, 0};
    b->or_slot[0] = b->or_slot[1] = 0;
    uint32_t live = b->n;
    while (live) {
        unsigned long before = b->events;
        for (uint32_t t = 0; t < b->n; t++) {
            fiber *f = &b->fibers[t];
            if (f->done || (f->waiting && f->waiting->generation == f->wait_generation))
                continue;   /* ended, or its barrier is still closed */
            to_fiber(b, f);
            if (f->done)
                live--;
        }
        if (live && b->events == before)
            return false;
    }
    return true;
}

}  // namespace

uint3 thread_idx() { return uint3{cur_fiber->tid, 0, 0}; }
uint3 block_idx() { return cur_block->block; }
dim3 block_dim() { return cur_block->block_dim; }
dim3 grid_dim() { return cur_block->grid_dim; }

void syncthreads() { barrier(&cur_block->all, [] {}); }

int syncthreads_or(int predicate) {
    block_run *b = cur_block;
    /* slot k this time; the other one was read by every thread before it arrived here, so
       the last to arrive clears it for the next call */
    unsigned k = cur_fiber->ors++ & 1;
    if (predicate)
        b->or_slot[k] = 1;
    barrier(&b->all, [b, k] { b->or_slot[k ^ 1] = 0; });
    return b->or_slot[k];
}

/* Lane ^ lane_mask's value; the exchange buffer alternates, so one warp barrier a shuffle
 * suffices (a lane can write the buffer again only after every lane has read it). */
static uint32_t shuffle_bits(uint32_t bits, int lane_mask) {
    block_run *b = cur_block;
    fiber *f = cur_fiber;
    unsigned k = f->shuffles++ & 1;
    b->xch[k][f->tid] = bits;
    warp_barrier();
    uint32_t src = (f->tid & ~(uint32_t)(kWarp - 1)) | ((f->tid & (kWarp - 1)) ^ ((uint32_t)lane_mask & (kWarp - 1)));
    return src < b->n ? b->xch[k][src] : bits;
}

float shfl_xor(float v, int lane_mask) {
    uint32_t u;
    memcpy(&u, &v, sizeof u);
    u = shuffle_bits(u, lane_mask);
    memcpy(&v, &u, sizeof v);
    return v;
}

int shfl_xor(int v, int lane_mask) { return (int)shuffle_bits((uint32_t)v, lane_mask); }

cudaError_t run_grid(dim3 grid, dim3 block, void (*body)(void *), void *ctx) {
    if (block.x == 0 || block.x > kMaxThreads || block.y != 1 || block.z != 1 || grid.x == 0 || grid.y != 1 ||
        grid.z != 1)
        return cudaErrorInvalidConfiguration;
    if (cur_block)   /* a launch from inside a kernel: not something kernels.cu does */
        return cudaErrorNotSupported;
    char *stack = stacks.get(block.x);
    block_run *b = static_cast<block_run *>(calloc(1, sizeof(block_run)));
    fiber *fibers = static_cast<fiber *>(calloc(block.x, sizeof(fiber)));
    if (!stack || !b || !fibers) {
        free(b);
        free(fibers);
        return cudaErrorMemoryAllocation;
    }
    for (uint32_t t = 0; t < block.x; t++)
        fibers[t].stack = stack + (size_t)t * kStack;
    b->fibers = fibers;
    b->n = block.x;
    b->body = body;
    b->ctx = ctx;
    b->block_dim = block;
    b->grid_dim = grid;
    cudaError_t st = cudaSuccess;
    cur_block = b;
    for (uint32_t x = 0; x < grid.x && st == cudaSuccess; x++) {
        b->block = uint3{x, 0, 0};
        if (!run_block(b)) {
            fprintf(stderr, "attnscope CPU launcher: the threads of block %u (of %u x %u threads) deadlocked at a "
                            "barrier some of them never reach\n", x, grid.x, block.x);
            st = cudaErrorLaunchFailure;
#ifdef ATN_CUH_ASAN
            /* the abandoned fibers' frames leave poisoned redzones on stacks the next launch reuses */
            __asan_unpoison_memory_region(stack, (size_t)block.x * kStack);
#endif
        }
    }
    cur_block = nullptr;
    cur_fiber = nullptr;
    free(fibers);
    free(b);
    return st;
}

cudaError_t take_status() {
    cudaError_t e = last_status;
    last_status = cudaSuccess;
    return e;
}

void set_status(cudaError_t e) {
    if (e != cudaSuccess)
        last_status = e;
}

}  // namespace atn_cuh
