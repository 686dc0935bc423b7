/* explain.h: --explain (for people) and --explain=json (for programs) of a plan set.
 *
 * The text report gives, per parallel_for: its line and keys, whether it is ordered, each
 * dependence vector with the accesses that produce it (source line and caret), the
 * strategy and why it won (and why better ones are illegal), and each array's role. The
 * JSON follows the contract's schema (design/language-core.md section 8) and adds "keys",
 * "blocks_per_rank", "inner_strategy" (unimodular) and "dependences" (each vector with the
 * access pairs that produce it). */
#ifndef ORN_EXPLAIN_H
#define ORN_EXPLAIN_H

#include <stdio.h>

#include "analyze.h"
#include "strbuf.h"

void orn_explain_text(OrnBuf *out, OrnUnit *u, const OrnPlanSet *plans);
void orn_explain_json(OrnBuf *out, OrnUnit *u, const OrnPlanSet *plans);

#endif
