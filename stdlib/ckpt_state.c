/* ckpt_state.c: the program's state in a checkpoint's rank file (ckpt_int.h): the
 * top-level variables, local arrays, lines of text files and buffers of the generated
 * program's OrnStdState, the params, the program's random stream, and through the runtime
 * every dist array. Scalars are written as 8 bytes, strings as a length and their bytes,
 * arrays and buffers by the registry id of their array (orn_dsm_snap_write writes the
 * arrays themselves); native byte order, read by the same build (the manifest checks). */
#include "ckpt_int.h"

#include <stdarg.h>

#define FILE_VERSION 2u /* 2: a buffer's settings and adaptive interval */

static const char FILE_MAGIC[8] = {'O', 'R', 'N', 'C', 'K', 'P', 'T', '\n'};
static const char END_MAGIC[8] = {'O', 'R', 'N', 'C', 'K', 'E', 'N', 'D'};

typedef struct FileHead {
    char magic[8];
    uint32_t version, rank, ranks, nvars;
    uint64_t program, binary;
    int64_t seq;
    uint32_t nparams, zero;
} FileHead;
_Static_assert(sizeof(FileHead) == 56, "checkpoint file header layout");

static int put_i64(const OrnDsmIo *io, int64_t v)
{
    return io->put(io->ud, &v, sizeof v);
}

static int put_str(const OrnDsmIo *io, const char *s)
{
    int64_t n = s ? (int64_t)strlen(s) : -1;
    return put_i64(io, n) || (n > 0 && io->put(io->ud, s, (size_t)n));
}

/* The bytes of the text of a load_text array: its lines' pointers lead into one block
 * after the pointer table (text.c), NUL-terminated in place. */
static size_t text_bytes(const OrnStdArr *a, size_t head)
{
    const char *const *lines = (const char *const *)a->data;
    const char *body = (const char *)a->data + head;
    size_t end = 1; /* the "" of an empty file */
    for (int64_t i = 0; i < a->n; i++) {
        size_t e = (size_t)(lines[i] - body) + strlen(lines[i]) + 1;
        if (e > end) end = e;
    }
    if (a->n == 0) end = (size_t)(lines[0] - body) + 1;
    return end;
}

static int put_local(const OrnDsmIo *io, const OrnStdArr *a)
{
    if (!a) return put_i64(io, 0);
    int rc = put_i64(io, 1) || put_i64(io, a->type) || put_i64(io, a->ndim) ||
             io->put(io->ud, a->dims, sizeof a->dims) || put_i64(io, a->n);
    if (rc) return rc;
    if (a->type != ORN_STD_TEXT) return io->put(io->ud, a->data, (size_t)a->n * a->esize);
    size_t head = (size_t)(a->n ? a->n : 1) * sizeof(char *), body = text_bytes(a, head);
    const char *const *lines = (const char *const *)a->data;
    rc = put_i64(io, (int64_t)body) || io->put(io->ud, (const char *)a->data + head, body);
    for (int64_t i = 0; i < (a->n ? a->n : 1) && !rc; i++)
        rc = put_i64(io, lines[i] - ((const char *)a->data + head));
    return rc;
}

