/* dsm.h: distributed shared memory for Orion: contexts, distributed dense and sparse
 * arrays, their partitions, parallel loaders, save/load, and collective helpers.
 *
 * Owns: every byte of distributed-array storage on this rank, the partition metadata
 * (replicated on every rank and always identical there), and the array registry that the
 * on-demand fetch service answers from. It reaches MPI only through transport.h.
 *
 * Conventions:
 * - Every function returns an OrnStatus (ORN_OK == 0). On failure the context holds a
 *   message "operation: cause" (orn_dsm_error()); nothing is printed and nothing exits.
 * - Functions marked "collective" must be called by every rank, in the same order, with
 *   the same arguments where arguments describe global things (extents, types, paths).
 *   Collective functions marked "agreed" return the same status and message on every rank
 *   (for instance a malformed line in a loader), so a program may carry on after them;
 *   after any other failed collective the ranks no longer agree and the caller must end the
 *   job (orn_rt_die() in the runtime).
 * - Keys are int64_t coordinates, at most ORN_DSM_MAXDIM of them; key order is
 *   lexicographic order of the coordinates.
 */
#ifndef ORN_DSM_H
#define ORN_DSM_H

#include <stddef.h>
#include <stdint.h>

#define ORN_DSM_MAXDIM 4
/* Owner of a replicated tile: every rank holds a copy. */
#define ORN_DSM_ALL (-1)

typedef enum OrnStatus {
    ORN_OK = 0,
    ORN_E_MPI,     /* the MPI library returned an error */
    ORN_E_TIMEOUT, /* waited longer than the timeout on a peer */
    ORN_E_IO,      /* a file could not be opened, read or written */
    ORN_E_PARSE,   /* malformed input file: message is "path:line: what was expected" */
    ORN_E_FORMAT,  /* binary file is not a valid Orion array file */
    ORN_E_ARG,     /* bad argument (extent, type, dimension) */
    ORN_E_PLAN,    /* a plan that the runtime cannot execute */
    ORN_E_RANGE,   /* a key outside an array or outside the local partition */
    ORN_E_BODY,    /* a loop body reported an error */
    ORN_E_INTERNAL /* a bug in Orion */
} OrnStatus;

/* Element types of distributed arrays; the numbering is shared with runtime/plan.h. */
typedef enum OrnDsmType {
    ORN_DSM_I32 = 0,
    ORN_DSM_I64 = 1,
    ORN_DSM_F32 = 2,
    ORN_DSM_F64 = 3
} OrnDsmType;
/* "No type given": for orn_dsm_load()'s type hint. */
#define ORN_DSM_ANYTYPE (-1)

typedef struct OrnDsmTransport OrnDsmTransport;
typedef struct OrnDsmCtx OrnDsmCtx;
typedef struct OrnDsmArray OrnDsmArray;

/* ---------------------------------------------------------------- partitions */

/* A partition cuts an array into a grid of boxes ("tiles"): along dimension d there are
 * nb[d] tiles with boundaries bounds[d][0] = 0 < ... <= bounds[d][nb[d]] = extent (equal
 * boundaries give empty tiles). Tiles are numbered row-major over the grid. Each tile has
 * one owner rank, or ORN_DSM_ALL when every rank holds a copy (replication). `slot` is free
 * for schedules (the 2-D rotation stores ring positions there); 0 otherwise. */
typedef struct OrnDsmPart {
    int ndim;
    int nb[ORN_DSM_MAXDIM];
    int64_t *bounds[ORN_DSM_MAXDIM]; /* nb[d] + 1 entries each */
    int64_t ntiles;
    int *owner; /* ntiles */
    int *slot;  /* ntiles */
} OrnDsmPart;

/* A tile's storage on a rank that holds it (vals == NULL elsewhere, and for empty tiles of
 * sparse arrays keys and vals may be NULL with n == 0). Dense tiles store the whole box
 * row-major; sparse tiles store n elements strictly increasing in key order. Sparse 2-D
 * tiles whose width fits in int32 are CSR: no keys; row r (key 0 = lo[0] + r) holds the
 * elements [rowptr[r], rowptr[r+1]) and element e has key 1 = lo[1] + cols[e]. Sparse 3-D
 * tiles of arrays with `runs` (docword) are CSR too, key 2 implied: the elements of a row
 * with equal columns form a run and the k-th of a run has key 2 = lo[2] + k. Other sparse
 * tiles list their keys. Read keys with orn_dsm_tile_key() / orn_dsm_tile_keys(). */
