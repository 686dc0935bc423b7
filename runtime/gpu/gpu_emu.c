/* gpu_emu.c: warps in the emulation (ORN_GPU=emulate; orn_gpu.h, docs/runtime.md section 16).
 *
 * A warp kernel's tile runs as 32 lanes, the same code the device runs: the body's scalar
 * code on every lane, its view loops split across the lanes (x = lane, lane + 32, ...), its
 * reductions combined through shuffles, its shared writes made by lane 0, with warp
 * barriers between (codegen/cuda/cuda_warp.c). On the device the lanes of a warp advance
 * independently between barriers; here each lane is a fiber (a stack of its own and a
 * context switch in user space, no thread), and one of them runs at a time: the turn goes
 * from lane to lane in an order shuffled by the seed for every stretch between two sync
 * points (a segment). A lane runs until it reaches the next sync point (__syncwarp, a
 * shuffle) or returns, and hands the turn on; once every lane has reached it, the next
 * segment starts in a new order. So lanes see each other's writes only as the barriers
 * promise: a missing barrier lets a lane read an element another lane has not written yet
 * (or has already overwritten), a wrong lane split leaves elements out or does them twice,
 * and the result changes with the seed and differs from the CPU body. A shuffle deposits
 * the lane's value, waits for the segment to end and reads its partner's: the reductions'
 * butterflies run on these exchanges, as on the device.
 *
 * This is loop fission at the barriers the code generator places, done by the stacks: every
 * segment of a tile runs as a loop over the lanes in shuffled order, and what a lane keeps
 * across a barrier (its locals, a helper's loop counter) stays on its own stack. A hand-off
 * is a register swap (x86-64: seven words; elsewhere swapcontext), some 10 ns where a
 * thread hand-off through semaphores took microseconds. The sanitizer builds are told of
 * every switch (AddressSanitizer's fiber interface), so they follow the lanes' stacks.
 *
 * ORN_GPU_TEST_BROKEN=lanes makes __syncwarp do nothing (the kernels as if written without
 * their barriers; shuffles still exchange), for the test that shows the lane order catching
 * it. */
#define _GNU_SOURCE

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "gpu_int.h"

#if defined(__x86_64__) && defined(__ELF__)
#define EMU_ASM 1
#else
#include <ucontext.h>
#endif

#if defined(__SANITIZE_ADDRESS__)
#define EMU_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMU_ASAN 1
#endif
#endif
#ifdef EMU_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
                                     size_t *size_old);
#endif

enum { LANES = 32, HOST = LANES, LANE_STACK = 1 << 20 };

#ifdef EMU_ASM
/* orn_emu_swap(save, to): push the callee-saved registers, store the stack pointer in
 * *save, load `to` and pop the other context's registers; a new context "returns" into
 * orn_emu_start with its OrnGpuWarp in r12 (fiber_stack). */
void orn_emu_swap(void **save, void *to);
void orn_emu_start(void);
__asm__(".text\n"
        ".globl orn_emu_swap\n"
        ".type orn_emu_swap,@function\n"
        "orn_emu_swap:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        ".size orn_emu_swap, .-orn_emu_swap\n"
        ".globl orn_emu_start\n"
        ".type orn_emu_start,@function\n"
        "orn_emu_start:\n"
        "  movq %r12, %rdi\n"
        "  call orn_emu_lane_main\n"
        "  ud2\n"
        ".size orn_emu_start, .-orn_emu_start\n");
#endif

typedef struct Ctx {
#ifdef EMU_ASM
    void *sp;
#else
    ucontext_t uc;
#endif
    char *stack;        /* lanes: LANE_STACK bytes (mmap); the host: NULL */
    const void *bottom; /* the sanitizer's view of the stack: lanes' own, the host's learnt */
    size_t size;
} Ctx;

