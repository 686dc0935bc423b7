/* orn_std.h: the support library of generated programs (orn_std), on top of the runtime.
 *
 * Every program orionc generates includes this header and links orn_std, orn_rt and
 * orn_dsm. It owns what the language needs beyond the runtime's loop execution:
 *   - the program context (OrnStdProg): runtime context, source file name for messages,
 *     the replicated program random stream (rand()/randn()/randint() outside loops), the
 *     ORN_TRACE dump;
 *   - params (--name=value, --help; exit 2 on a bad command line, on every rank), and the
 *     run-time flags --checkpoint=DIR, --checkpoint-every=SECONDS, --resume=DIR:
 *     checkpoints at the safe points of top-level loops and resume (ckpt.c);
 *   - errors: "orion: rank R: file.orn:LINE: what", the job ends on every rank (exit 1);
 *     failures of "agreed" collectives (loaders, save, load) end it cleanly, printed once;
 *   - print/printf/eprint; local (replicated) arrays; dist-array constructors and
 *     collective element access for top-level code; views (OrnStdVec) and the built-in
 *     reductions over them.
 *
 * Reductions (dot, sum, norm over views and local arrays) use eight partial sums, element
 * x going to partial x % 8, combined as ((p0+p1)+(p2+p3))+((p4+p5)+(p6+p7)). The contract
 * lets built-in reductions reassociate; this fixed order vectorizes and gives the same bits
 * on the fast path (pointers into a local box) and the slow path (element by element), so
 * results never depend on where the data happened to be. Scalar code stays IEEE in source
 * order: generated programs are compiled with -ffp-contract=off and never -ffast-math.
 *
 * No mutable globals: all state is in the OrnStdProg that the generated main() owns.
 */
#ifndef ORN_STD_H
#define ORN_STD_H

#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orn_std_scalar.h"
#include "rt.h"

#define ORN_STD_NORETURN     __attribute__((noreturn))
#define ORN_STD_PRINTF(a, b) __attribute__((format(printf, a, b)))

/* ---------------------------------------------------------------- program context */

typedef enum OrnStdParamType {
    ORN_STD_PBOOL,
    ORN_STD_PI64,
    ORN_STD_PF64,
    ORN_STD_PSTR
} OrnStdParamType;

typedef struct OrnStdParam {
    const char *name;
    OrnStdParamType type;
    void *addr;      /* bool *, int64_t *, double *, const char ** */
    const char *doc; /* the comment on the param's line in the source, or NULL (--help) */
} OrnStdParam;

typedef struct OrnStdCkpt OrnStdCkpt;
typedef struct OrnStdState OrnStdState;
typedef struct OrnMetrics OrnMetrics;   /* metrics.h */
typedef struct OrnProgress OrnProgress; /* support/progress.h */

enum { ORN_STD_JAM_SLOTS = 8 };
typedef struct OrnStdProg {
    OrnRtCtx *rt;
    OrnDsmCtx *dsm;
    int rank, size;
    const char *file;     /* the .orn source, for messages */
    const char *prog;     /* argv[0] */
    OrnRtRng rng;         /* the program stream: replicated, same draws on every rank */
    FILE *trace;          /* $ORN_TRACE: block order of every loop run (rank 0 writes) */
    int64_t runs;         /* loops run so far */
    int stats;            /* $ORN_STATS=runs: print every loop run's statistics on stderr */
    int summary;          /* --stats or $ORN_STATS: the per-loop summary at the end (rank 0) */
    const char *timeline; /* --timeline=FILE or $ORN_TIMELINE: the timeline's file, or NULL */
    int64_t out_lines;    /* lines printed on stdout so far (rank 0) */
    /* what a user watches (monitor.c, docs/observability.md) */
    const char *logdir;       /* --logdir=DIR or $ORN_LOGDIR: where log_metric writes, or NULL */
    OrnMetrics *metrics;      /* log_metric's writer (rank 0, with a logdir), or NULL */
    int quiet;                /* --quiet: no progress line */
    OrnProgress *progress;    /* the progress line (rank 0, on a terminal), or NULL */
    const OrnStdState *state; /* the safe points' lines (orn_std_ckpt_init) */
    int point_task;           /* the safe point whose loop is on the progress line, + 1 */
    /* checkpoints (ckpt.c): the run-time flags, and the state behind them */
    const char *ckpt_dir;      /* --checkpoint=DIR, or NULL */
    const char *resume_dir;    /* --resume=DIR, or NULL */
    double ckpt_every;         /* --checkpoint-every=SECONDS, default 300 */
    const OrnStdParam *params; /* the program's params, and which the command line gave */
    int nparams;
    unsigned char *given;
    OrnStdCkpt *ck; /* NULL without --checkpoint and --resume */
    int resume_at;  /* the safe point being resumed at, until its loop takes it; -1 */
    /* The `orion` REPL (docs/repl.md): a jmp_buf * that run-time errors return to instead
     * of ending the job; NULL in compiled programs. See orn_std_die and orn_std_run. */
    void *recover;
    void *body_jb;     /* inside a guarded loop body (std.c): where a body error goes */
    int in_loop;       /* a loop runs: in the REPL, an error outside its bodies (a buffer's
                          apply fn at a flush, where the ranks cannot agree) ends the job; an
                          error while none runs is top-level code's, which every rank meets
                          alike (orn_dsm_die_alike: reported once) */
    int extern_failed; /* orn_std_extern failed on this rank (orn_std_externs_agreed) */
    /* The REPL's Ctrl-C flag (set by its signal handler): a guarded loop runs no more
     * bodies once it is set, and every rank returns to the prompt at the loop's end. */
    volatile int *interrupt;
    /* transposed copies of local arrays for generated code (orn_std_jam_snap), by slot */
    void *jam[ORN_STD_JAM_SLOTS];
    size_t jam_cap[ORN_STD_JAM_SLOTS];
    const char *src; /* the .orn text (orn_std_set_source), for run-time errors, or NULL */
    /* strings made by '+' and str(x) (strings.c): kept until orn_std_finish */
    char **strs;
    int64_t nstrs, capstrs;
} OrnStdProg;

/* Start the program: MPI and the runtime, then the command line. --help prints the params
 * (rank 0) and exits 0; a bad argument prints one message (rank 0) and exits 2 on every
 * rank. $ORN_TRACE=path turns on the runtime's trace and appends each loop's block order
 * to path. --timeline=FILE or $ORN_TIMELINE=FILE records the timeline (dsm/timeline.h), which
 * orn_std_finish writes; --stats or $ORN_STATS=1 prints a summary per parallel_for at the
 * end, $ORN_STATS=runs also each loop run's statistics per rank (docs/observability.md). */
void orn_std_init(OrnStdProg *p, int *argc, char ***argv, const char *file,
                  const OrnStdParam *params, int nparams);
/* The program's source text, kept for its run: errors that name a line show it with a
 * caret, as the compiler does (orn_rt_src_excerpt); the runtime's too. */
void orn_std_set_source(OrnStdProg *p, const char *text);
/* log_metric(name, step, value): rank 0 appends the value to the log directory's CSV and
 * TensorBoard event files (metrics.h); without --logdir or $ORN_LOGDIR, and on other ranks,
 * nothing is written. An empty name ends the job (every rank). A write that fails is
 * reported once on stderr, naming the file and the cause, and the program goes on without
 * writing metrics. */
void orn_std_log_metric(OrnStdProg *p, const char *name, int64_t step, double value, int line);
/* End the program normally (collective): writes the timeline and prints the per-loop
 * summary when they are on; returns the exit code for main. */
int orn_std_finish(OrnStdProg *p);
/* exit(code) in the language: every rank calls it (top-level code is replicated). */
void orn_std_exit(OrnStdProg *p, int64_t code) ORN_STD_NORETURN;
/* A run-time error at a source line: print "orion: rank R: file:LINE: message" and end
 * the job on every rank with exit code 1. */
