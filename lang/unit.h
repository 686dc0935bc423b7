/* unit.h: one compilation unit, the context every front-end pass works in.
 *
 * It owns the arena (AST, names, symbols), the source, the diagnostics and the results of
 * each pass. orn_unit_free releases all of it in one call. */
#ifndef ORN_UNIT_H
#define ORN_UNIT_H

#include <stdbool.h>
#include <stdio.h>

#include "arena.h"
#include "ast.h"
#include "diag.h"
#include "intern.h"
#include "sema.h"
#include "source.h"
#include "types.h"

struct OrnUnit {
    OrnArena *arena;
    OrnInterner *names;
    OrnTypes *types;
    OrnSource src;
    OrnDiags diags;
    OrnNode *program; /* N_BLOCK of top-level statements, after orn_parse */
    OrnSema sema;     /* after orn_sema */
};

/* Takes a copy of text. Diagnostics go to diag_out (NULL: count only). */
OrnUnit *orn_unit_new(const char *path, const char *text, size_t len, FILE *diag_out);
void orn_unit_free(OrnUnit *u);

typedef enum {
    ORN_PARSE_OK,
    ORN_PARSE_ERROR,     /* errors were reported */
    ORN_PARSE_INCOMPLETE /* the only error is an unexpected end of input inside an open
                            construct (for the REPL: read another line) */
} OrnParseStatus;

/* Lex and parse u->src into u->program. In quiet_incomplete mode, an error at end of input
 * inside an unclosed construct is not reported but returned as ORN_PARSE_INCOMPLETE. */
OrnParseStatus orn_parse(OrnUnit *u, bool quiet_incomplete);

#endif
