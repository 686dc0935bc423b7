/* eval.h: the REPL's evaluator: simple top-level statements run directly over the checked
 * AST, with no compile step.
 *
 * A piece whose new statements use only scalars (bool, integers, floats, str) of top-level
 * variables, params and consts, the arithmetic and comparisons, the scalar built-ins
 * (math, conversions, min/max, rand/randn/randint, wall_time, print, eprint, exit,
 * set_seed) and extern fns with scalar arguments, in assignments, `if`, `while`, `for`,
 * `break` and `continue`, is evaluated here; anything else (dist arrays, local arrays,
 * views, printf, user fns, parallel_for, integer `/`) goes to the compiler (session.h).
 * Values follow C's rules exactly as the generated code does (codegen/c_expr.c: the C type
 * of each operand, the usual arithmetic conversions, the casts the emitter writes), so a
 * statement prints and stores the same bits either way; externs are called through libffi.
 * Variables live in the session's slots (orn_std_slot_*), under the keys modules use. */
#ifndef ORN_REPL_EVAL_H
#define ORN_REPL_EVAL_H

#include <stdbool.h>
#include <stdint.h>

#include "orn_std.h"
#include "unit.h"

/* Whether every top-level statement of u at byte `from` or later can be evaluated. */
bool orn_eval_supported(const OrnUnit *u, uint32_t from);

/* Evaluate them. keep(ud, s) returns a copy of string s that lives as long as the session.
 * Returns 0, or 1 after a run-time error (reported; what ran before stays done). */
int orn_eval_run(OrnStdProg *p, OrnStdSlots *slots, OrnUnit *u, uint32_t from,
                 const char *(*keep)(void *ud, const char *s), void *ud);

#endif
