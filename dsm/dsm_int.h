/* dsm_int.h: private to dsm/ (the context's layout and module-internal helpers). */
#ifndef ORN_DSM_INT_H
#define ORN_DSM_INT_H

#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

#include "dsm.h"
#include "live.h"
#include "timeline.h"
#include "transport.h"

enum { ORN_DSM_PASS_RING = 16 }; /* passes told to rank 0 and maybe still in flight */

typedef struct SvcReply {
    struct OrnDsmXfer *x; /* the reply's send (xferq.h) */
    void *buf;
} SvcReply;

struct OrnDsmCtx {
    OrnDsmTransport *tp;
    int rank, size;
    double timeout; /* 0: none (liveness decides, live.h); $ORN_TIMEOUT sets one */
    OrnLive *live;  /* NULL at size 1, or with $ORN_LIVENESS=off */
    int errcode;
    int err_rank;   /* the rank the error is from (orn_dsm_error_rank) */
    char host[256]; /* gethostname (orn_dsm_host) */
    char err[1024];
    /* Registry: arrays by id (ids grow, never reused; freed slots are NULL). */
    OrnDsmArray **reg;
    int nreg, capreg;
    uint64_t gen_clock; /* the last write generation handed out (orn_dsm_touch) */
    int shm_off;        /* shared memory failed once (shm.c): none in this context */
    /* Hosts (shm.c, orn_dsm_hosts_set): each rank's host number (0.. in the order of their
     * first ranks) and how many; the ranks host by host (ascending within one), host h's
     * from host_start[h] to host_start[h + 1]. NULL until set: one host. */
    int *host_of, nhosts;
    int *host_start, *host_members;
    size_t replica_bytes; /* held by this context's node replicas */
    /* On-demand fetch service: replies in flight, re-entrancy guard. */
    SvcReply *svc;
    int nsvc, capsvc;
    int serving;
    /* Bytes posted to and from other ranks, seconds of collectives waiting for every rank
     * (orn_dsm_traffic), and the timeline recorder (timeline.h), NULL when off. */
    int64_t sent, recv;
    double sync;
    int spin; /* waits poll without yielding at first: the host's ranks have a core each
               * (coll.c, orn_dsm_wait_setup) */
    OrnTl *tl;
    struct OrnProgress *progress; /* orn_dsm_set_progress_line; NULL when off */
    /* Need-ordered transfers (xferq.c), NULL until the first; the agreed chunk size. */
    struct XferQ *xq;
    size_t xchunk, xwindow;
    /* Passes (orn_dsm_pass): how many this rank made; rank 0: how many each rank told of
     * (passed[p], NULL until the first); elsewhere: the messages to rank 0 in flight. */
    int64_t passes, *passed;
    struct OrnDsmReq *pass_req[ORN_DSM_PASS_RING];
    int64_t pass_seq[ORN_DSM_PASS_RING];
};

/* ctx.c: like orn_dsm_agree(), but the failure with the smallest `order` wins (ties: the
 * lowest rank), e.g. the smallest line number of a file read in parallel. */
int orn_dsm_agree_at(OrnDsmCtx *ctx, int status, int64_t order);

/* ctx.c: records "<prefix>PATH: <what>: <strerror(err)>", at more than one rank "<prefix>PATH:
 * <what> on host H: ..." (the file may be missing on one node only); returns `code`. */
int orn_dsm_fail_file(OrnDsmCtx *ctx, int code, const char *prefix, const char *path,
                      const char *what, int err);

/* coll.c */
double orn_dsm_now(void);
int orn_dsm_tp_fail(OrnDsmCtx *ctx, int status, const char *what);
/* Wait until poll() leaves *pending at -1 (it is -1 on entry; poll sets it to the index of
 * an entry of peers still pending), serving remote reads and progressing queued transfers
 * between polls, with the context's timeout and the liveness monitor told whom we wait
 * for: the loop of orn_dsm_waitall, for other things to wait on. */
typedef int (*OrnDsmPollFn)(OrnDsmCtx *ctx, void *ud, int *pending);
int orn_dsm_wait_for(OrnDsmCtx *ctx, OrnDsmPollFn poll, void *ud, const int *peers, int n,
                     const char *what);

