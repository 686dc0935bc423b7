/* sema_loop.c: parallel_for (docs/language.md section 8).
 *
 * Checks the iteration space, keys and value variable, then the body with the loop as
 * context: sema.c reports every write to an outer symbol to loop_write() (accumulator
 * inference) and every read to orn_sema_record_read(). When the body is done, finalize()
 * turns the consistent updates into OrnLoop.accums and reports accumulators that are also
 * read. orn_sema_post() runs after the whole program: it closes the call graph (callees of
 * callees), reports loops that reach a collective through calls, and fills callees,
 * buffers and outer_reads. */
#include "sema_int.h"

#include <stdlib.h>
#include <string.h>

static bool is_acc(int acc)
{
    return acc >= ACC_SUM && acc <= ACC_MAX;
}

/* The iteration space: the name of a dist array. Returns its type, or T_ERROR. */
static const OrnType *space(Sema *s, OrnNode *n, OrnLoop *info)
{
    OrnNode *sp = n->u.parfor.space;
    if (!sp) return orn_sema_terr(s);
    if (sp->kind != N_NAME || !sp->u.name.id) {
        const OrnType *t = orn_sema_expr(s, sp);
        if (t->kind != T_ERROR)
            ORN_ERR(s, sp->span, "parallel_for iterates over %s, which is not a dist array",
                    ORN_TSTR(s, t));
        if (t->kind == T_VIEW && sp->kind == N_INDEX && sp->u.index.base->kind == N_NAME &&
            sp->u.index.base->u.name.id) {
            /* Z[:, 0]: the rows of Z */
            const char *a = sp->u.index.base->u.name.id->s;
            ORN_NOTE(s,
                     "a parallel_for runs over a whole dist array: over its elements "
                     "('parallel_for (i, j), z in %s'), or over one element per row, a 1-D "
                     "dist array of rows(%s) elements whose key i reads %s[i, j]",
                     a, a, a);
        }
        return orn_sema_terr(s);
    }
    const OrnName *id = sp->u.name.id;
    OrnSym *sym = orn_sema_lookup(s, id);
    if (!sym) {
        if (orn_sema_is_typename(id) || orn_sema_builtin_of(id) >= 0)
            ORN_ERR(s, sp->span, "parallel_for iterates over '%s', which is not a dist array",
                    id->s);
        else
            orn_sema_unknown(s, id, sp->span, false);
        return orn_sema_terr(s);
    }
    sp->u.name.sym = sym;
    sp->type = sym->type;
    if (sym->kind == SYM_DIST && sym->type->kind == T_ARRAY) {
        info->space = sym;
        return sym->type;
    }
    if (sym->type->kind == T_ERROR) return orn_sema_terr(s);
    ORN_ERR(s, sp->span, "parallel_for iterates over '%s', which is not a dist array", id->s);
    orn_sema_note_decl(s, sym);
    if (sym->type->kind == T_BUFFER)
        ORN_NOTE(s, "iterate over the array the buffer updates");
    else if (orn_type_is_str_array(sym->type))
        ORN_NOTE(s, "the lines of load_text cannot be dist; loop with 'for i in 0..len(%s)'",
                 id->s);
    else if (sym->type->kind == T_ARRAY)
        ORN_NOTE(s, "declare it with 'dist %s = ...' to iterate over it in parallel", id->s);
    return orn_sema_terr(s);
}

static void finalize(Sema *s, OrnSemaLoop *l)
{
    OrnLoop *info = l->info;
    int n = 0;
    for (int i = 0; i < l->nouter; i++) n += is_acc(l->outer[i].acc);
    info->accums = orn_arena_alloc(s->u->arena, (size_t)(n ? n : 1) * sizeof *info->accums);
    for (int i = 0; i < l->nouter; i++) {
        OrnSemaOuter *o = &l->outer[i];
        if (!is_acc(o->acc)) continue;
        const char *name = o->sym->name->s;
        if (o->read) {
            ORN_ERR(s, o->read_span,
                    "'%s' is accumulated by this parallel_for and cannot be "
                    "read inside it",
                    name);
            ORN_NOTE_AT(s, o->first, "'%s' is accumulated here", name);
            ORN_NOTE(s, "its reduced value is available after the loop");
        }
        /* keep accums in order of first update */
        OrnAccum a = {o->sym, (OrnAccKind)o->acc, o->first};
        int j = info->naccums++;
        while (j > 0 && info->accums[j - 1].first.lo > a.first.lo) {
            info->accums[j] = info->accums[j - 1];
            j--;
        }
        info->accums[j] = a;
    }
}

