/* parse.y: the parser (bison), docs/language.md sections 4 to 8.
 *
 * A pure parser with locations (OrnSpan) and %expect 0: every conflict is resolved by
 * precedence or by the grammar, never tolerated. It builds the AST (ast.h) in the unit's
 * arena. Syntax errors are reported with readable messages (yyreport_syntax_error) and
 * recovered from at the next statement end, as jq does, so one run reports every error.
 *
 * Shapes later passes rely on:
 *  - a statement that is an expression is N_EXPR; assignments are N_ASSIGN whose target
 *    is an N_NAME or an N_INDEX (anything else is a syntax error here);
 *  - call arguments are the positional expressions, then N_KWARG nodes (a positional
 *    argument after a keyword argument is a syntax error here); the callee is a name;
 *  - a subscript list holds expressions and N_SLICE (':');
 *  - parentheses leave no node: the inner expression's span is widened to cover them;
 *  - '-' applied to a literal stays N_UNARY(OP_NEG, literal);
 *  - elif chains are nested N_IF in `els`; `else` is an N_BLOCK; no else: NULL;
 *  - loop variables, foreach key/value, parallel_for keys/value and dist names are N_NAME
 *    nodes (with their own spans); N_CALL.builtin is -1 until sema resolves it;
 *  - parallel_for's span starts at 'parallel_for' (annotations have their own spans) and
 *    it has at most 4 keys; fn, extern, const, param, dist may appear in any block here
 *    (sema enforces "top level only"). */

%code requires {
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ast.h"
#include "source.h"

typedef struct OrnParser OrnParser;
/* A list being built: O(1) append. */
typedef struct OrnParseList { OrnNode *head, *tail; } OrnParseList;
typedef struct OrnParseArgs {
    OrnParseList list;
    bool kw;          /* a keyword argument has been seen */
    OrnSpan kw_span;  /* the first one */
} OrnParseArgs;
typedef struct OrnParseKeys { OrnParseList list; int n; bool paren; } OrnParseKeys;
typedef struct OrnParseAnnots { bool ordered, gpu; OrnSpan ordered_span, gpu_span; } OrnParseAnnots;
}

%code {
#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "lex.h"
#include "types.h"
#include "strbuf.h"
#include "unit.h"

struct OrnParser {
    OrnUnit *u;
    OrnLexer lx;
    OrnNode *program;
    /* Blocks open at this point of the parse, innermost last. Pushed when a block's
     * keyword is reduced (fn_kw, if_kw, ...), popped when the block is reduced or when
     * error recovery discards the keyword (%destructor), so it stays exact after errors. */
    OrnLexOpen blocks[ORN_LEX_MAX_NEST];
    int nblocks;
    int errors0;           /* u->diags.errors when parsing started */
    bool quiet_incomplete; /* do not report an error at end of input in an open construct */
    bool incomplete;       /* ... and one happened */
};

/* The bison stack is on the heap and bounded: deep nesting is an error, not a crash. */
#define YYMAXDEPTH 10000
/* The deepest AST (statements and expressions) later recursive passes are given. Blocks
 * nest at most 256 deep (2 levels each), which leaves room for long expressions. */
enum { MAX_TREE_DEPTH = 1500 };

static int yylex(YYSTYPE *val, OrnSpan *loc, OrnParser *p)
{
    return orn_lex_next(&p->lx, val, loc);
}

static void yyerror(const OrnSpan *loc, OrnParser *p, const char *msg);
static OrnSpan lloc_default(const OrnParser *p, const OrnSpan *rhs, int n);
#define YYLLOC_DEFAULT(Cur, Rhs, N) ((Cur) = lloc_default(p, (Rhs), (N)))

static OrnNode *mk(OrnParser *p, OrnNodeKind k, OrnSpan sp)
{
    return orn_node_new(p->u, k, sp);
}

static OrnParseList list1(OrnNode *n)
{
    return (OrnParseList){n, n};
}

static OrnParseList append(OrnParseList l, OrnNode *n)
{
    if (!n) return l;
    if (!l.head) return list1(n);
    l.tail->next = n;
    l.tail = n;
    return l;
}

static OrnNode *mk_name(OrnParser *p, const OrnName *id, OrnSpan sp)
{
    OrnNode *n = mk(p, N_NAME, sp);
    n->u.name.id = id;
    return n;
}

static OrnNode *mk_block(OrnParser *p, OrnParseList l, OrnSpan sp)
{
    OrnNode *n = mk(p, N_BLOCK, sp);
    n->u.block.stmts = l.head;
    return n;
}

static OrnNode *mk_binary(OrnParser *p, OrnOp op, OrnNode *l, OrnNode *r)
{
    OrnNode *n = mk(p, N_BINARY, orn_span_join(l->span, r->span));
    n->u.binary.op = op;
    n->u.binary.l = l;
    n->u.binary.r = r;
    return n;
}

static OrnNode *mk_unary(OrnParser *p, OrnOp op, OrnNode *e, OrnSpan sp)
{
    OrnNode *n = mk(p, N_UNARY, sp);
    n->u.unary.op = op;
    n->u.unary.e = e;
    return n;
}

static OrnNode *mk_assign(OrnParser *p, OrnOp op, OrnNode *target, OrnNode *value, OrnSpan sp)
{
    if (target->kind != N_NAME && target->kind != N_INDEX) {
        orn_diag(&p->u->diags, ORN_ERROR, target->span,
                 "cannot assign to this expression (the target must be a name or a subscript "
                 "such as A[i, j])");
        return NULL;
    }
    OrnNode *n = mk(p, N_ASSIGN, sp);
    n->u.assign.op = op;
    n->u.assign.target = target;
    n->u.assign.value = value;
    return n;
}

static OrnNode *mk_decl(OrnParser *p, OrnNodeKind k, const OrnName *id, OrnSpan id_span,
                        OrnNode *value, OrnSpan sp)
{
    OrnNode *n = mk(p, k, sp);
    n->u.decl.id = id;
    n->u.decl.id_span = id_span;
    n->u.decl.value = value;
    return n;
}

static OrnNode *mk_fn(OrnParser *p, OrnSpan sp, const OrnName *id, OrnSpan id_span,
                      OrnParseList args, OrnNode *ret, OrnNode *body)
{
    OrnNode *n = mk(p, N_FN, sp);
    n->u.fn.id = id;
    n->u.fn.id_span = id_span;
    n->u.fn.args = args.head;
    n->u.fn.ret = ret;
    n->u.fn.body = body;
    return n;
}

static OrnNode *mk_extern(OrnParser *p, OrnSpan sp, const char *lib, const OrnName *id,
                          OrnSpan id_span, OrnParseList args, OrnNode *ret)
{
    OrnNode *n = mk_fn(p, sp, id, id_span, args, ret, NULL);
    n->u.fn.is_extern = true;
    n->u.fn.lib = lib;
    return n;
}

static OrnParseArgs add_arg(OrnParser *p, OrnParseArgs a, OrnNode *arg)
{
    if (arg->kind == N_KWARG) {
        if (!a.kw) a.kw_span = arg->span;
        a.kw = true;
    } else if (a.kw) {
        orn_diag(&p->u->diags, ORN_ERROR, arg->span,
                 "positional argument after a keyword argument");
        orn_diag(&p->u->diags, ORN_NOTE, a.kw_span, "keyword arguments start here");
        return a;
    }
    a.list = append(a.list, arg);
    return a;
}

static OrnParseAnnots add_annot(OrnParser *p, OrnParseAnnots a, bool ordered, OrnSpan sp)
{
    bool *seen = ordered ? &a.ordered : &a.gpu;
    OrnSpan *first = ordered ? &a.ordered_span : &a.gpu_span;
    const char *name = ordered ? "@ordered" : "@gpu";
    if (*seen) {
        orn_diag(&p->u->diags, ORN_ERROR, sp, "duplicate annotation '%s'", name);
        orn_diag(&p->u->diags, ORN_NOTE, *first, "'%s' first given here", name);
        return a;
    }
    *seen = true;
    *first = sp;
    return a;
}

static OrnNode *mk_parfor(OrnParser *p, OrnSpan sp, OrnParseKeys keys, OrnNode *value,
                          OrnNode *space, OrnNode *body)
{
    if (keys.n > 4) {
        OrnNode *fifth = keys.list.head->next->next->next->next;
        orn_diag(&p->u->diags, ORN_ERROR, fifth->span,
                 "parallel_for has %d keys; at most 4 are allowed (arrays have at most 4 "
                 "dimensions)",
                 keys.n);
    }
    OrnNode *n = mk(p, N_PARFOR, sp);
    n->u.parfor.keys = keys.list.head;
    n->u.parfor.keys_paren = keys.paren;
    n->u.parfor.value = value;
    n->u.parfor.space = space;
    n->u.parfor.body = body;
    return n;
}

static bool open_block(OrnParser *p, int tok, OrnSpan sp)
{
    if (p->nblocks >= ORN_LEX_MAX_NEST) {
        orn_diag(&p->u->diags, ORN_ERROR, sp, "nesting too deep: more than %d levels of blocks",
                 ORN_LEX_MAX_NEST);
        p->lx.fatal = true; /* nothing more to say about this input */
        return false;
    }
    p->blocks[p->nblocks++] = (OrnLexOpen){tok, sp};
    return true;
}

static void close_block(OrnParser *p)
{
    if (p->nblocks > 0) p->nblocks--;
}

/* After too many errors nothing more is printed; stop parsing rather than keep
 * recovering through a file that is not Orion at all. */
static bool give_up(const OrnParser *p)
{
    const OrnDiags *d = &p->u->diags;
    return d->max_errors > 0 && d->errors > d->max_errors;
}
}

