/* lex.re: the lexer (re2c), docs/language.md section 2.
 *
 * The scanner state lives in OrnLexer (lex.h), so lexing is reentrant. The generated
 * matcher uses re2c's "sentinel with bounds checks" mode: the source text is
 * NUL-terminated (OrnSource guarantees text[len] == 0) and a NUL byte only means end of
 * input when the cursor has reached `lim`. A NUL inside the file is an ordinary byte,
 * reported as an invalid character, never an early end of file.
 *
 * Error policy: every lexical error is reported once with a precise span and lexing goes
 * on with a best-effort token (an out-of-range integer is still an integer, an
 * unterminated string is still a string) so the parser reports nothing more about it.
 * Runs of invalid bytes give one error per run. */
#include "lex.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

/* Results of scan() that are not tokens. */
enum { RAW_SKIP = -1, RAW_NEWLINE = -2 };

/* Longest piece of user text quoted back in a lexical error message. */
enum { QUOTE_MAX = 40 };

static OrnSpan span_of(const OrnLexer *lx, const unsigned char *lo, const unsigned char *hi)
{
    return orn_source_span(&lx->u->src, (uint32_t)(lo - lx->base), (uint32_t)(hi - lx->base));
}

static void lex_error(OrnLexer *lx, const unsigned char *lo, const unsigned char *hi,
                      const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void lex_error(OrnLexer *lx, const unsigned char *lo, const unsigned char *hi,
                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    orn_vdiag(&lx->u->diags, ORN_ERROR, span_of(lx, lo, hi), fmt, ap);
    va_end(ap);
}

/* Length to quote of a token of length n, and whether it was cut ("..."). */
static int quote_len(const unsigned char *lo, const unsigned char *hi)
{
    return hi - lo > QUOTE_MAX ? QUOTE_MAX : (int)(hi - lo);
}

static const char *quote_more(const unsigned char *lo, const unsigned char *hi)
{
    return hi - lo > QUOTE_MAX ? "..." : "";
}

static bool is_ident_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           c == '_';
}

/* A number runs into letters, digits or underscores that are not part of it ("12ab",
 * "1_", "1e"): swallow them and report the whole thing once. Returns true if it did. */
static bool bad_suffix(OrnLexer *lx)
{
    if (lx->cur >= lx->lim || !is_ident_char(*lx->cur)) return false;
    while (lx->cur < lx->lim && is_ident_char(*lx->cur)) lx->cur++;
    lx->mar = lx->cur;
    lex_error(lx, lx->tok, lx->cur, "invalid number '%.*s%s'", quote_len(lx->tok, lx->cur),
              (const char *)lx->tok, quote_more(lx->tok, lx->cur));
    return true;
}

static int lex_int(OrnLexer *lx, ORN_PARSE_YYSTYPE *val)
{
    uint64_t v = 0;
    bool over = false;
    for (const unsigned char *p = lx->tok; p < lx->cur; p++) {
        if (*p == '_') continue;
        unsigned d = *p - '0';
        if (v > ((uint64_t)INT64_MAX - d) / 10)
            over = true;
        else
            v = v * 10 + d;
    }
    val->ival = over ? 0 : (int64_t)v;
    /* "5." is not a float (write 5.0); "5.." is the start of a range. */
    if (lx->cur + 1 < lx->lim + 1 && lx->cur[0] == '.' && lx->cur[1] != '.') {
        lx->cur++;
        if (!bad_suffix(lx))
            lex_error(lx, lx->tok, lx->cur,
                      "a float literal needs a digit after '.' (write '%.*s0')",
                      quote_len(lx->tok, lx->cur), (const char *)lx->tok);
        val->fval = (double)v;
        return TK_FLOAT;
    }
    if (bad_suffix(lx)) return TK_INT;
    if (over)
        lex_error(lx, lx->tok, lx->cur,
                  "integer literal is too large for i64 (the largest is %lld)",
                  (long long)INT64_MAX);
    return TK_INT;
}