void orn_std_die(OrnStdProg *p, int line, const char *fmt, ...) ORN_STD_NORETURN
    ORN_STD_PRINTF(3, 4);
/* The same for an error at a `name[` on the line (`name(` for "name("): the first, or the
 * one the site says (ORN_RT_SITE: a line and an occurrence; a plain line is a site):
 * "file:LINE:COL: message" with the caret under name (as orn_std_die when name is not on
 * the line). */
void orn_std_die_at(OrnStdProg *p, int site, const char *name, const char *fmt,
                    ...) ORN_STD_NORETURN ORN_STD_PRINTF(4, 5);
/* After a failed collective call (status != 0): end the job with the runtime's message. A
 * failure that every rank agrees on (loaders, save, load) is printed once, by rank 0, and
 * the ranks exit 1 together; any other ends the job from the failing rank. site as above. */
void orn_std_fail(OrnStdProg *p, int status, int site, int agreed) ORN_STD_NORETURN;

/* ---------------------------------------------------------------- checkpoints */

/* Checkpoint and resume (ckpt.c, docs/runtime.md section 15). Safe points are the starts
 * of the iterations of the top-level `for` and `while` loops, numbered 0, 1, ... in
 * program order. The generated main() describes the program's state in an OrnStdState:
 * every top-level variable, local array, dist array and buffer. */
typedef enum OrnStdVarKind {
    ORN_STD_VBOOL,
    ORN_STD_VI32,
    ORN_STD_VI64,
    ORN_STD_VF32,
    ORN_STD_VF64,
    ORN_STD_VSTR,
    ORN_STD_VLOCAL, /* OrnStdArr * (a local array, or the lines of load_text) */
    ORN_STD_VDIST,  /* OrnDsmArray * */
    ORN_STD_VBUF    /* OrnRtBuffer *; apply: its apply function (NULL: +=) */
} OrnStdVarKind;
typedef struct OrnStdVar {
    const char *name;
    OrnStdVarKind kind;
    void *addr;
    orn_rt_apply_fn apply;
} OrnStdVar;
struct OrnStdState {
    uint64_t program; /* FNV-1a 64 of the .orn source (codegen) */
    const OrnStdVar *vars;
    int nvars;
    const int *lines; /* source line of each safe point's loop */
    int npoints;
};
/* Collective, after orn_std_init: with --resume=DIR, restore the state of the newest
 * complete checkpoint in DIR (a checkpoint that cannot be used ends the job with exit 1
 * and a message saying why) and set resume_at; with --checkpoint=DIR, prepare DIR. */
void orn_std_ckpt_init(OrnStdProg *p, const OrnStdState *st);
/* On resume, top-level code before the resumed loop is skipped (its effects are in the
 * checkpoint): the statements between the loops of safe points x - 1 and x when resuming
 * at x or later, and the loop of safe point k when resuming at x = k + 1 or later. */
static inline int orn_std_ckpt_skip(const OrnStdProg *p, int x)
{
    return p->resume_at >= x;
}
/* The loop of safe point k when the run resumes there: its bounds and counter as they
 * were (returns 1, once); 0 otherwise (the loop starts normally). */
int orn_std_ckpt_resume(OrnStdProg *p, int k, int64_t *lo, int64_t *hi, int64_t *i);
/* Collective: safe point k at the start of the iteration with counter i (a `for`'s
 * variable in [lo, hi); a `while`'s iteration number). May write a checkpoint, and after
 * SIGTERM or SIGINT on any rank, writes one and ends the job with exit code 75. */
void orn_std_ckpt_poll(OrnStdProg *p, int k, int64_t lo, int64_t hi, int64_t i);
/* The progress line (monitor.c): the loop of safe point k, at the iteration with counter i
 * (hi > lo: a `for` over [lo, hi); lo = hi = 0: a `while`), and after its end. */
void orn_std_point_progress(OrnStdProg *p, int k, int64_t lo, int64_t hi, int64_t i);
void orn_std_point_end(OrnStdProg *p, int k);
static inline void orn_std_ckpt_point(OrnStdProg *p, int k, int64_t lo, int64_t hi, int64_t i)
{
    if (p->ck) orn_std_ckpt_poll(p, k, lo, hi, i);
    if (p->progress) orn_std_point_progress(p, k, lo, hi, i);
}
/* After the loop of safe point k (generated code). */
static inline void orn_std_loop_end(OrnStdProg *p, int k)
{
    if (p->progress) orn_std_point_end(p, k);
}
/* Release the checkpoint state (orn_std_finish calls it). */
void orn_std_ckpt_free(OrnStdProg *p);
/* Exit code of a job stopped by a signal after writing its checkpoint. */
#define ORN_STD_EXIT_CHECKPOINTED 75
/* ---------------------------------------------------------------- the REPL's modules */

/* The session state of the `orion` REPL (slots.c): one slot per top-level variable, param
 * and dist array, keyed by "name@offset" and typed by its type's name. A module
 * (OrnCgOptions.module) copies each global in from its slot when the slot exists with the
 * same type and size (else the slot is made from the module's initial value) and out at
 * its end. */
typedef struct OrnStdSlots OrnStdSlots;
OrnStdSlots *orn_std_slots_new(void);
void orn_std_slots_free(OrnStdSlots *s);
void orn_std_slot_in(OrnStdSlots *s, const char *key, const char *type, void *var, size_t size);
void orn_std_slot_out(OrnStdSlots *s, const char *key, const char *type, const void *var,
                      size_t size);
/* The slots in order of creation: key and type, NULL past the end (for `:vars`). */
const char *orn_std_slot_at(const OrnStdSlots *s, int i, const char **type);
/* Slot i's bytes (the variable's value: a scalar, a str's pointer, an array's handle). */
const void *orn_std_slot_val(const OrnStdSlots *s, int i, size_t *size);
/* --name=value parsing of a module's params (argv[0] is skipped): -1 to go on, else the
 * exit code (0 after --help, 2 after a bad argument), rank 0 having printed why. */
int orn_std_params(OrnStdProg *p, int argc, char **argv, const OrnStdParam *params, int nparams);

/* ---------------------------------------------------------------- random numbers */

void orn_std_set_seed(OrnStdProg *p, int64_t seed);
double orn_std_rand(OrnStdProg *p);
double orn_std_randn(OrnStdProg *p);
int64_t orn_std_randint(OrnStdProg *p, int64_t n, int line);
/* Inside a loop body: the iteration's stream (bound non-positive is an error). */
int64_t orn_std_rng_int(OrnStdProg *p, OrnRtRng *g, int64_t n, int line);
double orn_std_wall_time(void);

/* ---------------------------------------------------------------- printing */

/* print/eprint: `types` has one letter per argument: 'b' bool (int), 'i' int64_t,
 * 'f' double (f64), 'g' double holding an f32, 's' const char *, 'S' char * that the call
 * frees (an array's text, show.c). Floats are printed in
 * the shortest form that reads back exactly. print: rank 0, stdout; eprint: every rank,
 * stderr, "[rank R] " first. */
void orn_std_print(OrnStdProg *p, const char *types, ...);
void orn_std_eprint(OrnStdProg *p, const char *types, ...);
/* printf: the generated code passes a C format whose integer conversions already take
 * int64_t and whose float arguments are doubles. Rank 0 only. */
void orn_std_printf(OrnStdProg *p, const char *fmt, ...) ORN_STD_PRINTF(2, 3);
/* The shortest %.Ng (N = 1..17, or 1..9 for f32) that reads back exactly. */
void orn_std_fmt_float(char *buf, size_t size, double v, int is_f32);
/* An element of type `type` (OrnDsmType) at v, as print writes it (show.c). */
void orn_std_fmt_elem(char *buf, size_t size, int type, const void *v);
/* The text print/eprint write for an array or a view (show.c; new strings, the caller frees
 * them; the print functions take them as 'S' arguments and free them, on every rank).
 * Arrays of more than ORN_STD_SHOW_MAX elements (sparse: stored elements) are summarized:
 * the first and last three indices of each long dimension. show_dist is collective (it
 * reads only the elements shown); show_line: the stored elements of a sparse 2-D array's
 * line along declared dimension `dim` through `fixed` (collective); show_arr: a local
 * array; show_vals: n values of an element type (OrnDsmType) in a row, a view's. */
