/* plan_rt.h: a schedule and its roles as the runtime's plan (runtime/plan.h), and the plan
 * check the runtime applies to it.
 *
 * Every plan the strategies consider is described the way code generation emits it -- in
 * the program's declared order; code generation permutes it into storage order, which
 * changes no answer of the check -- and checked with orn_rt_plan_check, the function
 * orn_rt_run calls on every plan it receives. An array whose role the check refuses gets a
 * role the runtime runs under any schedule instead: a read-only array the role it would
 * have if no partitioned key followed it (prefetched or replicated), then replicated; a
 * written one remote. So the analyzer never emits a plan the runtime would refuse, and
 * costs and --explain speak of the roles that run. */
#ifndef ORN_PLAN_RT_H
#define ORN_PLAN_RT_H

#include <stdbool.h>

#include "plan.h"
#include "strategy.h"

/* Room for the check's message about one array. */
#define ORN_PLAN_WHY 256

/* Array k of pb in role r as the runtime's plan array (declared order). */
void orn_plan_rt_array(const OrnPlanProblem *pb, int k, OrnRole r, OrnRtPlanArray *out);

/* Schedule s with roles (pb->narrays) as the runtime's plan; arrays receives its
 * pb->narrays + 1 plan arrays at most (a problem whose arrays[0] is not the iteration space
 * gets the runtime's: dense, one dimension per key) and out points to it. No
 * accumulators. */
void orn_plan_rt_plan(const OrnPlanProblem *pb, const OrnPlanSchedule *s, const OrnRole *roles,
                      OrnRtPlanArray *arrays, OrnRtPlan *out);

/* Change roles (pb->narrays, for schedule s) until the plan check passes, as above. why
 * (NULL, or pb->narrays buffers of ORN_PLAN_WHY bytes) receives the check's message for
 * each array whose role changed and "" for the others. Returns false when the check
 * refuses the plan itself (or an array no other role can replace: the iteration space, a
 * buffer); plan_why (NULL or ORN_PLAN_WHY bytes) then says why. */
bool orn_plan_rt_runnable(const OrnPlanProblem *pb, const OrnPlanSchedule *s, OrnRole *roles,
                          char (*why)[ORN_PLAN_WHY], char *plan_why);

#endif
