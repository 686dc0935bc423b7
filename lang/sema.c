/* sema.c: semantic analysis: scopes and symbols, statements, functions, the driver.
 *
 * orn_sema_walk() walks the program once in source order (orn_sema(), sema_infer.c, walks it
 * again when float inference types some locals f32). Before that it declares every
 * top-level fn and extern (they are visible everywhere) with its signature, so calls may
 * precede definitions. parallel_for bodies are checked in sema_loop.c; expressions in
 * sema_expr.c, calls and the built-ins in sema_call.c, const folding in sema_fold.c. After
 * the walk, a post pass (sema_loop.c) closes the call graph: what each loop calls
 * transitively, which buffers it updates and which collectives its callees reach.
 *
 * Invariants: symbols get ids 0, 1, 2, ... in creation order, and the top-level fns are
 * created first, so the id of a fn's symbol is its index in Sema.fns. A symbol declared
 * inside a parallel_for body has an id >= the loop's sym_base; that is how "outer" is
 * decided. */
#include "sema_int.h"

#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

/* ---- name map ----------------------------------------------------------------------------- */

static size_t map_slot(const OrnSemaMap *m, const OrnName *id)
{
    size_t j = id->hash & (m->cap - 1);
    while (m->keys[j] && m->keys[j] != id) j = (j + 1) & (m->cap - 1);
    return j;
}

static int map_get(const OrnSemaMap *m, const OrnName *id)
{
    if (!m->cap || !id) return -1;
    size_t j = map_slot(m, id);
    return m->keys[j] ? m->vals[j] : -1;
}

static void map_set(OrnSemaMap *m, const OrnName *id, int v)
{
    if ((m->count + 1) * 4 >= m->cap * 3) {
        OrnSemaMap n = {0};
        n.cap = m->cap ? m->cap * 2 : 64;
        n.keys = orn_xcalloc(n.cap, sizeof *n.keys);
        n.vals = orn_xcalloc(n.cap, sizeof *n.vals);
        for (size_t i = 0; i < m->cap; i++)
            if (m->keys[i]) {
                size_t j = map_slot(&n, m->keys[i]);
                n.keys[j] = m->keys[i];
                n.vals[j] = m->vals[i];
                n.count++;
            }
        free(m->keys);
        free(m->vals);
        *m = n;
    }
    size_t j = map_slot(m, id);
    if (!m->keys[j]) {
        m->keys[j] = id;
        m->count++;
    }
    m->vals[j] = v;
}

static void map_free(OrnSemaMap *m)
{
    free(m->keys);
    free(m->vals);
    memset(m, 0, sizeof *m);
}

/* ---- scopes and symbols ------------------------------------------------------------------ */

void orn_sema_push_scope(Sema *s)
{
    ORN_VPUSH(s->scopes, s->nscopes, s->capscopes, s->nbinds);
}

void orn_sema_pop_scope(Sema *s)
{
    int mark = s->scopes[--s->nscopes];
    while (s->nbinds > mark) {
        OrnSemaBinding *b = &s->binds[--s->nbinds];
        map_set(&s->map, b->name, b->prev);
    }
}

static void bind(Sema *s, OrnSym *sym)
{
    OrnSemaBinding b = {sym->name, sym, map_get(&s->map, sym->name), s->nscopes - 1};
    ORN_VPUSH(s->binds, s->nbinds, s->capbinds, b);
    map_set(&s->map, sym->name, s->nbinds - 1);
}

OrnSym *orn_sema_lookup(Sema *s, const OrnName *id)
{
    int i = map_get(&s->map, id);
    return i >= 0 ? s->binds[i].sym : NULL;
}

static OrnSym *new_sym(Sema *s, OrnSymKind kind, const OrnName *name, const OrnType *type,
                       OrnSpan span, OrnNode *decl)
{
    OrnSym *sym = orn_arena_alloc(s->u->arena, sizeof *sym);
    sym->kind = kind;
    sym->name = name;
    sym->type = type ? type : orn_sema_terr(s);
    sym->span = span;
    sym->decl = decl;
    sym->global = s->nscopes == 1 && !s->fn;
    sym->fn = s->fn ? s->fn->fn : NULL;
    sym->parfor = s->loop ? s->loop->info->node : NULL;
    sym->cval.kind = T_ERROR;
    sym->key_index = -1;
    sym->id = s->nsyms;
    ORN_VPUSH(s->syms, s->nsyms, s->capsyms, sym);
    return sym;
}

OrnSemaFn *orn_sema_fn_of(Sema *s, const OrnSym *sym)
{
    if (!sym || (sym->kind != SYM_FN && sym->kind != SYM_EXTERN)) return NULL;
    if (sym->id < 0 || sym->id >= s->nfns || s->fns[sym->id].sym != sym) return NULL;
    return &s->fns[sym->id];
}

const char *orn_sema_describe(Sema *s, const OrnSym *sym)
{
    const char *t = ORN_TSTR(s, sym->type);
    OrnBuf b;
    orn_buf_init(&b);
    switch (sym->kind) {
    case SYM_CONST:
        orn_buf_printf(&b, "const %s", t);
        break;
    case SYM_PARAM:
        orn_buf_printf(&b, "param %s", t);
        break;
    case SYM_FN:
        orn_buf_puts(&b, "fn");
        break;
    case SYM_EXTERN:
        orn_buf_puts(&b, "extern fn");
        break;
    default:
        orn_buf_puts(&b, t);
        break;
    }
    const char *r = orn_arena_strndup(s->u->arena, b.data ? b.data : "", b.len);
    orn_buf_free(&b);
    return r;
}

void orn_sema_note_decl(Sema *s, const OrnSym *sym)
{
    if (!sym) return;
    ORN_NOTE_AT(s, sym->span, "'%s' is declared here as %s", sym->name->s,
                orn_sema_describe(s, sym));
}

/* After an error for `name` used inside parallel_for, directly or through a fn: why print
 * and printf are refused there, and what to write instead. */
void orn_sema_note_rank0(Sema *s, const char *name)
{
    if (strcmp(name, "log_metric") == 0) {
        ORN_NOTE(s, "'log_metric' writes on rank 0 only, so inside parallel_for it would drop "
                    "the values of iterations that run on other ranks; accumulate a value in "
                    "the loop and log it after the loop");
        return;
    }
    if (strcmp(name, "parse") == 0) {
        ORN_NOTE(s, "parse the text before the loop, into a variable or an array the loop reads");
        return;
    }
    if (strcmp(name, "str") == 0 || strcmp(name, "+") == 0) {
        ORN_NOTE(s, "strings are built outside parallel_for: each 'str(x)' or '+' on str makes "
                    "a new string that lives until the program ends; 'eprint' takes several "
                    "arguments, as in 'eprint(\"row\", i, \"is bad\")'");
        return;
    }
    if (strcmp(name, "print") != 0 && strcmp(name, "printf") != 0) return;
    ORN_NOTE(s,
             "'%s' writes on rank 0 only, so inside parallel_for it would drop the lines of "
             "iterations that run on other ranks; use 'eprint(...)' (every rank, stderr, "
             "prefixed '[rank R] '), or accumulate a value and print it after the loop",
             name);
}

