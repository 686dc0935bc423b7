/* params.h: private to stdlib/: the command line of generated programs. */
#ifndef ORN_STD_PARAMS_H
#define ORN_STD_PARAMS_H

#include "orn_std.h"

/* Parse --name=value for each param, and the run-time flags --checkpoint=DIR,
 * --checkpoint-every=SECONDS and --resume=DIR (every rank parses the same argv and reaches
 * the same verdict). Sets p->params, p->given (which params the command line set) and the
 * flags' fields. Returns -1 to go on, or the exit code to leave with (0 after --help, 2
 * after a bad argument); rank 0 has printed what to print. */
int orn_std_parse_params(OrnStdProg *p, int argc, char **argv, const OrnStdParam *params,
                         int nparams);

#endif