typedef struct OrnDsmTile {
    int64_t lo[ORN_DSM_MAXDIM], hi[ORN_DSM_MAXDIM]; /* the box, hi exclusive */
    int64_t n;       /* elements: dense: box volume; sparse: stored (known on every rank) */
    int held;        /* this rank holds the storage */
    void *vals;      /* n values */
    int64_t *keys;   /* sparse, not CSR: n * ndim coordinates; NULL for CSR tiles */
    int64_t *rowptr; /* sparse: hi[0]-lo[0]+1 offsets of dim-0 rows (CSR: always; others:
                        built on demand by orn_dsm_tile_rows) */
    int32_t *cols;   /* CSR: n columns relative to lo[1]; NULL otherwise */
    /* Dense tiles padded by orn_dsm_tile_pad(): the allocation that holds vals, with room
     * for pad_lo rows of dimension 0 before the box and pad_hi after it; NULL (pads 0)
     * when vals is its own allocation. */
    void *mem;
    int64_t pad_lo, pad_hi;
} OrnDsmTile;

struct OrnDsmArray {
    OrnDsmCtx *ctx;
    int id; /* registry id, equal on every rank (arrays are created collectively) */
    OrnDsmType type;
    size_t esize;
    int ndim;
    int64_t dims[ORN_DSM_MAXDIM];
    int sparse;
    int64_t nnz; /* stored elements, global (dense: the volume) */
    OrnDsmPart part;
    OrnDsmTile *tiles; /* part.ntiles */
    /* Opaque tag describing who produced the current partition (the runtime stores a
     * plan signature here so that a loop run twice does not recompute its partition). */
    uint64_t part_tag;
    /* The runtime's too: part_tag as a loop left it after cutting the array into sub-blocks
     * along a second key (0: none), and whether such cuts are off for this array because
     * another loop undid one (runtime/layout.c, rt_partition_iter). */
    uint64_t split_tag;
    int split_off;
    char name[32];
    /* Sparse 3-D: for every (k0, k1) the stored keys k2 are 0..c-1 for some c (docword's
     * occurrences), so any box holds each such run from its lo[2] on, and tiles store
     * runs instead of keys (4 bytes an element instead of 24; see OrnDsmTile). */
    int runs;
    /* Stored in another order than declared (the compiler's layout pass): storage dimension
     * s holds declared dimension perm[s]. Dimensions and keys here are storage ones;
     * messages show them as the program writes them (orn_dsm_key_text). permuted == 0: as
     * declared. */
    int permuted;
    int perm[ORN_DSM_MAXDIM];
    /* Write generation: changes (orn_dsm_touch) whenever this rank's storage of the array
     * may have changed or moved, to a value no array of the context had before, so that a
     * copy of the storage made at generation g (a GPU's resident copy, runtime/gpu/gpu_res.c)
     * is current while gen == g. The DSM's writers touch it; so do the runtime's (loops
     * that write the array, rotation, flushes, replica write-back). */
    uint64_t gen;
    /* Its node replica (replica.c, orn_dsm_replica), NULL until the first. */
    struct OrnDsmReplica *replica;
    /* Held by top-level code that writes no dist array meanwhile (held.c): holds, the
     * held reads so far, the largest copy allowed, the whole copy (NULL until made). */
    int held;
    int64_t held_reads;
    size_t held_max;
    char *held_copy;
};

int orn_dsm_part_init(OrnDsmPart *p, int ndim, const int nb[]);
void orn_dsm_part_free(OrnDsmPart *p);
int orn_dsm_part_copy(OrnDsmPart *dst, const OrnDsmPart *src);
/* Equal grids, boundaries and owners (slots ignored). */
int orn_dsm_part_equal(const OrnDsmPart *a, const OrnDsmPart *b);
/* Uniform boundaries for `extent` into nb tiles: bounds[k] = floor(k * extent / nb). */
void orn_dsm_bounds_uniform(int64_t *bounds, int64_t extent, int nb);
/* The tile holding key (key inside the array). */
int64_t orn_dsm_part_tile_of(const OrnDsmPart *p, const int64_t *key);
/* Grid index (per dimension) of tile t, and back. */
void orn_dsm_part_unravel(const OrnDsmPart *p, int64_t t, int *grid);
int64_t orn_dsm_part_ravel(const OrnDsmPart *p, const int *grid);
/* The default partition of a new array: along dimension 0 into one tile per rank. */
int orn_dsm_part_default(OrnDsmCtx *ctx, int ndim, const int64_t *dims, OrnDsmPart *p);
/* Collective. Boundaries along array dimension `dim` into nb tiles such that tiles hold
 * about equal numbers of stored elements, from a histogram of the coordinates (uniform
 * for dense arrays). Deterministic for given data, independent of the rank count. */
int orn_dsm_balance(OrnDsmArray *a, int dim, int nb, int64_t *bounds);
/* Collective. Move the array's elements to a new partition (a no-op when equal). */
int orn_dsm_repartition(OrnDsmArray *a, const OrnDsmPart *p);

/* ---------------------------------------------------------------- context */