/* The span of `word` at or after the start of span (a keyword of a statement), so that a
 * message about a statement underlines its keyword and not all of its lines. */
OrnSpan orn_sema_prefix(Sema *s, OrnSpan span, const char *word)
{
    const OrnSource *src = &s->u->src;
    size_t n = strlen(word);
    if (!src->text || span.hi > src->len || span.lo >= span.hi) return span;
    for (uint32_t i = span.lo; i + n <= span.hi; i++)
        if (memcmp(src->text + i, word, n) == 0) return orn_source_span(src, i, i + (uint32_t)n);
    return span;
}

/* ---- unknown names ------------------------------------------------------------------------ */

typedef struct Suggest {
    const char *want;
    const char *best;
    int dist;
} Suggest;

static void consider(Suggest *g, const char *cand)
{
    if (!cand || strcmp(cand, g->want) == 0) return;
    int d = orn_edit_distance(g->want, cand);
    if (d < g->dist && d <= 2 && (size_t)d < strlen(g->want)) {
        g->dist = d;
        g->best = cand;
    }
}

void orn_sema_unknown(Sema *s, const OrnName *id, OrnSpan span, bool call)
{
    int flag = call ? 2 : 1;
    int seen = map_get(&s->unknown, id);
    if (seen > 0 && (seen & flag)) return; /* reported once; later uses stay quiet */
    map_set(&s->unknown, id, (seen > 0 ? seen : 0) | flag);
    ORN_ERR(s, span, call ? "unknown function '%s'" : "unknown name '%s'", id->s);
    if (!call) {
        /* declared, but not visible here: in a block that has ended, or later on */
        for (int i = s->nsyms - 1; i >= 0; i--) {
            const OrnSym *o = s->syms[i];
            if (o->name == id && o->span.lo < span.lo && o->kind != SYM_FN &&
                o->kind != SYM_EXTERN) {
                ORN_NOTE_AT(s, o->span, "'%s' is declared here, in a block that has ended", id->s);
                return;
            }
        }
        for (int i = 0; i < s->nlater; i++)
            if (s->later[i].name == id && s->later[i].span.lo > span.lo) {
                ORN_NOTE_AT(s, s->later[i].span,
                            "'%s' is declared later, here; names must be declared before use",
                            id->s);
                return;
            }
    }
    Suggest g = {id->s, NULL, 3};
    for (int i = 0; i < s->nbinds; i++) {
        const OrnSemaBinding *b = &s->binds[i];
        if (map_get(&s->map, b->name) != i) continue; /* hidden */
        bool is_fn = b->sym->kind == SYM_FN || b->sym->kind == SYM_EXTERN;
        if (is_fn == call) consider(&g, b->name->s);
    }
    if (call)
        for (int i = 0; i < ORN_BI__COUNT; i++) consider(&g, orn_builtins[i].name);
    if (g.best) ORN_NOTE(s, "did you mean '%s'?", g.best);
}

/* A statement that is only an unknown name, or a call of an unknown function, whose name
 * looks like a misspelled keyword (`brek`, `contniue`, `retrun(x)`): reported as such. */
static bool misspelled_keyword(Sema *s, const OrnNode *e)
{
    bool call = e->kind == N_CALL;
    const OrnName *id = call ? e->u.call.id : e->kind == N_NAME ? e->u.name.id : NULL;
    if (!id || map_get(&s->map, id) >= 0 || (call && orn_builtin_lookup(id->s) >= 0)) return false;
    const char *kw = orn_keyword_like(id->s);
    if (!kw) return false;
    OrnSpan w = e->span;
    w.hi = w.lo + (uint32_t)strlen(id->s);
    ORN_ERR(s, w, "unknown statement '%s': did you mean '%s'?", id->s, kw);
    int seen = map_get(&s->unknown, id);
    map_set(&s->unknown, id, (seen > 0 ? seen : 0) | (call ? 2 : 1));
    return true;
}

/* A new name bound by a parameter, a loop variable, a key or a value variable: it may not
 * redefine a type name or a built-in, nor shadow a visible name, except that a fn's
 * parameters and locals may reuse the names of top-level variables. */
static bool check_binder(Sema *s, const OrnName *id, OrnSpan span)
{
    if (orn_sema_is_typename(id)) {
        ORN_ERR(s, span, "'%s' is a type name and cannot be redefined", id->s);
        return false;
    }
    if (orn_sema_builtin_of(id) >= 0) {
        ORN_ERR(s, span, "'%s' is a built-in function and cannot be redefined", id->s);
        return false;
    }
    int i = map_get(&s->map, id);
    if (i < 0) return true;
    const OrnSemaBinding *b = &s->binds[i];
    if (s->fn && b->sym->global && b->sym->kind == SYM_VAR) return true;
    if (b->scope == s->nscopes - 1)
        ORN_ERR(s, span, "'%s' is already declared", id->s);
    else
        ORN_ERR(s, span, "'%s' is already declared in an enclosing scope", id->s);
    orn_sema_note_decl(s, b->sym);
    return true; /* bind it anyway: later uses then see the new declaration */
}

/* A const, param, dist or fn name: not a type name or built-in, not declared yet. */
static bool check_top_name(Sema *s, const OrnName *id, OrnSpan span)
{
    if (orn_sema_is_typename(id)) {
        ORN_ERR(s, span, "'%s' is a type name and cannot be redefined", id->s);
        return false;
    }
    if (orn_sema_builtin_of(id) >= 0) {
        ORN_ERR(s, span, "'%s' is a built-in function and cannot be redefined", id->s);
        return false;
    }
    OrnSym *old = orn_sema_lookup(s, id);
    if (!old) return true;
    ORN_ERR(s, span, "'%s' is already declared", id->s);
    orn_sema_note_decl(s, old);
    return false;
}

/* ---- what bodies do (for the parallel_for rules) ----------------------------------------- */

static bool replicated(const OrnSym *sym)
{
    return sym->kind == SYM_VAR || sym->kind == SYM_CONST || sym->kind == SYM_PARAM ||
           sym->kind == SYM_LOOPVAR;
}

static void push_unique_sym(OrnSym ***v, int *n, int *cap, OrnSym *sym)
{
    for (int i = 0; i < *n; i++)
        if ((*v)[i] == sym) return;
    ORN_VPUSH(*v, *n, *cap, sym);
}

OrnSemaOuter *orn_sema_outer(OrnSemaLoop *l, OrnSym *sym)
{
    for (int i = 0; i < l->nouter; i++)
        if (l->outer[i].sym == sym) return &l->outer[i];
    OrnSemaOuter o = {.sym = sym, .acc = ACC_NONE};
    ORN_VPUSH(l->outer, l->nouter, l->capouter, o);
    return &l->outer[l->nouter - 1];
}

void orn_sema_record_read(Sema *s, OrnNode *name, OrnSym *sym)
{
    if (!replicated(sym)) return;
    if (s->loop && sym->id < s->loop->sym_base) {
        OrnSemaOuter *o = orn_sema_outer(s->loop, sym);
        if (name != s->selfread && !o->read) {
            o->read = true;
            o->read_span = name->span;
        }
    }
    if (s->fn && sym->global) push_unique_sym(&s->fn->reads, &s->fn->nreads, &s->fn->capreads, sym);
}

