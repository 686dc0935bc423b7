/* emit.h: code generation: the emitter interface every back end implements.
 *
 * QBE-style: a back end is a struct of function pointers (OrnCgTarget). orn_cg_generate()
 * lowers an analysed unit into target-independent facts (lower.h: names, loop plans in the
 * runtime's terms, which functions need a loop context, the prefetch slice, which view
 * assignments fuse), then drives the target through them in a fixed order:
 *
 *     begin      the unit's preamble: includes, params, statics, declarations
 *     function   each user fn (its top-level version), in source order
 *     loop       each parallel_for: plan descriptor, body over a block of elements,
 *                prefetch pass, clones of the fns its body calls
 *     toplevel   the top-level statements (main() for C)
 *     end        finish; returns false on an internal error
 *
 * The C emitter (emit_c.c, orn_cg_target_c) writes one C file for the system C compiler;
 * the CUDA emitter (emit_cuda.c, orn_cg_target_cuda) writes the kernels of @gpu loops. */
#ifndef ORN_CG_EMIT_H
#define ORN_CG_EMIT_H

#include <stdbool.h>
#include <stdint.h>

#include "analyze.h"
#include "strbuf.h"
#include "unit.h"

typedef struct OrnCgProgram OrnCgProgram; /* lower.h */
typedef struct OrnCgLoop OrnCgLoop;       /* lower.h */

typedef struct OrnCgOptions {
    const char *file; /* source name used in run-time messages (default: the unit's path) */
    bool gpu;         /* orionc --gpu: @gpu loops also get CUDA kernels (emit_cuda.c) */
    /* orionc --gpu-rowcache: warp kernels keep the rows of the loop's keys in shared memory
     * (cuda_rows.c); without it their loads are global loads (no generic addressing) */
    bool gpu_rowcache;
    /* A loadable module for the `orion` REPL instead of a program (docs/repl.md): no main()
     * but `int orn_module_entry(OrnStdProg *, OrnStdSlots *, int argc, char **argv)`, which
     * copies every top-level variable, param and dist array in from the session's slots,
     * runs the top-level statements that start at byte `from` or later (only their loops
     * are emitted), and copies them back out, also after a run-time error. */
    bool module;
    uint32_t from;
    /* The bytes of a vector of the C compiler's vectorized loops with the flags the C is
     * compiled with (tools/cc_driver.h, orn_cc_vector_bytes); 0: 32. Vectors the generated
     * C keeps in registers are written at that width (c_for.c, reduce_jam_regs). */
    int vec_bytes;
} OrnCgOptions;

typedef struct OrnCgTarget {
    const char *name;
    /* Returns the target's state for this unit (NULL on failure). */
    void *(*begin)(const OrnCgProgram *p, OrnBuf *out);
    void (*function)(void *st, const OrnNode *fn);
    void (*loop)(void *st, const OrnCgLoop *l);
    void (*toplevel)(void *st, const OrnNode *program);
    /* Writes what remains and frees the state; false on an internal error. */
    bool (*end)(void *st);
} OrnCgTarget;

extern const OrnCgTarget orn_cg_target_c;
/* The .cu of a --gpu build: the kernels of its @gpu loops (emit_cuda.c). */
extern const OrnCgTarget orn_cg_target_cuda;

/* Generate code for u (after successful orn_sema and orn_analyze) into out. Returns false
 * on an internal error, which has been reported through u's diagnostics. */
bool orn_cg_generate(OrnUnit *u, const OrnPlanSet *plans, const OrnCgTarget *t,
                     const OrnCgOptions *opt, OrnBuf *out);

#endif