/* Create a context over an existing transport (the context takes ownership). */
int orn_dsm_ctx_new(OrnDsmTransport *tp, OrnDsmCtx **out);
void orn_dsm_ctx_free(OrnDsmCtx *ctx);
int orn_dsm_rank(const OrnDsmCtx *ctx);
int orn_dsm_size(const OrnDsmCtx *ctx);
OrnDsmTransport *orn_dsm_transport(OrnDsmCtx *ctx);
/* Local: what went through this context so far. Bytes sent to and received from other
 * ranks are counted when messages are posted (a receive of unknown size counts the bound it
 * is posted with); sync: seconds spent in collectives waiting for every rank to arrive
 * (an exchange's sizes, barriers), not moving data. */
typedef struct OrnDsmTraffic {
    int64_t sent, received;
    double sync;
} OrnDsmTraffic;
void orn_dsm_traffic(const OrnDsmCtx *ctx, OrnDsmTraffic *out);
/* Seconds a rank waits on a peer before reporting it (default 60, or $ORN_TIMEOUT). */
void orn_dsm_set_timeout(OrnDsmCtx *ctx, double seconds);
double orn_dsm_timeout(const OrnDsmCtx *ctx);

/* The last error: "operation: cause"; "" when none. Bytes that are not printable text
 * (control characters, malformed UTF-8: from input files or paths) appear as \xNN. */
const char *orn_dsm_error(const OrnDsmCtx *ctx);
OrnStatus orn_dsm_error_code(const OrnDsmCtx *ctx);
/* The rank the last error comes from: this one, or after an agreement (orn_dsm_agree) the
 * failing rank whose message every rank now holds. */
int orn_dsm_error_rank(const OrnDsmCtx *ctx);
/* This rank's host name (gethostname at the context's start): messages about files name
 * the machine, since on a cluster a file may be missing on one node only. */