void orn_sema_record_call(Sema *s, OrnNode *call, OrnSemaFn *callee)
{
    if (callee->fn->u.fn.is_extern) return;
    if (s->loop) ORN_VPUSH(s->loop->calls, s->loop->ncalls, s->loop->capcalls, call);
    if (s->fn) {
        OrnSemaFn *f = s->fn;
        for (int i = 0; i < f->ncallees; i++)
            if (f->callees[i] == callee->fn) return;
        ORN_VPUSH(f->callees, f->ncallees, f->capcallees, callee->fn);
    }
}

void orn_sema_record_bad(Sema *s, OrnNode *call, const char *what, bool collective)
{
    if (!s->fn || s->fn->bad) return;
    s->fn->bad = call;
    s->fn->bad_name = what;
    s->fn->bad_collective = collective;
}

static void record_buffer(Sema *s, OrnSym *buf)
{
    if (s->loop) push_unique_sym(&s->loop->bufs, &s->loop->nbufs, &s->loop->capbufs, buf);
    if (s->fn) push_unique_sym(&s->fn->bufs, &s->fn->nbufs, &s->fn->capbufs, buf);
}

/* ---- statements --------------------------------------------------------------------------- */

static void block(Sema *s, OrnNode *blk)
{
    if (!blk) return;
    orn_sema_push_scope(s);
    s->depth++;
    orn_sema_stmts(s, blk->kind == N_BLOCK ? blk->u.block.stmts : blk);
    s->depth--;
    orn_sema_pop_scope(s);
}

static bool at_top(const Sema *s)
{
    return s->depth == 0 && !s->fn && !s->loop;
}

static void misplaced(Sema *s, OrnNode *n, const char *kw)
{
    ORN_ERR(s, orn_sema_prefix(s, n->span, kw), "'%s' may only appear at top level", kw);
}

static void cond(Sema *s, OrnNode *c)
{
    const OrnType *t = orn_sema_expr(s, c);
    if (!t || t->kind == T_ERROR || t->kind == T_BOOL) return;
    ORN_ERR(s, c->span, "a condition must be bool, found %s", ORN_TSTR(s, t));
    if (orn_type_is_numeric(t))
        ORN_NOTE(s, "numbers are not truthy: compare explicitly, as in 'x != 0'");
}

/* A value stored in a new variable: scalars and strings, or a local array fresh from a
 * constructor. Arrays are never copied or aliased; views are used where they are written. */
static const OrnType *storable(Sema *s, OrnNode *val, const OrnType *t)
{
    switch (t->kind) {
    case T_ERROR:
    case T_BOOL:
    case T_I32:
    case T_I64:
    case T_F32:
    case T_F64:
    case T_STR:
        return t;
    case T_ARRAY:
        if (!t->dist && val->kind == N_CALL &&
            (val->u.call.builtin == ORN_BI_ZEROS || val->u.call.builtin == ORN_BI_FILL ||
             val->u.call.builtin == ORN_BI_RAND || val->u.call.builtin == ORN_BI_RANDN ||
             val->u.call.builtin == ORN_BI_LOAD_TEXT))
            return t;
        if (t->dist)
            ORN_ERR(s, val->span,
                    "a dist array cannot be stored in a variable; declare one "
                    "with 'dist NAME = ...'");
        else
            ORN_ERR(s, val->span,
                    "arrays cannot be copied or aliased; create a new one with "
                    "zeros, fill, rand or randn");
        return orn_sema_terr(s);
    case T_VIEW:
        ORN_ERR(s, val->span,
                "a view cannot be stored in a variable; write it where it is "
                "used, as in 'dot(A[:, j], B[:, k])'");
        return orn_sema_terr(s);
    default:
        ORN_ERR(s, val->span, "%s cannot be stored in a variable; use 'dist NAME = ...'",
                ORN_TSTR(s, t));
        return orn_sema_terr(s);
    }
}

static bool fn_reads(const OrnSemaFn *f, const OrnSym *sym)
{
    for (int i = 0; i < f->nreads; i++)
        if (f->reads[i] == sym) return true;
    return false;
}

/* x = min(x, e) / max(x, e) / min(e, x) / max(e, x): the x argument, else NULL. */
static OrnNode *minmax_self(OrnNode *val, const OrnName *id, int *acc)
{
    if (!val || val->kind != N_CALL || !val->u.call.id) return NULL;
    const char *f = val->u.call.id->s;
    bool mn = strcmp(f, "min") == 0, mx = strcmp(f, "max") == 0;
    if (!mn && !mx) return NULL;
    OrnNode *a = val->u.call.args;
    OrnNode *b = a ? a->next : NULL;
    if (!a || !b || b->next || a->kind == N_KWARG || b->kind == N_KWARG) return NULL;
    *acc = mn ? ACC_MIN : ACC_MAX;
    if (a->kind == N_NAME && a->u.name.id == id) return a;
    if (b->kind == N_NAME && b->u.name.id == id) return b;
    return NULL;
}

static const char *acc_name(int acc)
{
    switch (acc) {
    case ACC_SUM:
        return "'+='";
    case ACC_PROD:
        return "'*='";
    case ACC_MIN:
        return "'min'";
    default:
        return "'max'";
    }
}

/* A write to a scalar declared outside the parallel_for being checked. */
static void loop_write(Sema *s, OrnNode *tg, OrnSym *sym, int acc)
{
    OrnSemaOuter *o = orn_sema_outer(s->loop, sym);
    const char *name = sym->name->s;
    if (acc == ACC_BAD) {
        ORN_ERR(s, tg->span, "'%s' is written inside parallel_for but is not a reduction", name);
        ORN_NOTE_AT(s, sym->span, "'%s' is declared here, outside the loop", name);
        ORN_NOTE(s, "use '%s += ...' to accumulate across iterations", name);
        o->acc = ACC_BAD;
        return;
    }
    if (o->acc == ACC_BAD) return;
    if (o->acc == ACC_NONE) {
        o->acc = acc;
        o->first = tg->span;
        return;
    }
    if (o->acc != acc && !o->mixed_reported) {
        ORN_ERR(s, tg->span, "'%s' is updated with both %s and %s inside parallel_for", name,
                acc_name(o->acc), acc_name(acc));
        ORN_NOTE_AT(s, o->first, "first updated here with %s", acc_name(o->acc));
        o->mixed_reported = true;
    }
}

static void conversion_error(Sema *s, OrnNode *val, const OrnType *from, const OrnSym *sym)
{
    ORN_ERR(s, val->span, "cannot assign %s to '%s', which is %s", ORN_TSTR(s, from), sym->name->s,
            ORN_TSTR(s, sym->type));
    orn_sema_note_decl(s, sym);
    if (orn_type_is_float(from) && orn_type_is_integer(sym->type))
        ORN_NOTE(s, "convert explicitly with '%s(...)'", orn_kind_name(sym->type->kind));
}