%define api.pure full
%define api.prefix {orn_parse_yy}
%define api.location.type {OrnSpan}
%define api.token.prefix {TK_}
%define parse.error custom
%define parse.lac full
%locations
%param {OrnParser *p}
%expect 0

%initial-action { @$ = orn_source_span(&p->u->src, 0, 0); }

%union {
    OrnNode *node;
    const OrnName *name;
    int64_t ival;
    double fval;
    struct { const char *s; size_t len; } str;
    OrnOp op;
    OrnParseList list;
    OrnParseArgs args;
    OrnParseKeys keys;
    OrnParseAnnots annots;
    int open;   /* a block keyword: its entry is on p->blocks */
}

%token YYEOF 0 "end of file"
%token <name> IDENT "identifier"
%token <ival> INT "integer literal"
%token <fval> FLOAT "float literal"
%token <str> STRING "string literal"
%token SEP "end of statement"
%token FN "'fn'" END "'end'" IF "'if'" ELIF "'elif'" ELSE "'else'" FOR "'for'"
%token WHILE "'while'" IN "'in'" PARALLEL_FOR "'parallel_for'" RETURN "'return'"
%token BREAK "'break'" CONTINUE "'continue'" CONST "'const'" PARAM "'param'"
%token DIST "'dist'" EXTERN "'extern'" AND "'and'" OR "'or'" NOT "'not'"
%token TRUE "'true'" FALSE "'false'"
%token ORDERED "'@ordered'" GPU "'@gpu'"
%token EQ "'=='" NE "'!='" LT "'<'" LE "'<='" GT "'>'" GE "'>='"
%token PLUS "'+'" MINUS "'-'" STAR "'*'" SLASH "'/'"
%token ASSIGN "'='" PLUSEQ "'+='" MINUSEQ "'-='" STAREQ "'*='" SLASHEQ "'/='"
%token ARROW "'->'" DOTDOT "'..'" LPAREN "'('" RPAREN "')'" LBRACK "'['" RBRACK "']'"
%token COMMA "','" COLON "':'"

/* Lowest first (section 5). Comparisons do not chain. */
%left OR
%left AND
%precedence NOT
%nonassoc EQ NE LT LE GT GE
%left PLUS MINUS
%left STAR SLASH
%precedence UMINUS

%type <node> stmt block_stmt body if_tail parfor type ret_type param expr postfix primary arg
%type <node> sub pf_value
%type <list> stmts params param_list subs id_list
%type <args> args
%type <keys> pf_keys
%type <annots> annots
%type <op> assign_op
%type <open> fn_kw if_kw for_kw while_kw pf_kw

/* A block keyword leaves p->blocks when its block is reduced (see close_block in the
 * actions) or when error recovery throws it away (here). */
%destructor { close_block(p); } <open>

