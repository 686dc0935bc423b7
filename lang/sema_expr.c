/* sema_expr.c: typing of expressions: names, operators, weak floats, subscripts.
 *
 * Every function here sets node->type on the expression it checks and returns it. An
 * operand of type T_ERROR is accepted silently, so one mistake gives one diagnostic. Calls
 * (the built-ins and user fns) are typed in sema_call.c, const folding is in sema_fold.c. */
#include "sema_int.h"

bool orn_sema_is_typename(const OrnName *id)
{
    return id && orn_kind_from_name(id->s) != T_ERROR;
}

const OrnType *orn_sema_terr(Sema *s)
{
    return orn_type_scalar(s->ty, T_ERROR);
}

/* Section 3: a variable (or parameter, or fn result) of type `to` accepts `from` when the
 * types are equal or the conversion is integer->integer, integer->float or float->float. */
bool orn_sema_var_convertible(const OrnType *to, const OrnType *from)
{
    if (orn_sema_is_err(to) || orn_sema_is_err(from) || to == from) return true;
    if (orn_type_is_numeric(to) && orn_type_is_numeric(from))
        return !(orn_type_is_float(from) && orn_type_is_integer(to));
    return false;
}

/* ---- names ---------------------------------------------------------------------------- */

static const char *buffer_target_name(const OrnSym *sym)
{
    const OrnNode *d = sym->decl;
    if (!d || d->kind != N_DIST || !d->u.dist.value || d->u.dist.value->kind != N_CALL) return NULL;
    const OrnNode *a = d->u.dist.value->u.call.args;
    if (!a || a->kind != N_NAME || !a->u.name.id) return NULL;
    return a->u.name.id->s;
}

static const OrnType *name_value(Sema *s, OrnNode *n)
{
    const OrnName *id = n->u.name.id;
    if (!id) return orn_sema_terr(s);
    OrnSym *sym = orn_sema_lookup(s, id);
    if (!sym) {
        if (orn_sema_is_typename(id))
            ORN_ERR(s, n->span, "'%s' is a type, not a value", id->s);
        else if (orn_sema_builtin_of(id) >= 0)
            ORN_ERR(s, n->span, "'%s' is a built-in function; call it as '%s(...)'", id->s, id->s);
        else
            orn_sema_unknown(s, id, n->span, false);
        return orn_sema_terr(s);
    }
    n->u.name.sym = sym;
    switch (sym->kind) {
    case SYM_FN:
    case SYM_EXTERN:
        ORN_ERR(s, n->span, "'%s' is a function; call it as '%s(...)'", id->s, id->s);
        return orn_sema_terr(s);
    case SYM_DIST:
        if (sym->type->kind == T_BUFFER) {
            if (s->loop)
                ORN_ERR(s, n->span, "buffer '%s' cannot be read inside parallel_for", id->s);
            else
                ORN_ERR(s, n->span, "buffer '%s' cannot be read", id->s);
            const char *target = buffer_target_name(sym);
            if (target)
                ORN_NOTE_AT(s, sym->span, "'%s' collects updates to '%s'; read '%s' instead", id->s,
                            target, target);
            else
                orn_sema_note_decl(s, sym);
            return orn_sema_terr(s);
        }
        break;
    default:
        orn_sema_record_read(s, n, sym);
        break;
    }
    return sym->type;
}

/* ---- operators -------------------------------------------------------------------------- */