#define ORN_STD_SHOW_MAX 1000
struct OrnStdArr;
char *orn_std_show_dist(OrnStdProg *p, OrnDsmArray *a, int line);
char *orn_std_show_line(OrnStdProg *p, OrnDsmArray *a, int dim, int64_t fixed, int line);
char *orn_std_show_arr(const struct OrnStdArr *a);
char *orn_std_show_vals(int type, const void *vals, int64_t n);

/* ---------------------------------------------------------------- strings (strings.c) */

/* `a + b` on two str, and str(x): a new string, kept until orn_std_finish (strings are
 * immutable and shared by assignment, so none is freed earlier; the language builds them
 * only outside parallel_for). Out of memory ends the job naming the line. */
const char *orn_std_str_cat(OrnStdProg *p, const char *a, const char *b, int line);
const char *orn_std_str_i64(OrnStdProg *p, int64_t v, int line);
/* the shortest form that reads back exactly, as print writes it (is_f32: as an f32) */
const char *orn_std_str_float(OrnStdProg *p, double v, int is_f32, int line);
/* i32(s), i64(s), f32(s), f64(s) of a str: the number it spells, blanks around it allowed
 * (an integer in decimal with an optional sign; a float as strtod reads it, nan and inf
 * included); anything else, or an integer out of range of `bits`, ends the job naming the
 * line and the text. */
int64_t orn_std_str_to_int(OrnStdProg *p, const char *s, int bits, int line);
float orn_std_str_to_f32(OrnStdProg *p, const char *s, int line);
double orn_std_str_to_f64(OrnStdProg *p, const char *s, int line);
/* comparisons of two str: bytewise, as strcmp */
static inline int orn_std_str_cmp(const char *a, const char *b)
{
    return strcmp(a ? a : "", b ? b : "");
}

/* ---------------------------------------------------------------- externs */

/* Extern fns' libraries: looked up one after another (generated programs and modules at
 * their start, the REPL's evaluator at a piece's first call)
 * (orn_std_extern, which records a failure and returns NULL), then orn_std_externs_agreed,
 * collective: on a failure anywhere (a library missing on one node) rank 0 prints the
 * lowest failing rank's message once -- "file:LINE: extern fn 'f': cannot load 'lib' on host
 * H: why" -- and every rank exits 1 (the REPL: returns to the prompt). */
void *orn_std_extern(OrnStdProg *p, const char *lib, const char *name, int line);
void orn_std_externs_agreed(OrnStdProg *p);

/* ---------------------------------------------------------------- integer helpers */

/* (min, max, abs and the prefetch pass's div and mod: orn_std_scalar.h) */

static inline int64_t orn_std_div(OrnStdProg *p, int64_t a, int64_t b, int line)
{
    if (b == 0) orn_std_die_at(p, line, "div(", "division by zero in div()");
    return orn_std_div_soft(a, b);
}
static inline int64_t orn_std_mod(OrnStdProg *p, int64_t a, int64_t b, int line)
{
    if (b == 0) orn_std_die_at(p, line, "mod(", "division by zero in mod()");
    return orn_std_mod_soft(a, b);
}

/* ---------------------------------------------------------------- local arrays */

/* A local array: replicated, row-major, owned by the variable that holds it. */
typedef struct OrnStdArr {
    int type; /* OrnDsmType */
    int ndim;
    int64_t dims[ORN_DSM_MAXDIM];
    int64_t n;
    size_t esize;
    void *data;
    struct OrnStdArr **home; /* orn_std_arr_take's slot, where a free puts it back; or NULL */
} OrnStdArr;

enum { ORN_STD_ZEROS, ORN_STD_FILL, ORN_STD_RAND, ORN_STD_RANDN };
/* zeros/fill/rand/randn without dist. fill: `value`; rand/randn: `seed` (element i is
 * orn_rt_rand_at(seed, i), as for dist arrays). */
OrnStdArr *orn_std_arr_new(OrnStdProg *p, int type, int ndim, const int64_t *dims, int init,
                           double value, int64_t seed, int line);
/* Frees a, or puts it back into its empty home slot (orn_std_arr_take). */
void orn_std_arr_free(OrnStdArr *a);
/* orn_std_arr_new for a local array a loop body declares, once per iteration: the array
 * the last iteration freed into *slot (the body function's, freed when it returns), set
 * again as new when its extents are the same, else a new one. An allocation per block,
 * not per iteration (a softmax's `sc = zeros(f64, k)` in the body). */
OrnStdArr *orn_std_arr_take_slow(OrnStdProg *p, OrnStdArr **slot, int type, int ndim,
                                 const int64_t *dims, int init, double value, int64_t seed,
                                 int line);
/* Its common case inline: the slot's array, of the same extents, zeroed again (two calls
 * per iteration were a tenth of softmax regression's time, its scores `z = zeros(f64, K)`). */
static inline __attribute__((always_inline)) OrnStdArr *
orn_std_arr_take(OrnStdProg *p, OrnStdArr **slot, int type, int ndim, const int64_t *dims, int init,
                 double value, int64_t seed, int line)
{
    OrnStdArr *a = *slot;
    if (init == ORN_STD_ZEROS && a && a->type == type && a->ndim == ndim) {
        int same = 1;
        for (int d = 0; d < ndim; d++) same &= a->dims[d] == dims[d];
        if (same) {
            *slot = NULL;
            memset(a->data, 0, (size_t)a->n * a->esize);
            a->home = slot;
            return a;
        }
    }
    return orn_std_arr_take_slow(p, slot, type, ndim, dims, init, value, seed, line);
}
/* For __attribute__((cleanup)) on block-local arrays: back into an empty home slot inline
 * (orn_std_arr_free's first case), else orn_std_arr_free. */
static inline __attribute__((always_inline)) void orn_std_arr_cleanup(OrnStdArr **a)
{
    OrnStdArr *x = *a;
    if (x && x->home && !*x->home)
        *x->home = x;
    else
        orn_std_arr_free(x);
    *a = NULL;
}
/* Row-major offset of a key, with bounds checks; name: the array's in the source (its
 * errors name it and point at it). */
static inline int64_t orn_std_arr_off(OrnStdProg *p, const OrnStdArr *a, int line, const char *name,
                                      int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    int64_t k[4] = {i0, i1, i2, i3}, off = 0;
    for (int d = 0; d < a->ndim; d++) {
        if (k[d] < 0 || k[d] >= a->dims[d])
            orn_std_die_at(p, line, name,
                           "index %" PRId64 " is out of range for dimension %d of %s "
                           "(extent %" PRId64 ")",
                           k[d], d, name, a->dims[d]);
        off = off * a->dims[d] + k[d];
    }
    return off;
}
/* The same without the test, for subscripts a loop's once-per-range test proved in range
 * (nd, a constant at every call site, is the number of subscripts: the loop unrolls). */
static inline __attribute__((always_inline)) int64_t
orn_std_arr_at(const OrnStdArr *a, int nd, int64_t i0, int64_t i1, int64_t i2, int64_t i3)
{
    const int64_t k[4] = {i0, i1, i2, i3};
    int64_t off = k[0];
    for (int d = 1; d < nd; d++) off = off * a->dims[d] + k[d];
    return off;
}
/* A transposed copy of the 2-D f32 or f64 local array a for generated code (codegen/c_jam.c):
 * element (r, col) at col * (dims[0] + pad) + r, the pad rows zero; kept in slot of p
 * (reused, freed by orn_std_finish). NULL when a is not such an array or has more than
 * 2^22 elements, or memory runs out (the caller then runs its loops as written). */