%%

program
    : stmts {
          OrnSpan all = orn_source_span(&p->u->src, 0, (uint32_t)p->u->src.len);
          p->program = mk_block(p, $1, all);
      }
    ;

stmts
    : %empty             { $$ = (OrnParseList){0}; }
    | stmts SEP          { $$ = $1; }
    | stmts stmt SEP     { $$ = append($1, $2); }
    | stmts error SEP    { $$ = $1; yyerrok; if (give_up(p)) YYABORT; }
    ;

body
    : stmts              { $$ = mk_block(p, $1, @1); }
    ;

stmt
    : expr                              { $$ = mk(p, N_EXPR, @$); $$->u.expr_stmt.e = $1; }
    | expr assign_op expr               { $$ = mk_assign(p, $2, $1, $3, @$); }
    | CONST IDENT ASSIGN expr           { $$ = mk_decl(p, N_CONST, $2, @2, $4, @$); }
    | PARAM IDENT ASSIGN expr           { $$ = mk_decl(p, N_PARAM, $2, @2, $4, @$); }
    | DIST IDENT ASSIGN expr            {
          $$ = mk(p, N_DIST, @$);
          $$->u.dist.names = mk_name(p, $2, @2);
          $$->u.dist.value = $4;
      }
    | DIST IDENT COMMA IDENT ASSIGN expr {
          $$ = mk(p, N_DIST, @$);
          $$->u.dist.names = mk_name(p, $2, @2);
          $$->u.dist.names->next = mk_name(p, $4, @4);
          $$->u.dist.value = $6;
      }
    | BREAK                             { $$ = mk(p, N_BREAK, @$); }
    | CONTINUE                          { $$ = mk(p, N_CONTINUE, @$); }
    | RETURN                            { $$ = mk(p, N_RETURN, @$); }
    | RETURN expr                       { $$ = mk(p, N_RETURN, @$); $$->u.ret.value = $2; }
    | EXTERN FN IDENT LPAREN params RPAREN ret_type {
          $$ = mk_extern(p, @$, NULL, $3, @3, $5, $7);
      }
    | EXTERN STRING FN IDENT LPAREN params RPAREN ret_type {
          $$ = mk_extern(p, @$, $2.s, $4, @4, $6, $8);
      }
    | block_stmt
    ;

block_stmt
    : if_kw expr SEP body if_tail END {
          close_block(p);
          (void)$1;
          $$ = mk(p, N_IF, @$);
          $$->u.if_.cond = $2;
          $$->u.if_.then = $4;
          $$->u.if_.els = $5;
      }
    | for_kw IDENT IN expr DOTDOT expr SEP body END {
          close_block(p);
          (void)$1;
          $$ = mk(p, N_FOR, @$);
          $$->u.for_.var = mk_name(p, $2, @2);
          $$->u.for_.lo = $4;
          $$->u.for_.hi = $6;
          $$->u.for_.body = $8;
      }
    | for_kw LPAREN IDENT COMMA IDENT RPAREN IN expr SEP body END {
          close_block(p);
          (void)$1;
          $$ = mk(p, N_FOREACH, @$);
          $$->u.foreach.key = mk_name(p, $3, @3);
          $$->u.foreach.value = mk_name(p, $5, @5);
          $$->u.foreach.iter = $8;
          $$->u.foreach.body = $10;
      }
    | for_kw IDENT COMMA IDENT IN expr SEP body END {
          close_block(p);
          (void)$1;
          $$ = mk(p, N_FOREACH, @$);
          $$->u.foreach.key = mk_name(p, $2, @2);
          $$->u.foreach.value = mk_name(p, $4, @4);
          $$->u.foreach.iter = $6;
          $$->u.foreach.body = $8;
      }
    | while_kw expr SEP body END {
          close_block(p);
          (void)$1;
          $$ = mk(p, N_WHILE, @$);
          $$->u.while_.cond = $2;
          $$->u.while_.body = $4;
      }
    | parfor
    | annots parfor {
          $$ = $2;
          if ($$) {
              $$->u.parfor.ordered = $1.ordered;
              $$->u.parfor.ordered_span = $1.ordered_span;
              $$->u.parfor.gpu = $1.gpu;
              $$->u.parfor.gpu_span = $1.gpu_span;
          }
      }
    | fn_kw IDENT LPAREN params RPAREN ret_type SEP body END {
          close_block(p);
          (void)$1;
          $$ = mk_fn(p, @$, $2, @2, $4, $6, $8);
      }
    /* An error in a block's header: skip to the end of the header line and parse the body,
     * so the block's 'end' still closes it and the body's errors are reported too. */
    | if_kw error SEP { yyerrok; } body if_tail END {
          $$ = NULL;
          close_block(p);
          (void)$1, (void)$5, (void)$6;
      }
    | for_kw error SEP { yyerrok; } body END {
          $$ = NULL;
          close_block(p);
          (void)$1, (void)$5;
      }
    | while_kw error SEP { yyerrok; } body END {
          $$ = NULL;
          close_block(p);
          (void)$1, (void)$5;
      }
    | fn_kw error SEP { yyerrok; } body END {
          $$ = NULL;
          close_block(p);
          (void)$1, (void)$5;
      }
    ;

parfor
    : pf_kw pf_keys pf_value IN expr SEP body END {
          close_block(p);
          (void)$1;
          $$ = mk_parfor(p, @$, $2, $3, $5, $7);
      }
    | pf_kw error SEP { yyerrok; } body END {
          close_block(p);
          (void)$1;
          $$ = NULL;
          (void)$5;
      }
    ;

fn_kw    : FN           { if (!open_block(p, TK_FN, @1)) YYABORT; $$ = 0; } ;
if_kw    : IF           { if (!open_block(p, TK_IF, @1)) YYABORT; $$ = 0; } ;
for_kw   : FOR          { if (!open_block(p, TK_FOR, @1)) YYABORT; $$ = 0; } ;
while_kw : WHILE        { if (!open_block(p, TK_WHILE, @1)) YYABORT; $$ = 0; } ;
pf_kw    : PARALLEL_FOR { if (!open_block(p, TK_PARALLEL_FOR, @1)) YYABORT; $$ = 0; } ;