const OrnType *orn_sema_arith(Sema *s, OrnOp op, const OrnType *l, const OrnType *r, OrnSpan span,
                              OrnSpan lspan, OrnSpan rspan)
{
    if (orn_sema_is_err(l) || orn_sema_is_err(r)) return orn_sema_terr(s);
    if (l->kind == T_STR || r->kind == T_STR) { /* `a + b` on two str joins them */
        if (op == OP_ADD && l->kind == T_STR && r->kind == T_STR) return orn_sema_scalar(s, T_STR);
        bool lstr = l->kind == T_STR;
        const OrnType *bad = op == OP_ADD ? (lstr ? r : l) : (lstr ? l : r);
        ORN_ERR(s, op == OP_ADD ? (lstr ? rspan : lspan) : (lstr ? lspan : rspan),
                "cannot apply '%s' to %s", orn_op_name(op), ORN_TSTR(s, bad));
        if (op == OP_ADD && (orn_type_is_numeric(bad) || bad->kind == T_BOOL))
            ORN_NOTE(s, "'+' joins two str; convert a number first, as in '\"epoch_\" + str(e)'");
        else if (op == OP_ADD)
            ORN_NOTE(s, "'+' joins two str");
        return orn_sema_terr(s);
    }
    bool lv = l->kind == T_VIEW, rv = r->kind == T_VIEW;
    bool lok = lv || orn_type_is_numeric(l), rok = rv || orn_type_is_numeric(r);
    if (lok && rok) {
        OrnTypeKind lk = lv ? l->elem : l->kind, rk = rv ? r->elem : r->kind;
        if (op == OP_DIV && (lk == T_I32 || lk == T_I64) && (rk == T_I32 || rk == T_I64)) {
            ORN_ERR(s, span, "integer division: use div(a, b) or convert an operand to float");
            return orn_sema_terr(s);
        }
        OrnTypeKind k = orn_kind_promote(lk, rk);
        if (lv || rv)
            return orn_type_view(s->ty, k, (lv && l->dist) || (rv && r->dist),
                                 (!lv || l->sparse) && (!rv || r->sparse));
        return orn_sema_scalar(s, k);
    }
    const OrnType *bad = lok ? r : l;
    ORN_ERR(s, lok ? rspan : lspan, "cannot apply '%s' to %s", orn_op_name(op), ORN_TSTR(s, bad));
    if (bad->kind == T_ARRAY)
        ORN_NOTE(s, "arithmetic works on numbers, and element-wise on views such as 'A[:, j]'");
    return orn_sema_terr(s);
}

static void need_bool(Sema *s, OrnNode *e, const char *what)
{
    const OrnType *t = e ? e->type : NULL;
    if (orn_sema_is_err(t) || t->kind == T_BOOL) return;
    ORN_ERR(s, e->span, "'%s' needs bool operands, found %s", what, ORN_TSTR(s, t));
    if (orn_type_is_numeric(t))
        ORN_NOTE(s, "numbers are not truthy: compare explicitly, as in 'x != 0'");
}

static const OrnType *unary(Sema *s, OrnNode *e)
{
    OrnNode *a = e->u.unary.e;
    const OrnType *t = orn_sema_expr(s, a);
    if (orn_sema_is_err(t))
        return e->u.unary.op == OP_NOT ? orn_sema_scalar(s, T_BOOL) : orn_sema_terr(s);
    if (e->u.unary.op == OP_NOT) {
        if (t->kind != T_BOOL) {
            ORN_ERR(s, a->span, "'not' needs a bool, found %s", ORN_TSTR(s, t));
            if (orn_type_is_numeric(t))
                ORN_NOTE(s, "numbers are not truthy: compare explicitly, as in 'x == 0'");
        }
        return orn_sema_scalar(s, T_BOOL);
    }
    if (orn_type_is_numeric(t) || t->kind == T_VIEW) return t;
    ORN_ERR(s, a->span, "cannot apply '-' to %s", ORN_TSTR(s, t));
    return orn_sema_terr(s);
}

/* A weak float (docs/language.md, "f32 arithmetic"): a value fixed for the whole loop that
 * comes from no array element -- a literal, a param or const, inside a parallel_for body a
 * variable of the top-level code around it (at any depth: `s = lr / bs` in an epoch loop),
 * and arithmetic of those. Mixed with f32 it converts to f32. */
static bool weak(const Sema *s, const OrnNode *e)
{
    if (!e || !e->type) return false;
    switch (e->kind) {
    case N_INT:
    case N_FLOAT:
        return true;
    case N_NAME: {
        const OrnSym *y = e->u.name.sym;
        if (!y) return false;
        if (y->kind == SYM_PARAM || y->kind == SYM_CONST) return true;
        if (y == s->selfweak) return true; /* sema_infer.c: x in an update of x */
        return s->loop && (y->kind == SYM_VAR || y->kind == SYM_LOOPVAR) &&
               y->id < s->loop->sym_base;
    }
    case N_UNARY:
        return e->u.unary.op == OP_NEG && weak(s, e->u.unary.e);
    case N_BINARY:
        switch (e->u.binary.op) {
        case OP_ADD:
        case OP_SUB:
        case OP_MUL:
        case OP_DIV:
            return weak(s, e->u.binary.l) && weak(s, e->u.binary.r);
        default:
            return false;
        }
    default:
        return false;
    }
}

bool orn_sema_weak(const Sema *s, const OrnNode *e)
{
    return weak(s, e);
}

static OrnTypeKind num_kind(const OrnType *t)
{
    return t->kind == T_VIEW ? t->elem : t->kind;
}

