/* explain.c: the text and JSON reports of the analyzer's plans (see explain.h). */
#include "explain.h"

#include <stdint.h>
#include <string.h>

/* ---- shared helpers ---- */

static void put_range(OrnBuf *b, OrnDepRange r, bool json)
{
    char e[32];
    orn_dep_range_str(r, e, sizeof e);
    if (json && r.lo != r.hi)
        orn_buf_printf(b, "\"%s\"", e);
    else
        orn_buf_puts(b, e);
}

static void put_vec(OrnBuf *b, const OrnDepVec *v, bool json)
{
    orn_buf_putc(b, '[');
    for (int p = 0; p < v->n; p++) {
        if (p) orn_buf_puts(b, ", ");
        put_range(b, v->d[p], json);
    }
    orn_buf_putc(b, ']');
}

/* Source text of a span on its first line (no newline), bytes as they are. */
static void put_span_text(OrnBuf *b, const OrnUnit *u, OrnSpan sp, size_t max, bool json)
{
    const char *t = u->src.text;
    size_t lo = sp.lo, hi = sp.hi;
    if (!t || lo > u->src.len || hi > u->src.len || hi < lo) {
        if (json) orn_buf_puts(b, "\"\"");
        return;
    }
    size_t n = 0;
    while (lo + n < hi && t[lo + n] != '\n' && t[lo + n] != '\r') n++;
    bool cut = n > max;
    if (cut) n = max - 3;
    if (json) {
        OrnBuf tmp;
        orn_buf_init(&tmp);
        orn_buf_put(&tmp, t + lo, n);
        if (cut) orn_buf_puts(&tmp, "...");
        orn_buf_json_str(b, tmp.data, tmp.len);
        orn_buf_free(&tmp);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)t[lo + i];
        orn_buf_putc(b, c < 0x20 || c == 0x7f ? '?' : (char)c);
    }
    if (cut) orn_buf_puts(b, "...");
}

/* ---- text ---- */

/* The source line of the spans (all on line sp[0].line) and one caret line with '^' at the
 * start of each span and '~' under the rest, as diagnostics print them. */
static void put_snippet(OrnBuf *b, const OrnUnit *u, const OrnSpan *sp, int n, const char *indent)
{
    const OrnSource *src = &u->src;
    uint32_t line = sp[0].line;
    if (line == 0 || line > src->nlines) return;
    size_t len;
    const char *text = orn_source_line(src, line, &len);
    size_t start = src->lines[line - 1];
    if (len > 160) len = 160;
    char mark[161];
    memset(mark, ' ', sizeof mark);
    size_t end = 0;
    for (int k = 0; k < n; k++) {
        size_t c0 = sp[k].lo >= start && sp[k].lo <= start + len ? sp[k].lo - start : 0;
        size_t c1 = sp[k].hi > start + c0 ? sp[k].hi - start : c0 + 1;
        if (c1 > len) c1 = len;
        if (c1 <= c0) c1 = c0 + 1;
        if (c0 >= sizeof mark - 1) continue;
        if (c1 > sizeof mark - 1) c1 = sizeof mark - 1;
        for (size_t i = c0 + 1; i < c1; i++)
            if (mark[i] == ' ') mark[i] = '~';
        mark[c0] = '^';
        if (c1 > end) end = c1;
    }
    orn_buf_printf(b, "%s%5u | ", indent, line);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        orn_buf_putc(b, c == '\t' ? '\t' : c < 0x20 || c == 0x7f ? '?' : (char)c);
    }
    orn_buf_printf(b, "\n%s      | ", indent);
    for (size_t i = 0; i < end; i++)
        orn_buf_putc(b, mark[i] == ' ' && i < len && text[i] == '\t' ? '\t' : mark[i]);
    orn_buf_putc(b, '\n');
}

static void put_access(OrnBuf *b, const OrnUnit *u, const OrnAccess *a)
{
    put_span_text(b, u, a->span, 48, false);
    orn_buf_printf(b, " (%s, line %u", orn_access_kind(a), a->span.line);
    if (a->callee)
        orn_buf_printf(b, ", in %s called at line %u", a->callee->u.fn.id->s, a->call_site.line);
    if (a->via_value) orn_buf_puts(b, ", the loop's value variable");
    orn_buf_putc(b, ')');
}

static void put_keys(OrnBuf *b, const OrnLoopPlan *p)
{
    for (int k = 0; k < p->nkeys; k++) orn_buf_printf(b, "%s%s", k ? ", " : "", p->keys[k]);
}