annots
    : ORDERED         { $$ = add_annot(p, (OrnParseAnnots){0}, true, @1); }
    | GPU             { $$ = add_annot(p, (OrnParseAnnots){0}, false, @1); }
    | annots ORDERED  { $$ = add_annot(p, $1, true, @2); }
    | annots GPU      { $$ = add_annot(p, $1, false, @2); }
    ;

pf_keys
    : IDENT                    { $$ = (OrnParseKeys){list1(mk_name(p, $1, @1)), 1, false}; }
    | LPAREN id_list RPAREN    {
          $$ = (OrnParseKeys){$2, orn_list_len($2.head), true};
      }
    ;

id_list
    : IDENT                    { $$ = list1(mk_name(p, $1, @1)); }
    | id_list COMMA IDENT      { $$ = append($1, mk_name(p, $3, @3)); }
    ;

pf_value
    : %empty                   { $$ = NULL; }
    | COMMA IDENT              { $$ = mk_name(p, $2, @2); }
    ;

if_tail
    : %empty                   { $$ = NULL; }
    | ELSE SEP body            { $$ = $3; }
    | ELIF expr SEP body if_tail {
          $$ = mk(p, N_IF, @$);
          $$->u.if_.cond = $2;
          $$->u.if_.then = $4;
          $$->u.if_.els = $5;
      }
    | ELIF error SEP { yyerrok; } body if_tail { $$ = NULL; (void)$5; (void)$6; }
    ;

params
    : %empty                   { $$ = (OrnParseList){0}; }
    | param_list
    ;

param_list
    : param                    { $$ = list1($1); }
    | param_list COMMA param   { $$ = append($1, $3); }
    ;

param
    : IDENT COLON type {
          $$ = mk(p, N_ARG, @$);
          $$->u.arg.id = $1;
          $$->u.arg.type = $3;
      }
    ;

ret_type
    : %empty                   { $$ = NULL; }
    | ARROW type               { $$ = $2; }
    ;

type
    : IDENT                    { $$ = mk(p, N_TYPE, @$); $$->u.type.id = $1; }
    ;

assign_op
    : ASSIGN   { $$ = OP_NONE; }
    | PLUSEQ   { $$ = OP_ADD; }
    | MINUSEQ  { $$ = OP_SUB; }
    | STAREQ   { $$ = OP_MUL; }
    | SLASHEQ  { $$ = OP_DIV; }
    ;

expr
    : expr OR expr                { $$ = mk_binary(p, OP_OR, $1, $3); }
    | expr AND expr               { $$ = mk_binary(p, OP_AND, $1, $3); }
    | NOT expr                    { $$ = mk_unary(p, OP_NOT, $2, @$); }
    | expr EQ expr                { $$ = mk_binary(p, OP_EQ, $1, $3); }
    | expr NE expr                { $$ = mk_binary(p, OP_NE, $1, $3); }
    | expr LT expr                { $$ = mk_binary(p, OP_LT, $1, $3); }
    | expr LE expr                { $$ = mk_binary(p, OP_LE, $1, $3); }
    | expr GT expr                { $$ = mk_binary(p, OP_GT, $1, $3); }
    | expr GE expr                { $$ = mk_binary(p, OP_GE, $1, $3); }
    | expr PLUS expr              { $$ = mk_binary(p, OP_ADD, $1, $3); }
    | expr MINUS expr             { $$ = mk_binary(p, OP_SUB, $1, $3); }
    | expr STAR expr              { $$ = mk_binary(p, OP_MUL, $1, $3); }
    | expr SLASH expr             { $$ = mk_binary(p, OP_DIV, $1, $3); }
    | MINUS expr %prec UMINUS     { $$ = mk_unary(p, OP_NEG, $2, @$); }
    | postfix
    ;

postfix
    : primary
    | postfix LBRACK subs RBRACK {
          $$ = mk(p, N_INDEX, @$);
          $$->u.index.base = $1;
          $$->u.index.subs = $3.head;
      }
    ;

primary
    : IDENT                       { $$ = mk_name(p, $1, @1); }
    | IDENT LPAREN RPAREN {
          $$ = mk(p, N_CALL, @$);
          $$->u.call.id = $1;
          $$->u.call.id_span = @1;
          $$->u.call.builtin = -1;
      }
    | IDENT LPAREN args RPAREN {
          $$ = mk(p, N_CALL, @$);
          $$->u.call.id = $1;
          $$->u.call.id_span = @1;
          $$->u.call.args = $3.list.head;
          $$->u.call.builtin = -1;
      }
    | INT                         { $$ = mk(p, N_INT, @$); $$->u.ilit.v = $1; }
    | FLOAT                       { $$ = mk(p, N_FLOAT, @$); $$->u.flit.v = $1; }
    | STRING {
          $$ = mk(p, N_STR, @$);
          $$->u.slit.s = $1.s;
          $$->u.slit.len = $1.len;
      }
    | TRUE                        { $$ = mk(p, N_BOOL, @$); $$->u.blit.v = true; }
    | FALSE                       { $$ = mk(p, N_BOOL, @$); $$->u.blit.v = false; }
    | LPAREN expr RPAREN          { $$ = $2; $$->span = @$; }
    ;

args
    : arg                         { $$ = add_arg(p, (OrnParseArgs){0}, $1); }
    | args COMMA arg              { $$ = add_arg(p, $1, $3); }
    ;

arg
    : expr
    | IDENT ASSIGN expr {
          $$ = mk(p, N_KWARG, @$);
          $$->u.kwarg.id = $1;
          $$->u.kwarg.id_span = @1;
          $$->u.kwarg.value = $3;
      }
    ;

subs
    : sub                         { $$ = list1($1); }
    | subs COMMA sub              { $$ = append($1, $3); }
    ;

sub
    : expr
    | COLON                       { $$ = mk(p, N_SLICE, @$); }
    ;

%%

/* The location of a rule: from the first to the last right-hand symbol that covers any
 * text (an empty rule such as `annots` or `stmts` would otherwise drag the start back to
 * the previous line). A rule that covers nothing is an empty span where it would be. */
