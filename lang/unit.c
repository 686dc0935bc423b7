/* unit.c: a compilation unit's lifetime. Everything a pass allocates for the unit lives in
 * its arena (AST, names, symbols, sema's tables), so freeing the unit is one call and the
 * REPL can make and drop one unit per input without leaking. */
#include "unit.h"

#include <stdlib.h>

OrnUnit *orn_unit_new(const char *path, const char *text, size_t len, FILE *diag_out)
{
    OrnUnit *u = orn_xcalloc(1, sizeof *u);
    u->arena = orn_arena_new();
    u->names = orn_intern_new(u->arena);
    u->types = orn_types_new();
    orn_source_init(&u->src, path, text, len);
    /* diags points at u->src, which does not move: u is on the heap. */
    orn_diags_init(&u->diags, &u->src, diag_out);
    return u;
}

void orn_unit_free(OrnUnit *u)
{
    if (!u) return;
    orn_types_free(u->types);
    orn_intern_free(u->names);
    orn_source_free(&u->src);
    orn_arena_free(u->arena);
    free(u);
}
