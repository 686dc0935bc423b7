/* lex.h: the lexer's private interface, used by the parser only.
 *
 * The lexer turns u->src into tokens (kinds from the generated parse.h, TK_*) with spans.
 * It owns the newline rules of docs/language.md section 2: a newline is a statement end
 * (TK_SEP) except inside ( ) / [ ] or after a token that cannot end an expression. Before
 * end of input it emits one synthetic TK_SEP (zero-width, at the end), unless the input
 * stops inside brackets or after such a token, so that the parser can say the input is
 * incomplete.
 *
 * It also keeps the stack of open brackets (for the newline rule, the nesting limit, and
 * so that an error at end of input can name the bracket that is not closed and where it
 * opened). Open blocks are tracked by the parser, which knows the program's structure
 * even after errors. */
#ifndef ORN_LEX_H
#define ORN_LEX_H

#include <stdbool.h>

#include "parse.h"
#include "unit.h"

/* Deepest nesting of brackets, and separately of blocks ("nesting too deep"). */
enum { ORN_LEX_MAX_NEST = 256 };

typedef struct OrnLexOpen {
    int tok;      /* TK_LPAREN, TK_LBRACK; in the parser's block stack TK_FN, TK_IF,
                     TK_FOR, TK_WHILE, TK_PARALLEL_FOR */
    OrnSpan span; /* the opening token */
} OrnLexOpen;

typedef struct OrnLexer {
    OrnUnit *u;
    const unsigned char *base, *cur, *mar, *lim, *tok; /* lim: one past the last byte */
    OrnLexOpen brackets[ORN_LEX_MAX_NEST];
    int nbrackets;
    int prev;                      /* the token before the last one returned (for messages) */
    int last;                      /* the last token returned */
    OrnSpan prev_span, last_span;  /* their spans */
    OrnSpan real_span;             /* the last token that is not a statement end */
    bool prev_starts, last_starts; /* whether they began a statement */
    int stmt_tok, stmt_next;       /* the current statement's first and second tokens
                                      (-1: none yet), for the misspelled-keyword hint */
    OrnSpan stmt_span;             /* the first one's span */
    /* The last statement that began `name (` where the name looks like a misspelled block
     * keyword (`whiel (x > 0)` parses as a call): named when an 'end' closes nothing. */
    const char *opener_kw;
    OrnSpan opener_span;
    int ntokens;             /* tokens returned so far */
    bool cont;               /* the last token cannot end an expression: newlines continue it */
    const unsigned char *nl; /* a newline skipped (continued line) since the last token */
    /* A token held back while a statement end is returned before it (see lex.re). */
    bool has_pending;
    int pending;
    ORN_PARSE_YYSTYPE pending_val;
    OrnSpan pending_span;
    bool eof_sep; /* the synthetic end-of-input separator has been returned */
    bool fatal;   /* nesting too deep: reported; the lexer returns only end of input */
} OrnLexer;

void orn_lex_init(OrnLexer *lx, OrnUnit *u);
/* The next token's kind; its value in *val and its span in *span. Lexical errors are
 * reported through u->diags and lexing goes on with a best-effort token; invalid bytes
 * give TK_ORN_PARSE_YYerror (bison's error token), which puts the parser in error
 * recovery without a second message. */
int orn_lex_next(OrnLexer *lx, ORN_PARSE_YYSTYPE *val, OrnSpan *span);
/* How a token is written in messages, without quotes: "fn", "(", "end" ... */
const char *orn_lex_token_text(int tok);
/* The closing token an open construct expects: "end", ")" or "]". */
const char *orn_lex_closer_text(int tok);

#endif