/* [tok, cur) is a float literal; leading_dot: it was written ".5" (an error). */
static int lex_float(OrnLexer *lx, ORN_PARSE_YYSTYPE *val, bool leading_dot)
{
    OrnBuf b;
    orn_buf_init(&b);
    if (leading_dot) orn_buf_putc(&b, '0');
    for (const unsigned char *p = lx->tok; p < lx->cur; p++)
        if (*p != '_') orn_buf_putc(&b, (char)*p);
    errno = 0;
    double v = strtod(b.data, NULL);
    val->fval = v;
    bool suffix = bad_suffix(lx);
    if (suffix) {
        /* already reported */
    } else if (leading_dot) {
        lex_error(lx, lx->tok, lx->cur, "a float literal needs a digit before '.' (write '%s')",
                  b.len <= QUOTE_MAX ? b.data : "0.5");
    } else if (isinf(v)) {
        lex_error(lx, lx->tok, lx->cur, "float literal is too large for f64");
        val->fval = 0;
    }
    orn_buf_free(&b);
    return TK_FLOAT;
}

static int lex_annot(OrnLexer *lx)
{
    size_t n = (size_t)(lx->cur - lx->tok);
    if (n == 8 && memcmp(lx->tok, "@ordered", 8) == 0) return TK_ORDERED;
    if (n == 4 && memcmp(lx->tok, "@gpu", 4) == 0) return TK_GPU;
    lex_error(lx, lx->tok, lx->cur, "unknown annotation '%.*s%s' (expected '@ordered' or '@gpu')",
              quote_len(lx->tok, lx->cur), (const char *)lx->tok, quote_more(lx->tok, lx->cur));
    return RAW_SKIP;
}

/* A string literal; lx->cur is just past the opening quote. Strings are one line; the
 * escapes are \n \t \" \\. The decoded bytes go to the arena, NUL-terminated. */
static int lex_string(OrnLexer *lx, ORN_PARSE_YYSTYPE *val)
{
    OrnBuf b;
    orn_buf_init(&b);
    for (;;) {
        const unsigned char *p = lx->cur;
        if (p >= lx->lim || *p == '\n') {
            /* Point at the opening quote and underline the rest of the line, without the
             * '\r' of a CRLF line end. */
            const unsigned char *end = p;
            if (end > lx->tok + 1 && end[-1] == '\r') end--;
            lex_error(lx, lx->tok, end, "unterminated string literal (missing '\"' before the %s)",
                      p >= lx->lim ? "end of file" : "end of the line");
            break;
        }
        if (*p == '"') {
            lx->cur++;
            break;
        }
        if (*p == '\\') {
            if (p + 1 >= lx->lim || p[1] == '\n') {
                lx->cur++; /* the loop then reports the unterminated string */
                continue;
            }
            unsigned char e = p[1];
            lx->cur += 2;
            switch (e) {
            case 'n': orn_buf_putc(&b, '\n'); break;
            case 't': orn_buf_putc(&b, '\t'); break;
            case '"': orn_buf_putc(&b, '"'); break;
            case '\\': orn_buf_putc(&b, '\\'); break;
            default:
                if (e > 0x20 && e < 0x7f)
                    lex_error(lx, p, p + 2,
                              "invalid escape sequence '\\%c' (the escapes are \\n \\t \\\" \\\\)",
                              e);
                else
                    lex_error(lx, p, p + 2,
                              "invalid escape sequence: '\\' followed by byte 0x%02x (the "
                              "escapes are \\n \\t \\\" \\\\)",
                              e);
            }
            continue;
        }
        if (*p == 0) {
            /* Strings become C strings: a NUL would silently cut them. One error per run. */
            const unsigned char *q = p;
            while (q < lx->lim && *q == 0) q++;
            lex_error(lx, p, q, "NUL byte in string literal");
            lx->cur = q;
            continue;
        }
        orn_buf_putc(&b, (char)*p);
        lx->cur++;
    }
    val->str.len = b.len;
    val->str.s = orn_arena_strndup(lx->u->arena, b.data ? b.data : "", b.len);
    orn_buf_free(&b);
    lx->mar = lx->cur;
    return TK_STRING;
}

