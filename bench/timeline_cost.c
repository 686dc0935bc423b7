/* timeline_cost.c: what one timeline span costs (dsm/timeline.h): begin, three arguments,
 * end -- the runtime's span of a block -- with the recorder on, full (dropping) and off.
 * Prints nanoseconds per span, the best of 5 rounds of N spans. Multiply by the spans per
 * epoch (the trace's span count / epochs) for the recording's share of an epoch.
 *
 *   build/<dir>/bench/bench_timeline_cost [N]     (one process, no mpiexec needed)
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "rt.h"
#include "timeline.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* N block spans as exec.c records them: a begin, three arguments, an end. */
static double spans(OrnTl *tl, int64_t n)
{
    double t0 = now();
    for (int64_t i = 0; i < n; i++) {
        int64_t s = orn_tl_begin(tl, ORN_TL_COMPUTE, "block");
        if (s >= 0) {
            orn_tl_int(tl, s, "tile", i & 63);
            orn_tl_int(tl, s, "elements", 4096);
            orn_tl_int(tl, s, "step", i >> 6);
        }
        orn_tl_end(tl, s);
    }
    return (now() - t0) / (double)n * 1e9;
}

int main(int argc, char **argv)
{
    OrnRtCtx *rt;
    if (orn_rt_init(&argc, &argv, &rt)) return 1;
    OrnDsmCtx *dsm = orn_rt_dsm(rt);
    int64_t n = argc > 1 ? atoll(argv[1]) : 200000;
    if (n < 1) n = 1;
    double on = 1e30, full = 1e30, off = 1e30;
    for (int round = 0; round < 5; round++) {
        char path[64];
        snprintf(path, sizeof path, "/tmp/orn_timeline_cost.%d.json", round);
        if (orn_dsm_timeline_start(dsm, path, n)) {
            fprintf(stderr, "%s\n", orn_dsm_error(dsm));
            return 1;
        }
        OrnTl *tl = orn_dsm_timeline(dsm);
        double a = spans(tl, n); /* fills it exactly */
        double b = spans(tl, n); /* full: every span dropped */
        if (orn_dsm_timeline_finish(dsm, NULL)) return 1;
        remove(path);
        double c = spans(NULL, n);
        if (a < on) on = a;
        if (b < full) full = b;
        if (c < off) off = c;
    }
    if (orn_rt_rank(rt) == 0)
        printf("timeline span (begin, 3 arguments, end), best of 5 x %lld: on %.1f ns, full "
               "(dropped) %.1f ns, off %.2f ns\n",
               (long long)n, on, full, off);
    orn_rt_finalize(rt);
    return 0;
}