void orn_sema_parfor(Sema *s, OrnNode *n)
{
    OrnSpan kw = orn_sema_prefix(s, n->span, "parallel_for");
    bool nested = s->loop != NULL;
    if (s->fn) {
        ORN_ERR(s, kw, "parallel_for cannot be used inside fn '%s'", s->fn->sym->name->s);
        ORN_NOTE(s, "parallel_for runs on every rank together; use it at top level");
    } else if (nested) {
        ORN_ERR(s, kw, "parallel_for cannot be nested");
        ORN_NOTE_AT(s, orn_sema_prefix(s, s->loop->info->node->span, "parallel_for"),
                    "the enclosing parallel_for is here");
    }
    OrnLoop *info = orn_arena_alloc(s->u->arena, sizeof *info);
    info->node = n;
    info->index = -1;
    n->u.parfor.info = info;
    const OrnType *st = space(s, n, info);

    OrnSemaLoop *lc = NULL;
    OrnSemaLoop *saved = s->loop;
    int saved_seq = s->seqloops;
    if (!nested) {
        lc = orn_xcalloc(1, sizeof *lc);
        lc->info = info;
        lc->sym_base = s->nsyms;
        info->index = s->nloops;
        ORN_VPUSH(s->loops, s->nloops, s->caploops, lc);
        s->loop = lc;
    }
    s->seqloops = 0;
    s->depth++;
    orn_sema_push_scope(s);

    OrnNode *keys = n->u.parfor.keys;
    int nkeys = orn_list_len(keys);
    if (st->kind == T_ARRAY && nkeys != st->ndims && keys) {
        const OrnNode *last = keys;
        while (last->next) last = last->next;
        OrnSpan ks = orn_span_join(keys->span, last->span);
        ORN_ERR(s, ks, "'%s' has %d dimension%s but the loop has %d key%s", info->space->name->s,
                st->ndims, st->ndims == 1 ? "" : "s", nkeys, nkeys == 1 ? "" : "s");
        orn_sema_note_decl(s, info->space);
    }
    const OrnType *i64 = orn_type_scalar(s->ty, T_I64);
    int i = 0;
    for (OrnNode *k = keys; k; k = k->next, i++) {
        OrnSym *sym = orn_sema_declare(s, k, SYM_KEY, i64, n);
        if (!sym) continue;
        sym->key_index = i;
        if (i < 4) info->keys[i] = sym;
    }
    info->nkeys = i < 4 ? i : 4;
    if (n->u.parfor.value) {
        const OrnType *vt =
            st->kind == T_ARRAY ? orn_type_scalar(s->ty, st->elem) : orn_sema_terr(s);
        info->value = orn_sema_declare(s, n->u.parfor.value, SYM_VALUE, vt, n);
    }
    OrnNode *body = n->u.parfor.body;
    if (body) orn_sema_stmts(s, body->kind == N_BLOCK ? body->u.block.stmts : body);

    orn_sema_pop_scope(s);
    s->depth--;
    s->seqloops = saved_seq;
    s->loop = saved;
    if (lc) finalize(s, lc);
}

/* ---- post pass ------------------------------------------------------------------------ */

static int fn_index(Sema *s, const OrnNode *fn)
{
    OrnSemaFn *f = fn ? orn_sema_fn_of(s, fn->u.fn.sym) : NULL;
    return f ? (int)(f - s->fns) : -1;
}

/* reach_bad: the first collective (or exit) a fn reaches through its calls. */
static void close_bad(Sema *s)
{
    for (int i = 0; i < s->nfns; i++) {
        OrnSemaFn *f = &s->fns[i];
        f->reach_bad = f->bad;
        f->reach_bad_name = f->bad_name;
        f->reach_bad_collective = f->bad_collective;
    }
    for (bool changed = true; changed;) {
        changed = false;
        for (int i = 0; i < s->nfns; i++) {
            OrnSemaFn *f = &s->fns[i];
            if (f->reach_bad) continue;
            for (int j = 0; j < f->ncallees; j++) {
                int k = fn_index(s, f->callees[j]);
                if (k < 0 || !s->fns[k].reach_bad) continue;
                f->reach_bad = s->fns[k].reach_bad;
                f->reach_bad_name = s->fns[k].reach_bad_name;
                f->reach_bad_collective = s->fns[k].reach_bad_collective;
                changed = true;
                break;
            }
        }
    }
}

static const OrnAccum *find_acc(const OrnLoop *info, const OrnSym *sym)
{
    for (int i = 0; i < info->naccums; i++)
        if (info->accums[i].sym == sym) return &info->accums[i];
    return NULL;
}

static void push_sym(OrnSym ***v, int *n, int *cap, OrnSym *sym)
{
    for (int i = 0; i < *n; i++)
        if ((*v)[i] == sym) return;
    ORN_VPUSH(*v, *n, *cap, sym);
}

static void bad_call(Sema *s, OrnNode *call, const OrnSemaFn *g)
{
    const char *name = g->sym->name->s;
    if (g->reach_bad_collective)
        ORN_ERR(s, call->span,
                "'%s' cannot be called inside parallel_for because it uses "
                "collective '%s'",
                name, g->reach_bad_name);
    else if (strcmp(g->reach_bad_name, "parse") == 0)
        ORN_ERR(s, call->span,
                "'%s' cannot be called inside parallel_for because it converts a str to a number",
                name);
    else if (strcmp(g->reach_bad_name, "+") == 0)
        ORN_ERR(s, call->span,
                "'%s' cannot be called inside parallel_for because it uses '+' on str", name);
    else if (strcmp(g->reach_bad_name, "eprint") == 0) /* of an array or a view */
        ORN_ERR(s, call->span,
                "'%s' cannot be called inside parallel_for because it prints an array or a view",
                name);
    else
        ORN_ERR(s, call->span, "'%s' cannot be called inside parallel_for because it calls '%s'",
                name, g->reach_bad_name);
    ORN_NOTE_AT(s, g->reach_bad->span, "'%s' is used here", g->reach_bad_name);
    orn_sema_note_rank0(s, g->reach_bad_name);
}