static void put_loop_header(OrnBuf *b, const OrnUnit *u, const OrnLoopPlan *p)
{
    const OrnNode *n = p->loop->node;
    orn_buf_printf(b, "%s:%d: ", u->src.path, p->line);
    if (n->u.parfor.gpu) orn_buf_puts(b, "@gpu ");
    if (p->ordered) orn_buf_puts(b, "@ordered ");
    orn_buf_puts(b, "parallel_for ");
    if (p->nkeys > 1 || n->u.parfor.keys_paren) orn_buf_putc(b, '(');
    put_keys(b, p);
    if (p->nkeys > 1 || n->u.parfor.keys_paren) orn_buf_putc(b, ')');
    if (p->loop->value) orn_buf_printf(b, ", %s", p->loop->value->name->s);
    orn_buf_printf(b, " in %s\n", p->loop->space->name->s);
}

static void put_deps_text(OrnBuf *b, const OrnUnit *u, const OrnLoopPlan *p)
{
    if (!p->ndeps) {
        orn_buf_puts(b, "  dependence vectors: none (no two iterations touch the same element "
                        "with a write)\n");
        return;
    }
    orn_buf_puts(b, "  dependence vectors over (");
    put_keys(b, p);
    orn_buf_printf(b, "), %s:\n",
                   p->ordered ? "from the earlier to the later iteration in key order"
                              : "up to sign (k' - k for two iterations k, k' that conflict)");
    for (int d = 0; d < p->ndeps; d++) {
        const OrnLoopDep *dep = &p->deps[d];
        orn_buf_puts(b, "    ");
        put_vec(b, &dep->v, false);
        orn_buf_puts(b, "  ");
        const OrnAccess *x = &p->acc.v[dep->pairs[0].a], *y = &p->acc.v[dep->pairs[0].b];
        put_access(b, u, x);
        if (x == y)
            orn_buf_puts(b, " in two iterations");
        else {
            orn_buf_puts(b, " against ");
            put_access(b, u, y);
        }
        orn_buf_putc(b, '\n');
        if (y != x && y->span.line == x->span.line) {
            OrnSpan both[2] = {x->span, y->span};
            put_snippet(b, u, both, 2, "      ");
        } else {
            put_snippet(b, u, &x->span, 1, "      ");
            if (y != x) put_snippet(b, u, &y->span, 1, "      ");
        }
        for (int k = 1; k < dep->npairs && k < 4; k++) {
            const OrnAccess *x2 = &p->acc.v[dep->pairs[k].a], *y2 = &p->acc.v[dep->pairs[k].b];
            orn_buf_puts(b, "      also ");
            put_access(b, u, x2);
            if (x2 == y2) {
                orn_buf_puts(b, " in two iterations\n");
                continue;
            }
            orn_buf_puts(b, " against ");
            put_access(b, u, y2);
            orn_buf_putc(b, '\n');
        }
        if (dep->npairs > 4)
            orn_buf_printf(b, "      and %d more pair%s of accesses\n", dep->npairs - 4,
                           dep->npairs == 5 ? "" : "s");
    }
}

static void put_schedule_text(OrnBuf *b, const OrnLoopPlan *p)
{
    const OrnPlanSchedule *s = &p->sched;
    char buf[64];
    orn_buf_printf(b, "  strategy: %s", orn_plan_strategy_name(s->strategy));
    if (s->strategy == ORN_STRAT_UNIMODULAR) {
        orn_buf_puts(b, ", transform [");
        for (int r = 0; r < p->nkeys; r++) {
            orn_buf_puts(b, r ? ", [" : "[");
            for (int c = 0; c < p->nkeys; c++)
                orn_buf_printf(b, "%s%d", c ? ", " : "", s->T.m[r][c]);
            orn_buf_putc(b, ']');
        }
        orn_buf_printf(b, "], then %s", orn_plan_strategy_name(s->inner));
    }
    if (s->ndims > 0) {
        orn_buf_printf(b, ", partition dims [");
        for (int d = 0; d < s->ndims; d++) orn_buf_printf(b, "%s%d", d ? ", " : "", s->dims[d]);
        orn_buf_puts(b, "] (");
        for (int d = 0; d < s->ndims; d++)
            orn_buf_printf(b, "%s%s", d ? ", " : "",
                           orn_plan_dim_name(&p->problem, s, s->dims[d], buf, sizeof buf));
        orn_buf_putc(b, ')');
    }
    if (s->strategy == ORN_STRAT_SERIAL) orn_buf_puts(b, " (one iteration at a time)");
    orn_buf_putc(b, '\n');
    for (int i = 0; i < p->nnotes; i++) {
        const OrnPlanNote *n = &p->notes[i];
        const char *tag = n->kind == ORN_NOTE_STRATEGY      ? "why"
                          : n->kind == ORN_NOTE_REJECTED    ? "not"
                          : n->kind == ORN_NOTE_ALTERNATIVE ? "also"
                                                            : NULL;
        if (tag) orn_buf_printf(b, "    %-4s %s\n", tag, n->text);
    }
}