const char *orn_dsm_host(const OrnDsmCtx *ctx);
/* Record an error and return `code` (for callers building on the DSM, e.g. the runtime). */
int orn_dsm_fail(OrnDsmCtx *ctx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* orn_dsm_fail with lines after the message: the message escaped as orn_dsm_fail's, then
 * `lines` (NULL: none) with its line breaks kept and any other control byte escaped: the
 * source line a run-time error names, "\n   12 | text\n      |   ^" (orn_rt_src_excerpt). */
int orn_dsm_fail_lines(OrnDsmCtx *ctx, int code, const char *lines, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Prefix the current message with "what: " (adds context while an error propagates),
 * unless it already starts with "what:" (no "save: save: ..."). */
int orn_dsm_fail_ctx(OrnDsmCtx *ctx, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void orn_dsm_clear_error(OrnDsmCtx *ctx);
/* Print "orion: rank R: <message>" on stderr and take every rank down (MPI_Abort). */
void orn_dsm_die(OrnDsmCtx *ctx, int exit_code) __attribute__((noreturn));
/* orn_dsm_die for an error that every rank meets alike (replicated top-level code), so that
 * it shows once, not once a rank: rank 0 reports it and ends the job at once; another rank
 * tells its peers it is failing, then gives rank 0 up to ORN_DSM_DIE_GRACE seconds to end
 * the job, and reports its own error only if rank 0 has not (it took another path: a value
 * from wall_time() or an extern differs). The wait decides who prints, never whether the job
 * ends. */
#define ORN_DSM_DIE_GRACE 2
void orn_dsm_die_alike(OrnDsmCtx *ctx, int exit_code) __attribute__((noreturn));
/* Collective, agreed: every rank passes its own status; if any failed, every rank returns
 * the failure of the lowest failing rank with that rank's message. */
int orn_dsm_agree(OrnDsmCtx *ctx, int status);
/* The progress line (support/progress.h) that the loaders and the runtime report to: set
 * by the standard library on the rank that shows one (rank 0, on a terminal), NULL elsewhere
 * and by default. Local; the caller keeps it and clears it before freeing it. orn_dsm_die
 * erases it before its message. */
struct OrnProgress;
void orn_dsm_set_progress_line(OrnDsmCtx *ctx, struct OrnProgress *p);
struct OrnProgress *orn_dsm_progress_line(const OrnDsmCtx *ctx);

size_t orn_dsm_type_size(OrnDsmType t);
const char *orn_dsm_type_name(OrnDsmType t);
/* The element of type t at p, converted to double. */
double orn_dsm_to_f64(OrnDsmType t, const void *p);

/* ---------------------------------------------------------------- collectives on the ctx */

/* Collective, deterministic reductions (combined in rank order, bit-identical everywhere). */
int orn_dsm_allreduce_i64(OrnDsmCtx *ctx, int64_t *v, size_t n, int op);
int orn_dsm_allreduce_f64(OrnDsmCtx *ctx, double *v, size_t n, int op);
enum { ORN_DSM_SUM, ORN_DSM_MIN, ORN_DSM_MAX };
int orn_dsm_barrier(OrnDsmCtx *ctx);
/* Passes: what rank 0 alone does (print, write a log) waits until every rank is past the
 * points every rank passes (a loop's end), so that nothing is printed after a point one rank
 * never passed (it failed there and is taking the job down). orn_dsm_pass: every rank, at
 * such a point (n of them at once: the same number on every rank by the point reached); the
 * other ranks tell rank 0 by a small message nobody waits for, rank 0 takes the ones that
 * came. orn_dsm_settle: rank 0 waits (serving remote reads, the
 * liveness monitor told whom) until every rank has told it of every pass rank 0 made; a
 * no-op elsewhere. `what` names the wait in a failure. */
int orn_dsm_pass(OrnDsmCtx *ctx, int64_t n);
int orn_dsm_settle(OrnDsmCtx *ctx, const char *what);
int orn_dsm_bcast(OrnDsmCtx *ctx, void *buf, size_t n, int root);

/* ---------------------------------------------------------------- arrays */

/* Collective. A dense array of zeros with the default partition. ndim 1..4, extents >= 0. */
int orn_dsm_dense(OrnDsmCtx *ctx, OrnDsmType type, int ndim, const int64_t *dims,
                  OrnDsmArray **out);
/* Collective. The same, cut as `part` says (the same on every rank; NULL: the default). */
int orn_dsm_dense_part(OrnDsmCtx *ctx, OrnDsmType type, int ndim, const int64_t *dims,
                       const OrnDsmPart *part, OrnDsmArray **out);
/* Collective. Set every element from its global row-major index (rank-count independent
 * when fn is): fn writes one element of the array's type to out. */
typedef void (*orn_dsm_init_fn)(int64_t index, void *out, void *ud);
int orn_dsm_init(OrnDsmArray *a, orn_dsm_init_fn fn, void *ud);
/* Collective. Fill with one value (of the array's type). */
int orn_dsm_fill(OrnDsmArray *a, const void *value);
/* Collective. Build an array from elements scattered over ranks: each rank passes its own
 * n elements (keys n*ndim, vals n values of `type`). Sparse: keys must be unique (a
 * duplicate is an error naming the key; `lines`, if not NULL, gives a source line per
 * element for the message "path:line: duplicate key ..., first on line L" with `path`).
 * Dense: every key of the box must be given exactly once. Keys outside dims: error.
 * The result has the default partition (sparse: balanced along dimension 0). Agreed. */
int orn_dsm_from_elements(OrnDsmCtx *ctx, OrnDsmType type, int ndim, const int64_t *dims,
                          int sparse, int64_t n, const int64_t *keys, const void *vals,
                          const int64_t *lines, const char *path, OrnDsmArray **out);
/* Collective. Overwrite existing elements: each rank passes n (key, value) pairs, which go
 * to the elements' owners (replicated tiles: every rank). Sparse: keys must be stored. */
int orn_dsm_write_elements(OrnDsmArray *a, int64_t n, const int64_t *keys, const void *vals);
/* Collective. A deep copy (same partition). */
int orn_dsm_copy(OrnDsmArray *a, OrnDsmArray **out);
/* Collective (arrays are freed in the same order on every rank). NULL is allowed. */
void orn_dsm_free(OrnDsmArray *a);
void orn_dsm_set_name(OrnDsmArray *a, const char *name);
/* Record that storage dimension s holds declared dimension perm[s] (a permutation). */
void orn_dsm_set_perm(OrnDsmArray *a, const int *perm);
/* The declared dimension of storage dimension s. */
int orn_dsm_decl_dim(const OrnDsmArray *a, int s);
/* A key in storage order as the program writes it ("1, 12": declared order) into buf. */
void orn_dsm_key_text(const OrnDsmArray *a, const int64_t *key, char *buf, size_t n);
OrnDsmArray *orn_dsm_lookup(OrnDsmCtx *ctx, int id);
/* A new write generation for a (OrnDsmArray.gen): its storage here changed or moved. */
void orn_dsm_touch(OrnDsmArray *a);

/* Node replicas (replica.c): the whole of dense array a row-major (storage order) in
 * shared memory that every rank of the host maps, each rank writing the tiles it holds.
 * Collective (every rank, the same arrays in the same order). orn_dsm_replica_reserve makes
 * a's replica, its pages reserved and faulted in by the ranks that will write them, where
 * one can be: several ranks, dense a of at least orn_dsm_replica_min() bytes within the
 * context's cap for replicas ($ORN_REPLICA_MB, 1 GiB) and shared memory that works (else
 * never again in this context): one replica per host, the rows of other hosts' ranks
 * sent there. orn_dsm_replica: gens is every
 * rank's write generation of a (OrnDsmArray.gen), the same on every rank; sets *base to
 * a's replica, written now unless it was at the same generations, to read (never write)
 * until this rank next calls it for a or frees a; NULL when a has none. Fails only with
 * the collectives, or with check when the replica differs from this rank's tiles at
 * unchanged generations (a writer that did not touch a). */
typedef struct OrnDsmReplica OrnDsmReplica;
int orn_dsm_replica_reserve(OrnDsmArray *a);
int orn_dsm_replica(OrnDsmArray *a, const uint64_t *gens, int check, const void **base);
/* Bytes below which arrays get no replica: 1 MiB, $ORN_REPLICA_MIN_KB, or SIZE_MAX with
 * $ORN_REPLICA=off. */
size_t orn_dsm_replica_min(void);
void orn_dsm_replica_free(OrnDsmArray *a);

/* Hosts (shm.c): how many hosts the ranks run on, rank q's host (0..nhosts-1, numbered
 * in the order of their first ranks) and the rank of host h that takes what rank q sends
 * to h (the host's ranks in turn: q modulo their number). The hosts are the ranks' host
 * names, or $ORN_HOSTS: a host number per rank, comma-separated, repeated from its start
 * where shorter (0,1: the ranks in turn on two hosts): the tests' several hosts on one
 * machine. */
int orn_dsm_nhosts(const OrnDsmCtx *ctx);
int orn_dsm_host_of(const OrnDsmCtx *ctx, int q);
int orn_dsm_taker(const OrnDsmCtx *ctx, int q, int h);

/* Shared memory (shm.c): collective; *out = `bytes` of one object that the ranks of this
 * rank's host map (zeroed; each host its own), this rank having reserved and faulted in its
 * nranges byte ranges [ranges[2i], ranges[2i + 1]) -- or NULL, on every rank alike, where
 * it cannot be had: one rank, /dev/shm full (then never again in this context). `tag` goes
 * into the objects' names. Fails only with the collectives. orn_dsm_shm_unmap: this rank's
 * mapping (NULL: nothing). */
int orn_dsm_shm_map(OrnDsmCtx *ctx, size_t bytes, int tag, const size_t *ranges, int nranges,
                    void **out);
void orn_dsm_shm_unmap(void *base, size_t bytes);
/* A barrier of the host's ranks through shared memory: seq is P arrival numbers (one per
 * rank of the context) ORN_DSM_SHM_SEQ_STRIDE int64s apart (one cache line each) in memory
 * the host's ranks map, zero at first; k the barrier's number, the same on every rank and
 * larger at each use. This rank's writes before it are visible to the host's ranks after
 * it. Fails only as waits fail (a dead rank named). */
#define ORN_DSM_SHM_SEQ_STRIDE 8
int orn_dsm_shm_barrier(OrnDsmCtx *ctx, int64_t *seq, int64_t k, const char *what);

/* Local. Find a stored element: pointer to its value in a tile this rank holds, NULL when
 * the rank does not hold the tile or (sparse) the key is not stored. */
void *orn_dsm_local_ptr(OrnDsmArray *a, const int64_t *key);
/* Local: index of key in a held sparse tile, or -1. */
int64_t orn_dsm_tile_find(const OrnDsmArray *a, const OrnDsmTile *t, const int64_t *key);
/* Local: sparse tile row index (built once). Returns ORN_OK. */
int orn_dsm_tile_rows(OrnDsmArray *a, int64_t t);
/* Local: the keys (ndim each) of elements [first, first + n) of a held sparse tile, decoded
 * from CSR where the tile is CSR; and the key of one element (O(log rows) for CSR). */
void orn_dsm_tile_keys(const OrnDsmArray *a, const OrnDsmTile *t, int64_t first, int64_t n,
                       int64_t *out);
void orn_dsm_tile_key(const OrnDsmArray *a, const OrnDsmTile *t, int64_t e, int64_t *key);
/* Local: the row (index into rowptr) that holds element e of a CSR tile. */
int64_t orn_dsm_tile_row_of(const OrnDsmTile *t, int64_t e);
/* The last index r in [0, n) with v[r] <= x, for v ascending and v[0] <= x: the row of
 * element x of a CSR tile (v = rowptr, n rows), the tile holding coordinate x along a
 * partitioned dimension (v = its boundaries, n tiles). */
static inline int64_t orn_dsm_last_le(const int64_t *v, int64_t n, int64_t x)
{
    int64_t lo = 0, hi = n - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (v[mid] <= x)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}
/* Local. Room for lo rows of dimension 0 before held dense tile t's box and hi rows after
 * it (rows as long as the box's): the runtime writes ghost cells there, so that a view of
 * box + halo is the tile's own storage (runtime/halo.c). vals keeps the box row-major; the
 * rows around it belong to no element and hold anything. A tile with that room already is
 * left alone, otherwise its values move once (the room lasts until the array is
 * repartitioned or freed). Returns ORN_OK. orn_dsm_tile_unpad() makes vals its own
 * allocation again, for code that takes tiles' storage over (the 2-D rotation). */
int orn_dsm_tile_pad(OrnDsmArray *a, int64_t t, int64_t lo, int64_t hi);
void orn_dsm_tile_unpad(OrnDsmArray *a, int64_t t);
/* Local (wire.c). A held tile's storage as one message and back, for schedules that move
 * tiles between ranks (the runtime's 2-D rotation and the wavefront's column blocks):
 * - orn_dsm_tile_wire_max: the bytes a receiver must allow for tile t (replicated metadata);
 * - orn_dsm_tile_take: the held tile's storage as a message of *bytes bytes, after which the
 *   tile is no longer held (dense: its values themselves, unpadded, no copy; sparse: packed,
 *   the storage freed); the caller owns the message (it may be NULL when *bytes is 0);
 * - orn_dsm_tile_give: a message received for tile t (not held) becomes its storage, held.
 *   Returns 1 when msg itself became the storage (dense: the caller lets go of it), 0 when
 *   it was copied (sparse: the caller keeps msg), -1 when msg is not a message for tile t. */
size_t orn_dsm_tile_wire_max(const OrnDsmArray *a, int64_t t);
void *orn_dsm_tile_take(OrnDsmArray *a, int64_t t, size_t *bytes);
int orn_dsm_tile_give(OrnDsmArray *a, int64_t t, void *msg);

/* Collective. Read one element (the owner broadcasts it; absent sparse keys read 0);
 * write one element (every rank passes the same value; sparse arrays: only stored keys). */
int orn_dsm_get(OrnDsmArray *a, const int64_t *key, void *out);
int orn_dsm_set(OrnDsmArray *a, const int64_t *key, const void *value);

/* Top-level code's views of a dense 2-D array (line.c): the line through `fixed` along
 * storage dimension `dim`, dims[dim] elements in order. read_line is collective: every rank
 * gets the whole line into `out` (one exchange of the holders' pieces). write_line is not:
 * each rank stores what it holds of the line from `in`, which must be the same on every rank
 * (top-level code computes it alike), and every rank calls it (the array's generation). */
int orn_dsm_read_line(OrnDsmArray *a, int dim, int64_t fixed, void *out);
int orn_dsm_write_line(OrnDsmArray *a, int dim, int64_t fixed, const void *in);

/* Whole copies (held.c). read_whole: collective; every rank gets the whole dense array in
 * `out` (volume x esize bytes, storage order, row-major), one allgather of the owners'
 * tiles. hold/release: top-level code that reads the array and writes no dist array until
 * the matching release (the compiler's promise; holds nest) -- every rank holds alike. While
 * held, orn_dsm_get and orn_dsm_read_line count their reads and, once they have cost about
 * what a copy costs and the array is at most `max` bytes, read the array whole and serve
 * the held reads from the copy; the copy goes at the last release. held_copy: that copy, or
 * NULL (collective when it makes the copy; a status). */
int orn_dsm_read_whole(OrnDsmArray *a, void *out);
void orn_dsm_hold(OrnDsmArray *a, size_t max);
void orn_dsm_release(OrnDsmArray *a);
int orn_dsm_held_copy(OrnDsmArray *a, const char **copy);
/* Every array's holds ended (a run-time error left the loops that held them: the REPL). */
void orn_dsm_release_all(OrnDsmCtx *ctx);

/* Collective. Whole-array reductions in f64, deterministic for a given partition:
 * per tile in key order, tiles combined in tile order. dot() needs equal extents; b is
 * brought to a's partition through a temporary copy when the partitions differ. */
int orn_dsm_sum(OrnDsmArray *a, double *out);
int orn_dsm_dot(OrnDsmArray *a, OrnDsmArray *b, double *out);
int orn_dsm_norm(OrnDsmArray *a, double *out);

/* Collective. Every rank gets the whole array: dense: *vals = volume values row-major
 * (keys NULL); sparse: *keys (n*ndim) and *vals in key order. Free with free(). For tests,
 * oracles and small arrays only. */
int orn_dsm_gather(OrnDsmArray *a, int64_t *n, int64_t **keys, void **vals);

/* Collective, for `print` of a whole array (peek.c). get_many: the n elements at `keys`
 * (storage keys, n * ndim; every rank passes the same) into out (n values) on every rank,
 * one exchange of the owners' values; absent sparse keys read 0. sparse_ends: the stored
 * elements of a sparse array (line_dim >= 0: only those on the line through declared key
 * `fixed` along declared dimension line_dim of a 2-D array) in declared key order -- all of
 * them when there are at most `limit`, else the first `edge` and the last `edge` -- with
 * their declared keys (*keys: *n * ndim) and values, and their number (*total); free *keys
 * and *vals with free(). */
int orn_dsm_get_many(OrnDsmArray *a, int64_t n, const int64_t *keys, void *out);
int orn_dsm_sparse_ends(OrnDsmArray *a, int line_dim, int64_t fixed, int64_t limit, int64_t edge,
                        int64_t *total, int64_t *n, int64_t **keys, void **vals);

/* ---------------------------------------------------------------- loaders, save, load */

/* Loader flags. Values must be finite by default: nan, inf and numbers beyond the element
 * type's range (1e39 for f32) are errors naming path:line (binary files: the element);
 * with ORN_DSM_ALLOW_NONFINITE they load, an overflowing number as an infinity. */
#define ORN_DSM_ALLOW_NONFINITE 1u

/* Collective, agreed. Each rank reads a byte range of the file; elements are sent to their
 * owners. Formats (comment lines starting with '#', and blank lines, are skipped; fields
 * are separated by spaces or tabs; a malformed line is an error "path:line: expected ...";
 * a number too large for its field is one "path:line: ... is too large"):
 *   triplets: "row col value", 0-based -> sparse 2-D f32
 *   libsvm:   "label idx:value ..." with idx >= 1 increasing -> X sparse 2-D f32
 *             [samples, max idx] (column idx-1), y dense 1-D f32 labels
 *   docword:  "doc word count", 0-based -> sparse 3-D i32 keyed (doc, word, j),
 *             j = 0..count-1, value 0, extents (max doc+1, max word+1, max count)
 * Extents come from the data; results do not depend on the rank count. A file that changes
 * while it is read (size or modification time) is an error. */
int orn_dsm_load_triplets(OrnDsmCtx *ctx, const char *path, unsigned flags, OrnDsmArray **out);
int orn_dsm_load_libsvm(OrnDsmCtx *ctx, const char *path, unsigned flags, OrnDsmArray **X,
                        OrnDsmArray **y);
int orn_dsm_load_docword(OrnDsmCtx *ctx, const char *path, OrnDsmArray **out);
/* Collective, agreed. A matrix by rows (CSV): each data line one row, its values apart by
 * commas (spaces around them ignored) or, without commas, by spaces or tabs, a value in
 * double quotes unquoted; every row as wide as the first; blank lines and lines starting
 * with '#' skipped, and with `header` the file's first other line. -> dense 2-D `type`
 * [rows, values per row]; values parsed as that type (integers for i32/i64). */
int orn_dsm_load_csv(OrnDsmCtx *ctx, const char *path, OrnDsmType type, int header, unsigned flags,
                     OrnDsmArray **out);

/* Collective, agreed. A path ending in .txt or .tsv: text, one stored element per line,
 * key coordinates then value separated by single spaces, lexicographic key order, values
 * %.17g (f64) / %.9g (f32) / integers. Any other path: the binary format (docs/runtime.md).
 * Rank 0 writes the file. */
int orn_dsm_save(OrnDsmArray *a, const char *path);
/* Collective, agreed. Read what orn_dsm_save wrote. Binary files carry their type and
 * shape. Text files: type_hint gives the element type (ORN_DSM_ANYTYPE: i64 if every value
 * is an integer, else f64); ndim is the field count - 1, extents the largest key + 1; the
 * array is dense when every key of that box is present, sparse otherwise. flags: as for the
 * loaders (float values must be finite unless ORN_DSM_ALLOW_NONFINITE). */
int orn_dsm_load(OrnDsmCtx *ctx, const char *path, int type_hint, unsigned flags,
                 OrnDsmArray **out);

/* Local (any one rank): the whole file in *buf (NUL-terminated, *len bytes without the
 * NUL; free with free()). A regular file that changes while it is read (size or
 * modification time) is an error, as for the loaders; other files (pipes, devices, files
 * whose size is 0, such as those of /proc) are read to their end. Errors: "path: cannot open:
 * cause", "path: read error: ...". */
int orn_dsm_read_file(OrnDsmCtx *ctx, const char *path, char **buf, size_t *len);

/* ---------------------------------------------------------------- snapshots (checkpoints) */

/* A byte stream: put writes n bytes, get reads exactly n; each returns 0, or non-zero on
 * failure (the stream's owner keeps the cause). */
typedef struct OrnDsmIo {
    int (*put)(void *ud, const void *p, size_t n);
    int (*get)(void *ud, void *p, size_t n);
    void *ud;
} OrnDsmIo;
/* Local (snapshot.c). Write this rank's share of every array in the registry: ids,
 * extents, names, partitions, tile tables and the storage of held tiles, as they are. */
int orn_dsm_snap_write(OrnDsmCtx *ctx, const OrnDsmIo *io);
/* Local. Read what orn_dsm_snap_write wrote, on the same rank of the same rank count,
 * into a context without arrays: every array comes back with its id, partition, tag and
 * bytes, and the next array created gets the id it would have got. ORN_E_FORMAT when the
 * stream does not parse. */
int orn_dsm_snap_read(OrnDsmCtx *ctx, const OrnDsmIo *io);

/* ---------------------------------------------------------------- remote reads */

/* Large storage (tiles, window copies: 2 MiB or more) in transparent huge pages where the
 * system offers them on request (THP "madvise" mode): a page fault then maps 2 MiB, not 4
 * KiB, and the TLB covers 512 times more. Advice only; allocations stay malloc's. It helps
 * where the block is a fresh mapping calloc did not clear (large blocks, as a program's
 * arrays are made at its start); malloc's mmap threshold is left alone: fixed, it would
 * make every large temporary (a replica per loop) a fresh mapping faulted in page by page. */
void orn_dsm_huge(const void *base, size_t n);
/* n bytes (orn_xmalloc), advised as huge pages before anything touches them (orn_dsm_huge):
 * storage that is written once now and streamed by loops later (the tiles an array is
 * built in from elements: a permuted load, triplets). */
void *orn_dsm_xmalloc_huge(size_t n);

/* Collective. Bulk fetch for several arrays at once: each rank asks for n (array, key)
 * pairs (linear row-major key indices) and gets their values (found[i] = 0 for absent
 * sparse keys, value 0), and for nranges runs of dense tiles' storage, which come as their
 * bytes (a window's rows: no key per element). Owners answer from their tiles; requests are
 * grouped per owner (one message per rank pair each way). */
typedef struct OrnDsmRun {
    int array;      /* array id (dense) */
    int64_t tile;   /* one of its tiles */
    int64_t off, n; /* elements [off, off + n) of the tile's row-major storage */
    void *dst;      /* n * esize bytes */
} OrnDsmRun;
typedef struct OrnDsmFetch {
    int64_t n;
    const int *array; /* array ids */
    const int64_t *lin;
    void *vals; /* n slots of `stride` bytes each: the value is written at the start */
    size_t stride;
    unsigned char *found;
    int64_t nranges;
    const OrnDsmRun *ranges;
} OrnDsmFetch;
int orn_dsm_fetch_bulk(OrnDsmCtx *ctx, OrnDsmFetch *f);
/* Local, may wait on a peer: fetch one element from its owner now (on-demand miss). The
 * owner answers from its service loop (every rank serves while it waits on anything and
 * when orn_dsm_progress() is called). */
int orn_dsm_fetch_one(OrnDsmArray *a, int64_t lin, void *out, int *found);
/* Local: serve pending remote requests and advance outstanding transfers. */
int orn_dsm_progress(OrnDsmCtx *ctx);
/* Local: wait until this rank's replies to remote reads have been sent (before exit). */
int orn_dsm_quiesce(OrnDsmCtx *ctx);

/* Row-major linear index of a key, and back; orn_dsm_linear_ok() says whether the volume
 * fits in int64 (required for remote reads of an array). */
int64_t orn_dsm_ravel(const OrnDsmArray *a, const int64_t *key);
void orn_dsm_unravel(const OrnDsmArray *a, int64_t lin, int64_t *key);
int orn_dsm_linear_ok(const OrnDsmArray *a);

/* Local: the runs of dense tile t's box along the last dimension, rows [r0, r1) of it only
 * (clipped to the tile), in row-major order: each run's first element in the whole array
 * (lin, row-major over a's dims) and in the tile's storage (at, row-major over its box),
 * and its length in elements (len). begin returns 0 when there is no run, next 0 after
 * the last:
 *     for (int ok = orn_dsm_runs_begin(&r, a, t, r0, r1); ok; ok = orn_dsm_runs_next(&r)) */
typedef struct OrnDsmRuns {
    const OrnDsmArray *a;
    const OrnDsmTile *t;
    int64_t lo[ORN_DSM_MAXDIM], hi[ORN_DSM_MAXDIM], idx[ORN_DSM_MAXDIM];
    int64_t lin, at, len;
} OrnDsmRuns;
int orn_dsm_runs_begin(OrnDsmRuns *r, const OrnDsmArray *a, int64_t t, int64_t r0, int64_t r1);
int orn_dsm_runs_next(OrnDsmRuns *r);

/* Local: rows [r0, r1) of dense tile t (clipped to the tile) against their places in `rows`,
 * a row-major copy of the array whose first byte is the array's element `rows_first`;
 * `vals` is the tile's storage from its element `vals_first` on. A run at a time along
 * the last dimension: ORN_DSM_TO_ROWS copies the tile's elements into rows,
 * ORN_DSM_FROM_ROWS copies rows into the tile, ORN_DSM_SAME_ROWS compares them. Returns 1
 * when a comparison found a difference, else 0. */
enum { ORN_DSM_TO_ROWS, ORN_DSM_FROM_ROWS, ORN_DSM_SAME_ROWS };
int orn_dsm_tile_copy(const OrnDsmArray *a, int64_t t, int64_t r0, int64_t r1, void *rows,
                      int64_t rows_first, void *vals, int64_t vals_first, int how);

#endif