static OrnSpan lloc_default(const OrnParser *p, const OrnSpan *rhs, int n)
{
    int first = 0, last = 0;
    for (int i = 1; i <= n; i++) {
        if (rhs[i].hi > rhs[i].lo) {
            if (!first) first = i;
            last = i;
        }
    }
    if (!first) {
        uint32_t at = rhs[n].hi;
        return orn_source_span(&p->u->src, at, at);
    }
    return orn_span_join(rhs[first], rhs[last]);
}

static void yyerror(const OrnSpan *loc, OrnParser *p, const char *msg)
{
    if (p->lx.fatal) return;
    /* With parse.error custom, bison only calls yyerror when its stack is full. */
    if (strcmp(msg, "memory exhausted") == 0)
        orn_diag(&p->u->diags, ORN_ERROR, *loc, "nesting too deep: the expression or block "
                 "structure here is nested too deeply to parse");
    else
        orn_diag(&p->u->diags, ORN_ERROR, *loc, "%s", msg);
}

/* ---- syntax error messages ---------------------------------------------------------- */

static bool is_stmt_start(yysymbol_kind_t s)
{
    switch (s) {
    case YYSYMBOL_IF: case YYSYMBOL_FOR: case YYSYMBOL_WHILE: case YYSYMBOL_PARALLEL_FOR:
    case YYSYMBOL_FN: case YYSYMBOL_EXTERN: case YYSYMBOL_CONST: case YYSYMBOL_PARAM:
    case YYSYMBOL_DIST: case YYSYMBOL_RETURN: case YYSYMBOL_BREAK: case YYSYMBOL_CONTINUE:
    case YYSYMBOL_ORDERED: case YYSYMBOL_GPU:
        return true;
    default:
        return false;
    }
}

static bool is_expr_start(yysymbol_kind_t s)
{
    switch (s) {
    case YYSYMBOL_IDENT: case YYSYMBOL_INT: case YYSYMBOL_FLOAT: case YYSYMBOL_STRING:
    case YYSYMBOL_TRUE: case YYSYMBOL_FALSE: case YYSYMBOL_LPAREN: case YYSYMBOL_MINUS:
    case YYSYMBOL_NOT:
        return true;
    default:
        return false;
    }
}

/* Tokens that continue an expression already complete (operators, assignments): listing
 * them all ("expecting '+', '-', '*', ...") says nothing useful, so they are dropped when
 * the list is long. */
static bool is_operator(yysymbol_kind_t s)
{
    switch (s) {
    case YYSYMBOL_PLUS: case YYSYMBOL_MINUS: case YYSYMBOL_STAR: case YYSYMBOL_SLASH:
    case YYSYMBOL_EQ: case YYSYMBOL_NE: case YYSYMBOL_LT: case YYSYMBOL_LE: case YYSYMBOL_GT:
    case YYSYMBOL_GE: case YYSYMBOL_AND: case YYSYMBOL_OR: case YYSYMBOL_LBRACK:
    case YYSYMBOL_LPAREN: case YYSYMBOL_ASSIGN: case YYSYMBOL_PLUSEQ: case YYSYMBOL_MINUSEQ:
    case YYSYMBOL_STAREQ: case YYSYMBOL_SLASHEQ:
        return true;
    default:
        return false;
    }
}

static bool is_keyword(yysymbol_kind_t s)
{
    return s >= YYSYMBOL_FN && s <= YYSYMBOL_FALSE;
}

static bool is_comparison(yysymbol_kind_t s)
{
    return s == YYSYMBOL_EQ || s == YYSYMBOL_NE || s == YYSYMBOL_LT || s == YYSYMBOL_LE ||
           s == YYSYMBOL_GT || s == YYSYMBOL_GE;
}

/* A token's name for messages: bison's alias without the surrounding double quotes. */
static const char *sym_text(yysymbol_kind_t s)
{
    static const char *const names[] = {
        [YYSYMBOL_YYEOF] = "end of file",   [YYSYMBOL_IDENT] = "identifier",
        [YYSYMBOL_INT] = "integer literal", [YYSYMBOL_FLOAT] = "float literal",
        [YYSYMBOL_STRING] = "string literal", [YYSYMBOL_SEP] = "end of statement",
    };
    if ((size_t)s < sizeof names / sizeof names[0] && names[s]) return names[s];
    return NULL;
}

static void put_sym(OrnBuf *b, yysymbol_kind_t s)
{
    const char *t = sym_text(s);
    if (t) {
        orn_buf_puts(b, t);
        return;
    }
    const char *n = yysymbol_name(s);
    size_t len = strlen(n);
    if (len >= 2 && n[0] == '"' && n[len - 1] == '"')
        orn_buf_put(b, n + 1, len - 2);
    else
        orn_buf_puts(b, n);
}

/* The unexpected token as the user wrote it. */
static void put_unexpected(OrnBuf *b, const OrnParser *p, yysymbol_kind_t s, OrnSpan loc)
{
    const char *text = p->u->src.text + loc.lo;
    int len = (int)(loc.hi - loc.lo);
    const char *more = "";
    if (len > 40) len = 40, more = "...";
    switch (s) {
    case YYSYMBOL_IDENT:
        orn_buf_printf(b, "identifier '%.*s%s'", len, text, more);
        return;
    case YYSYMBOL_INT:
    case YYSYMBOL_FLOAT:
        orn_buf_printf(b, "number '%.*s%s'", len, text, more);
        return;
    case YYSYMBOL_SEP:
        if (loc.hi > loc.lo && *text == ';')
            orn_buf_puts(b, "';'");
        else if (loc.hi > loc.lo)
            orn_buf_puts(b, "end of line");
        else
            orn_buf_puts(b, "end of file");
        return;
    default:
        put_sym(b, s);
    }
}

/* "expecting A, B or C", summarizing: statement starters as "statement", expression
 * starters as "expression", and at most 4 alternatives (else nothing). */
