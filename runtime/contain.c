/* contain.c: contained body errors (orn_rt_set_contain, rt.h): the REPL's loops survive an
 * error inside a body at any rank count.
 *
 * A rank whose body fails does not leave the schedule: the steps, rounds, flushes and
 * rotations of a loop are collectives and point-to-point transfers that every rank's peers
 * count on, so the failing rank records its first error, stops calling bodies, and goes on
 * taking part in every one of them. Nothing waits for a verdict with a timeout (a slow rank
 * is not a dead one): the ranks meet anyway at the end of each step, where an allreduce of
 * a flag tells all of them that the loop failed (they then skip their remaining bodies
 * too), and at the loop's end, where orn_dsm_agree hands every rank the lowest failing
 * rank's message. Failures outside bodies (a transfer, a lost rank) are not contained:
 * they leave the ranks disagreeing, and the job ends as in a compiled program.
 */
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "rt_int.h"

void orn_rt_set_contain(OrnRtCtx *rt, int on)
{
    rt->contain = on != 0;
}

int orn_rt_agreed(const OrnRtCtx *rt)
{
    return rt->agreed;
}

int orn_rt_error_rank(const OrnRtCtx *rt)
{
    return orn_dsm_error_rank(rt->dsm);
}

int rt_body_contain(Exec *x, int code)
{
    if (!x->rt->contain) return 0;
    if (!x->body_code) {
        x->body_code = code ? code : ORN_E_BODY;
        const char *m = orn_dsm_error(x->dsm);
        size_t n = strlen(m) + 1;
        x->body_msg = orn_xmalloc(n);
        memcpy(x->body_msg, m, n);
    }
    x->body_skip = 1;
    return 1;
}

int rt_body_step_agree(Exec *x)
{
    int64_t failed = x->body_code != 0;
    int status = orn_dsm_allreduce_i64(x->dsm, &failed, 1, ORN_DSM_MAX);
    if (!status && failed) x->body_skip = 1;
    return status;
}

int rt_body_agree(Exec *x)
{
    if (!x->rt->contain) return ORN_OK;
    if (x->body_code) /* the message as recorded: escaped already, its line breaks kept */
        orn_dsm_fail_lines(x->dsm, x->body_code, x->body_msg, "%s", "");
    int status = x->P > 1 ? orn_dsm_agree(x->dsm, x->body_code) : x->body_code;
    /* contained errors are these two; anything else is the agreement's own failure */
    x->rt->agreed = status == ORN_E_RANGE || status == ORN_E_BODY;
    return status;
}
