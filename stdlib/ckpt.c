/* ckpt.c: checkpoint and resume of generated programs (docs/runtime.md, section 15).
 *
 * Safe points are the starts of the iterations of the top-level `for` and `while` loops
 * (numbered by codegen in program order). There, top-level code is between statements and
 * no loop runs: the state is the top-level variables, local arrays, dist arrays, buffers
 * (empty between loops), the program's random stream and the runtime's counters.
 *
 * Deciding. Every rank reaches the same safe points in the same order (top-level code is
 * replicated), so the decision is one allreduce (max) of {a signal was caught on this
 * rank, rank 0's clock says a checkpoint is due, rank 0's stride}: every rank checkpoints
 * at the same safe point, and a signal caught on any rank counts. So that tight top-level
 * loops do not pay an allreduce per iteration, the allreduce runs every `stride` safe
 * points, a stride rank 0 picks so that polls are about POLL_S seconds apart (at most
 * doubling from one poll to the next); with --checkpoint-every=0 it is 1.
 *
 * Writing. DIR/ckpt-N/ holds rank-R.bin per rank (its contents: ckpt_state.c) and MANIFEST. It is
 * made as DIR/ckpt-N.tmp/: each rank writes its file (checksummed as it goes) and fsyncs it; the
 * ranks agree that all did; rank 0 writes MANIFEST (each file's size and checksum, the
 * rank count, the program's and the executable's hashes, the safe point and its loop
 * counters, the lines printed so far, and a checksum of the manifest itself), fsyncs it
 * and the directory, renames it to DIR/ckpt-N, fsyncs DIR, and only then removes older
 * checkpoints. A crash at any moment leaves the previous checkpoint complete, and at most
 * a *.tmp directory that resume ignores.
 *
 * Resuming. The newest DIR/ckpt-N is checked before anything is restored: the manifest's
 * checksum, the program and executable, the rank count, each rank file's size and
 * checksum, and params given on the command line against the checkpoint's (the others take
 * the checkpoint's values). Any failure is refused on every rank with one message, exit
 * 1; an older checkpoint is never used instead. Then arrays come back with their ids,
 * partitions and bytes (orn_rt_snap_read), variables and streams with their values, and
 * main() skips the top-level statements before the safe point's loop, which continues
 * with its counter.
 *
 * Checksums are FNV-1a 64 over 8-byte words (native order) and then the remaining bytes:
 * one multiply per 8 bytes, so checksumming costs little next to the disk. Only the
 * executable's, the rank files' and the manifest's bytes are hashed. */
#include "ckpt_int.h"
#include "timeline.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/stat.h>
#include <unistd.h>

#define POLL_S        0.05
#define MAX_STRIDE    65536
#define CHUNK         ((size_t)1 << 20) /* write buffer; a multiple of 8 (checksums) */
#define MANIFEST_MAX  ((size_t)1 << 20)
#define MANIFEST_HEAD "orion-checkpoint 1\n"

/* The only mutable global of the library: a signal handler can reach nothing else. It
 * records the signal; the ranks agree on it at the next safe point. */
static volatile sig_atomic_t caught_signal;

/* ---------------------------------------------------------------- checksums */

uint64_t orn_std_ckpt_fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, b + i, 8);
        h = (h ^ w) * 1099511628211ULL;
    }
    for (; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
    return h;
}

/* The checksum and size of a file, read in CHUNK pieces (whole words but for the last). */
static int hash_file(const char *path, uint64_t *h, int64_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    char *buf = malloc(CHUNK);
    *h = ORN_STD_FNV_INIT;
    *size = 0;
    size_t got;
    while (buf && (got = fread(buf, 1, CHUNK, f)) > 0) {
        *h = orn_std_ckpt_fnv(*h, buf, got);
        *size += (int64_t)got;
    }
    int bad = !buf || ferror(f);
    free(buf);
    fclose(f);
    return bad ? -1 : 0;
}

/* ---------------------------------------------------------------- files and directories */

/* A file written through a checksumming buffer (an OrnDsmIo). */
typedef struct Out {
    FILE *f;
    char *buf;
    size_t n;
    uint64_t h;
    int64_t size;
    int err;
} Out;

static int out_drain(Out *o)
{
    if (o->n && !o->err) {
        o->h = orn_std_ckpt_fnv(o->h, o->buf, o->n);
        if (fwrite(o->buf, 1, o->n, o->f) != o->n) o->err = errno ? errno : EIO;
        o->size += (int64_t)o->n;
    }
    o->n = 0;
    return o->err;
}