static void assign_name(Sema *s, OrnNode *n, OrnNode *tg, OrnNode *val)
{
    OrnOp op = n->u.assign.op;
    const OrnName *id = tg->u.name.id;
    OrnSym *sym = orn_sema_lookup(s, id);
    bool outer = s->loop && sym && sym->id < s->loop->sym_base && sym->kind == SYM_VAR;
    int acc = ACC_BAD;
    const OrnNode *saved = s->selfread;
    if (outer) {
        if (op == OP_ADD) {
            acc = ACC_SUM;
        } else if (op == OP_MUL) {
            acc = ACC_PROD;
        } else if (op == OP_NONE) {
            OrnNode *self = minmax_self(val, id, &acc);
            if (self)
                s->selfread = self;
            else
                acc = ACC_BAD;
        }
    }
    const OrnNode *saved_text = s->var_init;
    if (op == OP_NONE && val->kind == N_CALL) s->var_init = val; /* a = zeros(...), load_text */
    OrnSemaCand *cand = sym ? orn_sema_cand(s, sym) : NULL;
    const OrnSym *saved_weak = s->selfweak;
    if (cand && s->probe) s->selfweak = sym;
    const OrnType *vt = orn_sema_expr(s, val);
    s->selfweak = saved_weak;
    s->var_init = saved_text;
    s->selfread = saved;

    if (sym && s->fn && sym->global && sym->kind == SYM_VAR) {
        if (op == OP_NONE && !fn_reads(s->fn, sym)) {
            sym = NULL; /* a local of the fn that reuses a top-level name */
        } else {
            tg->u.name.sym = sym;
            tg->type = sym->type;
            ORN_ERR(s, tg->span, "cannot assign to top-level variable '%s' inside fn '%s'", id->s,
                    s->fn->sym->name->s);
            orn_sema_note_decl(s, sym);
            ORN_NOTE(s, "a fn cannot change top-level variables; return the value instead");
            return;
        }
    }
    if (!sym) {
        if (orn_sema_is_typename(id)) {
            ORN_ERR(s, tg->span, "'%s' is a type name and cannot be redefined", id->s);
            return;
        }
        if (orn_sema_builtin_of(id) >= 0) {
            ORN_ERR(s, tg->span, "'%s' is a built-in function and cannot be redefined", id->s);
            return;
        }
        if (op != OP_NONE) {
            int seen = map_get(&s->unknown, id);
            orn_sema_unknown(s, id, tg->span, false);
            if (s->loop && !(seen > 0 && (seen & 1)))
                ORN_NOTE(s,
                         "to accumulate '%s' over the loop's iterations, declare it before "
                         "the parallel_for (e.g. '%s = 0.0'): it is then an accumulator, "
                         "combined across ranks",
                         id->s, id->s);
            return;
        }
        const OrnType *t = storable(s, val, vt);
        sym = new_sym(s, SYM_VAR, id, t, tg->span, n);
        sym->readonly_value = n->u.assign.binds_value;
        bind(s, sym);
        n->u.assign.declares = true;
        orn_sema_infer_decl(s, n, val, sym);
        tg->u.name.sym = sym;
        tg->type = sym->type;
        if (s->fn) sym->assigned_in_fn = true;
        return;
    }
    tg->u.name.sym = sym;
    tg->type = sym->type;
    const char *what = NULL;
    switch (sym->kind) {
    case SYM_CONST:
        what = "const";
        break;
    case SYM_PARAM:
        what = "param";
        break;
    case SYM_KEY:
        what = "parallel_for key";
        break;
    case SYM_LOOPVAR:
        what = "loop variable";
        break;
    case SYM_VAR:
        if (sym->readonly_value) what = "loop variable";
        break;
    case SYM_FN:
    case SYM_EXTERN:
        what = "function";
        break;
    case SYM_DIST:
        ORN_ERR(s, tg->span, "cannot assign to %s '%s' as a whole",
                sym->type->kind == T_BUFFER ? "buffer" : "dist array", id->s);
        orn_sema_note_decl(s, sym);
        ORN_NOTE(s,
                 sym->type->kind == T_BUFFER ? "update its elements with '+=' or '-='"
                                             : "assign its elements, as in '%s[i] = ...'",
                 id->s);
        return;
    default:
        break;
    }
    if (what) {
        ORN_ERR(s, tg->span, "cannot assign to %s '%s'", what, id->s);
        orn_sema_note_decl(s, sym);
        if (sym->kind == SYM_PARAM)
            ORN_NOTE(s, "params are set on the command line: --%s=value", id->s);
        return;
    }
    if (s->fn) sym->assigned_in_fn = true;
    if (sym->type->kind == T_ARRAY) {
        ORN_ERR(s, tg->span, "cannot assign to array '%s' as a whole; assign its elements", id->s);
        orn_sema_note_decl(s, sym);
        return;
    }
    vt = orn_sema_narrow_update(s, n, sym->type, vt);
    val = n->u.assign.value;
    const OrnType *rt = vt;
    if (op != OP_NONE) {
        rt = orn_sema_arith(s, op, sym->type, vt, n->span, tg->span, val->span);
        if (rt->kind == T_STR) orn_sema_not_in_loop(s, n, "+", false);
    }
    if (sym->kind == SYM_VALUE) {
        /* the value variable stands for an element: stores convert as C does */
        if (rt->kind != T_ERROR && sym->type->kind != T_ERROR && !orn_type_is_numeric(rt))
            conversion_error(s, val, rt, sym);
        return;
    }
    if (!orn_sema_var_convertible(sym->type, rt)) {
        conversion_error(s, val, rt, sym);
        return;
    }
    if (cand) orn_sema_infer_update(s, n, cand);
    if (outer) loop_write(s, tg, sym, acc);
}