struct OrnGpuWarp {
    uint64_t rng; /* the lane orders' state */
    int nosync;   /* ORN_GPU_TEST_BROKEN=lanes: __syncwarp does nothing */
    int started;
    int cur; /* the context running: a lane, or HOST */
    Ctx ctx[LANES + 1];
    /* the tile being run */
    OrnGpuTileFn fn;
    const OrnGpuArgs *a;
    const void *env;
    int64_t tile;
    /* the segment: order[0 .. n) take turns, order[pos] runs; next[0 .. nnext): the lanes
     * that reached the sync point that ends it */
    unsigned char order[LANES], next[LANES];
    int n, pos, nnext;
    /* shuffles: lane l's value in slot[par[l]][l], alternating (a lane's next shuffle
     * writes the other slot while a slower lane may still read this one) */
    uint64_t slot[2][LANES];
    unsigned char par[LANES];
    OrnGpuRowCache rc[ORN_GPU_RC_SLOTS]; /* the warp's row cache (the device's shared memory) */
};

/* Run context `to` until something switches back to the running one. */
static void switch_to(OrnGpuWarp *w, int to)
{
    int from = w->cur;
    if (from == to) return;
    w->cur = to;
#ifdef EMU_ASAN
    void *fake = NULL;
    __sanitizer_start_switch_fiber(&fake, w->ctx[to].bottom, w->ctx[to].size);
#endif
#ifdef EMU_ASM
    orn_emu_swap(&w->ctx[from].sp, w->ctx[to].sp);
#else
    swapcontext(&w->ctx[from].uc, &w->ctx[to].uc);
#endif
#ifdef EMU_ASAN
    const void *bottom = NULL;
    size_t size = 0;
    __sanitizer_finish_switch_fiber(fake, &bottom, &size);
    if (w->ctx[HOST].size == 0 && bottom) { /* the host's stack, as the first lane saw it */
        w->ctx[HOST].bottom = bottom;
        w->ctx[HOST].size = size;
    }
#endif
}

static uint64_t next_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static void shuffle(OrnGpuWarp *w, unsigned char *v, int n)
{
    for (int i = n - 1; i > 0; i--) {
        int r = (int)(next_rand(&w->rng) % (uint64_t)(i + 1));
        unsigned char t = v[i];
        v[i] = v[r];
        v[r] = t;
    }
}

/* The running lane's segment is over: the turn to the next lane of the segment, or to the
 * first of the next segment (its lanes shuffled), or back to the launching context when
 * every lane has returned. Returns when the running lane's turn comes again. */
static void pass(OrnGpuWarp *w)
{
    if (++w->pos < w->n) {
        switch_to(w, w->order[w->pos]);
        return;
    }
    if (w->nnext == 0) {
        switch_to(w, HOST);
        return;
    }
    memcpy(w->order, w->next, (size_t)w->nnext);
    w->n = w->nnext;
    w->nnext = 0;
    w->pos = 0;
    shuffle(w, w->order, w->n);
    switch_to(w, w->order[0]);
}

/* A barrier of every lane still running (shuffles and __syncwarp). */
static void barrier(OrnGpuWarp *w, unsigned lane)
{
    w->next[w->nnext++] = (unsigned char)lane;
    pass(w);
}

void orn_gpu_emu_sync(OrnGpuWarp *w, unsigned lane)
{
    if (!w->nosync) barrier(w, lane);
}

uint64_t orn_gpu_emu_shfl(OrnGpuWarp *w, unsigned lane, uint64_t v, unsigned mask)
{
    unsigned p = w->par[lane];
    w->slot[p][lane] = v;
    w->par[lane] = (unsigned char)(p ^ 1);
    barrier(w, lane);
    return w->slot[p][(lane ^ mask) & (LANES - 1)];
}

/* A lane's fiber: the tile's function, then the turn on (it takes part in no later segment
 * of the tile); the next tile starts it over. */