/* shm.c: this rank's host key: name_hash (of its host name), or its entry of $ORN_HOSTS
 * (host numbers, comma-separated, rank by rank, taken again from the start where shorter
 * than the ranks: the tests' several hosts on one machine; a warning at rank 0 when
 * malformed). orn_dsm_hosts_set: the hosts from every rank's key (gathered: the same on
 * every rank; equal keys, one host). Called by orn_dsm_wait_setup. */
enum { ORN_DSM_HOSTS_MAX = 4096 };
uint64_t orn_dsm_host_key(const OrnDsmCtx *ctx, uint64_t name_hash);
void orn_dsm_hosts_set(OrnDsmCtx *ctx, const uint64_t *keys);

/* coll.c: complete the passes still in flight (the context's end). */
void orn_dsm_pass_free(OrnDsmCtx *ctx);

/* xferq.c: collective, at the context's start: the queue's settings, the chunk size rank
 * 0's ($ORN_XFER_CHUNK, $ORN_XFER_WINDOW). */
int orn_dsm_xfer_init(OrnDsmCtx *ctx);

/* fetch.c: answer waiting remote requests (called from every wait loop). */
int orn_dsm_serve(OrnDsmCtx *ctx);
void orn_dsm_serve_free(OrnDsmCtx *ctx);

/* array.c */
int orn_dsm_array_new(OrnDsmCtx *ctx, OrnDsmType type, int ndim, const int64_t *dims, int sparse,
                      OrnDsmArray **out);
void orn_dsm_tile_box(const OrnDsmArray *a, int64_t t, int64_t *lo, int64_t *hi);
void orn_dsm_tiles_reset(OrnDsmArray *a); /* free storage, set boxes from a->part */
int64_t orn_dsm_box_volume(int ndim, const int64_t *lo, const int64_t *hi);
int orn_dsm_key_cmp(const int64_t *a, const int64_t *b, int ndim);
int orn_dsm_holds(const OrnDsmArray *a, int64_t t);
/* Sort parallel arrays of keys (n*ndim), values and optional tags by key (stable). */
/* orn_dsm_from_elements taking ownership of keys, vals and lines (may be NULL): they are
 * freed (and set to NULL) as soon as the elements are packed for sending, so the loaders'
 * peak memory holds the elements twice, not three times. */
int orn_dsm_from_elements_owned(OrnDsmCtx *ctx, OrnDsmType type, int ndim, const int64_t *dims,
                                int sparse, int64_t n, int64_t **keys, void **vals, int64_t **lines,
                                const char *path, OrnDsmArray **out);
void orn_dsm_sort_elements(int ndim, size_t esize, int64_t n, int64_t *keys, void *vals,
                           int64_t *tags);

/* refine.c: whether every tile of np meets only old tiles of a (sparse) that its own
 * owner holds, decided from the partitions alone (the same answer on every rank); and then
 * the new tiles' storage built from the held old tiles, locally (nt: the new partition's
 * tile table without storage; sorted CSR tiles where the old ones are CSR, listed keys
 * otherwise; counts of tiles held elsewhere are left 0). The old tiles' storage is given
 * back to the system as the new tiles are built: they must not be read afterwards, only
 * freed. */
int orn_dsm_moves_local(const OrnDsmArray *a, const OrnDsmPart *np);
void orn_dsm_move_local(const OrnDsmArray *a, const OrnDsmPart *np, OrnDsmTile *nt);

/* partition.c: balanced boundaries along `dim` for a flat key list (n keys of ndim). */
int orn_dsm_balance_keys(OrnDsmCtx *ctx, int64_t extent, int nb, int64_t *bounds,
                         const int64_t *keys, int64_t n, int ndim, int dim);

/* partition.c: the same from a histogram that `fill` adds the local elements to: an
 * element with coordinate k along `dim` counts in h[k / w]. */
typedef void (*orn_dsm_hist_fn)(int64_t *h, int64_t w, void *ud);
int orn_dsm_balance_with(OrnDsmCtx *ctx, int64_t extent, int nb, int64_t *bounds,
                         orn_dsm_hist_fn fill, void *ud);

/* build.c: parsed records -- nk non-negative coordinates (uint32 while every one fits,
 * else int64) and a value of vsize bytes -- and a sparse array built from them with the
 * default partition (balanced along dimension 0), straight into CSR where it can be. With
 * `expand`, a record (k_0..k_{nk-1}, uint32 count c) stands for the c elements
 * (k_0..k_{nk-1}, j), j = 0..c-1, of value 0 (docword). */