/* Can byte c start a token (or whitespace, a comment)? Bytes that cannot are gathered
 * into one run per error. */
static bool starts_token(unsigned char c)
{
    return is_ident_char(c) || (c != 0 && strchr(" \t\r\n#\"@=!<>+-*/()[],:;.", c) != NULL);
}

static int lex_invalid(OrnLexer *lx)
{
    const unsigned char *lo = lx->tok;
    while (lx->cur < lx->lim && !starts_token(*lx->cur)) lx->cur++;
    lx->mar = lx->cur;
    unsigned char c = *lo;
    if (c >= 0x80)
        lex_error(lx, lo, lx->cur,
                  "non-ASCII byte 0x%02x outside a string or comment (identifiers and operators "
                  "are ASCII)",
                  c);
    else if (c == 0)
        lex_error(lx, lo, lx->cur, "invalid NUL byte in source");
    else if (c < 0x20 || c == 0x7f)
        lex_error(lx, lo, lx->cur, "invalid control character 0x%02x", c);
    else if (c == '@')
        lex_error(lx, lo, lx->cur, "expected an annotation name after '@'");
    else
        lex_error(lx, lo, lx->cur, "invalid character '%c'", c);
    return TK_ORN_PARSE_YYerror;
}

/* One raw token starting at lx->cur (lx->tok is set). */
static int scan(OrnLexer *lx, ORN_PARSE_YYSTYPE *val)
{
    lx->tok = lx->cur;
    /*!re2c
        re2c:define:YYCTYPE = "unsigned char";
        re2c:define:YYCURSOR = "lx->cur";
        re2c:define:YYMARKER = "lx->mar";
        re2c:define:YYLIMIT = "lx->lim";
        re2c:yyfill:enable = 0;
        re2c:eof = 0;
        re2c:indent:top = 1;

        dig = [0-9];
        num = dig+ ("_" dig+)*;
        exp = [eE] [+-]? num;
        id  = [A-Za-z_][A-Za-z0-9_]*;

        $               { return TK_YYEOF; }
        [ \t\r]+        { return RAW_SKIP; }
        "#" [^\n]*      { return RAW_SKIP; }
        "\n"            { return RAW_NEWLINE; }
        ";"             { return TK_SEP; }

        "fn"            { return TK_FN; }
        "end"           { return TK_END; }
        "if"            { return TK_IF; }
        "elif"          { return TK_ELIF; }
        "else"          { return TK_ELSE; }
        "for"           { return TK_FOR; }
        "while"         { return TK_WHILE; }
        "in"            { return TK_IN; }
        "parallel_for"  { return TK_PARALLEL_FOR; }
        "return"        { return TK_RETURN; }
        "break"         { return TK_BREAK; }
        "continue"      { return TK_CONTINUE; }
        "const"         { return TK_CONST; }
        "param"         { return TK_PARAM; }
        "dist"          { return TK_DIST; }
        "extern"        { return TK_EXTERN; }
        "and"           { return TK_AND; }
        "or"            { return TK_OR; }
        "not"           { return TK_NOT; }
        "true"          { return TK_TRUE; }
        "false"         { return TK_FALSE; }
        id              {
            val->name = orn_intern(lx->u->names, (const char *)lx->tok,
                                   (size_t)(lx->cur - lx->tok));
            return TK_IDENT;
        }

        num                         { return lex_int(lx, val); }
        num "." num exp? | num exp  { return lex_float(lx, val, false); }
        "." num exp?                { return lex_float(lx, val, true); }

        "@" id          { return lex_annot(lx); }
        "\""            { return lex_string(lx, val); }

        "=="            { return TK_EQ; }
        "!="            { return TK_NE; }
        "<="            { return TK_LE; }
        ">="            { return TK_GE; }
        "<"             { return TK_LT; }
        ">"             { return TK_GT; }
        "+="            { return TK_PLUSEQ; }
        "-="            { return TK_MINUSEQ; }
        "*="            { return TK_STAREQ; }
        "/="            { return TK_SLASHEQ; }
        "->"            { return TK_ARROW; }
        ".."            { return TK_DOTDOT; }
        "+"             { return TK_PLUS; }
        "-"             { return TK_MINUS; }
        "*"             { return TK_STAR; }
        "/"             { return TK_SLASH; }
        "="             { return TK_ASSIGN; }
        "("             { return TK_LPAREN; }
        ")"             { return TK_RPAREN; }
        "["             { return TK_LBRACK; }
        "]"             { return TK_RBRACK; }
        ","             { return TK_COMMA; }
        ":"             { return TK_COLON; }

        [^]             { return lex_invalid(lx); }
    */
}