static void put_expected(OrnBuf *b, const yysymbol_kind_t *exp, int n)
{
    bool has_stmt = false, has_expr = false;
    for (int i = 0; i < n; i++) {
        if (exp[i] == YYSYMBOL_IF) has_stmt = true;
        if (exp[i] == YYSYMBOL_INT) has_expr = true;
    }
    /* items: a summary word (sym unused), or a token */
    struct { const char *word; yysymbol_kind_t sym; } items[YYNTOKENS + 1];
    yysymbol_kind_t ops[YYNTOKENS];
    int nitems = 0, nops = 0;
    if (has_stmt || has_expr)
        items[nitems++].word = has_stmt ? "statement" : "expression";
    for (int i = 0; i < n; i++) {
        yysymbol_kind_t s = exp[i];
        if (has_stmt && (is_stmt_start(s) || is_expr_start(s) || s == YYSYMBOL_SEP ||
                         s == YYSYMBOL_YYEOF))
            continue;
        if (has_expr && is_expr_start(s)) continue;
        if (is_operator(s)) {
            ops[nops++] = s;
        } else {
            items[nitems].word = NULL;
            items[nitems++].sym = s;
        }
    }
    if (nitems + nops <= 4)
        for (int i = 0; i < nops; i++) {
            items[nitems].word = NULL;
            items[nitems++].sym = ops[i];
        }
    if (nitems == 0 || nitems > 4) return;
    orn_buf_puts(b, ", expecting ");
    for (int i = 0; i < nitems; i++) {
        if (i > 0) orn_buf_puts(b, i == nitems - 1 ? " or " : ", ");
        if (items[i].word)
            orn_buf_puts(b, items[i].word);
        else
            put_sym(b, items[i].sym);
    }
}

/* ---- hints for mistakes people make coming from other languages -------------------- */

/* The source line holding byte `at`: [*lo, *hi). */
static void line_of(const OrnParser *p, uint32_t at, uint32_t *lo, uint32_t *hi)
{
    const char *t = p->u->src.text;
    uint32_t a = at, b = at;
    while (a > 0 && t[a - 1] != '\n') a--;
    while (b < p->u->src.len && t[b] != '\n' && t[b] != '\r') b++;
    *lo = a;
    *hi = b;
}

static const char *skip_ws(const char *s, const char *e)
{
    while (s < e && (*s == ' ' || *s == '\t')) s++;
    return s;
}

/* A word (name) at s: its end, or s when none. */
static const char *word_end(const char *s, const char *e)
{
    while (s < e && (isalnum((unsigned char)*s) || *s == '_')) s++;
    return s;
}

/* `for NAME` then `in` (python) or `=` (julia) at the start of a line: the name's bounds and
 * where the rest begins, or false. */
static bool for_header(const char *s, const char *e, const char **n0, const char **n1,
                       const char **rest, const char *sep)
{
    s = skip_ws(s, e);
    if (e - s < 4 || strncmp(s, "for", 3) || (s[3] != ' ' && s[3] != '\t')) return false;
    *n0 = skip_ws(s + 3, e);
    *n1 = word_end(*n0, e);
    if (*n1 == *n0) return false;
    s = skip_ws(*n1, e);
    size_t k = strlen(sep);
    if ((size_t)(e - s) < k || strncmp(s, sep, k)) return false;
    *rest = skip_ws(s + k, e);
    return true;
}

/* Python's `for i in range(a[, b]):` on this line: the Orion form, else a general hint. */
static void hint_python_for(OrnParser *p, OrnSpan loc)
{
    uint32_t lo, hi;
    line_of(p, loc.lo, &lo, &hi);
    const char *s = p->u->src.text + lo, *e = p->u->src.text + hi, *n0, *n1, *r;
    if (for_header(s, e, &n0, &n1, &r, "in") && e - r > 6 && !strncmp(r, "range(", 6)) {
        const char *a = r + 6, *c = NULL, *z = a;
        int depth = 0;
        for (; z < e && (depth > 0 || *z != ')'); z++) {
            if (*z == '(' || *z == '[') depth++;
            if (*z == ')' || *z == ']') depth--;
            if (*z == ',' && depth == 0) {
                if (c) return; /* a step: no Orion form */
                c = z;
            }
        }
        if (z < e) {
            int ln = (int)(n1 - n0);
            if (c)
                orn_note_plain(&p->u->diags,
                               "Orion writes this loop 'for %.*s in %.*s..%.*s', with no ':' "
                               "(lo..hi excludes hi, as range does), and ends it with 'end'",
                               ln, n0, (int)(c - a), a, (int)(z - skip_ws(c + 1, z)),
                               skip_ws(c + 1, z));
            else
                orn_note_plain(&p->u->diags,
                               "Orion writes this loop 'for %.*s in 0..%.*s', with no ':' (lo..hi "
                               "excludes hi, as range does), and ends it with 'end'",
                               ln, n0, (int)(z - a), a);
            return;
        }
    }
    orn_note_plain(&p->u->diags, "Orion blocks have no ':': the block ends with 'end'");
}

/* Julia's `for i = a:b` on this line: the Orion form. */
static void hint_julia_for(OrnParser *p, OrnSpan loc)
{
    uint32_t lo, hi;
    line_of(p, loc.lo, &lo, &hi);
    const char *s = p->u->src.text + lo, *e = p->u->src.text + hi, *n0, *n1, *r;
    if (!for_header(s, e, &n0, &n1, &r, "=")) return;
    const char *colon = memchr(r, ':', (size_t)(e - r));
    int ln = (int)(n1 - n0);
    if (!colon) {
        orn_note_plain(&p->u->diags, "Orion writes a counted loop 'for %.*s in lo..hi'", ln, n0);
        return;
    }
    const char *b = skip_ws(colon + 1, e), *be = b;
    while (be < e && *be != '#') be++;
    while (be > b && (be[-1] == ' ' || be[-1] == '\t')) be--;
    const char *ae = colon;
    while (ae > r && (ae[-1] == ' ' || ae[-1] == '\t')) ae--;
    char *end;
    long long v = strtoll(b, &end, 10);
    if (end == be && be > b && v < LLONG_MAX)
        orn_note_plain(&p->u->diags,
                       "Orion writes this loop 'for %.*s in %.*s..%lld' (Julia's %.*s:%.*s includes "
                       "%.*s; Orion's lo..hi excludes hi)",
                       ln, n0, (int)(ae - r), r, v + 1, (int)(ae - r), r, (int)(be - b), b,
                       (int)(be - b), b);
    else
        orn_note_plain(&p->u->diags,
                       "Orion writes this loop 'for %.*s in %.*s..%.*s + 1' (Julia's a:b includes "
                       "b; Orion's lo..hi excludes hi)",
                       ln, n0, (int)(ae - r), r, (int)(be - b), b);
}