static int put_var(const OrnDsmIo *io, const OrnStdVar *v)
{
    switch (v->kind) {
    case ORN_STD_VBOOL:
        return put_i64(io, *(const bool *)v->addr);
    case ORN_STD_VI32:
        return put_i64(io, *(const int32_t *)v->addr);
    case ORN_STD_VI64:
        return put_i64(io, *(const int64_t *)v->addr);
    case ORN_STD_VF32:
        return io->put(io->ud, v->addr, sizeof(float));
    case ORN_STD_VF64:
        return io->put(io->ud, v->addr, sizeof(double));
    case ORN_STD_VSTR:
        return put_str(io, *(const char *const *)v->addr);
    case ORN_STD_VLOCAL:
        return put_local(io, *(OrnStdArr *const *)v->addr);
    case ORN_STD_VDIST: {
        const OrnDsmArray *a = *(OrnDsmArray *const *)v->addr;
        return put_i64(io, a ? a->id : -1);
    }
    case ORN_STD_VBUF: { /* the target's id, then its OrnRtBufferState (zeros for none) */
        OrnRtBuffer *b = *(OrnRtBuffer *const *)v->addr;
        OrnRtBufferState s;
        memset(&s, 0, sizeof s);
        if (b) orn_rt_buffer_state(b, &s);
        return put_i64(io, b ? orn_rt_buffer_target(b)->id : -1) || put_i64(io, s.flush_every) ||
               put_i64(io, s.interval) || io->put(io->ud, &s.budget, sizeof s.budget) ||
               put_i64(io, s.stale_aware) || put_i64(io, s.averaging);
    }
    }
    return -1;
}

static int put_param(const OrnDsmIo *io, const OrnStdParam *q)
{
    switch (q->type) {
    case ORN_STD_PBOOL:
        return put_i64(io, *(const bool *)q->addr);
    case ORN_STD_PI64:
        return put_i64(io, *(const int64_t *)q->addr);
    case ORN_STD_PF64:
        return io->put(io->ud, q->addr, sizeof(double));
    case ORN_STD_PSTR:
        return put_str(io, *(const char *const *)q->addr);
    }
    return -1;
}

int orn_std_ckpt_put_state(OrnStdProg *p, const OrnDsmIo *io, int64_t seq)
{
    const OrnStdState *st = p->ck->st;
    FileHead h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, FILE_MAGIC, sizeof h.magic);
    h.version = FILE_VERSION;
    h.rank = (uint32_t)p->rank;
    h.ranks = (uint32_t)p->size;
    h.nvars = (uint32_t)st->nvars;
    h.program = st->program;
    h.binary = p->ck->binary;
    h.seq = seq;
    h.nparams = (uint32_t)p->nparams;
    int rc = io->put(io->ud, &h, sizeof h) || io->put(io->ud, &p->rng, sizeof p->rng) ||
             put_i64(io, p->runs);
    for (int i = 0; i < p->nparams && !rc; i++) rc = put_param(io, &p->params[i]);
    if (rc) return rc;
    if (orn_rt_snap_write(p->rt, io)) return -1;
    for (int i = 0; i < st->nvars && !rc; i++) rc = put_var(io, &st->vars[i]);
    return rc || io->put(io->ud, END_MAGIC, sizeof END_MAGIC);
}

/* Reading: `io` reads this rank's file; failures say what and return non-zero with the
 * DSM's message set. */
typedef struct Reader {
    OrnStdProg *p;
    const OrnDsmIo *io;
    const char *path;
} Reader;

static int get_i64(Reader *r, int64_t *v)
{
    return r->io->get(r->io->ud, v, sizeof *v);
}

static int truncated(Reader *r)
{
    return orn_std_ckpt_fail(r->p, "resume: %s: truncated or malformed", r->path);
}

/* A string from the file, owned by the checkpoint state. */
static int get_str(Reader *r, const char **out)
{
    int64_t n;
    if (get_i64(r, &n) || n < -1 || n > ((int64_t)1 << 40)) return truncated(r);
    if (n < 0) {
        *out = NULL;
        return 0;
    }
    OrnStdCkpt *ck = r->p->ck;
    char *s = malloc((size_t)n + 1);
    char **strs = realloc(ck->strs, (size_t)(ck->nstrs + 1) * sizeof *strs);
    if (!s || !strs) {
        free(s);
        return orn_std_ckpt_fail(r->p, "resume: out of memory");
    }
    ck->strs = strs;
    ck->strs[ck->nstrs++] = s;
    s[n] = '\0';
    if (n && r->io->get(r->io->ud, s, (size_t)n)) return truncated(r);
    *out = s;
    return 0;
}