static int out_put(void *ud, const void *p, size_t n)
{
    Out *o = ud;
    const char *c = p;
    while (n && !o->err) {
        size_t k = CHUNK - o->n < n ? CHUNK - o->n : n;
        memcpy(o->buf + o->n, c, k);
        o->n += k;
        c += k;
        n -= k;
        if (o->n == CHUNK) out_drain(o);
    }
    return o->err;
}

static int out_open(Out *o, const char *path)
{
    memset(o, 0, sizeof *o);
    o->h = ORN_STD_FNV_INIT;
    o->buf = malloc(CHUNK);
    o->f = fopen(path, "wb");
    if (!o->f || !o->buf) o->err = errno ? errno : ENOMEM;
    return o->err;
}

/* Flush, fsync and close; the error of the whole file, 0 when it is safely on disk. */
static int out_close(Out *o)
{
    out_drain(o);
    if (o->f) {
        if (fflush(o->f) && !o->err) o->err = errno;
        if (fsync(fileno(o->f)) && !o->err) o->err = errno;
        if (fclose(o->f) && !o->err) o->err = errno;
    }
    free(o->buf);
    o->f = NULL;
    o->buf = NULL;
    return o->err;
}

static int in_get(void *ud, void *p, size_t n)
{
    return fread(p, 1, n, (FILE *)ud) == n ? 0 : -1;
}

static int fsync_dir(const char *path)
{
    int fd = open(path, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    close(fd);
    return rc;
}

static char *path_of(const char *dir, int64_t seq, const char *tail)
{
    size_t n = strlen(dir) + 64 + (tail ? strlen(tail) : 0);
    char *s = malloc(n);
    if (s) snprintf(s, n, "%s/ckpt-%06" PRId64 "%s", dir, seq, tail ? tail : "");
    return s;
}

/* "ckpt-N" (tmp = 0) or "ckpt-N.tmp" (tmp = 1): N, else -1. */
static int64_t seq_of(const char *name, int *tmp)
{
    if (strncmp(name, "ckpt-", 5) != 0) return -1;
    const char *d = name + 5, *e = d;
    while (*e >= '0' && *e <= '9') e++;
    if (e == d || e - d > 18) return -1;
    if (*e && strcmp(e, ".tmp") != 0) return -1;
    *tmp = *e != '\0';
    return strtoll(d, NULL, 10);
}

typedef struct Scan {
    int64_t newest;     /* the newest complete checkpoint, -1 none */
    int64_t newest_tmp; /* the newest unfinished one, -1 none */
    int64_t any;        /* the largest number in use, -1 none */
} Scan;

static int scan_dir(const char *dir, Scan *s)
{
    s->newest = s->newest_tmp = s->any = -1;
    DIR *d = opendir(dir);
    if (!d) return -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        int tmp = 0;
        int64_t n = seq_of(e->d_name, &tmp);
        if (n < 0) continue;
        if (n > s->any) s->any = n;
        if (tmp && n > s->newest_tmp) s->newest_tmp = n;
        if (!tmp && n > s->newest) s->newest = n;
    }
    closedir(d);
    return 0;
}

/* Remove a checkpoint directory: only the files a checkpoint holds, then the directory
 * (which stays if anything else is in it). */
static void remove_ckpt(const char *path)
{
    DIR *d = opendir(path);
    if (!d) return;
    struct dirent *e;
    size_t n = strlen(path) + 300;
    char *f = malloc(n);
    while (f && (e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        int ours = !strcmp(e->d_name, "MANIFEST") ||
                   (!strncmp(e->d_name, "rank-", 5) && l > 9 && !strcmp(e->d_name + l - 4, ".bin"));
        if (!ours) continue;
        snprintf(f, n, "%s/%s", path, e->d_name);
        unlink(f);
    }
    free(f);
    closedir(d);
    rmdir(path);
}

/* Rank 0, after checkpoint `keep` is in place: every other checkpoint of DIR goes. */
static void prune(const char *dir, int64_t keep)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    int64_t *gone = NULL;
    int *gone_tmp = NULL, n = 0, cap = 0;
    while ((e = readdir(d)) != NULL) {
        int tmp = 0;
        int64_t s = seq_of(e->d_name, &tmp);
        if (s < 0 || (s == keep && !tmp)) continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            gone = realloc(gone, (size_t)cap * sizeof *gone);
            gone_tmp = realloc(gone_tmp, (size_t)cap * sizeof *gone_tmp);
            if (!gone || !gone_tmp) break;
        }
        gone[n] = s;
        gone_tmp[n++] = tmp;
    }
    closedir(d);
    for (int i = 0; gone && gone_tmp && i < n; i++) {
        char *pth = path_of(dir, gone[i], gone_tmp[i] ? ".tmp" : NULL);
        if (pth) remove_ckpt(pth);
        free(pth);
    }
    free(gone);
    free(gone_tmp);
    fsync_dir(dir);
}