static void put_arrays_text(OrnBuf *b, const OrnLoopPlan *p)
{
    orn_buf_puts(b, "  arrays:\n");
    for (int k = 0; k < p->narrays; k++) {
        const char *text = NULL;
        for (int i = 0; i < p->nnotes; i++)
            if (p->notes[i].kind == ORN_NOTE_ROLE && p->notes[i].array == k)
                text = p->notes[i].text;
        orn_buf_printf(b, "    %-12s %-12s", p->arrays[k].sym->name->s,
                       orn_plan_role_name(p->arrays[k].role));
        /* the note starts with "name: "; show the rest */
        if (text) {
            size_t nl = strlen(p->arrays[k].sym->name->s);
            if (strncmp(text, p->arrays[k].sym->name->s, nl) == 0 && text[nl] == ':')
                text += nl + 2;
            orn_buf_printf(b, " %s", text);
        }
        orn_buf_putc(b, '\n');
    }
}

/* The storage order the layout pass chose (layout.h), for arrays not stored as declared. */
static void put_layout_text(OrnBuf *b, const OrnPlanSet *plans)
{
    if (!plans->layout.n) return;
    orn_buf_puts(b, "\nlayout: storage order chosen from the accesses (indices in the program do "
                    "not change)\n");
    for (int i = 0; i < plans->layout.n; i++) {
        const OrnLayout *l = &plans->layout.v[i];
        int unit = l->perm[l->ndims - 1];
        orn_buf_printf(b, "  %-12s dimension %d is unit stride (stored as [", l->sym->name->s,
                       unit);
        for (int s = 0; s < l->ndims; s++) orn_buf_printf(b, "%s%d", s ? ", " : "", l->perm[s]);
        orn_buf_puts(b, "] of the declared dimensions); votes");
        for (int d = 0; d < l->ndims; d++)
            orn_buf_printf(b, "%s dimension %d: %d", d ? "," : "", d, l->votes[d]);
        orn_buf_puts(b, " (a ':' slice 4, an inner for loop 2, the innermost key 1)\n");
    }
}

void orn_explain_text(OrnBuf *b, OrnUnit *u, const OrnPlanSet *plans)
{
    if (!plans->nloops) {
        orn_buf_printf(b, "%s: no parallel_for loops\n", u->src.path);
        return;
    }
    for (int i = 0; i < plans->nloops; i++) {
        const OrnLoopPlan *p = &plans->loops[i];
        if (i) orn_buf_putc(b, '\n');
        put_loop_header(b, u, p);
        orn_buf_printf(b, "  %s\n",
                       p->ordered ? "ordered: the result must equal running the iterations "
                                    "in key order"
                                  : "unordered: the result must equal running the iterations "
                                    "in some serial order");
        put_deps_text(b, u, p);
        put_schedule_text(b, p);
        put_arrays_text(b, p);
        bool other = false;
        for (int k = 0; k < p->nnotes; k++) {
            if (p->notes[k].kind != ORN_NOTE_OTHER) continue;
            if (!other) orn_buf_puts(b, "  notes:\n");
            other = true;
            orn_buf_printf(b, "    %s\n", p->notes[k].text);
        }
    }
    put_layout_text(b, plans);
}

/* ---- JSON ---- */

static void json_str(OrnBuf *b, const char *s)
{
    orn_buf_json_str(b, s, strlen(s));
}

static void json_access(OrnBuf *b, const OrnUnit *u, const OrnAccess *a)
{
    orn_buf_puts(b, "{\"array\": ");
    json_str(b, a->array->name->s);
    orn_buf_puts(b, ", \"text\": ");
    put_span_text(b, u, a->span, 64, true);
    orn_buf_printf(b, ", \"access\": \"%s\", \"line\": %u, \"col\": %u",
                   a->buffer_update              ? "update"
                   : a->ref.read && a->ref.write ? "read_write"
                   : a->ref.write                ? "write"
                                                 : "read",
                   a->span.line, a->span.col);
    if (a->callee) {
        orn_buf_puts(b, ", \"function\": ");
        json_str(b, a->callee->u.fn.id->s);
        orn_buf_printf(b, ", \"call_line\": %u", a->call_site.line);
    }
    orn_buf_putc(b, '}');
}