const void *orn_std_jam_snap(OrnStdProg *p, const OrnStdArr *a, int slot, int pad);
/* A loop body's 2-D box as a local array, for orn_std_jam_snap (a replicated dist array read
 * as a top-level local one is, codegen/c_jam.c): the box when it starts at (0, 0) with its
 * rows one after the other, else an array of no dimensions, which the snapshot refuses. */
static inline OrnStdArr orn_std_box_arr(const OrnRtBox *x, int type, size_t esize)
{
    OrnStdArr a;
    memset(&a, 0, sizeof a);
    a.type = type;
    a.esize = esize;
    if (x->base && x->lo[0] == 0 && x->lo[1] == 0 && (uint64_t)x->s[0] == x->n[1] &&
        x->n[0] <= (uint64_t)INT32_MAX && x->n[1] <= (uint64_t)INT32_MAX) {
        a.ndim = 2;
        a.dims[0] = (int64_t)x->n[0];
        a.dims[1] = (int64_t)x->n[1];
        a.n = a.dims[0] * a.dims[1];
        a.data = x->base;
    }
    return a;
}
/* Once-per-range tests of generated loops (codegen/version.h): subscript v is inside
 * dimension d; and [*lo, *hi) narrowed to the v for which v + off is. */
static inline int orn_std_arr_span(const OrnStdArr *a, int d, int64_t v)
{
    return d < a->ndim && (uint64_t)v < (uint64_t)a->dims[d];
}
static inline void orn_std_arr_clip(const OrnStdArr *a, int d, int64_t off, int64_t *lo,
                                    int64_t *hi)
{
    int64_t b = d < a->ndim ? a->dims[d] - off : *lo, f = -off;
    if (*lo < f) *lo = f;
    if (*hi > b) *hi = b;
    if (*hi < *lo) *hi = *lo;
}
/* The same for v + s * n + off with n over [nlo, nhi) (orn_rt_box_clip_win). */
static inline void orn_std_arr_clip_win(const OrnStdArr *a, int d, int64_t nlo, int64_t nhi,
                                        int neg, int64_t off, int64_t *lo, int64_t *hi)
{
    int64_t x, y;
    int w = orn_rt_win(nlo, nhi, neg, off, &x, &y);
    if (w < 0) *hi = *lo;
    if (w <= 0) return;
    orn_std_arr_clip(a, d, x, lo, hi);
    orn_std_arr_clip(a, d, y, lo, hi);
}
/* The same for v + off + sh, sh known only at run time (orn_rt_box_clip_shift). */
static inline void orn_std_arr_clip_shift(const OrnStdArr *a, int d, int64_t sh, int64_t off,
                                          int64_t *lo, int64_t *hi)
{
    int64_t o;
    if (orn_rt_shift(sh, off, &o))
        orn_std_arr_clip(a, d, o, lo, hi);
    else
        *hi = *lo;
}
/* Prefetch pass: out of range reads element 0 instead of failing. */
static inline int64_t orn_std_arr_off_soft(const OrnStdArr *a, int64_t i0, int64_t i1, int64_t i2,
                                           int64_t i3)
{
    int64_t k[4] = {i0, i1, i2, i3}, off = 0;
    for (int d = 0; d < a->ndim; d++) {
        if (k[d] < 0 || k[d] >= a->dims[d]) return 0;
        off = off * a->dims[d] + k[d];
    }
    return off;
}
/* load_text(path) (collective): the lines of a text file, without their '\n' (or "\r\n");
 * a last line without '\n' counts. Rank 0 reads and broadcasts; a file that cannot be read
 * ends the job on every rank with exit 1, the message naming the line and the path. The
 * array has type ORN_STD_TEXT and data holding `const char *` elements (see text.c). */
enum { ORN_STD_TEXT = -1 };
OrnStdArr *orn_std_load_text(OrnStdProg *p, const char *path, int line);
/* save() of a local array (collective: rank 0 writes). */
void orn_std_arr_save(OrnStdProg *p, const OrnStdArr *a, const char *path, int line);

/* ---------------------------------------------------------------- dist arrays */

/* Constructors (collective). Extents must be positive. */
OrnDsmArray *orn_std_dist_new(OrnStdProg *p, int type, int ndim, const int64_t *dims, int init,
                              double value, int64_t seed, const char *name, int line);
/* The same, for an array that `plan`'s loop (the first loop that places it: codegen,
 * made_for) runs over (k = 0, a wavefront) or aligns with its iteration space `space`
 * (k: its index among the loop's arrays, a 1d loop): made in the partition that loop will
 * give it, where the runtime can tell (orn_rt_space_part, orn_rt_aligned_part_for), so that
 * nothing moves at its first run; else as orn_std_dist_new. */
OrnDsmArray *orn_std_dist_new_for(OrnStdProg *p, const OrnRtPlan *plan, int k,
                                  const OrnDsmArray *space, int type, int ndim, const int64_t *dims,
                                  int init, double value, int64_t seed, const char *name, int line);
/* After making dist array a that some loop reads anywhere, as a prefetched array and read
 * only: its node replica made now (orn_rt_replica_reserve), its pages part of making it. */
void orn_std_dist_replica(OrnStdProg *p, OrnDsmArray *a, int line);
/* Loaders. allow_nonfinite: nan, inf and numbers beyond the element type's range load
 * (an overflow as an infinity) instead of being errors naming path:line. */
OrnDsmArray *orn_std_load_triplets(OrnStdProg *p, const char *path, bool allow_nonfinite,
                                   const char *name, int line);
void orn_std_load_libsvm(OrnStdProg *p, const char *path, bool allow_nonfinite, OrnDsmArray **X,
                         OrnDsmArray **y, const char *xname, const char *yname, int line);
OrnDsmArray *orn_std_load_docword(OrnStdProg *p, const char *path, const char *name, int line);
/* load(path): the program expects `type`, `ndim`, `sparse`; anything else is an error. */
OrnDsmArray *orn_std_load(OrnStdProg *p, const char *path, int type, int ndim, int sparse,
                          bool allow_nonfinite, const char *name, int line);
/* load(path) of a dense array stored in another order than declared (analyzer/layout.h):
 * perm[s] is the declared dimension stored as dimension s. */
OrnDsmArray *orn_std_load_perm(OrnStdProg *p, const char *path, int type, int ndim,
                               bool allow_nonfinite, const int *perm, const char *name, int line);
/* load_csv: a matrix by rows (orn_dsm_load_csv), stored as perm says when not NULL. */
OrnDsmArray *orn_std_load_csv(OrnStdProg *p, const char *path, int type, bool header,
                              bool allow_nonfinite, const int *perm, const char *name, int line);
void orn_std_save(OrnStdProg *p, OrnDsmArray *a, const char *path, int line);
/* An array stored in another order than declared (analyzer/layout.h): perm[s] is the
 * declared dimension stored as dimension s. dims are the declared extents; rand and randn
 * draw by declared (logical) index, and save writes declared order. */
OrnDsmArray *orn_std_dist_new_perm(OrnStdProg *p, int type, int ndim, const int64_t *dims, int init,
                                   double value, int64_t seed, const int *perm, const char *name,
                                   int line);
void orn_std_save_perm(OrnStdProg *p, OrnDsmArray *a, const int *perm, const char *path, int line);
/* buffer(A, apply = f, flush_every = n, budget = x, staleness_aware = b); `given`: whether
 * flush_every was written (else the default: at the end of each block of work). */
OrnRtBuffer *orn_std_buffer(OrnStdProg *p, OrnDsmArray *target, orn_rt_apply_fn apply,
                            int64_t flush_every, int given, double budget, int stale_aware,
                            int line);
/* Whole-array reductions (collective). */
double orn_std_dist_sum(OrnStdProg *p, OrnDsmArray *a, int line);
double orn_std_dist_dot(OrnStdProg *p, OrnDsmArray *a, OrnDsmArray *b, int line);
double orn_std_dist_norm(OrnStdProg *p, OrnDsmArray *a, int line);
/* Extent d of an array (d checked). */
int64_t orn_std_dim(OrnStdProg *p, int ndim, const int64_t *dims, int64_t d, int line);