/* ---------------------------------------------------------------- agreement */

int orn_std_ckpt_fail(OrnStdProg *p, const char *fmt, ...)
{
    char msg[900];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* which node: a checkpoint folder that is not on a shared file system fails on the
     * ranks of the nodes that do not see it (docs/cluster.md) */
    if (p->size > 1)
        return orn_dsm_fail(p->dsm, ORN_E_IO, "%s (rank %d on host %s)", msg, p->rank,
                            orn_dsm_host(p->dsm));
    return orn_dsm_fail(p->dsm, ORN_E_IO, "%s", msg);
}

/* Collective: every rank's status; on a failure anywhere, rank 0 prints the first failing
 * rank's message as "orion: <message>" and every rank exits with `code`. */
static void agree_or_exit(OrnStdProg *p, int status, int code)
{
    if (!orn_dsm_agree(p->dsm, status)) return;
    fflush(stdout);
    if (p->rank == 0) fprintf(stderr, "orion: %s\n", orn_dsm_error(p->dsm));
    fflush(stderr);
    orn_std_exit(p, code);
}

/* ---------------------------------------------------------------- manifest */

typedef struct Manifest {
    uint64_t program, binary;
    int64_t ranks, seq, point, line, lo, hi, iter, lines;
    int64_t size;  /* this rank's file */
    uint64_t hash; /* this rank's file */
    int have_file;
} Manifest;

static int write_manifest(OrnStdProg *p, const char *path, int64_t seq, int k, int64_t lo,
                          int64_t hi, int64_t i, const int64_t *sizes, const uint64_t *hashes)
{
    const OrnStdCkpt *ck = p->ck;
    /* room for every line: the fixed ones, the source's path, one line per rank */
    size_t cap = 1024 + strlen(p->file) + (size_t)p->size * 80, n = 0;
    char *b = malloc(cap);
    if (!b) return -1;
    n += (size_t)snprintf(b + n, cap - n,
                          MANIFEST_HEAD "program %016" PRIx64 "\nbinary %016" PRIx64
                                        "\nsource %s\nranks %d\nseq %" PRId64
                                        "\nsafe_point %d\nline %d\nlo %" PRId64 "\nhi %" PRId64
                                        "\niteration %" PRId64 "\nstdout_lines %" PRId64 "\n",
                          ck->st->program, ck->binary, p->file, p->size, seq, k, ck->st->lines[k],
                          lo, hi, i, p->out_lines);
    for (int r = 0; r < p->size; r++)
        n += (size_t)snprintf(b + n, cap - n, "file rank-%d.bin %" PRId64 " %016" PRIx64 "\n", r,
                              sizes[r], hashes[r]);
    if (n + 32 >= cap) {
        free(b);
        return -1;
    }
    n += (size_t)snprintf(b + n, cap - n, "end %016" PRIx64 "\n",
                          orn_std_ckpt_fnv(ORN_STD_FNV_INIT, b, n));
    Out o;
    out_open(&o, path);
    out_put(&o, b, n);
    free(b);
    return out_close(&o);
}