static void json_loop(OrnBuf *b, const OrnUnit *u, const OrnLoopPlan *p)
{
    const OrnPlanSchedule *s = &p->sched;
    orn_buf_printf(b, "    {\n      \"line\": %d,\n      \"iteration_space\": ", p->line);
    json_str(b, p->loop->space->name->s);
    orn_buf_printf(b, ",\n      \"ordered\": %s,\n      \"keys\": [",
                   p->ordered ? "true" : "false");
    for (int k = 0; k < p->nkeys; k++) {
        if (k) orn_buf_puts(b, ", ");
        json_str(b, p->keys[k]);
    }
    orn_buf_puts(b, "],\n      \"dependence_vectors\": [");
    for (int d = 0; d < p->ndeps; d++) {
        if (d) orn_buf_puts(b, ", ");
        put_vec(b, &p->deps[d].v, true);
    }
    orn_buf_printf(b, "],\n      \"strategy\": \"%s\",\n      \"partition_dims\": [",
                   orn_plan_strategy_name(s->strategy));
    for (int d = 0; d < s->ndims; d++) orn_buf_printf(b, "%s%d", d ? ", " : "", s->dims[d]);
    orn_buf_puts(b, "],\n      \"transform\": ");
    if (s->strategy == ORN_STRAT_UNIMODULAR) {
        orn_buf_putc(b, '[');
        for (int r = 0; r < p->nkeys; r++) {
            orn_buf_puts(b, r ? ", [" : "[");
            for (int c = 0; c < p->nkeys; c++)
                orn_buf_printf(b, "%s%d", c ? ", " : "", s->T.m[r][c]);
            orn_buf_putc(b, ']');
        }
        orn_buf_putc(b, ']');
        orn_buf_printf(b, ",\n      \"inner_strategy\": \"%s\"", orn_plan_strategy_name(s->inner));
    } else {
        orn_buf_puts(b, "null");
    }
    orn_buf_puts(b, ",\n      \"arrays\": {");
    for (int k = 0; k < p->narrays; k++) {
        if (k) orn_buf_puts(b, ", ");
        json_str(b, p->arrays[k].sym->name->s);
        orn_buf_printf(b, ": \"%s\"", orn_plan_role_name(p->arrays[k].role));
    }
    orn_buf_puts(b, "},\n      \"accumulators\": [");
    for (int i = 0; i < p->loop->naccums; i++) {
        if (i) orn_buf_puts(b, ", ");
        json_str(b, p->loop->accums[i].sym->name->s);
    }
    orn_buf_printf(b, "],\n      \"blocks_per_rank\": %d,\n      \"notes\": [", p->blocks_per_rank);
    for (int i = 0; i < p->nnotes; i++) {
        orn_buf_puts(b, i ? ",\n        " : "\n        ");
        json_str(b, p->notes[i].text);
    }
    orn_buf_puts(b, p->nnotes ? "\n      ],\n      \"dependences\": ["
                              : "],\n      \"dependences\": [");
    for (int d = 0; d < p->ndeps; d++) {
        const OrnLoopDep *dep = &p->deps[d];
        orn_buf_puts(b, d ? ",\n        {\"vector\": " : "\n        {\"vector\": ");
        put_vec(b, &dep->v, true);
        orn_buf_puts(b, ", \"pairs\": [");
        for (int k = 0; k < dep->npairs; k++) {
            if (k) orn_buf_puts(b, ", ");
            orn_buf_putc(b, '[');
            json_access(b, u, &p->acc.v[dep->pairs[k].a]);
            orn_buf_puts(b, ", ");
            json_access(b, u, &p->acc.v[dep->pairs[k].b]);
            orn_buf_putc(b, ']');
        }
        orn_buf_puts(b, "]}");
    }
    orn_buf_puts(b, p->ndeps ? "\n      ]\n    }" : "]\n    }");
}

void orn_explain_json(OrnBuf *b, OrnUnit *u, const OrnPlanSet *plans)
{
    orn_buf_puts(b, "{\n  \"file\": ");
    json_str(b, u->src.path);
    orn_buf_puts(b, ",\n  \"loops\": [");
    for (int i = 0; i < plans->nloops; i++) {
        orn_buf_puts(b, i ? ",\n" : "\n");
        json_loop(b, u, &plans->loops[i]);
    }
    orn_buf_puts(b, plans->nloops ? "\n  ]\n}\n" : "]\n}\n");
}