static int get_local(Reader *r, OrnStdArr **out)
{
    int64_t type, ndim, n;
    int64_t dims[ORN_DSM_MAXDIM];
    *out = NULL;
    if (get_i64(r, &type)) return truncated(r);
    if (type == 0) return 0; /* NULL */
    if (get_i64(r, &type) || get_i64(r, &ndim) || r->io->get(r->io->ud, dims, sizeof dims) ||
        get_i64(r, &n) || ndim < 1 || ndim > ORN_DSM_MAXDIM || n < 0 || n > ((int64_t)1 << 40) ||
        (type != ORN_STD_TEXT && (type < ORN_DSM_I32 || type > ORN_DSM_F64)))
        return truncated(r);
    OrnStdArr *a = calloc(1, sizeof *a);
    if (!a) return orn_std_ckpt_fail(r->p, "resume: out of memory");
    *out = a;
    a->type = (int)type;
    a->ndim = (int)ndim;
    memcpy(a->dims, dims, sizeof dims);
    a->n = n;
    if (type != ORN_STD_TEXT) {
        a->esize = orn_dsm_type_size((OrnDsmType)type);
        a->data = malloc((size_t)n * a->esize + 1);
        if (!a->data) return orn_std_ckpt_fail(r->p, "resume: out of memory");
        return r->io->get(r->io->ud, a->data, (size_t)n * a->esize) ? truncated(r) : 0;
    }
    int64_t body;
    size_t head = (size_t)(n ? n : 1) * sizeof(char *);
    a->esize = sizeof(char *);
    if (get_i64(r, &body) || body < 1 || body > ((int64_t)1 << 40)) return truncated(r);
    a->data = malloc(head + (size_t)body);
    if (!a->data) return orn_std_ckpt_fail(r->p, "resume: out of memory");
    char **lines = (char **)a->data, *text = (char *)a->data + head;
    if (r->io->get(r->io->ud, text, (size_t)body)) return truncated(r);
    text[body - 1] = '\0';
    for (int64_t i = 0; i < (n ? n : 1); i++) {
        int64_t off;
        if (get_i64(r, &off) || off < 0 || off >= body) return truncated(r);
        lines[i] = text + off;
    }
    return 0;
}

static int get_var(Reader *r, const OrnStdVar *v)
{
    OrnStdProg *p = r->p;
    int64_t x = 0;
    switch (v->kind) {
    case ORN_STD_VBOOL:
        if (get_i64(r, &x)) return truncated(r);
        *(bool *)v->addr = x != 0;
        return 0;
    case ORN_STD_VI32:
        if (get_i64(r, &x)) return truncated(r);
        *(int32_t *)v->addr = (int32_t)x;
        return 0;
    case ORN_STD_VI64:
        return get_i64(r, (int64_t *)v->addr) ? truncated(r) : 0;
    case ORN_STD_VF32:
        return r->io->get(r->io->ud, v->addr, sizeof(float)) ? truncated(r) : 0;
    case ORN_STD_VF64:
        return r->io->get(r->io->ud, v->addr, sizeof(double)) ? truncated(r) : 0;
    case ORN_STD_VSTR:
        return get_str(r, (const char **)v->addr);
    case ORN_STD_VLOCAL: {
        OrnStdArr **slot = v->addr;
        orn_std_arr_free(*slot);
        return get_local(r, slot);
    }
    case ORN_STD_VDIST:
        if (get_i64(r, &x) || x < -1 || x > INT32_MAX) return truncated(r);
        *(OrnDsmArray **)v->addr = x < 0 ? NULL : orn_dsm_lookup(p->dsm, (int)x);
        if (x >= 0 && !*(OrnDsmArray **)v->addr) return truncated(r);
        return 0;
    case ORN_STD_VBUF: {
        OrnRtBufferState s;
        int64_t sa, av;
        memset(&s, 0, sizeof s);
        if (get_i64(r, &x) || get_i64(r, &s.flush_every) || get_i64(r, &s.interval) ||
            r->io->get(r->io->ud, &s.budget, sizeof s.budget) || get_i64(r, &sa) ||
            get_i64(r, &av) || x < -1 || x > INT32_MAX)
            return truncated(r);
        s.stale_aware = sa != 0;
        s.averaging = av != 0;
        OrnRtBuffer **slot = v->addr;
        *slot = NULL;
        if (x < 0) return 0;
        OrnDsmArray *t = orn_dsm_lookup(p->dsm, (int)x);
        if (!t) return truncated(r);
        int st = orn_rt_buffer_new(p->rt, t, v->apply, NULL, s.flush_every, slot);
        return st ? st : orn_rt_buffer_restore(*slot, &s);
    }
    }
    return truncated(r);
}