const OrnType *orn_sema_narrow_update(Sema *s, OrnNode *n, const OrnType *target, const OrnType *vt)
{
    OrnNode *val = n->u.assign.value;
    if (s->probe || n->u.assign.op == OP_NONE || !target || orn_sema_is_err(target) ||
        orn_sema_is_err(vt) || num_kind(target) != T_F32 || vt->kind != T_F64 || !weak(s, val))
        return vt;
    OrnNode *call = orn_node_new(s->u, N_CALL, val->span);
    call->u.call.id = orn_intern_cstr(s->u->names, "f32");
    call->u.call.id_span = val->span;
    call->u.call.builtin = -1;
    call->u.call.args = val;
    val->next = NULL;
    n->u.assign.value = call;
    return orn_sema_expr(s, call);
}

/* f32 op weak f64 -> f32 (and views of f32 with weak scalars stay views of f32). */
static const OrnType *narrow_weak(Sema *s, const OrnType *t, const OrnNode *l, const OrnNode *r)
{
    if (orn_sema_is_err(t) || num_kind(t) != T_F64 || orn_sema_is_err(l->type) ||
        orn_sema_is_err(r->type))
        return t;
    OrnTypeKind lk = num_kind(l->type), rk = num_kind(r->type);
    bool ok =
        (lk == T_F32 && rk == T_F64 && weak(s, r)) || (rk == T_F32 && lk == T_F64 && weak(s, l));
    if (!ok) return t;
    if (t->kind == T_VIEW) return orn_type_view(s->ty, T_F32, t->dist, t->sparse);
    return orn_sema_scalar(s, T_F32);
}

static const OrnType *binary(Sema *s, OrnNode *e)
{
    OrnOp op = e->u.binary.op;
    OrnNode *l = e->u.binary.l, *r = e->u.binary.r;
    const OrnType *lt = orn_sema_expr(s, l), *rt = orn_sema_expr(s, r);
    switch (op) {
    case OP_AND:
    case OP_OR:
        need_bool(s, l, orn_op_name(op));
        if (orn_sema_is_err(lt) || lt->kind == T_BOOL) need_bool(s, r, orn_op_name(op));
        return orn_sema_scalar(s, T_BOOL);
    case OP_EQ:
    case OP_NE:
    case OP_LT:
    case OP_LE:
    case OP_GT:
    case OP_GE:
        if (orn_sema_is_err(lt) || orn_sema_is_err(rt)) return orn_sema_scalar(s, T_BOOL);
        if (orn_type_is_numeric(lt) && orn_type_is_numeric(rt)) return orn_sema_scalar(s, T_BOOL);
        if (lt->kind == T_STR && rt->kind == T_STR)
            return orn_sema_scalar(s, T_BOOL); /* bytewise */
        if (lt->kind == T_BOOL && rt->kind == T_BOOL) {
            if (op == OP_EQ || op == OP_NE) return orn_sema_scalar(s, T_BOOL);
            ORN_ERR(s, e->span, "'%s' needs numbers; bools compare only with '==' and '!='",
                    orn_op_name(op));
            return orn_sema_scalar(s, T_BOOL);
        }
        ORN_ERR(s, e->span, "cannot compare %s with %s", ORN_TSTR(s, lt), ORN_TSTR(s, rt));
        return orn_sema_scalar(s, T_BOOL);
    default: {
        const OrnType *t =
            orn_sema_arith(s, op, lt, rt, e->span, l ? l->span : e->span, r ? r->span : e->span);
        if (t->kind == T_STR) orn_sema_not_in_loop(s, e, "+", false);
        return l && r ? narrow_weak(s, t, l, r) : t;
    }
    }
}

/* ---- subscripts ----------------------------------------------------------------------- */