void orn_lex_init(OrnLexer *lx, OrnUnit *u)
{
    memset(lx, 0, sizeof *lx);
    lx->u = u;
    lx->base = (const unsigned char *)u->src.text;
    lx->cur = lx->mar = lx->tok = lx->base;
    lx->lim = lx->base + u->src.len;
    lx->stmt_tok = lx->stmt_next = -1;
}

const char *orn_lex_token_text(int tok)
{
    switch (tok) {
    case TK_SEP: return ";";
    case TK_FN: return "fn";
    case TK_IF: return "if";
    case TK_FOR: return "for";
    case TK_WHILE: return "while";
    case TK_PARALLEL_FOR: return "parallel_for";
    case TK_LPAREN: return "(";
    case TK_LBRACK: return "[";
    case TK_END: return "end";
    case TK_ELSE: return "else";
    case TK_ELIF: return "elif";
    default: return "?";
    }
}

const char *orn_lex_closer_text(int tok)
{
    return tok == TK_LPAREN ? ")" : tok == TK_LBRACK ? "]" : "end";
}

/* Tokens after which a newline does not end the statement (section 2). */
static bool continues_line(int t)
{
    switch (t) {
    case TK_PLUS: case TK_MINUS: case TK_STAR: case TK_SLASH:
    case TK_EQ: case TK_NE: case TK_LT: case TK_LE: case TK_GT: case TK_GE:
    case TK_AND: case TK_OR: case TK_NOT: case TK_COMMA: case TK_ASSIGN:
    case TK_PLUSEQ: case TK_MINUSEQ: case TK_STAREQ: case TK_SLASHEQ:
    case TK_ARROW: case TK_DOTDOT: case TK_ORDERED: case TK_GPU:
        return true;
    default:
        return false;
    }
}

/* A keyword that can only start (or continue) a statement cannot be inside brackets: the
 * brackets were left open by mistake. Closing them here lets newlines end statements
 * again, so the parser's error recovery resynchronizes at the next line instead of
 * swallowing the rest of the file. */
static bool closes_brackets(int t)
{
    switch (t) {
    case TK_FN: case TK_END: case TK_IF: case TK_ELIF: case TK_ELSE: case TK_FOR:
    case TK_WHILE: case TK_PARALLEL_FOR: case TK_RETURN: case TK_BREAK: case TK_CONTINUE:
    case TK_CONST: case TK_PARAM: case TK_DIST: case TK_EXTERN: case TK_ORDERED: case TK_GPU:
        return true;
    default:
        return false;
    }
}

/* Keep the bracket stack. */
static void track(OrnLexer *lx, int t, OrnSpan sp)
{
    if (t == TK_LPAREN || t == TK_LBRACK) {
        if (lx->nbrackets >= ORN_LEX_MAX_NEST) {
            orn_diag(&lx->u->diags, ORN_ERROR, sp,
                     "nesting too deep: more than %d levels of brackets", ORN_LEX_MAX_NEST);
            lx->fatal = true;
            return;
        }
        lx->brackets[lx->nbrackets++] = (OrnLexOpen){t, sp};
    } else if (t == TK_RPAREN || t == TK_RBRACK) {
        if (lx->nbrackets > 0) lx->nbrackets--; /* a mismatch is the parser's to report */
    } else if (closes_brackets(t)) {
        lx->nbrackets = 0;
    }
}