/* A param from the file: it becomes the param's value, unless the command line gave
 * another one, which is refused. */
static int get_param(Reader *r, const OrnStdParam *q, int given)
{
    int64_t x = 0;
    double d = 0;
    const char *s = NULL;
    int same = 1;
    switch (q->type) {
    case ORN_STD_PBOOL:
        if (get_i64(r, &x)) return truncated(r);
        same = (x != 0) == *(bool *)q->addr;
        if (!given) *(bool *)q->addr = x != 0;
        break;
    case ORN_STD_PI64:
        if (get_i64(r, &x)) return truncated(r);
        same = x == *(int64_t *)q->addr;
        if (!given) *(int64_t *)q->addr = x;
        break;
    case ORN_STD_PF64:
        if (r->io->get(r->io->ud, &d, sizeof d)) return truncated(r);
        same = !memcmp(&d, q->addr, sizeof d);
        if (!given) *(double *)q->addr = d;
        break;
    case ORN_STD_PSTR:
        if (get_str(r, &s) || !s) return truncated(r);
        same = !strcmp(s, *(const char **)q->addr);
        if (!given) *(const char **)q->addr = s;
        break;
    }
    if (given && !same)
        return orn_dsm_fail(r->p->dsm, ORN_E_ARG,
                            "resume: --%s differs from the checkpoint's value; a resumed run "
                            "keeps the params it started with (leave --%s out)",
                            q->name, q->name);
    return 0;
}

static int get_state(Reader *r, int64_t seq)
{
    OrnStdProg *p = r->p;
    const OrnStdState *st = p->ck->st;
    FileHead h;
    if (r->io->get(r->io->ud, &h, sizeof h)) return truncated(r);
    if (memcmp(h.magic, FILE_MAGIC, sizeof h.magic) || h.version != FILE_VERSION ||
        h.rank != (uint32_t)p->rank || h.ranks != (uint32_t)p->size || h.seq != seq ||
        h.program != st->program || h.binary != p->ck->binary || h.nvars != (uint32_t)st->nvars ||
        h.nparams != (uint32_t)p->nparams)
        return orn_std_ckpt_fail(p, "resume: %s: not this rank's file of this checkpoint", r->path);
    if (r->io->get(r->io->ud, &p->rng, sizeof p->rng) || get_i64(r, &p->runs)) return truncated(r);
    for (int i = 0; i < p->nparams; i++) {
        int status = get_param(r, &p->params[i], p->given && p->given[i]);
        if (status) return status;
    }
    int status = orn_rt_snap_read(p->rt, r->io);
    if (status) return orn_dsm_fail_ctx(p->dsm, status, "resume: %s", r->path);
    for (int i = 0; i < st->nvars; i++) {
        status = get_var(r, &st->vars[i]);
        if (status) return status;
    }
    char end[8];
    if (r->io->get(r->io->ud, end, sizeof end) || memcmp(end, END_MAGIC, sizeof end))
        return truncated(r);
    return 0;
}

int orn_std_ckpt_get_state(OrnStdProg *p, const OrnDsmIo *io, const char *path, int64_t seq)
{
    Reader r = {p, io, path};
    return get_state(&r, seq);
}
