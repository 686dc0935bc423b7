/* gpu_emu.c: warps in the emulation (ORN_GPU=emulate; orn_gpu.h, docs/runtime.md section 16).
 *
 * A warp kernel's tile runs as 32 lanes, the same code the device runs: the body's scalar
 * code on every lane, its view loops split across the lanes (x = lane, lane + 32, ...), its
 * reductions combined through shuffles, its shared writes made by lane 0, with warp
 * barriers between (codegen/cuda/cuda_warp.c). On the device the lanes of a warp advance
 * independently between barriers; here each lane is a host thread, and one of them runs at a
 * time: a token goes from lane to lane in an order shuffled by the seed for every stretch
 * between two sync points (a segment). A lane runs until it reaches the next sync point
 * (__syncwarp, a shuffle) or returns, and passes the token on; once every lane has reached
 * it, the next segment starts in a new order. So lanes see each other's writes only as the
 * barriers promise: a missing barrier lets a lane read an element another lane has not
 * written yet (or has already overwritten), a wrong lane split leaves elements out or does
 * them twice, and the result changes with the seed and differs from the CPU body. A shuffle
 * deposits the lane's value, waits for the segment to end and reads its partner's: the
 * reductions' butterflies run on these exchanges, as on the device.
 *
 * ORN_GPU_TEST_BROKEN=lanes makes __syncwarp do nothing (the kernels as if written without
 * their barriers; shuffles still exchange), for the test that shows the lane order catching
 * it. Threads, not coroutines: the sanitizer builds follow them. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_int.h"

enum { LANES = 32, HOST = LANES, LANE_STACK = 4 << 20 };

typedef struct Lane {
    OrnGpuWarp *w;
    unsigned lane;
} Lane;

struct OrnGpuWarp {
    uint64_t rng; /* the lane orders' state */
    int nosync;   /* ORN_GPU_TEST_BROKEN=lanes: __syncwarp does nothing */
    int started;
    int quit;
    pthread_t th[LANES];
    Lane arg[LANES];
    sem_t go[LANES + 1]; /* go[l]: lane l's turn; go[HOST]: the launching thread's */
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
};

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

static void wait_turn(OrnGpuWarp *w, int who)
{
    while (sem_wait(&w->go[who]) != 0 && errno == EINTR) {
    }
}

/* The running lane's segment is over: the token to the next lane of the segment, or to the
 * first of the next segment (its lanes shuffled), or back to the launching thread when
 * every lane has returned. Touches nothing after handing the token on. */
static void pass(OrnGpuWarp *w)
{
    if (++w->pos < w->n) {
        sem_post(&w->go[w->order[w->pos]]);
        return;
    }
    if (w->nnext == 0) {
        sem_post(&w->go[HOST]);
        return;
    }
    memcpy(w->order, w->next, (size_t)w->nnext);
    w->n = w->nnext;
    w->nnext = 0;
    w->pos = 0;
    shuffle(w, w->order, w->n);
    sem_post(&w->go[w->order[0]]);
}

/* A barrier of every lane still running (shuffles and __syncwarp). */
static void barrier(OrnGpuWarp *w, unsigned lane)
{
    w->next[w->nnext++] = (unsigned char)lane;
    pass(w);
    wait_turn(w, (int)lane);
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

static void *lane_main(void *arg)
{
    const Lane *l = arg;
    OrnGpuWarp *w = l->w;
    for (;;) {
        wait_turn(w, (int)l->lane);
        if (w->quit) return NULL;
        OrnGpuLane me = {w, l->lane};
        w->fn(w->a, w->env, w->tile, me);
        pass(w); /* returned: in no later segment of this tile */
    }
}

OrnGpuWarp *orn_gpu_emu_new(uint64_t seed, int nosync)
{
    OrnGpuWarp *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->rng = seed * 0xd1b54a32d192ed03ULL + 7;
    w->nosync = nosync;
    for (int i = 0; i <= LANES; i++) {
        if (sem_init(&w->go[i], 0, 0) != 0) {
            while (i-- > 0) sem_destroy(&w->go[i]);
            free(w);
            return NULL;
        }
    }
    return w;
}

/* Stop and join the first n lane threads. */
static void stop(OrnGpuWarp *w, int n)
{
    w->quit = 1;
    for (int i = 0; i < n; i++) sem_post(&w->go[i]);
    for (int i = 0; i < n; i++) pthread_join(w->th[i], NULL);
    w->quit = 0;
}

static int start(OrnGpuWarp *w)
{
    pthread_attr_t at;
    if (pthread_attr_init(&at) != 0) return -1;
    pthread_attr_setstacksize(&at, LANE_STACK);
    int i = 0;
    for (; i < LANES; i++) {
        w->arg[i].w = w;
        w->arg[i].lane = (unsigned)i;
        if (pthread_create(&w->th[i], &at, lane_main, &w->arg[i]) != 0) break;
    }
    pthread_attr_destroy(&at);
    if (i < LANES) {
        stop(w, i);
        return -1;
    }
    w->started = 1;
    return 0;
}

void orn_gpu_emu_free(OrnGpuWarp *w)
{
    if (!w) return;
    if (w->started) stop(w, LANES);
    for (int i = 0; i <= LANES; i++) sem_destroy(&w->go[i]);
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
        sem_post(&w->go[w->order[0]]);
        wait_turn(w, HOST);
    }
    return 0;
}