/* The statement begins `name (`: remember it if the name looks like a misspelled block
 * keyword (lex.h, opener_kw). */
static void note_opener(OrnLexer *lx)
{
    char w[64];
    OrnSpan sp = lx->stmt_span;
    if (sp.hi - sp.lo >= sizeof w) return;
    memcpy(w, lx->base + sp.lo, sp.hi - sp.lo);
    w[sp.hi - sp.lo] = '\0';
    const char *kw = orn_keyword_like(w);
    if (kw && (!strcmp(kw, "parallel_for") || !strcmp(kw, "for") || !strcmp(kw, "while") ||
               !strcmp(kw, "if") || !strcmp(kw, "fn"))) {
        lx->opener_kw = kw;
        lx->opener_span = sp;
    }
}

/* Bookkeeping for a token about to be returned. */
static int emit(OrnLexer *lx, int t, OrnSpan span)
{
    track(lx, t, span);
    if (lx->fatal) return TK_YYEOF;
    /* After invalid bytes the parser skips to the statement end: let the newline be
     * one even if the bytes followed an operator. */
    lx->cont = t != TK_ORN_PARSE_YYerror && continues_line(t);
    lx->nl = NULL;
    lx->prev_starts = lx->last_starts;
    lx->last_starts = lx->ntokens == 0 || lx->last == TK_SEP || lx->last == TK_ORDERED ||
                      lx->last == TK_GPU;
    if (lx->last_starts && t != TK_SEP) {
        lx->stmt_tok = t;
        lx->stmt_next = -1;
        lx->stmt_span = span;
    } else if (lx->stmt_next < 0 && t != TK_SEP) {
        lx->stmt_next = t;
        if (t == TK_LPAREN && lx->stmt_tok == TK_IDENT) note_opener(lx);
    }
    lx->prev = lx->last;
    lx->last = t;
    lx->prev_span = lx->last_span;
    lx->last_span = span;
    if (t != TK_SEP) lx->real_span = span;
    lx->ntokens++;
    return t;
}

int orn_lex_next(OrnLexer *lx, ORN_PARSE_YYSTYPE *val, OrnSpan *span)
{
    if (lx->has_pending && !lx->fatal) {
        lx->has_pending = false;
        *val = lx->pending_val;
        *span = lx->pending_span;
        return emit(lx, lx->pending, *span);
    }
    for (;;) {
        if (lx->fatal) {
            *span = span_of(lx, lx->lim, lx->lim);
            return TK_YYEOF;
        }
        int t = scan(lx, val);
        if (t == RAW_SKIP) continue;
        if (t == RAW_NEWLINE) {
            if (lx->nbrackets > 0 || lx->cont) {
                lx->nl = lx->tok;
                continue;
            }
            t = TK_SEP;
        }
        if (t == TK_YYEOF) {
            *span = span_of(lx, lx->lim, lx->lim);
            if (!lx->eof_sep && lx->nbrackets == 0 && !lx->cont) {
                lx->eof_sep = true;
                lx->prev = lx->last;
                lx->last = TK_SEP;
                return TK_SEP;
            }
            return TK_YYEOF;
        }
        *span = span_of(lx, lx->tok, lx->cur);
        /* A statement keyword on a new line cannot continue the previous line (only an
         * annotation may be followed by 'parallel_for' on the next line): the line was
         * left open by mistake, an unclosed bracket or a trailing operator. End the
         * statement at that newline, so the error is reported where the line ends and the
         * keyword's statement is parsed normally. */
        if (lx->nl && closes_brackets(t) && lx->last != TK_ORDERED && lx->last != TK_GPU) {
            lx->has_pending = true;
            lx->pending = t;
            lx->pending_val = *val;
            lx->pending_span = *span;
            *span = span_of(lx, lx->nl, lx->nl + 1);
            lx->nbrackets = 0;
            return emit(lx, TK_SEP, *span);
        }
        return emit(lx, t, *span);
    }
}