#ifdef EMU_ASM
void orn_emu_lane_main(OrnGpuWarp *w);
void orn_emu_lane_main(OrnGpuWarp *w)
#else
static void lane_main(unsigned hi, unsigned lo)
#endif
{
#ifndef EMU_ASM
    OrnGpuWarp *w = (OrnGpuWarp *)(((uintptr_t)hi << 16 << 16) | (uintptr_t)lo);
#endif
#ifdef EMU_ASAN
    const void *bottom = NULL;
    size_t size = 0;
    __sanitizer_finish_switch_fiber(NULL, &bottom, &size);
    if (w->ctx[HOST].size == 0 && bottom) {
        w->ctx[HOST].bottom = bottom;
        w->ctx[HOST].size = size;
    }
#endif
    const unsigned lane = (unsigned)w->cur;
    for (;;) {
        OrnGpuLane me = {w, lane, w->a->rowcache ? w->rc : NULL};
        w->fn(w->a, w->env, w->tile, me);
        pass(w);
    }
}

OrnGpuWarp *orn_gpu_emu_new(uint64_t seed, int nosync)
{
    OrnGpuWarp *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->rng = seed * 0xd1b54a32d192ed03ULL + 7;
    w->nosync = nosync;
    w->cur = HOST;
    return w;
}

static void unmap(OrnGpuWarp *w)
{
    for (int i = 0; i < LANES; i++)
        if (w->ctx[i].stack) munmap(w->ctx[i].stack, LANE_STACK);
}

/* The lanes' stacks and first contexts. */
static int start(OrnGpuWarp *w)
{
    for (int i = 0; i < LANES; i++) {
        Ctx *c = &w->ctx[i];
        char *st = mmap(NULL, LANE_STACK, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (st == MAP_FAILED) {
            unmap(w);
            return -1;
        }
        c->stack = st;
        c->bottom = st;
        c->size = LANE_STACK;
#ifdef EMU_ASM
        /* 16-aligned top; r15 r14 r13 r12(w) rbx rbp, then orn_emu_start as the return
         * address: it starts with the stack 16-aligned, as a call needs */
        uintptr_t top = ((uintptr_t)st + LANE_STACK) & ~(uintptr_t)15;
        void **sp = (void **)(top - 9 * sizeof(void *));
        memset(sp, 0, 9 * sizeof(void *));
        sp[3] = w;
        void (*entry)(void) = orn_emu_start;
        memcpy(&sp[6], &entry, sizeof entry);
        c->sp = sp;
#else
        if (getcontext(&c->uc) != 0) {
            unmap(w);
            return -1;
        }
        c->uc.uc_stack.ss_sp = st;
        c->uc.uc_stack.ss_size = LANE_STACK;
        c->uc.uc_link = NULL;
        uintptr_t p = (uintptr_t)w;
        makecontext(&c->uc, (void (*)(void))lane_main, 2, (unsigned)(p >> 16 >> 16),
                    (unsigned)(p & 0xffffffffu));
#endif
    }
    w->started = 1;
    return 0;
}

void orn_gpu_emu_free(OrnGpuWarp *w)
{
    if (!w) return;
    /* every lane is parked at a switch (between tiles): its stack holds nothing to free */
    unmap(w);
    free(w);
}

int orn_gpu_emu_tiles(OrnGpuWarp *w, OrnGpuTileFn fn, const OrnGpuArgs *a, const void *env,
                      const int64_t *tiles, int64_t nt)
{
    if (!w->started && start(w) != 0) return -1;
    w->fn = fn;
    w->a = a;
    w->env = env;
    for (int64_t i = 0; i < nt; i++) {
        w->tile = tiles[i];
        for (int l = 0; l < LANES; l++) w->order[l] = (unsigned char)l;
        memset(w->par, 0, sizeof w->par);
        w->n = LANES;
        w->pos = 0;
        w->nnext = 0;
        shuffle(w, w->order, LANES);
        switch_to(w, w->order[0]); /* back when every lane has returned */
    }
    return 0;
}
