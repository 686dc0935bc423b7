/* harness.h: a tiny CHECK harness for the DSM/runtime tests (run under mpiexec -n 1..4).
 *
 * A failed check prints "rank R: file:line: check failed: expr" and takes the whole job down
 * (a check that fails on one rank must not leave the others waiting), so CTest sees a
 * non-zero exit. Oracles live in oracle.h. */
#ifndef ORN_TEST_HARNESS_H
#define ORN_TEST_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsm.h"
#include "rt.h"

typedef struct TestEnv {
    OrnRtCtx *rt;
    OrnDsmCtx *dsm;
    int rank, size;
    const char *dir; /* scratch directory for files */
    int checks;
} TestEnv;

__attribute__((noreturn)) static inline void t_die(TestEnv *t, const char *file, int line,
                                                   const char *what)
{
    fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", t->rank, file, line, what);
    fflush(stderr);
    orn_dsm_fail(t->dsm, ORN_E_INTERNAL, "test failed at %s:%d", file, line);
    orn_rt_die(t->rt);
}

#define CHECK(t, cond)                                                                             \
    do {                                                                                           \
        (t)->checks++;                                                                             \
        if (!(cond)) t_die((t), __FILE__, __LINE__, #cond);                                        \
    } while (0)

/* A call that must succeed: on failure print the runtime's message. */
#define OK(t, call)                                                                                \
    do {                                                                                           \
        int st_ = (call);                                                                          \
        (t)->checks++;                                                                             \
        if (st_ != ORN_OK) {                                                                       \
            fprintf(stderr, "rank %d: %s:%d: %s failed (%d): %s\n", (t)->rank, __FILE__, __LINE__, \
                    #call, st_, orn_rt_error((t)->rt));                                            \
            t_die((t), __FILE__, __LINE__, #call);                                                 \
        }                                                                                          \
    } while (0)

static inline void t_init(TestEnv *t, int *argc, char ***argv)
{
    memset(t, 0, sizeof *t);
    if (orn_rt_init(argc, argv, &t->rt) != ORN_OK) {
        fprintf(stderr, "cannot start the runtime\n");
        exit(1);
    }
    t->dsm = orn_rt_dsm(t->rt);
    t->rank = orn_rt_rank(t->rt);
    t->size = orn_rt_size(t->rt);
    t->dir = *argc > 1 ? (*argv)[1] : ".";
}

static inline int t_finish(TestEnv *t, const char *name)
{
    OK(t, orn_dsm_barrier(t->dsm));
    if (t->rank == 0) printf("%s: %d checks passed on %d ranks\n", name, t->checks, t->size);
    orn_rt_finalize(t->rt);
    return 0;
}

/* A scratch path unique to the test program and rank count. */
static inline void t_path(const TestEnv *t, char *buf, size_t n, const char *name)
{
    snprintf(buf, n, "%s/%s.np%d", t->dir, name, t->size);
}

/* Rank 0 writes a file; everyone waits until it exists. */
static inline void t_write_file(TestEnv *t, const char *path, const char *text)
{
    if (t->rank == 0) {
        FILE *f = fopen(path, "wb");
        CHECK(t, f != NULL);
        fputs(text, f);
        CHECK(t, fclose(f) == 0);
    }
    OK(t, orn_dsm_barrier(t->dsm));
}

#endif