const OrnType *orn_sema_subscripts(Sema *s, OrnNode *ix, const OrnType *arr, const OrnSym *sym)
{
    int nsubs = 0, nslices = 0;
    OrnNode *slice1 = NULL, *slice2 = NULL;
    for (OrnNode *sub = ix->u.index.subs; sub; sub = sub->next) {
        nsubs++;
        if (sub->kind == N_SLICE) {
            if (++nslices == 1)
                slice1 = sub;
            else if (nslices == 2)
                slice2 = sub;
            continue;
        }
        const OrnType *t = orn_sema_expr(s, sub);
        if (!orn_sema_is_err(t) && !orn_type_is_integer(t))
            ORN_ERR(s, sub->span, "subscript must be an integer, found %s", ORN_TSTR(s, t));
    }
    if (orn_sema_is_err(arr)) return orn_sema_terr(s);
    const char *name = sym ? sym->name->s : "the array";
    if (nsubs != arr->ndims) {
        if (sym)
            ORN_ERR(s, ix->span, "'%s' has %d dimension%s but %d subscript%s given", name,
                    arr->ndims, orn_sema_plural(arr->ndims), nsubs, nsubs == 1 ? " is" : "s are");
        else
            ORN_ERR(s, ix->span, "the array has %d dimension%s but %d subscript%s given",
                    arr->ndims, orn_sema_plural(arr->ndims), nsubs, nsubs == 1 ? " is" : "s are");
        if (sym) orn_sema_note_decl(s, sym);
        return orn_sema_terr(s);
    }
    if (nslices) {
        if (arr->ndims != 2) {
            ORN_ERR(s, slice1->span, "a ':' view needs a 2-D array, but '%s' has %d dimension%s",
                    name, arr->ndims, orn_sema_plural(arr->ndims));
            if (sym) orn_sema_note_decl(s, sym);
            if (arr->ndims == 1)
                ORN_NOTE(s,
                         "a 1-D array is used whole by its name ('sum(%s)', 'dot(%s, %s)'), "
                         "or element by element ('for j in 0..len(%s)' ... '%s[j]')",
                         name, name, name, name, name);
            return orn_sema_terr(s);
        }
        if (slice2) {
            ORN_ERR(s, slice2->span, "a view takes one ':'; the other subscript must be an index");
            return orn_sema_terr(s);
        }
        return orn_type_view(s->ty, arr->elem, arr->dist, arr->sparse);
    }
    return orn_sema_scalar(s, arr->elem);
}

static const OrnType *index_read(Sema *s, OrnNode *e)
{
    OrnNode *b = e->u.index.base;
    const OrnType *bt;
    OrnSym *sym = NULL;
    if (b && b->kind == N_NAME) {
        bt = name_value(s, b);
        b->type = bt;
        sym = b->u.name.sym;
    } else {
        bt = orn_sema_expr(s, b);
    }
    if (!orn_sema_is_err(bt) && bt->kind == T_ARRAY) return orn_sema_subscripts(s, e, bt, sym);
    for (OrnNode *sub = e->u.index.subs; sub; sub = sub->next)
        if (sub->kind != N_SLICE) orn_sema_expr(s, sub);
    if (orn_sema_is_err(bt)) return orn_sema_terr(s);
    if (bt->kind == T_VIEW)
        ORN_ERR(s, b->span, "a view cannot be subscripted; subscript the array, as in 'A[i, j]'");
    else if (sym)
        ORN_ERR(s, b->span, "cannot subscript '%s', which is %s", sym->name->s, ORN_TSTR(s, bt));
    else
        ORN_ERR(s, b->span, "cannot subscript %s", ORN_TSTR(s, bt));
    if (sym && bt->kind != T_VIEW) orn_sema_note_decl(s, sym);
    return orn_sema_terr(s);
}

const OrnType *orn_sema_expr(Sema *s, OrnNode *e)
{
    if (!e) return orn_sema_terr(s);
    const OrnType *t;
    switch (e->kind) {
    case N_INT:
        t = orn_sema_scalar(s, T_I64);
        break;
    case N_FLOAT:
        t = orn_sema_scalar(s, T_F64);
        break;
    case N_STR:
        t = orn_sema_scalar(s, T_STR);
        break;
    case N_BOOL:
        t = orn_sema_scalar(s, T_BOOL);
        break;
    case N_NAME:
        t = name_value(s, e);
        break;
    case N_UNARY:
        t = unary(s, e);
        break;
    case N_BINARY:
        t = binary(s, e);
        break;
    case N_CALL:
        t = orn_sema_call(s, e, true);
        break;
    case N_INDEX:
        t = index_read(s, e);
        break;
    case N_SLICE:
        ORN_ERR(s, e->span, "':' can only be used as a subscript, as in 'A[:, j]'");
        t = orn_sema_terr(s);
        break;
    case N_KWARG:
        ORN_ERR(s, e->span, "a keyword argument can only be given in a call");
        t = orn_sema_terr(s);
        break;
    default:
        orn_ice(s->d, e->span, "sema: %s node where an expression was expected",
                orn_node_kind_name(e->kind));
        t = orn_sema_terr(s);
        break;
    }
    e->type = t;
    return t;
}
