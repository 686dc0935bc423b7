/* progress.h: a progress line on a terminal, tqdm-style: what runs, the fraction done, the
 * rate and the time left, redrawn in place a few times a second.
 *
 *   load_triplets(ratings.txt):  45%|####5     | 54.0/120.0 MiB [00:02<00:03, 24.1 MiB/s]
 *
 * A task (a load, a parallel_for, a top-level loop) begins, reports how much of it is done,
 * and ends. Tasks nest, up to ORN_PROGRESS_DEPTH: the line shows the outer ones first,
 * separated by " | ". A task appears only once it has run `delay` seconds, so short ones
 * never show; the line is redrawn at most every `interval` seconds, so reporting is cheap
 * (a clock read and a comparison when nothing is drawn); it is erased when the last task
 * ends. Before any other output to the same terminal, orn_progress_clear() erases it; the
 * next report draws it again. It never grows past the terminal's width (a wrapped line
 * cannot be erased with a carriage return).
 *
 * The standard library makes one on rank 0 when its output is a terminal
 * (docs/observability.md); the DSM and the runtime reach it through their context, where it
 * is NULL when off: every function here accepts NULL and does nothing. No globals; one thread
 * reports. */
#ifndef ORN_PROGRESS_H
#define ORN_PROGRESS_H

#include <stdint.h>
#include <stdio.h>

#define ORN_PROGRESS_DEPTH 4

typedef struct OrnProgress OrnProgress;

typedef enum OrnProgressUnit {
    ORN_PROGRESS_ITEMS, /* counts, "it/s" */
    ORN_PROGRESS_BYTES  /* bytes, shown in KiB, MiB, ... */
} OrnProgressUnit;

typedef struct OrnProgressOptions {
    FILE *out;       /* the terminal (flushed after each draw) */
    double delay;    /* seconds a task runs before it shows */
    double interval; /* seconds between redraws, at least */
    int width;       /* columns; 0: the terminal's (TIOCGWINSZ), else 80 */
    /* the clock in seconds (tests); NULL: CLOCK_MONOTONIC */
    double (*clock)(void *ud);
    void *clock_ud;
} OrnProgressOptions;

/* NULL when out of memory. */
OrnProgress *orn_progress_new(const OrnProgressOptions *o);
/* Erases the line. */
void orn_progress_free(OrnProgress *p);

/* A task begins: label (copied; bytes a terminal must not see are escaped), total (in
 * units; 0 or less: not known, then neither fraction nor time left are shown). */
void orn_progress_begin(OrnProgress *p, const char *label, double total, OrnProgressUnit unit);
/* The innermost task's total, once it is known. */
void orn_progress_total(OrnProgress *p, double total);
/* The innermost task starts at `done` (a run resumed in mid-loop): its rate and time left
 * count from there. */
void orn_progress_start_at(OrnProgress *p, double done);
/* The innermost task has done `done` units: draws the line when it is due. */
void orn_progress_update(OrnProgress *p, double done);
/* The innermost task ends: the line is erased when no task is left. */
void orn_progress_end(OrnProgress *p);
/* Erase the line now (before other output); the next update draws it again. */
void orn_progress_clear(OrnProgress *p);
/* Whether the line is on the terminal now (tests). */
int orn_progress_shown(const OrnProgress *p);

#endif