/* Element access from top-level code and the functions it calls (collective: every rank
 * executes the same statements). Keys are checked; line is a site (ORN_RT_SITE), so an
 * error's caret is under the access. */
void orn_std_dist_get(OrnStdProg *p, OrnDsmArray *a, const int64_t *key, void *out, int line);
void orn_std_dist_set(OrnStdProg *p, OrnDsmArray *a, const int64_t *key, const void *val, int line);
/* A top-level loop that reads dist array a and writes no dist array holds it for its
 * duration (codegen/c_hold.c): the reads are served from a whole copy once they have cost
 * about as much as one, up to $ORN_HELD_MAX bytes (orn_dsm_hold). Declare the result
 * ORN_STD_HELD: the hold ends with its scope. a may be NULL (nothing held). */
OrnDsmArray *orn_std_hold(OrnStdProg *p, OrnDsmArray *a);
void orn_std_held_release(OrnDsmArray *const *a);
#define ORN_STD_HELD __attribute__((cleanup(orn_std_held_release)))
/* Buffer update outside loops (from a fn called at top level): applied once (rank 0 adds
 * the delta; every rank flushes). Collective. */
void orn_std_buffer_add(OrnStdProg *p, OrnRtBuffer *b, const int64_t *key, const void *delta,
                        int line);

#define ORN_STD_DIST_ACCESS(T, name)                                                               \
    static inline T orn_std_dget_##name(OrnStdProg *p, OrnDsmArray *a, const int64_t *key,         \
                                        int line)                                                  \
    {                                                                                              \
        T x;                                                                                       \
        orn_std_dist_get(p, a, key, &x, line);                                                     \
        return x;                                                                                  \
    }                                                                                              \
    static inline void orn_std_dset_##name(OrnStdProg *p, OrnDsmArray *a, const int64_t *key, T v, \
                                           int line)                                               \
    {                                                                                              \
        orn_std_dist_set(p, a, key, &v, line);                                                     \
    }                                                                                              \
    static inline void orn_std_badd_##name(OrnStdProg *p, OrnRtBuffer *b, const int64_t *key, T v, \
                                           int line)                                               \
    {                                                                                              \
        orn_std_buffer_add(p, b, key, &v, line);                                                   \
    }
ORN_STD_DIST_ACCESS(int32_t, i32)
ORN_STD_DIST_ACCESS(int64_t, i64)
ORN_STD_DIST_ACCESS(float, f32)
ORN_STD_DIST_ACCESS(double, f64)
#undef ORN_STD_DIST_ACCESS

/* ---------------------------------------------------------------- loops */

/* Run a parallel_for (collective); a failure ends the job with the runtime's message. */
void orn_std_run(OrnStdProg *p, const OrnRtLoop *loop);
/* Two consecutive parallel_for loops: orn_rt_run_pair (a stencil's two sweeps as one pass
 * over the data), or one after the other under the REPL and ORN_TRACE. */
void orn_std_run_pair(OrnStdProg *p, const OrnRtLoop *a, const OrnRtLoop *b);

/* Inside a body: a pointer for reading and writing an element (the local box, or for
 * arrays written outside it, the runtime's slot primed with the current value). */
static inline void *orn_std_rw(OrnRtView *v, const int64_t *key)
{
    void *q = orn_rt_local(v, key);
    if (q) return q;
    unsigned char cur[8];
    v->ops->read(v, key, cur);
    q = v->ops->write(v, key);
    memcpy(q, cur, v->esize);
    return q;
}

/* Prefetch pass: announce a read of a key of nd (a constant) coordinates (the runtime
 * ignores local keys and keys outside the array: the body reports those when it runs). The
 * key is tested inline against the view's box first: a key in it is local (an ordered
 * stencil's prefetch pass announces four reads per element, nearly all in the block's own
 * box, and a call per read took four times the block's compute). */
static inline __attribute__((always_inline)) void orn_std_announce_n(OrnRtView *v, int nd,
                                                                     const int64_t *key)
{
    if (v->base) {
        int in = 1;
        for (int d = 0; d < nd; d++)
            in &= (uint64_t)(key[d] - v->lo[d]) < (uint64_t)(v->hi[d] - v->lo[d]);
        if (in) return;
    }
    orn_rt_prefetch(v, key);
}
/* Prefetch pass: every element of the view (a bad index is left for the body). */
void orn_std_vec_announce_view(OrnRtView *v, const int64_t *dims, int dim, int64_t fixed);

/* Prefetch pass: read an element of an array whose block is local (0 elsewhere). */
#define ORN_STD_PEEK(T, name)                                                                      \
    static inline T orn_std_peek_##name(OrnRtView *v, const int64_t *key)                          \
    {                                                                                              \
        T x = 0;                                                                                   \
        const void *q = orn_rt_local(v, key);                                                      \
        if (q) memcpy(&x, q, sizeof x);                                                            \
        return x;                                                                                  \
    }
ORN_STD_PEEK(int32_t, i32)
ORN_STD_PEEK(int64_t, i64)
ORN_STD_PEEK(float, f32)
ORN_STD_PEEK(double, f64)
#undef ORN_STD_PEEK

/* ---------------------------------------------------------------- views */

/* A 1-D view (A[:, j], A[i, :]) or a whole local 1-D array. Element x is at
 * p + x * stride * esize when p is not NULL (the fast path); otherwise through the
 * runtime view (loop bodies), the collective DSM calls (top level) or the local array. */
typedef struct OrnStdVec {
    char *p;
    int64_t stride; /* elements */
    int64_t len;
    int type; /* OrnDsmType */
    size_t esize;
    int dim; /* the ':' dimension */
    int64_t key[2];
    OrnRtView *view;   /* loop body */
    OrnDsmArray *dist; /* top level */
    OrnRtBuffer *buf;  /* top-level buffer target */
    OrnStdProg *prog;
    int line;
    void *own; /* top level: the copy of a dist array's line p points into (orn_std_vec_dist_in) */
} OrnStdVec;

/* In a loop body: view `v` of an array with extents `dims` (2-D), ':' in dimension `dim`,
 * the other subscript `fixed` (checked). The fast path is taken when the whole view lies in
 * the view's local box (a box is a product of ranges: its first and last element suffice).
 * `name` is the array as the program writes it: an error names it, the caret under it. */
void orn_std_vec_bad_index(OrnStdProg *p, const char *name, int64_t fixed, int d, int64_t extent,
                           int line) ORN_STD_NORETURN;
/* A loop body's view of v: the struct in one piece (orn_std_vec_view, orn_std_vec_box). */
static inline __attribute__((always_inline)) OrnStdVec
orn_std_vec_of(OrnStdProg *p, OrnRtView *v, char *q, int64_t stride, int64_t len, int dim,
               int64_t k0, int64_t k1, int line)
{
    return (OrnStdVec){.p = q,
                       .stride = stride,
                       .len = len,
                       .type = v->type,
                       .esize = v->esize,
                       .dim = dim,
                       .key = {k0, k1},
                       .view = v,
                       .dist = NULL,
                       .buf = NULL,
                       .prog = p,
                       .line = line};
}
static inline OrnStdVec orn_std_vec_view(OrnStdProg *p, OrnRtView *v, const int64_t *dims, int dim,
                                         int64_t fixed, const char *name, int line)
{
    int other = 1 - dim;
    if (fixed < 0 || fixed >= dims[other])
        orn_std_vec_bad_index(p, name, fixed, other, dims[other], line);
    /* The pointer and stride first, the struct in one piece after: built field by field
     * and then copied into the caller's variable, its two fields' stores were read back
     * by the copy's wide loads, a failed store-to-load forward per iteration (a tenth of
     * logistic regression's time with `dg[0, :] += err * X[i, :]`). */
    char *q = NULL;
    int64_t stride = 0, len = dims[dim];
    int64_t k0[2];
    k0[other] = fixed;
    k0[dim] = 0;
    if (len > 0) {
        char *p0 = (char *)orn_rt_local(v, k0);
        if (p0) {
            int64_t kl[2] = {k0[0], k0[1]};
            kl[dim] = len - 1;
            if (orn_rt_local(v, kl)) q = p0, stride = v->stride[dim];
        }
    }
    return orn_std_vec_of(p, v, q, stride, len, dim, k0[0], k0[1], line);
}
/* The same through the view's hoisted box (rt.h): a view that lies in the box is a pointer
 * and a stride computed inline; anything else takes orn_std_vec_view. */
