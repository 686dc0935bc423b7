/* test_fail.c: failures end the job with a message instead of hanging. Run by
 * expect_fail.cmake, which requires a non-zero exit and the message:
 *   body     the last rank's loop body fails; the others wait in the loop's collectives.
 *            The failing rank prints "orion: rank R: parallel_for at ...: cause" and takes
 *            every rank down.
 *   timeout  rank 1 stalls inside a 2-D rotation; a rank waiting for a rotated block gives
 *            up after $ORN_TIMEOUT seconds naming the peer and the operation.
 *   mpi      an MPI call fails (a send to a rank that does not exist): MPI's message comes
 *            back as a status (MPI_ERRORS_RETURN) and is reported. */
#include <time.h>

#include "harness.h"
#include "transport.h"

static int body(OrnRtCtx *rt, const OrnRtBlock *b, void *env)
{
    const char *mode = env;
    (void)b;
    int me = orn_rt_rank(rt), P = orn_rt_size(rt);
    if (!strcmp(mode, "body") && me == P - 1)
        return orn_rt_body_error(rt, "injected failure on rank %d", me);
    if (!strcmp(mode, "timeout") && me == 1) {
        struct timespec ts = {30, 0};
        nanosleep(&ts, NULL);
    }
    return 0;
}

int main(int argc, char **argv)
{
    OrnRtCtx *rt = NULL;
    if (orn_rt_init(&argc, &argv, &rt) != ORN_OK) return 1;
    const char *mode = argc > 1 ? argv[1] : "body";
    OrnDsmCtx *dsm = orn_rt_dsm(rt);
    if (!strcmp(mode, "mpi")) {
        if (orn_rt_rank(rt) == 0) {
            char byte = 1;
            OrnDsmReq *req = NULL;
            int st = orn_dsm_isend(dsm, &byte, 1, orn_rt_size(rt) + 3, ORN_TAG_TEST, &req);
            if (st) orn_rt_die(rt);
            if (orn_dsm_waitall(dsm, &req, NULL, 1, "test send")) orn_rt_die(rt);
        }
        if (orn_dsm_barrier(dsm)) orn_rt_die(rt);
        orn_rt_finalize(rt);
        return 0;
    }
    int64_t dims[2] = {8, 8};
    OrnDsmArray *A = NULL, *H = NULL, *W = NULL;
    if (orn_dsm_dense(dsm, ORN_DSM_F32, 2, dims, &A)) orn_rt_die(rt);
    if (orn_dsm_dense(dsm, ORN_DSM_F32, 2, dims, &H)) orn_rt_die(rt);
    if (orn_dsm_dense(dsm, ORN_DSM_F32, 2, dims, &W)) orn_rt_die(rt);
    /* W as large as H: the runtime keeps the plan's side (H rotates; layout.c) */
    static const OrnRtPlanArray arrays[3] = {
        {"A", ORN_RT_PARTITIONED, 2, {0, 1, -1, -1}, 0, {0}, {0}},
        {"H", ORN_RT_ROTATED, 2, {-1, 1, -1, -1}, 0, {0}, {0}},
        {"W", ORN_RT_PARTITIONED, 2, {0, -1, -1, -1}, 0, {0}, {0}}};
    static const OrnRtPlanAcc accs[1] = {{"s", ORN_RT_ACC_SUM, ORN_RT_F64}};
    OrnRtPlan plan = {ORN_RT_PLAN_VERSION,
                      1,
                      "fail.orn",
                      4,
                      ORN_RT_2D,
                      ORN_RT_2D,
                      0,
                      2,
                      2,
                      {0, 1},
                      {0, 0},
                      {{0}},
                      0,
                      3,
                      arrays,
                      1,
                      accs,
                      0};
    if (!strcmp(mode, "body")) {
        plan.strategy = ORN_RT_1D;
        plan.npart = 1;
        plan.narrays = 1;
        plan.line = 3;
    }
    OrnRtArg args[3] = {{A, NULL}, {H, NULL}, {W, NULL}};
    OrnRtScalar acc[1] = {{.f64 = 0}};
    OrnRtLoop loop = {&plan, args, body, NULL, (void *)mode, acc, 0};
    if (orn_rt_run(rt, &loop) != ORN_OK) orn_rt_die(rt);
    orn_dsm_free(A);
    orn_dsm_free(H);
    orn_dsm_free(W);
    orn_rt_finalize(rt);
    return 0;
}