/* Read and check DIR/ckpt-seq/MANIFEST; the fields, and this rank's file's size and hash. */
static int read_manifest(OrnStdProg *p, const char *path, Manifest *m)
{
    memset(m, 0, sizeof *m);
    FILE *f = fopen(path, "rb");
    if (!f) return orn_std_ckpt_fail(p, "resume: %s: cannot open: %s", path, strerror(errno));
    char *b = malloc(MANIFEST_MAX + 1);
    size_t n = b ? fread(b, 1, MANIFEST_MAX, f) : 0;
    fclose(f);
    if (!b) return orn_std_ckpt_fail(p, "resume: out of memory");
    b[n] = '\0';
    int status = 0;
    /* the last line: "end <checksum of everything before it>" */
    char *end = n >= 2 ? b + n - 2 : b;
    while (end > b && *end != '\n') end--;
    if (end > b) end++;
    uint64_t want = 0;
    if (strncmp(b, MANIFEST_HEAD, strlen(MANIFEST_HEAD)) != 0 ||
        sscanf(end, "end %" SCNx64, &want) != 1 ||
        orn_std_ckpt_fnv(ORN_STD_FNV_INIT, b, (size_t)(end - b)) != want) {
        status =
            orn_std_ckpt_fail(p,
                              "resume: %s: checksum mismatch or not a manifest (the checkpoint is "
                              "corrupt or incomplete)",
                              path);
        goto fn_exit;
    }
    char want_file[64];
    snprintf(want_file, sizeof want_file, "rank-%d.bin", p->rank);
    int seen = 0;
    for (char *line = b; line < end; line = strchr(line, '\n') + 1) {
        char key[32], name[64];
        uint64_t u;
        int64_t v, sz;
        if (sscanf(line, "%31s", key) != 1) break;
        if (!strcmp(key, "file") &&
            sscanf(line, "file %63s %" SCNd64 " %" SCNx64, name, &sz, &u) == 3) {
            if (!strcmp(name, want_file)) m->size = sz, m->hash = u, m->have_file = 1;
        } else if (!strcmp(key, "program") && sscanf(line, "program %" SCNx64, &u) == 1) {
            m->program = u, seen |= 1;
        } else if (!strcmp(key, "binary") && sscanf(line, "binary %" SCNx64, &u) == 1) {
            m->binary = u, seen |= 2;
        } else if (sscanf(line, "%*s %" SCNd64, &v) == 1) {
            static const char *const keys[] = {"ranks", "seq", "safe_point", "line",
                                               "lo",    "hi",  "iteration",  "stdout_lines"};
            int64_t *slots[] = {&m->ranks, &m->seq, &m->point, &m->line,
                                &m->lo,    &m->hi,  &m->iter,  &m->lines};
            for (int k = 0; k < 8; k++)
                if (!strcmp(key, keys[k])) *slots[k] = v, seen |= 4 << k;
        }
        if (!strchr(line, '\n')) break;
    }
    if (seen != (4 << 8) - 1) status = orn_std_ckpt_fail(p, "resume: %s: a field is missing", path);
fn_exit:
    free(b);
    return status;
}

/* ---------------------------------------------------------------- resume */

static uint64_t exe_hash(void)
{
    uint64_t h = 0;
    int64_t size = 0;
    if (hash_file("/proc/self/exe", &h, &size)) return 0;
    return h;
}

