/* session.h: one `orion` session (docs/repl.md).
 *
 * A session holds the text accepted so far, the state of its top-level variables, params
 * and dist arrays (OrnStdSlots) and the program context of this rank. Running a new piece
 * of text checks it together with the accepted text (parse, sema, analyzer), so every name
 * defined before is known; the C emitter turns the new statements, their loops and the fns
 * into a module (OrnCgOptions.module), which the system compiler builds into a shared
 * object cached by content hash under $XDG_CACHE_HOME/orion (or ~/.cache/orion); the
 * module is loaded with dlopen and run by the same runtime as compiled programs. Rank 0
 * compiles; every rank loads and runs. An error leaves the session as it was, except for
 * what the failing input changed before its run-time error. A piece of simple scalar
 * statements is evaluated over the checked AST instead, with no compile step (eval.h;
 * $ORN_REPL_COMPILE=1 compiles every piece). */
#ifndef ORN_REPL_SESSION_H
#define ORN_REPL_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "orn_std.h"

typedef struct OrnSession OrnSession;

/* declared_layout: store dist arrays as declared (a later input must not change the layout
 * of an array that exists already); off for a whole script run at once. */
OrnSession *orn_session_new(OrnStdProg *p, bool declared_layout);
void orn_session_free(OrnSession *s);

/* Run a complete piece of text from `path`, whose first line is line `line` there
 * (diagnostics and run-time messages name path and line). argc > 0: the params' command
 * line (argv[0] is skipped). Returns 0; 1 after an error (reported); or 100 + an exit
 * code the input asked for (--help, a bad --param). Collective. */
int orn_session_run(OrnSession *s, const char *path, const char *text, size_t len, uint32_t line,
                    int argc, char **argv);

/* Echo on (the REPL's typed pieces) or off (the default; :load and `orion run`): a piece
 * that is one expression statement of a number, bool or str prints its value as print()
 * does, as `orion> A[1, 2]` shows the element. */
void orn_session_set_echo(OrnSession *s, bool on);

/* Whether text ends inside an open construct (read another line). */
bool orn_session_incomplete(const char *text, size_t len);

/* :explain, :type EXPR (typed at `line` of path), :vars (rank 0 prints to out). */
void orn_session_explain(OrnSession *s, FILE *out);
void orn_session_type(OrnSession *s, const char *path, uint32_t line, const char *expr, FILE *out);
void orn_session_vars(OrnSession *s, FILE *out);

#endif