/* The name at `w`, which begins a statement with a syntax error, if it looks like a
 * misspelled keyword: reported as such (true). The block the keyword would have opened is
 * opened, marked misspelled, so that its 'end' (and an if's 'else') close it quietly. */
static bool misspelled_keyword(OrnParser *p, OrnSpan w)
{
    char word[64];
    if (w.hi - w.lo >= sizeof word) return false;
    memcpy(word, p->u->src.text + w.lo, w.hi - w.lo);
    word[w.hi - w.lo] = 0;
    const char *kw = orn_keyword_like(word);
    if (!kw) return false;
    orn_diag(&p->u->diags, ORN_ERROR, w, "unknown statement '%s': did you mean '%s'?", word, kw);
    static const struct {
        const char *kw;
        int tok;
    } opens[] = {{"parallel_for", TK_PARALLEL_FOR},
                 {"for", TK_FOR},
                 {"while", TK_WHILE},
                 {"if", TK_IF},
                 {"fn", TK_FN}};
    for (size_t i = 0; i < sizeof opens / sizeof opens[0]; i++)
        if (!strcmp(kw, opens[i].kw) && p->nblocks < ORN_LEX_MAX_NEST)
            p->blocks[p->nblocks++] = (OrnLexOpen){-opens[i].tok, w};
    return true;
}

static int yyreport_syntax_error(const yypcontext_t *ctx, OrnParser *p)
{
    OrnDiags *d = &p->u->diags;
    if (p->lx.fatal) return 0; /* the lexer stopped the input: already reported */
    yysymbol_kind_t la = yypcontext_token(ctx);
    OrnSpan loc = *yypcontext_location(ctx);
    yysymbol_kind_t exp[YYNTOKENS];
    int n = yypcontext_expected_tokens(ctx, exp, YYNTOKENS);
    if (n < 0) n = 0;
    bool expects_ident = false, expects_expr = false, expects_plus = false, expects_la = false;
    bool expects_eq = false, expects_in = false, expects_dotdot = false;
    for (int i = 0; i < n; i++) {
        expects_ident |= exp[i] == YYSYMBOL_IDENT;
        expects_expr |= exp[i] == YYSYMBOL_INT;
        expects_plus |= exp[i] == YYSYMBOL_PLUS;
        expects_la |= exp[i] == la;
        expects_eq |= exp[i] == YYSYMBOL_EQ;
        expects_in |= exp[i] == YYSYMBOL_IN;
        expects_dotdot |= exp[i] == YYSYMBOL_DOTDOT;
    }
    const OrnLexOpen *top = p->nblocks > 0 ? &p->blocks[p->nblocks - 1] : NULL;
    /* The rest of a block whose keyword was misspelled (below): its 'end' closes it, and
     * its 'else' belongs to it, without further messages. */
    if (top && top->tok < 0) {
        if (la == YYSYMBOL_END) {
            close_block(p);
            return 0;
        }
        if ((la == YYSYMBOL_ELSE || la == YYSYMBOL_ELIF) && top->tok == -TK_IF) return 0;
    }
    /* A misspelled statement keyword: a name that begins a statement, followed by a name. */
    if (p->lx.prev == TK_IDENT && p->lx.prev_starts && la == YYSYMBOL_IDENT &&
        misspelled_keyword(p, p->lx.prev_span))
        return 0;
    /* The same after something other than a name: `parallel_fro (u, i), r in R` reads as a
     * call until the ','. The error lies in a statement that began with such a name and is
     * no assignment (`fr = ...` may well be a variable). */
    int nx = p->lx.stmt_next;
    if (p->lx.stmt_tok == TK_IDENT && !p->lx.last_starts && nx >= 0 && nx != TK_ASSIGN &&
        nx != TK_PLUSEQ && nx != TK_MINUSEQ && nx != TK_STAREQ && nx != TK_SLASHEQ &&
        nx != TK_LBRACK && misspelled_keyword(p, p->lx.stmt_span))
        return 0;
    if (la == YYSYMBOL_ASSIGN && expects_eq && !expects_la) {
        orn_diag(d, ORN_ERROR, loc, "'=' assigns; to compare, write '=='");
        return 0;
    }
    if (la == YYSYMBOL_ASSIGN && expects_in && p->lx.prev == TK_IDENT) {
        orn_diag(d, ORN_ERROR, loc, "unexpected '=' in a 'for' loop, expecting 'in'");
        hint_julia_for(p, loc);
        return 0;
    }
    /* fn f(a: f64[]): an array or view parameter (the '[' is on the bracket stack already) */
    if (la == YYSYMBOL_LBRACK && p->nblocks > 0 && p->blocks[p->nblocks - 1].tok == TK_FN &&
        p->lx.nbrackets > 1 && p->lx.brackets[p->lx.nbrackets - 2].tok == TK_LPAREN) {
        char t[8] = "";
        size_t tn = p->lx.prev_span.hi - p->lx.prev_span.lo;
        if (tn < sizeof t) memcpy(t, p->u->src.text + p->lx.prev_span.lo, tn), t[tn] = 0;
        if (orn_kind_from_name(t) != T_ERROR) {
            orn_diag(d, ORN_ERROR, loc, "a fn parameter is a scalar or a str, not an array");
            orn_note_plain(&p->u->diags,
                           "pass what selects the data instead -- a row index, as in "
                           "'fn f(i: i64)' reading 'X[i, :]' -- or write the code in the "
                           "loop body");
            return 0;
        }
    }
    if (la == YYSYMBOL_COLON && !expects_la && p->lx.nbrackets > 0 &&
        p->lx.brackets[p->lx.nbrackets - 1].tok == TK_LBRACK) {
        /* `A[2:5]`, `A[i, 1:]`: a Python or Julia range in a subscript */
        orn_diag(d, ORN_ERROR, loc, "a range 'lo:hi' in a subscript is not part of Orion");
        orn_note_plain(&p->u->diags,
                       "a subscript is an index, or ':' alone for a whole row or column "
                       "(A[i, :], A[:, j]); loop over a part: 'for j in lo..hi ... A[i, j] ... end'");
        return 0;
    }
    if (la == YYSYMBOL_COLON && !expects_la) {
        orn_diag(d, ORN_ERROR, loc, "unexpected ':'%s",
                 expects_dotdot ? ", expecting '..'" : " at the end of a statement");
        hint_python_for(p, loc);
        return 0;
    }

    if (la == YYSYMBOL_YYEOF && (p->nblocks > 0 || p->lx.nbrackets > 0 || p->lx.cont)) {
        if (p->quiet_incomplete && d->errors == p->errors0) {
            p->incomplete = true;
            return 0;
        }
        /* Brackets are always inside the innermost block: name the innermost. */
        const OrnLexOpen *o = p->lx.nbrackets > 0 ? &p->lx.brackets[p->lx.nbrackets - 1]
                              : p->nblocks > 0    ? &p->blocks[p->nblocks - 1]
                                                  : NULL;
        if (o) {
            /* at the end of the last line with a token, not on the empty one past it */
            if (p->lx.ntokens > 0 && p->lx.real_span.hi > 0)
                loc = orn_source_span(&p->u->src, p->lx.real_span.hi, p->lx.real_span.hi);
            const char *what = orn_lex_token_text(abs(o->tok));
            orn_diag(d, ORN_ERROR, loc,
                     "unexpected end of file: '%s' opened at %u:%u is not closed (expected '%s')",
                     what, o->span.line, o->span.col, orn_lex_closer_text(abs(o->tok)));
            orn_diag(d, ORN_NOTE, o->span, "'%s' opened here", what);
            return 0;
        }
    }
    if (la == YYSYMBOL_END && p->nblocks == 0) {
        orn_diag(d, ORN_ERROR, loc, "unexpected 'end': there is no open block to close");
        if (p->lx.opener_kw)
            orn_diag(d, ORN_NOTE, p->lx.opener_span, "'%.*s' is not a keyword: did you mean '%s'?",
                     (int)(p->lx.opener_span.hi - p->lx.opener_span.lo),
                     p->u->src.text + p->lx.opener_span.lo, p->lx.opener_kw);
        return 0;
    }
    if ((la == YYSYMBOL_ELSE || la == YYSYMBOL_ELIF) &&
        (p->nblocks == 0 || abs(p->blocks[p->nblocks - 1].tok) != TK_IF)) {
        orn_diag(d, ORN_ERROR, loc, "'%s' without a matching 'if'",
                 la == YYSYMBOL_ELSE ? "else" : "elif");
        return 0;
    }
    if (la == YYSYMBOL_IF && p->lx.prev == TK_ELSE) {
        orn_diag(d, ORN_ERROR, loc, "unexpected 'if' after 'else' (write 'elif')");
        return 0;
    }
    if (is_comparison(la) && expects_plus && !expects_la) {
        orn_diag(d, ORN_ERROR, loc,
                 "comparisons do not chain: write 'a < b and b < c' instead of 'a < b < c'");
        return 0;
    }

    OrnBuf b;
    orn_buf_init(&b);
    orn_buf_puts(&b, "unexpected ");
    put_unexpected(&b, p, la, loc);
    put_expected(&b, exp, n);
    orn_diag(d, ORN_ERROR, loc, "%s", b.data);
    orn_buf_free(&b);
    if (is_keyword(la) && expects_ident && !expects_expr)
        orn_note_plain(d, "'%.*s' is a keyword and cannot be used as a name",
                       (int)(loc.hi - loc.lo), p->u->src.text + loc.lo);
    return 0;
}