static void assign_elem(Sema *s, OrnNode *n, OrnNode *tg, OrnNode *val)
{
    OrnOp op = n->u.assign.op;
    OrnNode *base = tg->u.index.base;
    OrnSym *sym = NULL;
    if (base && base->kind == N_NAME && base->u.name.id) {
        sym = orn_sema_lookup(s, base->u.name.id);
        if (!sym) {
            const OrnName *id = base->u.name.id;
            if (orn_sema_is_typename(id) || orn_sema_builtin_of(id) >= 0)
                ORN_ERR(s, base->span, "'%s' is not an array", id->s);
            else
                orn_sema_unknown(s, id, base->span, false);
        }
    } else {
        orn_sema_expr(s, base);
        if (base && base->type && base->type->kind != T_ERROR)
            ORN_ERR(s, base->span, "only elements of a named array can be assigned");
    }
    const OrnType *at = sym ? sym->type : orn_sema_terr(s);
    if (sym) {
        base->u.name.sym = sym;
        base->type = at;
    }
    bool is_buf = at->kind == T_BUFFER;
    if (orn_type_is_str_array(at)) {
        ORN_ERR(s, tg->span,
                "cannot assign to an element of '%s': the lines of load_text are "
                "read-only",
                sym->name->s);
        orn_sema_note_decl(s, sym);
        orn_sema_subscripts(s, tg, at, sym);
        orn_sema_expr(s, val);
        return;
    }
    if (at->kind != T_ERROR && !is_buf && at->kind != T_ARRAY) {
        ORN_ERR(s, base->span, "cannot assign to an element of '%s', which is %s", sym->name->s,
                orn_sema_describe(s, sym));
        orn_sema_note_decl(s, sym);
        at = orn_sema_terr(s);
    }
    const OrnType *arr = is_buf ? at->target : at;
    const OrnType *et = orn_sema_subscripts(s, tg, arr ? arr : orn_sema_terr(s), sym);
    tg->type = et;
    const OrnType *vt = orn_sema_expr(s, val);
    if (at->kind == T_ERROR) return;
    const char *name = sym->name->s;
    if (is_buf) {
        if (op != OP_ADD && op != OP_SUB) {
            ORN_ERR(s, tg->span, "buffer '%s' can only be updated with '+=' or '-='", name);
        } else if (!s->loop && !s->fn) {
            ORN_ERR(s, tg->span, "buffer '%s' can only be updated inside parallel_for", name);
            orn_sema_note_decl(s, sym);
        }
        record_buffer(s, sym);
    } else if (!at->dist) {
        if (s->loop && sym->id < s->loop->sym_base) {
            ORN_ERR(s, base->span, "'%s' is written inside parallel_for but is not a reduction",
                    name);
            ORN_NOTE_AT(s, sym->span, "'%s' is declared here, outside the loop, as %s", name,
                        ORN_TSTR(s, at));
            ORN_NOTE(s, "a local array is replicated on every rank; write a dist array, or "
                        "update it through a buffer");
            return;
        }
        if (s->fn && sym->global) {
            ORN_ERR(s, base->span, "cannot assign to top-level variable '%s' inside fn '%s'", name,
                    s->fn->sym->name->s);
            orn_sema_note_decl(s, sym);
            ORN_NOTE(s, "a fn cannot change top-level variables; return the value instead");
            return;
        }
    }
    if (s->fn) sym->assigned_in_fn = true;
    if (et->kind == T_ERROR || vt->kind == T_ERROR) return;
    vt = orn_sema_narrow_update(s, n, et, vt);
    val = n->u.assign.value;
    const OrnType *rt = vt;
    if (op != OP_NONE) rt = orn_sema_arith(s, op, et, vt, n->span, tg->span, val->span);
    if (rt->kind == T_ERROR) return;
    if (et->kind == T_VIEW) {
        if (!orn_type_is_numeric(rt) && rt->kind != T_VIEW)
            ORN_ERR(s, val->span, "cannot store %s in %s", ORN_TSTR(s, rt), ORN_TSTR(s, et));
    } else if (!orn_type_is_numeric(rt)) {
        ORN_ERR(s, val->span, "cannot store %s in an element of '%s', which is %s", ORN_TSTR(s, rt),
                name, ORN_TSTR(s, arr));
    }
}

static void assign_stmt(Sema *s, OrnNode *n)
{
    OrnNode *tg = n->u.assign.target, *val = n->u.assign.value;
    if (!tg || !val) {
        if (val) orn_sema_expr(s, val);
        return;
    }
    if (tg->kind == N_NAME && tg->u.name.id) {
        assign_name(s, n, tg, val);
    } else if (tg->kind == N_INDEX) {
        assign_elem(s, n, tg, val);
    } else {
        orn_sema_expr(s, val);
        ORN_ERR(s, tg->span, "cannot assign to this expression");
    }
}

static void const_stmt(Sema *s, OrnNode *n)
{
    if (!at_top(s)) misplaced(s, n, "const");
    const OrnName *id = n->u.decl.id;
    OrnNode *val = n->u.decl.value;
    orn_sema_expr(s, val);
    OrnConstVal cv;
    const OrnType *t = orn_sema_terr(s);
    if (orn_sema_fold(s, val, &cv))
        t = orn_type_scalar(s->ty, cv.kind);
    else
        cv.kind = T_ERROR;
    if (!id) return;
    bool ok = check_top_name(s, id, n->u.decl.id_span);
    OrnSym *sym = new_sym(s, SYM_CONST, id, t, n->u.decl.id_span, n);
    sym->cval = cv;
    n->u.decl.sym = sym;
    if (ok) bind(s, sym);
}

static bool is_literal(const OrnNode *v)
{
    if (!v) return false;
    if (v->kind == N_UNARY && v->u.unary.op == OP_NEG && v->u.unary.e)
        return v->u.unary.e->kind == N_INT || v->u.unary.e->kind == N_FLOAT;
    return v->kind == N_INT || v->kind == N_FLOAT || v->kind == N_STR || v->kind == N_BOOL;
}

static void param_stmt(Sema *s, OrnNode *n)
{
    if (!at_top(s)) misplaced(s, n, "param");
    const OrnName *id = n->u.decl.id;
    OrnNode *val = n->u.decl.value;
    const OrnType *t = orn_sema_expr(s, val);
    OrnConstVal cv;
    memset(&cv, 0, sizeof cv);
    cv.kind = T_ERROR;
    if (!is_literal(val)) {
        if (t->kind != T_ERROR) {
            ORN_ERR(s, val->span,
                    "a param default must be a literal: a number, true, false "
                    "or a string");
            ORN_NOTE(s, "use a const or a variable for a computed value");
        }
        if (t->kind > T_STR) t = orn_sema_terr(s);
    } else if (!orn_sema_fold(s, val, &cv)) {
        cv.kind = T_ERROR;
        t = orn_sema_terr(s);
    }
    if (!id) return;
    /* the run-time flags of compiled programs (stdlib/params.c), and what they are for */
    static const struct {
        const char *name, *flag, *note;
    } flags[] = {
        {"checkpoint", "--checkpoint=DIR", "--checkpoint=DIR and --resume=DIR (checkpoints)"},
        {"resume", "--resume=DIR", "--checkpoint=DIR and --resume=DIR (checkpoints)"},
        {"timeline", "--timeline=FILE", "--timeline=FILE and --stats (where the time goes)"},
        {"stats", "--stats", "--timeline=FILE and --stats (where the time goes)"},
        {"logdir", "--logdir=DIR",
         "--logdir=DIR (log_metric's files) and --quiet (no progress "
         "line)"},
        {"quiet", "--quiet", "--logdir=DIR (log_metric's files) and --quiet (no progress line)"},
    };
    for (size_t k = 0; k < sizeof flags / sizeof flags[0]; k++)
        if (!strcmp(id->s, flags[k].name)) {
            ORN_ERR(s, n->u.decl.id_span, "param '%s' would hide the run-time flag %s", id->s,
                    flags[k].flag);
            ORN_NOTE(s, "compiled programs take %s; rename the param", flags[k].note);
        }
    bool ok = check_top_name(s, id, n->u.decl.id_span);
    OrnSym *sym = new_sym(s, SYM_PARAM, id, t, n->u.decl.id_span, n);
    sym->cval = cv;
    n->u.decl.sym = sym;
    if (ok) bind(s, sym);
}