typedef struct OrnDsmRecs {
    int nk, expand;
    size_t vsize;
    size_t cw;  /* bytes per coordinate: 4 or 8 */
    size_t rec; /* bytes per record */
    int64_t n, cap;
    char *buf;
    int64_t ext[ORN_DSM_MAXDIM]; /* largest coordinate + 1 (expand: [nk] the largest count) */
    int64_t elems;               /* elements the records stand for */
} OrnDsmRecs;
void orn_dsm_recs_init(OrnDsmRecs *r, int nk, size_t vsize, int expand);
void orn_dsm_recs_push(OrnDsmRecs *r, const int64_t *key, const void *val);
/* Add `by` to coordinate d of every record. */
void orn_dsm_recs_shift(OrnDsmRecs *r, int d, int64_t by);
void orn_dsm_recs_free(OrnDsmRecs *r);
/* Collective. The array of the ranks' records (taken over and freed, r is left empty);
 * dims must contain every key. A key given twice: *dup = 1 on every rank and no array
 * (the caller finds the lines through orn_dsm_from_elements). */
int orn_dsm_build_sparse(OrnDsmCtx *ctx, OrnDsmType type, int ndim, const int64_t *dims,
                         OrnDsmRecs *r, const char *path, OrnDsmArray **out, int *dup);
/* Collective, agreed (build.c). Sparse tiles of 2 to 4 dimensions keep (or build for row
 * views) 8 bytes of row offsets per row of their box: an error (naming path, may be NULL) when the
 * rows of the tiles partition p gives this rank would take more than half of this machine's memory
 * -- a row index far beyond the data ("row index 999999999999 is too large"), not an allocation
 * that aborts. */
int orn_dsm_rows_fit(OrnDsmCtx *ctx, const OrnDsmArray *a, const OrnDsmPart *p, const char *path);
/* This machine's physical memory in bytes (INT64_MAX when unknown). */
int64_t orn_dsm_mem_bytes(void);

/* Collective (build.c). Move the held tiles of sparse array a into nt, the tile table of
 * partition np (boxes and holders, no storage), as records built straight from the tiles
 * and tiles built straight from the records (CSR, runs or listed keys, as build_sparse);
 * the old tiles' storage is given back on the way: free it, do not read it. Counts of
 * tiles held elsewhere are left 0. */
int orn_dsm_scatter_tiles(OrnDsmArray *a, const OrnDsmPart *np, OrnDsmTile *nt);
/* Whole pages of [base, base + upto) back to the system, inside an allocation that stays
 * (its first page excepted); they read as zeros afterwards. */
void orn_dsm_give_back(const void *base, size_t upto);
/* The same for the whole pages of [base + from, base + upto). */
void orn_dsm_give_back_range(const void *base, size_t from, size_t upto);
enum { ORN_DSM_HUGE_MIN = 2 << 20 }; /* orn_dsm_huge (dsm.h) advises from this size */

/* loader.c helpers shared with saveload.c */
typedef struct OrnDsmRange {
    char *buf; /* this rank's bytes, NUL-terminated */
    size_t len;
    int64_t line0;  /* global number of this rank's first line */
    int64_t nlines; /* lines in the range */
} OrnDsmRange;
int orn_dsm_read_range(OrnDsmCtx *ctx, const char *path, OrnDsmRange *r);
/* Whether the file open as f changed since *st was taken at its opening: its size or
 * modification time is different now. Checked once it has been read, so what was read is
 * known to be one version of the file, not a torn mix of two. */
int orn_dsm_file_changed(FILE *f, const struct stat *st);
/* The loaders' numbers (loader.c): s[0..n) read as a plain decimal ([+-]digits[.digits]
 * [(e|E)[+-]digits]) into *out (a float when f32, else a double) when its value can be
 * rounded exactly without strtof / strtod -- the same bits as they give; 0 when they must
 * read it (more digits or a larger exponent than the fast path takes, or anything else). */
int orn_dsm_fast_real(const char *s, size_t n, int f32, void *out);
/* Collective, at the context's start (coll.c): whether its waits may spin at first
 * (OrnDsmCtx.spin). */
int orn_dsm_wait_setup(OrnDsmCtx *ctx);
/* Text arrays as written by orn_dsm_save (used by orn_dsm_load). */
int orn_dsm_load_text(OrnDsmCtx *ctx, const char *path, int type_hint, unsigned flags,
                      OrnDsmArray **out);

#endif