static void do_resume(OrnStdProg *p)
{
    OrnStdCkpt *ck = p->ck;
    const char *dir = p->resume_dir;
    int64_t seq = -1;
    int status = 0;
    /* Rank 0 picks the checkpoint, so that every rank reads the same one. */
    if (p->rank == 0) {
        Scan s;
        if (scan_dir(dir, &s))
            status = orn_std_ckpt_fail(p, "resume: %s: cannot open the checkpoint directory: %s",
                                       dir, strerror(errno));
        else if (s.newest < 0)
            status = orn_std_ckpt_fail(
                p, "resume: %s: no complete checkpoint%s", dir,
                s.newest_tmp >= 0 ? " (only an unfinished one, which is never used)" : "");
        else
            seq = s.newest;
        if (!status && s.newest_tmp > s.newest)
            fprintf(stderr,
                    "orion: resume: %s/ckpt-%06" PRId64 ".tmp was left unfinished (the run "
                    "stopped while writing it) and is ignored\n",
                    dir, s.newest_tmp);
    }
    if (orn_dsm_bcast(p->dsm, &seq, sizeof seq, 0)) orn_rt_die(p->rt);
    agree_or_exit(p, status, 1);

    char *cdir = path_of(dir, seq, NULL), *mpath = path_of(dir, seq, "/MANIFEST");
    size_t fl = strlen(cdir) + 32;
    char *fpath = malloc(fl);
    if (!cdir || !mpath || !fpath) orn_std_die(p, 0, "resume: out of memory");
    snprintf(fpath, fl, "%s/rank-%d.bin", cdir, p->rank);

    Manifest m;
    status = read_manifest(p, mpath, &m);
    if (!status && m.program != ck->st->program)
        status = orn_std_ckpt_fail(
            p, "resume: %s was written by another program (not %s as compiled now)", cdir, p->file);
    else if (!status && m.binary != ck->binary)
        status = orn_std_ckpt_fail(p,
                                   "resume: %s was written by another build of %s (the executable "
                                   "differs): results could differ, so it is not used",
                                   cdir, p->file);
    else if (!status && m.ranks != p->size)
        status = orn_std_ckpt_fail(p,
                                   "resume: %s was written by %" PRId64
                                   " ranks, this job has %d: resume "
                                   "it at the same rank count (mpirun -n %" PRId64 ")",
                                   cdir, m.ranks, p->size, m.ranks);
    else if (!status && (m.seq != seq || m.point < 0 || m.point >= ck->st->npoints ||
                         m.line != ck->st->lines[m.point] || !m.have_file))
        status = orn_std_ckpt_fail(
            p, "resume: %s/MANIFEST does not describe this program's checkpoint", cdir);
    agree_or_exit(p, status, 1);

    uint64_t h = 0;
    int64_t size = 0;
    if (hash_file(fpath, &h, &size))
        status = orn_std_ckpt_fail(p, "resume: %s: cannot read: %s", fpath, strerror(errno));
    else if (size != m.size || h != m.hash)
        status = orn_std_ckpt_fail(p,
                                   "resume: %s: checksum mismatch (%" PRId64
                                   " bytes, checksum %016" PRIx64 "; the manifest says %" PRId64
                                   " bytes, %016" PRIx64
                                   "): the checkpoint is corrupt, refusing to resume",
                                   fpath, size, h, m.size, m.hash);
    agree_or_exit(p, status, 1);

    FILE *f = fopen(fpath, "rb");
    if (!f) {
        status = orn_std_ckpt_fail(p, "resume: %s: cannot open: %s", fpath, strerror(errno));
    } else {
        setvbuf(f, NULL, _IOFBF, CHUNK);
        OrnDsmIo io = {NULL, in_get, f};
        status = orn_std_ckpt_get_state(p, &io, fpath, seq);
        fclose(f);
    }
    agree_or_exit(p, status, 1);

    p->resume_at = (int)m.point;
    ck->res_lo = m.lo;
    ck->res_hi = m.hi;
    ck->res_i = m.iter;
    p->out_lines = m.lines;
    if (p->rank == 0)
        fprintf(stderr,
                "orion: resuming from %s at %s:%" PRId64 " (iteration counter %" PRId64 ")\n", cdir,
                p->file, m.line, m.iter);
    free(cdir);
    free(mpath);
    free(fpath);
}

int orn_std_ckpt_resume(OrnStdProg *p, int k, int64_t *lo, int64_t *hi, int64_t *i)
{
    if (p->resume_at != k || !p->ck) return 0;
    *lo = p->ck->res_lo;
    *hi = p->ck->res_hi;
    *i = p->ck->res_i;
    p->resume_at = -1;
    return 1;
}

/* ---------------------------------------------------------------- init */

static void on_signal(int sig)
{
    caught_signal = sig;
}

static void prepare_dir(OrnStdProg *p)
{
    OrnStdCkpt *ck = p->ck;
    const char *dir = p->ckpt_dir;
    int status = 0;
    int64_t next = 0;
    if (p->rank == 0) {
        Scan s;
        if (mkdir(dir, 0777) && errno != EEXIST)
            status = orn_std_ckpt_fail(p, "--checkpoint=%s: cannot create the directory: %s", dir,
                                       strerror(errno));
        else if (scan_dir(dir, &s))
            status = orn_std_ckpt_fail(p, "--checkpoint=%s: cannot open the directory: %s", dir,
                                       strerror(errno));
        if (!status && s.newest >= 0) {
            struct stat a, b;
            int same = p->resume_dir && !stat(dir, &a) && !stat(p->resume_dir, &b) &&
                       a.st_dev == b.st_dev && a.st_ino == b.st_ino;
            if (!same)
                status = orn_std_ckpt_fail(
                    p,
                    "--checkpoint=%s: the directory holds a checkpoint already "
                    "(ckpt-%06" PRId64 "): continue it with --resume=%s, or remove it",
                    dir, s.newest, dir);
        }
        if (!status) next = s.any + 1;
    }
    if (orn_dsm_bcast(p->dsm, &next, sizeof next, 0)) orn_rt_die(p->rt);
    agree_or_exit(p, status, 2);
    ck->next_seq = next;
}