static void dist_stmt(Sema *s, OrnNode *n)
{
    bool bad_place = !at_top(s);
    if (bad_place) {
        misplaced(s, n, "dist");
        s->quiet_collective++;
    }
    OrnNode *val = n->u.dist.value;
    int nnames = orn_list_len(n->u.dist.names);
    const OrnType *t;
    if (val && val->kind == N_CALL) {
        const OrnNode *saved = s->dist_init;
        s->dist_init = val;
        t = orn_sema_expr(s, val);
        s->dist_init = saved;
    } else {
        t = orn_sema_expr(s, val);
    }
    if (t->kind != T_ERROR && t->kind != T_TUPLE && t->kind != T_BUFFER &&
        !(t->kind == T_ARRAY && t->dist)) {
        ORN_ERR(s, val->span,
                "a dist array is created by zeros, fill, rand, randn, a loader "
                "or buffer, not by %s",
                ORN_TSTR(s, t));
        t = orn_sema_terr(s);
    }
    const OrnType *parts[2] = {t, orn_sema_terr(s)};
    if (t->kind == T_TUPLE) {
        parts[0] = t->parts[0];
        parts[1] = t->parts[1];
        if (nnames != 2) {
            ORN_ERR(s, val->span, "'%s' returns two arrays: write 'dist X, y = %s(...)'",
                    val->u.call.id->s, val->u.call.id->s);
            parts[0] = orn_sema_terr(s);
        }
    } else if (nnames > 1 && t->kind != T_ERROR) {
        OrnNode *second = n->u.dist.names->next;
        ORN_ERR(s, second->span, "only load_libsvm returns two arrays; declare one name here");
    }
    int i = 0;
    for (OrnNode *nm = n->u.dist.names; nm; nm = nm->next, i++) {
        if (nm->kind != N_NAME || !nm->u.name.id) continue;
        const OrnType *pt = i < 2 ? parts[i] : orn_sema_terr(s);
        bool ok = check_top_name(s, nm->u.name.id, nm->span);
        OrnSym *sym = new_sym(s, SYM_DIST, nm->u.name.id, pt, nm->span, n);
        nm->u.name.sym = sym;
        nm->type = pt;
        if (ok) bind(s, sym);
    }
    if (bad_place) s->quiet_collective--;
}

static void if_stmt(Sema *s, OrnNode *n)
{
    cond(s, n->u.if_.cond);
    block(s, n->u.if_.then);
    OrnNode *e = n->u.if_.els;
    if (!e) return;
    if (e->kind == N_IF)
        if_stmt(s, e);
    else
        block(s, e);
}

OrnSym *orn_sema_declare(Sema *s, OrnNode *var, OrnSymKind kind, const OrnType *t, OrnNode *decl)
{
    if (!var || var->kind != N_NAME || !var->u.name.id) return NULL;
    bool ok = check_binder(s, var->u.name.id, var->span);
    OrnSym *sym = new_sym(s, kind, var->u.name.id, t, var->span, decl);
    var->u.name.sym = sym;
    var->type = t;
    if (ok) bind(s, sym);
    return sym;
}

static void loop_body(Sema *s, OrnNode *body)
{
    s->seqloops++;
    if (body) orn_sema_stmts(s, body->kind == N_BLOCK ? body->u.block.stmts : body);
    s->seqloops--;
}

static void for_stmt(Sema *s, OrnNode *n)
{
    OrnNode *b[2] = {n->u.for_.lo, n->u.for_.hi};
    for (int i = 0; i < 2; i++) {
        const OrnType *t = orn_sema_expr(s, b[i]);
        if (t->kind != T_ERROR && !orn_type_is_integer(t))
            ORN_ERR(s, b[i]->span, "range bounds must be integers, found %s", ORN_TSTR(s, t));
    }
    orn_sema_push_scope(s);
    s->depth++;
    orn_sema_declare(s, n->u.for_.var, SYM_LOOPVAR, orn_type_scalar(s->ty, T_I64), n);
    loop_body(s, n->u.for_.body);
    s->depth--;
    orn_sema_pop_scope(s);
    orn_sema_for_narrow(s, n);
    orn_sema_for_hoist(s, n);
}

static void foreach_stmt(Sema *s, OrnNode *n)
{
    OrnNode *it = n->u.foreach.iter;
    const OrnType *t = orn_sema_expr(s, it);
    if (orn_sema_foreach_as_for(s, n, t)) {
        for_stmt(s, n);
        return;
    }
    const OrnType *vt = orn_sema_terr(s);
    if (t->kind == T_VIEW && it->kind == N_INDEX) {
        vt = orn_type_scalar(s->ty, t->elem);
    } else if (orn_type_is_str_array(t)) {
        ORN_ERR(s, it->span, "'for (k, v) in ...' does not iterate over the lines of load_text");
        ORN_NOTE(s, "index them instead: 'for i in 0..len(lines)' and 'lines[i]'");
    } else if (t->kind == T_ARRAY && !t->dist && t->ndims == 1) {
        vt = orn_type_scalar(s->ty, t->elem);
    } else if (t->kind != T_ERROR) {
        ORN_ERR(s, it->span,
                "'for (k, v) in ...' iterates over a view such as 'A[i, :]' or a "
                "local 1-D array, not %s",
                ORN_TSTR(s, t));
        if (t->kind == T_ARRAY && t->dist)
            ORN_NOTE(s, "use parallel_for to iterate over a dist array");
    }
    orn_sema_push_scope(s);
    s->depth++;
    orn_sema_declare(s, n->u.foreach.key, SYM_LOOPVAR, orn_type_scalar(s->ty, T_I64), n);
    orn_sema_declare(s, n->u.foreach.value, SYM_LOOPVAR, vt, n);
    loop_body(s, n->u.foreach.body);
    s->depth--;
    orn_sema_pop_scope(s);
}

static void while_stmt(Sema *s, OrnNode *n)
{
    cond(s, n->u.while_.cond);
    orn_sema_push_scope(s);
    s->depth++;
    loop_body(s, n->u.while_.body);
    s->depth--;
    orn_sema_pop_scope(s);
}

static void return_stmt(Sema *s, OrnNode *n)
{
    OrnNode *v = n->u.ret.value;
    const OrnType *t = v ? orn_sema_expr(s, v) : NULL;
    if (s->loop) {
        ORN_ERR(s, orn_sema_prefix(s, n->span, "return"),
                "'return' cannot be used inside parallel_for");
        ORN_NOTE(s, "use 'continue' to skip to the next iteration");
        return;
    }
    if (!s->fn) {
        ORN_ERR(s, orn_sema_prefix(s, n->span, "return"), "'return' outside a fn");
        return;
    }
    const OrnType *ret = s->fn->ret;
    const char *fname = s->fn->sym->name->s;
    if (v) {
        if (ret->kind == T_VOID) {
            if (t->kind != T_ERROR)
                ORN_ERR(s, v->span, "fn '%s' has no result type, so 'return' takes no value",
                        fname);
        } else if (!orn_sema_var_convertible(ret, t)) {
            ORN_ERR(s, v->span, "fn '%s' returns %s, but this value is %s", fname, ORN_TSTR(s, ret),
                    ORN_TSTR(s, t));
            ORN_NOTE_AT(s, s->fn->sym->span, "'%s' is declared here", fname);
        }
    } else if (ret->kind != T_VOID && ret->kind != T_ERROR) {
        ORN_ERR(s, orn_sema_prefix(s, n->span, "return"),
                "'return' needs a value: fn '%s' "
                "returns %s",
                fname, ORN_TSTR(s, ret));
    }
}

