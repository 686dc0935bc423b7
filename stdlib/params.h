/* params.h: private to stdlib/: the command line of generated programs. */
#ifndef ORN_STD_PARAMS_H
#define ORN_STD_PARAMS_H

#include "orn_std.h"

/* Parse --name=value for each param, and the run-time flags --checkpoint=DIR,
 * --checkpoint-every=SECONDS, --resume=DIR, --timeline=FILE, --logdir=DIR (their values
 * may also be the next argument), --stats and --quiet (every rank parses the same argv and
 * reaches the same verdict). Sets p->params, p->given (which params the command
 * line set) and the flags' fields. Returns -1 to go on, or the exit code to leave with (0 after
 * --help, 2 after a bad argument); rank 0 has printed what to print. */
int orn_std_parse_params(OrnStdProg *p, int argc, char **argv, const OrnStdParam *params,
                         int nparams);
/* Collective, after the command line: the timeline and the per-loop summary, from the flags
 * or else $ORN_TIMELINE and $ORN_STATS (std.c); log_metric's writer and the progress line
 * (monitor.h). Returns -1 to go on, or 2 when the timeline's file or the log directory
 * cannot be written (rank 0 has said so). */
int orn_std_observe(OrnStdProg *p);

#endif