void orn_std_ckpt_init(OrnStdProg *p, const OrnStdState *st)
{
    p->state = st;
    if (!p->ckpt_dir && !p->resume_dir) return;
    OrnStdCkpt *ck = calloc(1, sizeof *ck);
    if (!ck) orn_std_die(p, 0, "checkpoints: out of memory");
    p->ck = ck;
    ck->st = st;
    ck->binary = exe_hash();
    ck->every = p->ckpt_every;
    ck->stride = ck->countdown = 1;
    if (p->resume_dir) {
        OrnTl *tl = orn_dsm_timeline(p->dsm);
        int64_t sp = orn_tl_begin(tl, ORN_TL_IO, "resume");
        orn_tl_str(tl, sp, "dir", p->resume_dir);
        do_resume(p);
        orn_tl_end(tl, sp);
    }
    if (p->ckpt_dir) {
        prepare_dir(p);
        ck->writing = st->npoints > 0;
        ck->last = ck->last_poll = orn_std_wall_time();
    }
    const char *inj = getenv("ORN_CKPT_SIGNAL");
    long long after = 0;
    int sig = 0;
    if (inj && sscanf(inj, "%lld:%d", &after, &sig) == 2 && after >= 1 && sig > 0) {
        ck->signal_after = after;
        ck->signal_sig = sig;
    }
    if (ck->writing) {
        /* a second signal while the first waits for a safe point ends the process */
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_RESETHAND | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
    }
}

void orn_std_ckpt_free(OrnStdProg *p)
{
    OrnStdCkpt *ck = p->ck;
    if (!ck) return;
    for (int i = 0; i < ck->nstrs; i++) free(ck->strs[i]);
    free(ck->strs);
    free(ck);
    p->ck = NULL;
}

/* ---------------------------------------------------------------- writing */

/* Rank 0: publish checkpoint seq, whose rank files are on disk: MANIFEST, fsync, rename
 * DIR/ckpt-N.tmp to DIR/ckpt-N, fsync DIR, then remove the older checkpoints. */
static int publish(OrnStdProg *p, int64_t seq, int k, int64_t lo, int64_t hi, int64_t i,
                   const int64_t *all)
{
    const char *dir = p->ckpt_dir;
    int64_t *sizes = malloc((size_t)p->size * sizeof *sizes);
    uint64_t *hashes = malloc((size_t)p->size * sizeof *hashes);
    char *tmp = path_of(dir, seq, ".tmp"), *fin = path_of(dir, seq, NULL);
    char *mpath = path_of(dir, seq, ".tmp/MANIFEST");
    int status = 0;
    if (!sizes || !hashes || !tmp || !fin || !mpath) {
        status = orn_std_ckpt_fail(p, "checkpoint: out of memory");
        goto fn_exit;
    }
    for (int r = 0; r < p->size; r++) {
        sizes[r] = all[2 * r];
        hashes[r] = (uint64_t)all[2 * r + 1];
    }
    if (write_manifest(p, mpath, seq, k, lo, hi, i, sizes, hashes) || fsync_dir(tmp))
        status = orn_std_ckpt_fail(p, "checkpoint: %s: cannot write: %s", mpath, strerror(errno));
    else if (rename(tmp, fin) || fsync_dir(dir))
        status = orn_std_ckpt_fail(p, "checkpoint: cannot rename %s to %s: %s", tmp, fin,
                                   strerror(errno));
    else
        prune(dir, seq); /* only now: the new checkpoint is complete */
fn_exit:
    free(sizes);
    free(hashes);
    free(tmp);
    free(fin);
    free(mpath);
    return status;
}

/* Collective: checkpoint seq at safe point k. Every rank makes the same calls whatever
 * fails (each step ends in an agreement), and returns 0, or non-zero with the same message
 * on every rank (the previous checkpoint is then still there). */