/* True if control cannot fall off the end of `list` (a return, exit(), an if whose every
 * branch ends so, or `while true` with no break). Conservative, as C compilers are. */
static bool ends(const OrnNode *list);

static const OrnNode *list_of(const OrnNode *blk)
{
    return blk && blk->kind == N_BLOCK ? blk->u.block.stmts : blk;
}

static bool has_break(const OrnNode *list)
{
    for (const OrnNode *n = list; n; n = n->next) {
        if (n->kind == N_BREAK) return true;
        if (n->kind == N_BLOCK && has_break(n->u.block.stmts)) return true;
        if (n->kind == N_IF) {
            if (has_break(list_of(n->u.if_.then))) return true;
            const OrnNode *e = n->u.if_.els;
            if (e && e->kind == N_IF && has_break(e)) return true;
            if (e && e->kind != N_IF && has_break(list_of(e))) return true;
        }
        /* for/while/foreach own the breaks inside them */
    }
    return false;
}

static bool stmt_ends(const OrnNode *n)
{
    switch (n->kind) {
    case N_RETURN:
        return true;
    case N_EXPR:
        return n->u.expr_stmt.e && n->u.expr_stmt.e->kind == N_CALL &&
               n->u.expr_stmt.e->u.call.builtin == ORN_BI_EXIT;
    case N_BLOCK:
        return ends(n->u.block.stmts);
    case N_IF: {
        const OrnNode *e = n->u.if_.els;
        if (!e || !ends(list_of(n->u.if_.then))) return false;
        return e->kind == N_IF ? stmt_ends(e) : ends(list_of(e));
    }
    case N_WHILE: {
        const OrnNode *c = n->u.while_.cond;
        return c && c->kind == N_BOOL && c->u.blit.v && !has_break(list_of(n->u.while_.body));
    }
    default:
        return false;
    }
}

static bool ends(const OrnNode *list)
{
    for (const OrnNode *n = list; n; n = n->next)
        if (stmt_ends(n)) return true;
    return false;
}

static const OrnType *annotation(Sema *s, OrnNode *t, bool report);

static void fn_stmt(Sema *s, OrnNode *n)
{
    if (!at_top(s)) {
        misplaced(s, n, n->u.fn.is_extern ? "extern" : "fn");
        return;
    }
    OrnSemaFn *info = orn_sema_fn_of(s, n->u.fn.sym);
    if (!info) return;
    if (n->u.fn.id) {
        if (info->clash) {
            ORN_ERR(s, n->u.fn.id_span, "'%s' is already declared", n->u.fn.id->s);
            orn_sema_note_decl(s, info->clash);
        } else if (orn_sema_is_typename(n->u.fn.id)) {
            ORN_ERR(s, n->u.fn.id_span, "'%s' is a type name and cannot be redefined",
                    n->u.fn.id->s);
        } else if (orn_sema_builtin_of(n->u.fn.id) >= 0) {
            ORN_ERR(s, n->u.fn.id_span, "'%s' is a built-in function and cannot be redefined",
                    n->u.fn.id->s);
        }
    }
    for (OrnNode *a = n->u.fn.args; a; a = a->next)
        if (a->kind == N_ARG) annotation(s, a->u.arg.type, true);
    if (n->u.fn.ret) annotation(s, n->u.fn.ret, true);
    OrnSemaFn *saved_fn = s->fn;
    int saved_seq = s->seqloops;
    s->fn = info;
    s->seqloops = 0;
    s->depth++;
    orn_sema_push_scope(s);
    int i = 0;
    for (OrnNode *a = n->u.fn.args; a; a = a->next) {
        if (a->kind != N_ARG || !a->u.arg.id) continue;
        const OrnType *t = i < info->nparams ? info->ptypes[i] : orn_sema_terr(s);
        i++;
        bool ok = check_binder(s, a->u.arg.id, a->span);
        OrnSym *sym = new_sym(s, SYM_ARG, a->u.arg.id, t, a->span, a);
        a->u.arg.sym = sym;
        if (ok) bind(s, sym);
    }
    OrnNode *body = n->u.fn.body;
    if (!n->u.fn.is_extern && body) {
        OrnNode *list = body->kind == N_BLOCK ? body->u.block.stmts : body;
        orn_sema_stmts(s, list);
        if (info->ret->kind != T_VOID && info->ret->kind != T_ERROR && !ends(list))
            ORN_ERR(s, n->u.fn.id_span, "missing return: fn '%s' must return %s on every path",
                    info->sym->name->s, ORN_TSTR(s, info->ret));
    }
    orn_sema_pop_scope(s);
    s->depth--;
    s->fn = saved_fn;
    s->seqloops = saved_seq;
}

static void stmt(Sema *s, OrnNode *n)
{
    switch (n->kind) {
    case N_EXPR: {
        OrnNode *e = n->u.expr_stmt.e;
        if (e && misspelled_keyword(s, e)) break;
        if (e && e->kind == N_CALL)
            orn_sema_call(s, e, false);
        else if (e)
            orn_sema_expr(s, e);
        break;
    }
    case N_ASSIGN:
        assign_stmt(s, n);
        break;
    case N_CONST:
        const_stmt(s, n);
        break;
    case N_PARAM:
        param_stmt(s, n);
        break;
    case N_DIST:
        dist_stmt(s, n);
        break;
    case N_IF:
        if_stmt(s, n);
        break;
    case N_FOR:
        for_stmt(s, n);
        break;
    case N_FOREACH:
        foreach_stmt(s, n);
        break;
    case N_WHILE:
        while_stmt(s, n);
        break;
    case N_PARFOR:
        orn_sema_parfor(s, n);
        break;
    case N_BLOCK:
        block(s, n);
        break;
    case N_BREAK:
    case N_CONTINUE: {
        const char *kw = n->kind == N_BREAK ? "break" : "continue";
        if (s->seqloops > 0) break;
        if (s->loop && n->kind == N_CONTINUE) break; /* skips to the next iteration */
        if (s->loop) {
            ORN_ERR(s, orn_sema_prefix(s, n->span, kw),
                    "'break' cannot be used inside "
                    "parallel_for");
            ORN_NOTE(s, "use 'continue' to skip to the next iteration");
        } else {
            ORN_ERR(s, orn_sema_prefix(s, n->span, kw), "'%s' outside a loop", kw);
        }
        break;
    }
    case N_RETURN:
        return_stmt(s, n);
        break;
    case N_FN:
        fn_stmt(s, n);
        break;
    default:
        /* an expression node used as a statement */
        orn_sema_expr(s, n);
        break;
    }
}

void orn_sema_stmts(Sema *s, OrnNode *list)
{
    for (OrnNode *n = list; n; n = n->next) stmt(s, n);
}

/* ---- driver ---------------------------------------------------------------------------- */