static inline __attribute__((always_inline)) OrnStdVec
orn_std_vec_box(OrnStdProg *p, const OrnRtBox *x, const int64_t *dims, int dim, int64_t fixed,
                const char *name, int line)
{
    int other = 1 - dim;
    uint64_t rf = (uint64_t)fixed - (uint64_t)x->lo[other];
    uint64_t r0 = (uint64_t)0 - (uint64_t)x->lo[dim];
    if (__builtin_expect(rf < x->n[other] && r0 < x->n[dim] &&
                             (uint64_t)dims[dim] - (uint64_t)x->lo[dim] <= x->n[dim] &&
                             fixed < dims[other],
                         1)) {
        char *q = x->base + ((other == 1 ? rf : rf * (uint64_t)x->s[other]) +
                             (dim == 1 ? r0 : r0 * (uint64_t)x->s[dim])) *
                                x->v->esize;
        return orn_std_vec_of(p, x->v, q, dim == 1 ? 1 : x->s[dim], dims[dim], dim,
                              dim == 0 ? 0 : fixed, dim == 0 ? fixed : 0, line);
    }
    return orn_std_vec_view(p, x->v, dims, dim, fixed, name, line);
}

/* A whole dense 1-D dist array as a vector (`dot(A[i, :], x)`): in a loop body, through
 * its view (a pointer where the rank holds it all, as a read-only array read at every index
 * is replicated); at top level, read whole onto every rank (a copy: ORN_STD_SCOPED). */
static inline OrnStdVec orn_std_vec_view1(OrnStdProg *p, OrnRtView *v, int64_t len, int line)
{
    char *q = NULL;
    int64_t stride = 0;
    if (len > 0) {
        int64_t k0[2] = {0, 0}, kl[2] = {len - 1, 0};
        char *p0 = (char *)orn_rt_local(v, k0);
        if (p0 && orn_rt_local(v, kl)) q = p0, stride = v->stride[0];
    }
    return orn_std_vec_of(p, v, q, stride, len, 0, 0, 0, line);
}
OrnStdVec orn_std_vec_dist1(OrnStdProg *p, OrnDsmArray *a, int line);
/* At top level: a view of a dist array (element access is collective). */
OrnStdVec orn_std_vec_dist(OrnStdProg *p, OrnDsmArray *a, int dim, int64_t fixed, const char *name,
                           int line);
/* At top level: a view of a dense dist array read whole onto every rank in one collective
 * (orn_dsm_read_line), p its copy, rather than one collective per element (a sparse array's
 * is orn_std_vec_dist's). The copy is the variable's: declare it ORN_STD_SCOPED, and after
 * writing it store it back with orn_std_vec_store (each rank its own elements, no message). */
OrnStdVec orn_std_vec_dist_in(OrnStdProg *p, OrnDsmArray *a, int dim, int64_t fixed,
                              const char *name, int line);
void orn_std_vec_store(const OrnStdVec *v);
void orn_std_vec_release(const OrnStdVec *v);
#define ORN_STD_SCOPED __attribute__((cleanup(orn_std_vec_release)))
/* At top level: a view of a buffer (updates only). */
OrnStdVec orn_std_vec_buf(OrnStdProg *p, OrnRtBuffer *b, int dim, int64_t fixed, const char *name,
                          int line);
/* A view of a local 2-D array, or (dim < 0) a whole local array as a flat vector. Inline:
 * generated code builds one per use (k-means: per point and centroid), and only p, stride
 * and len survive the compiler's scalar replacement of the struct. */
static inline __attribute__((always_inline)) OrnStdVec
orn_std_vec_local(OrnStdProg *p, OrnStdArr *a, int dim, int64_t fixed, const char *name, int line)
{
    OrnStdVec r;
    memset(&r, 0, sizeof r);
    r.type = a->type;
    r.esize = a->esize;
    r.prog = p;
    r.line = line;
    if (dim < 0) {
        r.p = (char *)a->data;
        r.stride = 1;
        r.len = a->n;
        return r;
    }
    int other = 1 - dim;
    if (__builtin_expect(fixed < 0 || fixed >= a->dims[other], 0))
        orn_std_vec_bad_index(p, name, fixed, other, a->dims[other], line);
    r.len = a->dims[dim];
    r.dim = dim;
    r.key[other] = fixed;
    if (dim == 0) { /* column `fixed` */
        r.p = (char *)a->data + (size_t)fixed * a->esize;
        r.stride = a->dims[1];
    } else { /* row `fixed` */
        r.p = (char *)a->data + (size_t)(fixed * a->dims[1]) * a->esize;
        r.stride = 1;
    }
    return r;
}
void orn_std_vec_len_mismatch(const OrnStdVec *a, const OrnStdVec *b) ORN_STD_NORETURN;
/* The same for views addressed as pointers (a versioned fast path of generated code). */
void orn_std_len_mismatch(OrnStdProg *p, int64_t a, int64_t b, int line) ORN_STD_NORETURN
    __attribute__((cold));
static inline void orn_std_vec_same(const OrnStdVec *a, const OrnStdVec *b)
{
    if (a->len != b->len) orn_std_vec_len_mismatch(a, b);
}
/* Prefetch pass: announce every element of a loop-body view. */
void orn_std_vec_announce(const OrnStdVec *v);
/* Any element as a double (for the generic reductions). */
double orn_std_vec_getd(const OrnStdVec *v, int64_t x);
/* dot, sum and norm of views (the partial-sum order of the top of this file). */
double orn_std_vdot_slow(const OrnStdVec *a, const OrnStdVec *b);
double orn_std_vsum(const OrnStdVec *v);
double orn_std_vnorm(const OrnStdVec *v);
void orn_std_vec_slow_get(const OrnStdVec *v, int64_t x, void *out);
void orn_std_vec_slow_set(const OrnStdVec *v, int64_t x, const void *val);
void orn_std_vec_slow_add(const OrnStdVec *v, int64_t x, const void *delta);

#define ORN_STD_VEC_ACCESS(T, name)                                                                \
    static inline T orn_std_vget_##name(const OrnStdVec *v, int64_t x)                             \
    {                                                                                              \
        T r;                                                                                       \
        if (v->p) return ((const T *)(const void *)v->p)[x * v->stride];                           \
        orn_std_vec_slow_get(v, x, &r);                                                            \
        return r;                                                                                  \
    }                                                                                              \
    static inline void orn_std_vset_##name(const OrnStdVec *v, int64_t x, T val)                   \
    {                                                                                              \
        if (v->p)                                                                                  \
            ((T *)(void *)v->p)[x * v->stride] = val;                                              \
        else                                                                                       \
            orn_std_vec_slow_set(v, x, &val);                                                      \
    }                                                                                              \
    /* A buffer's view in a loop body with a dense delta store: the scalar update's inline add     \
     * (orn_rt_badd_), not a call per element. */                                                  \
    static inline void orn_std_vadd_##name(const OrnStdVec *v, int64_t x, T val)                   \
    {                                                                                              \
        if (v->view && v->view->deltas) {                                                          \
            int64_t key[2];                                                                        \
            key[v->dim] = x;                                                                       \
            key[1 - v->dim] = v->key[1 - v->dim];                                                  \
            orn_rt_badd_##name(v->view, 2, key, val);                                              \
            return;                                                                                \
        }                                                                                          \
        orn_std_vec_slow_add(v, x, &val);                                                          \
    }
ORN_STD_VEC_ACCESS(int32_t, i32)
ORN_STD_VEC_ACCESS(int64_t, i64)
ORN_STD_VEC_ACCESS(float, f32)
ORN_STD_VEC_ACCESS(double, f64)
#undef ORN_STD_VEC_ACCESS