/* ---- after parsing: bound the depth of the tree ------------------------------------- */

typedef struct DepthItem {
    const OrnNode *n;
    int depth;
} DepthItem;

typedef struct DepthStack {
    DepthItem *items;
    size_t len, cap;
} DepthStack;

static void depth_push(DepthStack *st, const OrnNode *n, int depth)
{
    if (!n) return;
    if (st->len == st->cap) {
        st->cap = st->cap ? st->cap * 2 : 256;
        st->items = orn_xrealloc(st->items, st->cap * sizeof *st->items);
    }
    st->items[st->len++] = (DepthItem){n, depth};
}

typedef struct DepthChildren {
    DepthStack *st;
    int depth;
} DepthChildren;

static void push_child(const OrnNode *child, void *ud)
{
    DepthChildren *dc = ud;
    depth_push(dc->st, child, dc->depth);
}

/* Later passes recurse over the tree. Left-associative operators let a long line such as
 * 1+1+...+1 build a deep tree from a shallow parser stack, so the depth is checked here,
 * iteratively, before anything recursive sees the tree. */
static bool check_depth(OrnParser *p, const OrnNode *root)
{
    DepthStack st = {0};
    bool ok = true;
    depth_push(&st, root, 1);
    while (st.len > 0) {
        DepthItem it = st.items[--st.len];
        const OrnNode *n = it.n;
        int d = it.depth + 1;
        if (it.depth > MAX_TREE_DEPTH) {
            orn_diag(&p->u->diags, ORN_ERROR, n->span,
                     "nesting too deep: expressions and blocks here nest more than %d levels",
                     MAX_TREE_DEPTH);
            ok = false;
            break;
        }
        DepthChildren dc = {&st, d};
        orn_ast_each_child(n, push_child, &dc);
    }
    free(st.items);
    return ok;
}

OrnParseStatus orn_parse(OrnUnit *u, bool quiet_incomplete)
{
    OrnParser *p = orn_xcalloc(1, sizeof *p); /* the lexer's open stack is a few KiB */
    p->u = u;
    p->quiet_incomplete = quiet_incomplete;
    p->errors0 = u->diags.errors;
    orn_lex_init(&p->lx, u);
    int rc = orn_parse_yyparse(p);
    bool errors = u->diags.errors > p->errors0;
    if (rc == 0 && p->program && !check_depth(p, p->program)) errors = true;
    u->program = p->program ? p->program
                            : mk_block(p, (OrnParseList){0}, orn_source_span(&u->src, 0, 0));
    OrnParseStatus st = ORN_PARSE_OK;
    if (p->incomplete && !errors) {
        st = ORN_PARSE_INCOMPLETE;
    } else if (errors) {
        st = ORN_PARSE_ERROR;
    } else if (rc != 0) {
        orn_ice(&u->diags, orn_source_span(&u->src, 0, 0),
                "the parser stopped without reporting an error");
        st = ORN_PARSE_ERROR;
    }
    free(p);
    return st;
}
