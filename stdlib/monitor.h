/* monitor.h: private to stdlib/: log_metric's writer and the progress line, switched on
 * from the command line and the environment (monitor.c). */
#ifndef ORN_STD_MONITOR_H
#define ORN_STD_MONITOR_H

#include "orn_std.h"

/* Collective, after the command line (orn_std_observe; again for each `orion run` piece
 * that has a command line): --logdir=DIR or $ORN_LOGDIR opens log_metric's writer on rank
 * 0, and rank 0 shows the progress line unless --quiet or $ORN_PROGRESS=0 say no (or its
 * output is no terminal). Returns -1 to go on, or 2 when the directory or its files cannot
 * be made (agreed; rank 0 has said why). */
int orn_std_monitor_start(OrnStdProg *p);
/* Rank 0, before output of its own (print, log_metric, the end): wait until every rank is
 * past the last loop, so that a loop that failed on another rank (which is taking the job
 * down) is never followed by output; ends the job naming the rank that does not come. */
void orn_std_settle(OrnStdProg *p);
/* After `loops` loop runs that succeeded here: tell rank 0 (orn_dsm_pass; counted in loops,
 * since rank 0 may run a pair as two runs, for its trace). */
void orn_std_passed(OrnStdProg *p, int loops);
/* Erase and free the progress line. */
void orn_std_monitor_end_progress(OrnStdProg *p);
/* The above, and close the writer (orn_std_finish). */
void orn_std_monitor_end(OrnStdProg *p);

#endif
