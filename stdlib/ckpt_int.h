/* ckpt_int.h: private to stdlib/ckpt.c (the checkpoint protocol: deciding, writing,
 * directories, manifests, resuming) and stdlib/ckpt_state.c (the program's state in a rank
 * file). docs/runtime.md, section 15. */
#ifndef ORN_STD_CKPT_INT_H
#define ORN_STD_CKPT_INT_H

#include "orn_std.h"

struct OrnStdCkpt {
    const OrnStdState *st;
    uint64_t binary;  /* checksum of the executable (0 when unreadable) */
    int writing;      /* --checkpoint given and the program has safe points */
    int64_t next_seq; /* the next checkpoint's number (replicated) */
    double every;
    double last;      /* rank 0: end of the last checkpoint (or the start) */
    double last_poll; /* rank 0 */
    int64_t stride, countdown;
    /* $ORN_CKPT_SIGNAL=N:SIG (tests): after this run's N-th checkpoint, the last rank
     * sends itself SIG (a kill -9 or a SIGTERM at a known point of the run) */
    int64_t written, signal_after;
    int signal_sig;
    /* the safe point resumed at, from the manifest */
    int64_t res_lo, res_hi, res_i;
    /* strings restored from the checkpoint (variables and params point into them) */
    char **strs;
    int nstrs;
};

/* Checksums: FNV-1a 64 over 8-byte words (native order), then the remaining bytes. A
 * stream hashed in pieces gives the same value when every piece but the last is a
 * multiple of 8 bytes. */
#define ORN_STD_FNV_INIT 14695981039346656037ULL
uint64_t orn_std_ckpt_fnv(uint64_t h, const void *p, size_t n);

/* Record a message (ORN_E_IO) in the DSM context, for an agreement; returns ORN_E_IO. */
int orn_std_ckpt_fail(OrnStdProg *p, const char *fmt, ...) ORN_STD_PRINTF(2, 3);

/* ckpt_state.c. This rank's file of checkpoint `seq`: a header (rank, rank count,
 * program, executable, seq), the program's random stream and loop count, the params, the
 * runtime's and the DSM's state (orn_rt_snap_write), every variable of the OrnStdState,
 * an end mark. put: 0 or non-zero (the stream keeps the cause); get (into a program that
 * has run no statement): 0, or non-zero with a message naming `path` in the DSM context.
 * A param the command line gave must equal the file's; the others take its values. */
int orn_std_ckpt_put_state(OrnStdProg *p, const OrnDsmIo *io, int64_t seq);
int orn_std_ckpt_get_state(OrnStdProg *p, const OrnDsmIo *io, const char *path, int64_t seq);

#endif