static void post_loop(Sema *s, OrnSemaLoop *l, bool *seen, bool *visit, int *queue)
{
    OrnLoop *info = l->info;
    OrnNode **callees = NULL;
    int ncallees = 0, capcallees = 0;
    OrnSym **bufs = NULL, **reads = NULL;
    int nbufs = 0, capbufs = 0, nreads = 0, capreads = 0;
    for (int i = 0; i < l->nbufs; i++) push_sym(&bufs, &nbufs, &capbufs, l->bufs[i]);
    for (int i = 0; i < l->nouter; i++)
        if (l->outer[i].read && !is_acc(l->outer[i].acc))
            push_sym(&reads, &nreads, &capreads, l->outer[i].sym);
    memset(seen, 0, (size_t)s->nfns * sizeof *seen);
    for (int c = 0; c < l->ncalls; c++) {
        OrnNode *call = l->calls[c];
        int root = fn_index(s, call->u.call.sym ? call->u.call.sym->decl : NULL);
        if (root < 0) continue;
        if (s->fns[root].reach_bad) bad_call(s, call, &s->fns[root]);
        /* everything this call reaches, in breadth-first order */
        memset(visit, 0, (size_t)s->nfns * sizeof *visit);
        int qh = 0, qt = 0;
        bool acc_reported = false;
        visit[root] = true;
        queue[qt++] = root;
        while (qh < qt) {
            OrnSemaFn *f = &s->fns[queue[qh++]];
            int fi = (int)(f - s->fns);
            if (!seen[fi]) {
                seen[fi] = true;
                ORN_VPUSH(callees, ncallees, capcallees, f->fn);
                for (int i = 0; i < f->nbufs; i++) push_sym(&bufs, &nbufs, &capbufs, f->bufs[i]);
            }
            for (int i = 0; i < f->nreads; i++) {
                const OrnAccum *a = find_acc(info, f->reads[i]);
                if (!a) {
                    push_sym(&reads, &nreads, &capreads, f->reads[i]);
                } else if (!acc_reported) {
                    acc_reported = true;
                    ORN_ERR(s, call->span,
                            "'%s' reads '%s', which this parallel_for "
                            "accumulates",
                            s->fns[root].sym->name->s, a->sym->name->s);
                    ORN_NOTE_AT(s, a->first, "'%s' is accumulated here", a->sym->name->s);
                }
            }
            for (int i = 0; i < f->ncallees; i++) {
                int k = fn_index(s, f->callees[i]);
                if (k >= 0 && !visit[k]) {
                    visit[k] = true;
                    queue[qt++] = k;
                }
            }
        }
    }
    OrnArena *a = s->u->arena;
    info->ncallees = ncallees;
    info->callees = orn_arena_alloc(a, (size_t)(ncallees ? ncallees : 1) * sizeof *callees);
    if (ncallees) memcpy(info->callees, callees, (size_t)ncallees * sizeof *callees);
    info->nbuffers = nbufs;
    info->buffers = orn_arena_alloc(a, (size_t)(nbufs ? nbufs : 1) * sizeof *bufs);
    if (nbufs) memcpy(info->buffers, bufs, (size_t)nbufs * sizeof *bufs);
    info->nouter_reads = nreads;
    info->outer_reads = orn_arena_alloc(a, (size_t)(nreads ? nreads : 1) * sizeof *reads);
    if (nreads) memcpy(info->outer_reads, reads, (size_t)nreads * sizeof *reads);
    free(callees);
    free(bufs);
    free(reads);
}

void orn_sema_post(Sema *s)
{
    close_bad(s);
    size_t n = (size_t)(s->nfns ? s->nfns : 1);
    bool *seen = orn_xcalloc(n, sizeof *seen);
    bool *visit = orn_xcalloc(n, sizeof *visit);
    int *queue = orn_xcalloc(n, sizeof *queue);
    for (int i = 0; i < s->nloops; i++) post_loop(s, s->loops[i], seen, visit, queue);
    free(seen);
    free(visit);
    free(queue);
    /* apply functions run at buffer flushes, inside loops */
    for (int i = 0; i < s->napplies; i++) {
        OrnNode *v = s->applies[i]->u.kwarg.value;
        OrnSemaFn *f = orn_sema_fn_of(s, v->u.name.sym);
        if (!f || !f->reach_bad) continue;
        ORN_ERR(s, v->span, "'%s' cannot be an apply function because it uses %s'%s'",
                f->sym->name->s, f->reach_bad_collective ? "collective " : "", f->reach_bad_name);
        ORN_NOTE_AT(s, f->reach_bad->span, "'%s' is used here", f->reach_bad_name);
        orn_sema_note_rank0(s, f->reach_bad_name);
    }
}