/* ---------------------------------------------------------------- dense linear algebra */

/* matmul_into, add_outer and solve_into (blas.c): OpenBLAS on local arrays (row-major) and
 * vectors (views or local 1-D arrays; gathered when not on the fast path, and copied when
 * they overlap the output). Shapes are checked (a mismatch ends the job naming the line);
 * element types are one of f32 (s...) and f64 (d...) for all operands. */
/* C = A B, or C += A B with `add` (gemm). */
void orn_std_blas_gemm(OrnStdProg *p, OrnStdArr *C, const OrnStdArr *A, const OrnStdArr *B,
                       bool add, int line);
/* y = A x, or with `trans` y = x A (that is A' x); y += ... with `add` (gemv). */
void orn_std_blas_gemv(OrnStdProg *p, const OrnStdVec *y, const OrnStdArr *A, const OrnStdVec *x,
                       bool trans, bool add, int line);
/* A += scale x y' (ger). */
void orn_std_blas_ger(OrnStdProg *p, OrnStdArr *A, const OrnStdVec *x, const OrnStdVec *y,
                      double scale, int line);
/* add_outer as the generated code calls it: a small A (at most ORN_STD_GER_INLINE
 * elements, the K x K normal matrix of ALS) with both vectors on the fast path and apart
 * from A is updated here, row by row, A[i, :] += (scale x[i]) y, each row in vectors of 32
 * bytes (f64: 64 where the target has AVX-512), then one of half that, one of two elements,
 * then one element (written out:
 * gcc's cost model left a 10-element row scalar, or vectorized its rest in a loop; a
 * BLAS call per rank-1 update of a 10 x 10 matrix cost twice the whole loop body);
 * anything else is orn_std_blas_ger. The same products as ger's kernel, without its fused
 * multiply-adds. */
#define ORN_STD_GER_INLINE 4096
#define ORN_STD_GER_VEC(name, r, y, t)                                                             \
    do {                                                                                           \
        name rv_, yv_;                                                                             \
        memcpy(&rv_, r, sizeof rv_);                                                               \
        memcpy(&yv_, y, sizeof yv_);                                                               \
        rv_ += t * yv_;                                                                            \
        memcpy(r, &rv_, sizeof rv_);                                                               \
    } while (0)