/* The type of an annotation; reported (when `report`) if it names no type. */
static const OrnType *annotation(Sema *s, OrnNode *t, bool report)
{
    if (!t || t->kind != N_TYPE || !t->u.type.id) return orn_sema_terr(s);
    OrnTypeKind k = orn_kind_from_name(t->u.type.id->s);
    if (k == T_ERROR && report) {
        static const char *const names[] = {"i32",  "i64", "f32",   "f64",
                                            "bool", "int", "float", "str"};
        ORN_ERR(s, t->span, "unknown type '%s'", t->u.type.id->s);
        Suggest g = {t->u.type.id->s, NULL, 3};
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) consider(&g, names[i]);
        if (g.best)
            ORN_NOTE(s, "did you mean '%s'?", g.best);
        else if (strcmp(t->u.type.id->s, "view") == 0 || strcmp(t->u.type.id->s, "array") == 0 ||
                 strcmp(t->u.type.id->s, "dist") == 0)
            ORN_NOTE(s, "fn parameters and results are scalars or str; pass what selects the "
                        "data instead -- a row index, as in 'fn f(i: i64)' reading 'X[i, :]'");
    }
    t->type = orn_type_scalar(s->ty, k);
    return t->type;
}

/* Declare every top-level fn and extern with its signature. Problems with the signature or
 * the name are reported when the walk reaches the definition, so diagnostics stay in
 * source order. */
static void hoist(Sema *s, OrnNode *prog)
{
    int n = 0;
    for (OrnNode *x = prog; x; x = x->next) n += x->kind == N_FN;
    s->fns = orn_xcalloc((size_t)(n ? n : 1), sizeof *s->fns);
    for (OrnNode *f = prog; f; f = f->next) {
        if (f->kind != N_FN) continue;
        OrnSemaFn *info = &s->fns[s->nfns++];
        info->fn = f;
        int np = 0;
        for (OrnNode *a = f->u.fn.args; a; a = a->next) np += a->kind == N_ARG;
        info->ptypes = orn_arena_alloc(s->u->arena, (size_t)(np ? np : 1) * sizeof *info->ptypes);
        for (OrnNode *a = f->u.fn.args; a; a = a->next)
            if (a->kind == N_ARG)
                info->ptypes[info->nparams++] = annotation(s, a->u.arg.type, false);
        info->ret =
            f->u.fn.ret ? annotation(s, f->u.fn.ret, false) : orn_type_scalar(s->ty, T_VOID);
        const OrnName *id = f->u.fn.id;
        static const OrnName noname = {"?", 1, 0};
        bool ok = id && !orn_sema_is_typename(id) && orn_sema_builtin_of(id) < 0;
        if (ok && (info->clash = orn_sema_lookup(s, id))) ok = false;
        OrnSym *sym = new_sym(s, f->u.fn.is_extern ? SYM_EXTERN : SYM_FN, id ? id : &noname,
                              info->ret, f->u.fn.id_span, f);
        f->u.fn.sym = sym;
        info->sym = sym;
        if (ok) bind(s, sym);
    }
}

/* Every name declared at top level, for "declared later" hints. */
static void prescan(Sema *s, OrnNode *prog)
{
    for (OrnNode *x = prog; x; x = x->next) {
        OrnSemaLater l = {0};
        if (x->kind == N_ASSIGN && x->u.assign.target && x->u.assign.target->kind == N_NAME) {
            l.name = x->u.assign.target->u.name.id;
            l.span = x->u.assign.target->span;
        } else if (x->kind == N_CONST || x->kind == N_PARAM) {
            l.name = x->u.decl.id;
            l.span = x->u.decl.id_span;
        } else if (x->kind == N_DIST) {
            for (OrnNode *nm = x->u.dist.names; nm; nm = nm->next)
                if (nm->kind == N_NAME) {
                    OrnSemaLater m = {nm->u.name.id, nm->span};
                    ORN_VPUSH(s->later, s->nlater, s->caplater, m);
                }
            continue;
        }
        if (l.name) ORN_VPUSH(s->later, s->nlater, s->caplater, l);
    }
}

static void publish(Sema *s)
{
    OrnSema *out = &s->u->sema;
    OrnArena *a = s->u->arena;
    out->nsyms = s->nsyms;
    out->syms = orn_arena_alloc(a, (size_t)(s->nsyms ? s->nsyms : 1) * sizeof *out->syms);
    if (s->nsyms) memcpy(out->syms, s->syms, (size_t)s->nsyms * sizeof *out->syms);
    out->nfns = s->nfns;
    out->fns = orn_arena_alloc(a, (size_t)(s->nfns ? s->nfns : 1) * sizeof *out->fns);
    for (int i = 0; i < s->nfns; i++) out->fns[i] = s->fns[i].fn;
    out->nloops = s->nloops;
    out->loops = orn_arena_alloc(a, (size_t)(s->nloops ? s->nloops : 1) * sizeof *out->loops);
    for (int i = 0; i < s->nloops; i++) out->loops[i] = s->loops[i]->info;
}

static void cleanup(Sema *s)
{
    map_free(&s->map);
    map_free(&s->unknown);
    free(s->binds);
    free(s->scopes);
    free(s->syms);
    for (int i = 0; i < s->nfns; i++) {
        free(s->fns[i].callees);
        free(s->fns[i].bufs);
        free(s->fns[i].reads);
    }
    free(s->fns);
    for (int i = 0; i < s->nloops; i++) {
        OrnSemaLoop *l = s->loops[i];
        free(l->outer);
        free(l->calls);
        free(l->bufs);
        free(l);
    }
    free(s->loops);
    free(s->later);
    free(s->applies);
}

int orn_sema_walk(OrnUnit *u, OrnDiags *d, OrnNode *const *f32decls, int nf32decls, bool probe,
                  OrnNode ***next, int *nnext)
{
    memset(&u->sema, 0, sizeof u->sema);
    Sema s;
    memset(&s, 0, sizeof s);
    s.u = u;
    s.ty = u->types;
    s.d = d;
    s.f32decls = f32decls;
    s.nf32decls = nf32decls;
    s.probe = probe;
    OrnNode *prog = u->program;
    if (prog && prog->kind == N_BLOCK) prog = prog->u.block.stmts;
    orn_sema_push_scope(&s);
    prescan(&s, prog);
    hoist(&s, prog);
    orn_sema_stmts(&s, prog);
    orn_sema_post(&s);
    orn_sema_pop_scope(&s);
    publish(&s);
    int ncands = s.ncands;
    if (next) {
        /* the next f32 set: this run's, and every candidate whose updates all store f32
         * or weak values, at least one f32 */
        int n = 0, cap = 0;
        OrnNode **v = NULL;
        for (int i = 0; i < nf32decls; i++) ORN_VPUSH(v, n, cap, f32decls[i]);
        for (int i = 0; i < s.ncands; i++) {
            const OrnSemaCand *c = &s.cands[i];
            bool in = false;
            for (int j = 0; j < nf32decls && !in; j++) in = f32decls[j] == c->decl;
            if (!in && c->f32 && !c->f64) ORN_VPUSH(v, n, cap, c->decl);
        }
        *next = v;
        *nnext = n;
    }
    free(s.cands);
    cleanup(&s);
    return ncands;
}

bool orn_sema_eval_const(const OrnNode *e, OrnConstVal *out)
{
    return orn_sema_fold(NULL, e, out);
}
