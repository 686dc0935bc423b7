/* loop_progress.c: a loop run on the progress line (support/progress.h), on the rank that
 * shows one.
 *
 * Only rank 0 sees its own work, so the line counts the loop's iterations as estimated from
 * rank 0's share: the fraction of its elements done, times the loop's elements (the
 * iteration space's, known on every rank). The ranks run their shares side by side, so the
 * estimate is as good as the balance; the rate and the time left follow from it.
 *
 * Cost: nothing on other ranks and when off (one branch per block). On: the total is
 * summed once per run from the schedule's work lists (no messages), and each block (each
 * slice, where bodies run in slices) reads the clock once; the line is drawn a few times a
 * second at most. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "progress.h"
#include "rt_int.h"

void rt_progress_begin(Exec *x)
{
    x->pr = orn_dsm_progress_line(x->dsm);
    if (!x->pr) return;
    const OrnRtPlan *p = x->plan;
    const char *file = p && p->file ? p->file : "?", *base = strrchr(file, '/');
    char label[160];
    snprintf(label, sizeof label, "parallel_for %s:%d", base ? base + 1 : file, p ? p->line : 0);
    orn_progress_begin(x->pr, label, 0, ORN_PROGRESS_ITEMS);
}

void rt_progress_total(Exec *x)
{
    if (!x->pr) return;
    WorkList wl = {0};
    int64_t mine = 0;
    for (int64_t s = 0; s < x->nsteps; s++) {
        wl.n = 0;
        x->sched->work(x, s, x->me, &wl);
        for (int64_t i = 0; i < wl.n; i++) mine += wl.w[i].count;
    }
    free(wl.w);
    x->pr_done = 0;
    x->pr_mine = mine;
    double all = (double)x->iter->nnz;
    x->pr_scale = mine > 0 ? all / (double)mine : 0;
    orn_progress_total(x->pr, all);
    orn_progress_update(x->pr, 0);
}

void rt_progress_update(Exec *x, int64_t extra)
{
    orn_progress_update(x->pr, (double)(x->pr_done + extra) * x->pr_scale);
}

void rt_progress_end(Exec *x)
{
    orn_progress_end(x->pr);
    x->pr = NULL;
}