#define ORN_STD_GER_ROWS(T, name, W)                                                               \
    typedef T name##_v __attribute__((vector_size(W * sizeof(T))));                                \
    typedef T name##_h __attribute__((vector_size(W / 2 * sizeof(T))));                            \
    typedef T name##_q __attribute__((vector_size(2 * sizeof(T))));                                \
    static inline __attribute__((always_inline)) void name(                                        \
        T *a, int64_t m, int64_t n, T s, const T *x, int64_t sx, const T *y, int64_t sy)           \
    {                                                                                              \
        if (sy != 1) {                                                                             \
            for (int64_t i = 0; i < m; i++) {                                                      \
                T t = s * x[i * sx], *r = a + i * n;                                               \
                for (int64_t j = 0; j < n; j++) r[j] += t * y[j * sy];                             \
            }                                                                                      \
            return;                                                                                \
        }                                                                                          \
        for (int64_t i = 0; i < m; i++) {                                                          \
            T t = s * x[i * sx], *r = a + i * n;                                                   \
            int64_t j = 0;                                                                         \
            for (; j + W <= n; j += W) ORN_STD_GER_VEC(name##_v, r + j, y + j, t);                 \
            if (W > 4 && j + W / 2 <= n) {                                                         \
                ORN_STD_GER_VEC(name##_h, r + j, y + j, t);                                        \
                j += W / 2;                                                                        \
            }                                                                                      \
            if (j + 2 <= n) {                                                                      \
                ORN_STD_GER_VEC(name##_q, r + j, y + j, t);                                        \
                j += 2;                                                                            \
            }                                                                                      \
            if (j < n) r[j] += t * y[j];                                                           \
        }                                                                                          \
    }
/* W <= 8: the tail steps (W / 2, 2, 1) cover every rest of a row up to W - 1 */
#ifdef __AVX512F__ /* 64-byte vectors of f64 where the target has them (-march=native) */
ORN_STD_GER_ROWS(double, orn_std_ger_rows_f64, 8)
#else
ORN_STD_GER_ROWS(double, orn_std_ger_rows_f64, 4)
#endif
ORN_STD_GER_ROWS(float, orn_std_ger_rows_f32, 8)
#undef ORN_STD_GER_ROWS
#undef ORN_STD_GER_VEC
/* The bytes [*lo, *hi) a vector on the fast path (p set, len > 0) spans, either stride sign. */
static inline void orn_std_vec_bytes(const OrnStdVec *v, const char **lo, const char **hi)
{
    int64_t span = (v->len - 1) * v->stride * (int64_t)v->esize;
    *lo = v->p + (span < 0 ? span : 0);
    *hi = v->p + (span > 0 ? span : 0) + v->esize;
}
static inline int orn_std_vec_apart(const OrnStdVec *v, const char *lo, const char *hi)
{
    const char *a, *b;
    orn_std_vec_bytes(v, &a, &b);
    return b <= lo || a >= hi;
}
static inline __attribute__((always_inline)) void orn_std_add_outer(OrnStdProg *p, OrnStdArr *A,
                                                                    const OrnStdVec *x,
                                                                    const OrnStdVec *y,
                                                                    double scale, int line)
{
    const char *lo = (const char *)A->data, *hi = lo + (size_t)A->n * A->esize;
    if (A->n <= ORN_STD_GER_INLINE && A->ndim == 2 && x->p && y->p && x->len > 0 && y->len > 0 &&
        x->type == A->type && y->type == A->type && x->len == A->dims[0] && y->len == A->dims[1] &&
        orn_std_vec_apart(x, lo, hi) && orn_std_vec_apart(y, lo, hi)) {
        if (A->type == ORN_DSM_F64) {
            orn_std_ger_rows_f64((double *)A->data, x->len, y->len, scale,
                                 (const double *)(const void *)x->p, x->stride,
                                 (const double *)(const void *)y->p, y->stride);
            return;
        }
        if (A->type == ORN_DSM_F32) {
            orn_std_ger_rows_f32((float *)A->data, x->len, y->len, (float)scale,
                                 (const float *)(const void *)x->p, x->stride,
                                 (const float *)(const void *)y->p, y->stride);
            return;
        }
    }
    orn_std_blas_ger(p, A, x, y, scale, line);
}
/* x = A^-1 b for a symmetric positive definite A, by Cholesky (posv), reading the upper
 * triangle of A (A[i, j], j >= i); A and b are not changed. Not positive definite: an
 * error naming the line. */
void orn_std_blas_solve(OrnStdProg *p, const OrnStdVec *x, const OrnStdArr *A, const OrnStdVec *b,
                        int line);
/* OpenBLAS single-threaded in this rank: orn_std_init calls it when blas.c is linked in
 * (the program uses one of the built-ins above; a weak reference otherwise). */
void orn_std_blas_init(void);

/* The combination of the eight partial sums (see the top of this file). */
static inline double orn_std_lanes(const double *s)
{
    return ((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]));
}

/* f32 reductions keep sixteen partial sums (64 bytes: two 256-bit registers; half as long a chain
 * of dependent adds as eight), combined as two eight-trees, the first eight's first. */
#define ORN_STD_LANES_F32 16
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
typedef float OrnStdV8f __attribute__((vector_size(32)));
typedef float OrnStdV4f __attribute__((vector_size(16)));
/* The tree of partials 0..7 (lo) and 8..15 (hi) held in vector registers (by address: a
 * vector argument's ABI depends on the target's vector extensions). */
static inline float orn_std_lanes_f32_v(const OrnStdV8f *lo, const OrnStdV8f *hi)
{
    OrnStdV8f a = __builtin_shufflevector(*lo, *hi, 0, 2, 4, 6, 8, 10, 12, 14) +
                  __builtin_shufflevector(*lo, *hi, 1, 3, 5, 7, 9, 11, 13, 15);
    OrnStdV4f b =
        __builtin_shufflevector(a, a, 0, 2, 4, 6) + __builtin_shufflevector(a, a, 1, 3, 5, 7);
    return (b[0] + b[1]) + (b[2] + b[3]);
}
#endif
static inline float orn_std_lanes_f32(const float *s)
{
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
    /* The same tree, level by level in vector registers: a loop reduction runs it once per
     * loop (k-means: once per point and centroid), and written as scalars it is fifteen
     * loads and adds through memory. Lane-wise adds of the same pairs give the same bits. */
    /* The partials come in as two 32-byte halves: where the loop kept them in two 256-bit
     * registers and stored them, one 64-byte load would be a failed store-to-load forward
     * (it waits for the stores to retire: a quarter of k-means' time). */
    OrnStdV8f lo, hi;
    __builtin_memcpy(&lo, s, sizeof lo);
    __builtin_memcpy(&hi, s + 8, sizeof hi);
    return orn_std_lanes_f32_v(&lo, &hi);
#else
    return (((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))) +
           (((s[8] + s[9]) + (s[10] + s[11])) + ((s[12] + s[13]) + (s[14] + s[15])));
#endif
}

/* The same tree for a loop whose tail ran element by element into s (a loop reduction of
 * generated code whose trip count is not a multiple of 16): one wide load of sixteen
 * partials just written one by one is a failed store-to-load forward on x86 (it waits for
 * the stores to retire), so these are read one by one. Same pairs, same bits. */
static inline float orn_std_lanes_f32_tail(const float *s)
{
    return (((s[0] + s[1]) + (s[2] + s[3])) + ((s[4] + s[5]) + (s[6] + s[7]))) +
           (((s[8] + s[9]) + (s[10] + s[11])) + ((s[12] + s[13]) + (s[14] + s[15])));
}

/* dot of two f32 views: sixteen partial sums in f32, element x to partial x mod 16
 * (docs/language.md). */
static inline __attribute__((always_inline)) float
orn_std_sdot_f32(const float *a, int64_t sa, const float *b, int64_t sb, int64_t n)
{
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 12
    /* Unit strides: partials 0..7 and 8..15 in two 256-bit vectors, loaded 32 bytes at a time: not
     * one 512-bit vector. A row the loop just updated (SGD's W[u, :] for the next rating of the
     * same user) was stored 32 bytes at a time, and a 64-byte load of two such stores is a
     * failed store-to-load forward; and 512-bit arithmetic amid code the compiler keeps at
     * 256 bits (its default on AVX-512 machines) slowed the whole update: SGD MF's row
     * form at 1.4-1.6x plain C on a Xeon with AVX-512, 1.05x with this loop. */
    if (sa == 1 && sb == 1 && n >= 16) {
        OrnStdV8f lo = {0}, hi = {0};
        int64_t x = 0;
        _Pragma("GCC unroll 2") /* as codegen's reductions (CG_UNROLL2) */
            for (; x + 16 <= n; x += 16)
        {
            OrnStdV8f al, ah, bl, bh;
            __builtin_memcpy(&al, a + x, sizeof al);
            __builtin_memcpy(&ah, a + x + 8, sizeof ah);
            __builtin_memcpy(&bl, b + x, sizeof bl);
            __builtin_memcpy(&bh, b + x + 8, sizeof bh);
            lo += al * bl;
            hi += ah * bh;
        }
        if (x < n) {
            /* A tail of r < 16 elements one by one, into partials 0..r-1, as the generic
             * loop below: a wide load of the row's last 16 elements would span the
             * stores that wrote them (a vector loop's last full vector and its tail), a
             * failed store-to-load forward per dot where the row was just updated. */
            float t[16];
            __builtin_memcpy(t, &lo, sizeof lo);
            __builtin_memcpy(t + 8, &hi, sizeof hi);
            for (; x < n; x++) t[x & 15] += a[x] * b[x];
            return orn_std_lanes_f32_tail(t);
        }
        /* else the tree on the registers themselves: copied out to memory for it, the
         * partials were kept in memory through the loop, a store and a reload on every
         * add's path (SGD MF's column dot at K = 100: a third of the update's time) */
        return orn_std_lanes_f32_v(&lo, &hi);
    }
#endif
    float s[16] = {0};
    int64_t x = 0;
    if (sa == 1 && sb == 1) {
        for (; x + 16 <= n; x += 16)
            for (int l = 0; l < 16; l++) s[l] += a[x + l] * b[x + l];
    } else {
        for (; x + 16 <= n; x += 16)
            for (int l = 0; l < 16; l++) s[l] += a[(x + l) * sa] * b[(x + l) * sb];
    }
    if (x == n) return orn_std_lanes_f32(s);
    for (; x < n; x++) s[x & 15] += a[x * sa] * b[x * sb];
    return orn_std_lanes_f32_tail(s);
}
float orn_std_vsdot_slow(const OrnStdVec *a, const OrnStdVec *b);

/* The bytes of the C compiler's vectors: generated C defines it before including this file
 * (codegen OrnCgOptions.vec_bytes, probed with the flags it is compiled with). */
#ifndef ORN_STD_VEC_BYTES
#define ORN_STD_VEC_BYTES 32
#endif
/* A loop of 8 partials in f64 is one 512-bit vector a step: unrolled twice there, as two
 * 256-bit vectors a step are (matvec_view on an EPYC whose gcc prefers 512 bits: 4.99 ->
 * 3.87 ms, plain C 3.96). */
#if ORN_STD_VEC_BYTES >= 64
#define ORN_STD_UNROLL8 _Pragma("GCC unroll 2")
#else
#define ORN_STD_UNROLL8
#endif

/* dot of two strided vectors of element types TA, TB: the same partial sums as the
 * generic element-by-element loop, unrolled so the compiler can vectorize it. Not unrolled
 * twice more at 256 bits (as codegen's reductions are): on a Xeon with AVX-512 a row's dot
 * streamed 10.7 GB/s so, 14.5 without (matvec_view 1.47 -> 1.15 of plain C). */
#define ORN_STD_DOT(TA, NA, TB, NB)                                                                \
    static inline double orn_std_dot_##NA##_##NB(const TA *a, int64_t sa, const TB *b, int64_t sb, \
                                                 int64_t n)                                        \
    {                                                                                              \
        double s[8] = {0, 0, 0, 0, 0, 0, 0, 0};                                                    \
        int64_t x = 0;                                                                             \
        if (sa == 1 && sb == 1) {                                                                  \
            ORN_STD_UNROLL8 for (; x + 8 <= n; x += 8) for (int l = 0; l < 8; l++) s[l] +=         \
                (double)a[x + l] * (double)b[x + l];                                               \
        } else {                                                                                   \
            for (; x + 8 <= n; x += 8)                                                             \
                for (int l = 0; l < 8; l++)                                                        \
                    s[l] += (double)a[(x + l) * sa] * (double)b[(x + l) * sb];                     \
        }                                                                                          \
        for (; x < n; x++) s[x & 7] += (double)a[x * sa] * (double)b[x * sb];                      \
        return orn_std_lanes(s);                                                                   \
    }
#define ORN_STD_DOT_ROW(TA, NA)                                                                    \
    ORN_STD_DOT(TA, NA, int32_t, i32)                                                              \
    ORN_STD_DOT(TA, NA, int64_t, i64)                                                              \
    ORN_STD_DOT(TA, NA, float, f32)                                                                \
    ORN_STD_DOT(TA, NA, double, f64)
ORN_STD_DOT_ROW(int32_t, i32)
ORN_STD_DOT_ROW(int64_t, i64)
ORN_STD_DOT_ROW(float, f32)
ORN_STD_DOT_ROW(double, f64)
#undef ORN_STD_DOT_ROW
#undef ORN_STD_DOT

#endif