static int write_ckpt(OrnStdProg *p, int64_t seq, int k, int64_t lo, int64_t hi, int64_t i)
{
    char *tmp = path_of(p->ckpt_dir, seq, ".tmp");
    size_t fl = (tmp ? strlen(tmp) : 0) + 32;
    char *fpath = malloc(fl);
    /* every rank's (size, checksum) in its own slots; the sum gathers them */
    int64_t *all = calloc(2 * (size_t)p->size, sizeof *all);
    int status = 0;
    if (!tmp || !fpath || !all)
        status = orn_std_ckpt_fail(p, "checkpoint: out of memory");
    else if (p->rank == 0 && mkdir(tmp, 0777))
        status = orn_std_ckpt_fail(p, "checkpoint: %s: cannot create: %s", tmp, strerror(errno));
    status = orn_dsm_agree(p->dsm, status);
    if (status) goto fn_exit;

    snprintf(fpath, fl, "%s/rank-%d.bin", tmp, p->rank);
    Out o;
    if (out_open(&o, fpath) == 0) {
        OrnDsmIo io = {out_put, NULL, &o};
        if (orn_std_ckpt_put_state(p, &io, seq) && !o.err) o.err = EIO;
    }
    if (out_close(&o))
        status = orn_std_ckpt_fail(p, "checkpoint: %s: cannot write: %s", fpath, strerror(o.err));
    all[2 * p->rank] = o.size;
    all[2 * p->rank + 1] = (int64_t)o.h;
    /* every rank's file is on disk before rank 0 publishes the checkpoint */
    status = orn_dsm_agree(p->dsm, status);
    if (!status) {
        if (orn_dsm_allreduce_i64(p->dsm, all, 2 * (size_t)p->size, ORN_DSM_SUM)) orn_rt_die(p->rt);
        if (p->rank == 0) status = publish(p, seq, k, lo, hi, i, all);
        status = orn_dsm_agree(p->dsm, status);
    }
    if (status && p->rank == 0) remove_ckpt(tmp);
fn_exit:
    free(all);
    free(tmp);
    free(fpath);
    return status;
}

void orn_std_ckpt_poll(OrnStdProg *p, int k, int64_t lo, int64_t hi, int64_t i)
{
    OrnStdCkpt *ck = p->ck;
    if (!ck->writing || --ck->countdown > 0) return;
    double now = orn_std_wall_time();
    int64_t v[3] = {caught_signal != 0, 0, 0};
    if (p->rank == 0) {
        double target = ck->every < POLL_S ? ck->every : POLL_S;
        double per = (now - ck->last_poll) / (double)ck->stride;
        int64_t s = 2 * ck->stride;
        if (per > 0 && target / per < (double)s) s = (int64_t)(target / per);
        v[1] = now - ck->last >= ck->every;
        v[2] = s < 1 ? 1 : s > MAX_STRIDE ? MAX_STRIDE : s;
        ck->last_poll = now;
    }
    if (orn_dsm_allreduce_i64(p->dsm, v, 3, ORN_DSM_MAX)) orn_rt_die(p->rt);
    ck->stride = ck->countdown = v[2];
    if (!v[0] && !v[1]) return;
    int64_t seq = ck->next_seq++;
    OrnTl *tl = orn_dsm_timeline(p->dsm);
    int64_t sp = orn_tl_begin(tl, ORN_TL_IO, "checkpoint");
    orn_tl_str(tl, sp, "dir", p->ckpt_dir);
    orn_tl_int(tl, sp, "seq", seq);
    orn_tl_int(tl, sp, "line", ck->st->lines[k]);
    int status = write_ckpt(p, seq, k, lo, hi, i);
    orn_tl_end(tl, sp);
    if (p->rank == 0) ck->last = orn_std_wall_time();
    if (!status && ++ck->written == ck->signal_after && p->rank == p->size - 1) {
        fflush(stdout);
        raise(ck->signal_sig);
    }
    char *fin = path_of(p->ckpt_dir, seq, NULL);
    fflush(stdout);
    if (status && p->rank == 0)
        fprintf(stderr, "orion: %s (%s:%d, iteration counter %" PRId64 ")%s\n",
                orn_dsm_error(p->dsm), p->file, ck->st->lines[k], i,
                v[0] ? "; stopping without a checkpoint" : "; the previous checkpoint is kept");
    if (v[0]) {
        if (!status && p->rank == 0)
            fprintf(stderr,
                    "orion: stopped by a signal at %s:%d (iteration counter %" PRId64 "): "
                    "checkpoint %s written; continue with --resume=%s\n",
                    p->file, ck->st->lines[k], i, fin ? fin : "", p->ckpt_dir);
        fflush(stderr);
        free(fin);
        orn_std_exit(p, status ? 1 : ORN_STD_EXIT_CHECKPOINTED);
    }
    free(fin);
}
