/* live.c: the liveness monitor (see live.h for what it guarantees).
 *
 * Protocol: 16-byte frames {magic, kind, rank, arg} on one TCP connection per pair of
 * ranks. The higher rank connects and sends HELLO(its rank, the rank it meant to reach);
 * the lower one checks the target, answers HELLO, and the pair is up. An address that
 * reaches the wrong process (two hosts with the same loopback, say) fails the check and the
 * next address is tried. Then BEAT every interval both ways; FAIL when a rank is about to
 * abort the job; BYE when a rank finishes. After BYE a rank sends nothing more and closes
 * only once it has the peer's BYE too, so no frame is ever left unread at a close (which
 * would turn the close into a reset).
 *
 * Cost: one thread per rank asleep in poll(), P-1 sockets, (P-1) / interval frames per
 * second. The main thread pays a mutex per wait (orn_live_enter/leave). */
#define _GNU_SOURCE
#include "live.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "dsm_int.h"

#define MAGIC     0x4f524e4cu /* "ORNL" */
#define MAX_ADDRS 8

enum { K_HELLO = 1, K_BEAT, K_BYE, K_FAIL, K_LOST };

typedef struct Frame {
    uint32_t magic, kind, rank, arg;
} Frame;

/* What every rank publishes at start (allgathered). */
typedef struct Info {
    int64_t pid;
    uint64_t netns; /* network namespace inode: same host name + same namespace = loopback */
    int32_t port, naddr;
    uint32_t addr[MAX_ADDRS]; /* IPv4, network order, loopback first */
    char host[64];
} Info;

enum { S_NONE, S_CONNECTING, S_HANDSHAKE, S_UP, S_CLOSED, S_UNREACHABLE };

typedef struct Peer {
    int fd, state;
    int bye, failing; /* its BYE / FAIL arrived */
    double last, fail_at;
    int cand[MAX_ADDRS + 1], ncand, next; /* connector: addresses to try (indexes, -1 loopback) */
    double retry_at;
    uint8_t in[sizeof(Frame)];
    int nin;
} Peer;

typedef struct Pending { /* accepted, not yet identified */
    int fd, nin;
    uint8_t in[sizeof(Frame)];
} Pending;

struct OrnLive {
    int rank, size;
    double limit, interval, start;
    Info *info;
    Peer *peer;
    int lfd, wake[2];
    Pending *pend;
    int npend, cappend;
    pthread_t thread;
    pthread_mutex_t mu;
    OrnLiveWait wait; /* under mu: the main thread's current wait */
    atomic_int stop, failing, sent_bye;
    int warned;
};

/* ---------------------------------------------------------------- small helpers */

static double now(void)
{
    return orn_dsm_now();
}

static void set_nonblock(int fd)
{
    int fl = fcntl(fd, F_GETFL, 0);
    if (fl >= 0) fcntl(fd, F_SETFL, fl | O_NONBLOCK);
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    fcntl(fd, F_SETFD, FD_CLOEXEC);
}

static void send_frame(int fd, uint32_t kind, uint32_t rank, uint32_t arg)
{
    Frame f = {MAGIC, kind, rank, arg};
    /* 16 bytes into an empty-enough socket buffer go whole; a full buffer means the peer
     * has not read for a long time, and its silence is judged from our side anyway. */
    ssize_t n = send(fd, &f, sizeof f, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)n;
}

static uint64_t netns_id(void)
{
    struct stat st;
    if (stat("/proc/self/ns/net", &st) != 0) return 0;
    return (uint64_t)st.st_ino;
}

static void local_addrs(Info *in)
{
    in->naddr = 0;
    in->addr[in->naddr++] = htonl(INADDR_LOOPBACK);
    struct ifaddrs *ifa = NULL;
    if (getifaddrs(&ifa) != 0) return;
    for (struct ifaddrs *a = ifa; a && in->naddr < MAX_ADDRS; a = a->ifa_next) {
        if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET) continue;
        if (!(a->ifa_flags & IFF_UP) || (a->ifa_flags & IFF_LOOPBACK)) continue;
        in->addr[in->naddr++] = ((struct sockaddr_in *)a->ifa_addr)->sin_addr.s_addr;
    }
    freeifaddrs(ifa);
}

static const char *peer_desc(const OrnLive *lv, int q, char *buf, size_t n)
{
    snprintf(buf, n, "rank %d (pid %lld on %s)", q, (long long)lv->info[q].pid, lv->info[q].host);
    return buf;
}

/* What the main thread is doing, for a report. */
static void main_doing(OrnLive *lv, int q, char *buf, size_t n)
{
    pthread_mutex_lock(&lv->mu);
    if (lv->wait.what) {
        int for_q = 0;
        for (int i = 0; i < lv->wait.n && lv->wait.peers; i++) for_q |= lv->wait.peers[i] == q;
        snprintf(buf, n, "this rank was waiting%s in: %s", for_q ? " for it" : "", lv->wait.what);
    } else if (atomic_load(&lv->sent_bye)) {
        snprintf(buf, n, "this rank had finished and was waiting for the others to end");
    } else {
        snprintf(buf, n, "this rank was computing (not waiting for a peer)");
    }
    pthread_mutex_unlock(&lv->mu);
}

__attribute__((noreturn)) static void report_lost(OrnLive *lv, int q, const char *why)
{
    char who[160], doing[640];
    peer_desc(lv, q, who, sizeof who);
    main_doing(lv, q, doing, sizeof doing);
    fprintf(stderr, "orion: rank %d (pid %lld on %s): lost %s: %s; %s\n", lv->rank,
            (long long)lv->info[lv->rank].pid, lv->info[lv->rank].host, who, why, doing);
    fflush(stderr);
    /* Tell the others why we leave, so they blame q and not us. */
    for (int p = 0; p < lv->size; p++)
        if (p != q && lv->peer[p].state == S_UP)
            send_frame(lv->peer[p].fd, K_LOST, (uint32_t)lv->rank, (uint32_t)q);
    /* Linger a moment: our exit makes the process manager end the job, and the others
     * should get to say what they saw first. */
    struct timespec ts = {0, 500 * 1000 * 1000};
    nanosleep(&ts, NULL);
    _exit(ORN_EXIT_PEER);
}

/* ---------------------------------------------------------------- connections */

static void close_peer(Peer *p)
{
    if (p->fd >= 0) close(p->fd);
    p->fd = -1;
    p->nin = 0;
}

/* Connector side: start a connection to the next candidate address of q. */
static void try_connect(OrnLive *lv, int q)
{
    Peer *p = &lv->peer[q];
    while (p->next < p->ncand) {
        int c = p->cand[p->next++];
        struct sockaddr_in sa;
        memset(&sa, 0, sizeof sa);
        sa.sin_family = AF_INET;
        sa.sin_port = htons((uint16_t)lv->info[q].port);
        sa.sin_addr.s_addr = c < 0 ? htonl(INADDR_LOOPBACK) : lv->info[q].addr[c];
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) break;
        set_nonblock(fd);
        if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0 || errno == EINPROGRESS) {
            p->fd = fd;
            p->state = S_CONNECTING;
            return;
        }
        close(fd);
    }
    /* Every address failed: try the list again a little later, then give up loudly. */
    p->state = S_NONE;
    p->next = 0;
    p->retry_at = now() + 0.2;
    if (now() - lv->start > lv->limit) p->state = S_UNREACHABLE;
}

static void peer_up(OrnLive *lv, int q, int fd)
{
    Peer *p = &lv->peer[q];
    p->fd = fd;
    p->state = S_UP;
    p->last = now();
    (void)lv;
}

/* A frame from peer q (up, or handshaking). */
static void on_frame(OrnLive *lv, int q, const Frame *f)
{
    Peer *p = &lv->peer[q];
    p->last = now();
    switch (f->kind) {
    case K_HELLO:
        if (p->state != S_HANDSHAKE) break;
        if ((int)f->rank == q && (int)f->arg == lv->rank) {
            p->state = S_UP;
        } else { /* another process answered at this address: try the next one */
            close_peer(p);
            try_connect(lv, q);
        }
        break;
    case K_BYE:
        p->bye = 1;
        break;
    case K_FAIL:
        if (!p->failing) p->fail_at = now();
        p->failing = 1;
        break;
    case K_LOST: /* q leaves because it lost f->arg: report that rank, not q */
        if ((int)f->arg >= 0 && (int)f->arg < lv->size && (int)f->arg != lv->rank) {
            char why[200];
            snprintf(why, sizeof why, "rank %d lost it and is leaving", q);
            report_lost(lv, (int)f->arg, why);
        }
        break;
    default:
        break;
    }
}

/* Read what q sent; handle EOF and errors. */
static void read_peer(OrnLive *lv, int q)
{
    Peer *p = &lv->peer[q];
    for (;;) {
        ssize_t n = recv(p->fd, p->in + p->nin, sizeof(Frame) - (size_t)p->nin, MSG_DONTWAIT);
        if (n > 0) {
            p->nin += (int)n;
            if (p->nin == (int)sizeof(Frame)) {
                Frame f;
                memcpy(&f, p->in, sizeof f);
                p->nin = 0;
                if (f.magic != MAGIC && p->state == S_HANDSHAKE) { /* not an Orion rank */
                    close_peer(p);
                    try_connect(lv, q);
                    return;
                }
                if (f.magic != MAGIC) report_lost(lv, q, "its liveness connection sent garbage");
                on_frame(lv, q, &f);
                if (p->state != S_UP && p->state != S_HANDSHAKE) return;
            }
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
        /* EOF or an error. */
        int err = n < 0 ? errno : 0;
        int state = p->state;
        close_peer(p);
        if (state == S_HANDSHAKE || state == S_CONNECTING) { /* wrong address: next one */
            try_connect(lv, q);
            return;
        }
        p->state = S_CLOSED;
        if (p->bye || p->failing) return; /* expected */
        char why[200];
        snprintf(why, sizeof why,
                 "its connection %s without a goodbye (the process died or was killed)",
                 err ? strerror(err) : "closed");
        report_lost(lv, q, why);
    }
}

/* Accepted socket: wait for HELLO(rank, target). */
static void read_pending(OrnLive *lv, int i)
{
    Pending *pd = &lv->pend[i];
    ssize_t n = recv(pd->fd, pd->in + pd->nin, sizeof(Frame) - (size_t)pd->nin, MSG_DONTWAIT);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) return;
    int drop = n <= 0;
    if (n > 0) {
        pd->nin += (int)n;
        if (pd->nin < (int)sizeof(Frame)) return;
        Frame f;
        memcpy(&f, pd->in, sizeof f);
        int q = (int)f.rank;
        drop = 1;
        if (f.magic == MAGIC && f.kind == K_HELLO && (int)f.arg == lv->rank && q > lv->rank &&
            q < lv->size && lv->peer[q].fd < 0) {
            send_frame(pd->fd, K_HELLO, (uint32_t)lv->rank, (uint32_t)q);
            peer_up(lv, q, pd->fd);
            drop = 0;
            pd->fd = -1;
        }
    }
    if (drop && pd->fd >= 0) close(pd->fd);
    lv->pend[i] = lv->pend[--lv->npend];
}

static void accept_all(OrnLive *lv)
{
    for (;;) {
        int fd = accept(lv->lfd, NULL, NULL);
        if (fd < 0) return;
        set_nonblock(fd);
        if (lv->npend == lv->cappend) {
            lv->cappend = lv->cappend ? 2 * lv->cappend : 8;
            lv->pend = orn_xrealloc(lv->pend, (size_t)lv->cappend * sizeof *lv->pend);
        }
        lv->pend[lv->npend++] = (Pending){fd, 0, {0}};
    }
}

static void on_connected(OrnLive *lv, int q)
{
    Peer *p = &lv->peer[q];
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(p->fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
        close_peer(p);
        try_connect(lv, q);
        return;
    }
    send_frame(p->fd, K_HELLO, (uint32_t)lv->rank, (uint32_t)q);
    p->state = S_HANDSHAKE;
}

/* ---------------------------------------------------------------- the monitor */

static void check_peers(OrnLive *lv, double t)
{
    for (int q = 0; q < lv->size; q++) {
        Peer *p = &lv->peer[q];
        if (q == lv->rank) continue;
        if (p->failing && t - p->fail_at > lv->limit) {
            char who[160];
            fprintf(stderr,
                    "orion: rank %d: %s reported a failure %.0f s ago but the job did "
                    "not end; ending this rank\n",
                    lv->rank, peer_desc(lv, q, who, sizeof who), t - p->fail_at);
            fflush(stderr);
            _exit(1);
        }
        if (p->state == S_UP && !p->bye && !p->failing && t - p->last > lv->limit) {
            char why[200];
            snprintf(why, sizeof why,
                     "nothing heard from it for %.1f s (the process is stopped, or its host "
                     "or link is down)",
                     t - p->last);
            report_lost(lv, q, why);
        }
        if (p->state == S_NONE && q < lv->rank && p->fd < 0 && t >= p->retry_at) try_connect(lv, q);
        int never = p->state < S_UP && t - lv->start > 3 * lv->limit;
        if ((p->state == S_UNREACHABLE || never) && !(lv->warned & 1)) {
            lv->warned |= 1;
            fprintf(stderr,
                    "orion: rank %d: warning: no liveness connection with rank %d (port %d on "
                    "%s); a death of that rank may go undetected\n",
                    lv->rank, q, lv->info[q].port, lv->info[q].host);
            p->state = S_UNREACHABLE;
        }
    }
}

static int all_byes(const OrnLive *lv)
{
    for (int q = 0; q < lv->size; q++) {
        const Peer *p = &lv->peer[q];
        if (q != lv->rank && p->state == S_UP && !p->bye) return 0;
    }
    return 1;
}

static void *monitor(void *arg)
{
    OrnLive *lv = arg;
    int P = lv->size, cap = 2 + P + 64;
    struct pollfd *fds = orn_xmalloc((size_t)cap * sizeof *fds);
    int *who = orn_xmalloc((size_t)cap *
                           sizeof *who); /* >= 0 peer, -1 listener, -2 wake, -3-i pending i */
    double next_beat = now(), prev = now();
    int failing_sent = 0;
    for (;;) {
        double t = now();
        if (t - prev > lv->limit / 2) /* we were stopped ourselves: forgive the silence */
            for (int q = 0; q < P; q++) lv->peer[q].last = t;
        prev = t;
        if (atomic_load(&lv->failing) && !failing_sent) {
            for (int q = 0; q < P; q++)
                if (lv->peer[q].state == S_UP)
                    send_frame(lv->peer[q].fd, K_FAIL, (uint32_t)lv->rank, 0);
            failing_sent = 1;
        }
        if (atomic_load(&lv->stop) && !atomic_load(&lv->sent_bye)) {
            for (int q = 0; q < P; q++)
                if (lv->peer[q].state == S_UP)
                    send_frame(lv->peer[q].fd, K_BYE, (uint32_t)lv->rank, 0);
            atomic_store(&lv->sent_bye, 1);
        }
        if (atomic_load(&lv->sent_bye) && all_byes(lv)) break;
        if (t >= next_beat) {
            if (!atomic_load(&lv->sent_bye))
                for (int q = 0; q < P; q++)
                    if (lv->peer[q].state == S_UP)
                        send_frame(lv->peer[q].fd, K_BEAT, (uint32_t)lv->rank, 0);
            next_beat = t + lv->interval;
        }
        check_peers(lv, t);

        int n = 0;
        if (2 + P + lv->npend > cap) {
            cap = 2 + P + lv->npend;
            fds = orn_xrealloc(fds, (size_t)cap * sizeof *fds);
            who = orn_xrealloc(who, (size_t)cap * sizeof *who);
        }
        fds[n] = (struct pollfd){lv->wake[0], POLLIN, 0};
        who[n++] = -2;
        fds[n] = (struct pollfd){lv->lfd, POLLIN, 0};
        who[n++] = -1;
        for (int q = 0; q < P; q++) {
            Peer *p = &lv->peer[q];
            if (p->fd < 0) continue;
            fds[n] = (struct pollfd){p->fd, p->state == S_CONNECTING ? POLLOUT : POLLIN, 0};
            who[n++] = q;
        }
        for (int i = 0; i < lv->npend; i++) {
            fds[n] = (struct pollfd){lv->pend[i].fd, POLLIN, 0};
            who[n++] = -3 - i;
        }
        int ms = (int)((next_beat - now()) * 1000) + 1;
        if (ms < 1) ms = 1;
        if (ms > 200) ms = 200;
        int r = poll(fds, (nfds_t)n, ms);
        if (r <= 0) continue;
        /* Peers in rank order (a report names the first loss), then pending sockets last
         * first (their removal swaps the last one in). */
        int npeer = n - lv->npend;
        for (int j = 0; j < n; j++) {
            int i = j < npeer ? j : n - 1 - (j - npeer);
            if (!fds[i].revents) continue;
            if (who[i] == -2) {
                char buf[64];
                while (read(lv->wake[0], buf, sizeof buf) > 0) {
                }
            } else if (who[i] == -1) {
                accept_all(lv);
            } else if (who[i] <= -3) {
                read_pending(lv, -3 - who[i]);
            } else if (lv->peer[who[i]].state == S_CONNECTING) {
                on_connected(lv, who[i]);
            } else if (lv->peer[who[i]].fd >= 0) {
                read_peer(lv, who[i]);
            }
        }
    }
    free(fds);
    free(who);
    return NULL;
}

/* ---------------------------------------------------------------- API */

static void candidates(OrnLive *lv, int q)
{
    Peer *p = &lv->peer[q];
    const Info *me = &lv->info[lv->rank], *it = &lv->info[q];
    int same = !strcmp(me->host, it->host) && me->netns == it->netns;
    p->ncand = 0;
    if (same) p->cand[p->ncand++] = -1;
    for (int i = 1; i < it->naddr && i < MAX_ADDRS; i++) p->cand[p->ncand++] = i;
}

void orn_live_start(OrnDsmCtx *ctx, double limit, OrnLive **out)
{
    *out = NULL;
    int P = ctx->size, me = ctx->rank;
    Info mine;
    memset(&mine, 0, sizeof mine);
    mine.pid = (int64_t)getpid();
    mine.netns = netns_id();
    gethostname(mine.host, sizeof mine.host - 1);
    local_addrs(&mine);
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_ANY);
    socklen_t len = sizeof sa;
    if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(lfd, 128) != 0 ||
        getsockname(lfd, (struct sockaddr *)&sa, &len) != 0) {
        if (lfd >= 0) close(lfd);
        lfd = -1;
        mine.port = -1;
    } else {
        mine.port = ntohs(sa.sin_port);
        set_nonblock(lfd);
    }
    void *all = NULL;
    size_t *counts = orn_xcalloc((size_t)P, sizeof *counts);
    int st = orn_dsm_allgatherv(ctx, &mine, sizeof mine, &all, counts, "liveness monitor start");
    int bad = st != ORN_OK;
    for (int p = 0; p < P && !bad; p++) bad = counts[p] != sizeof mine;
    if (bad || lfd < 0) {
        fprintf(stderr,
                "orion: rank %d: warning: no liveness monitor (%s); a dead rank may go "
                "undetected\n",
                me, lfd < 0 ? strerror(errno) : orn_dsm_error(ctx));
        if (lfd >= 0) close(lfd);
        free(all);
        free(counts);
        return;
    }
    OrnLive *lv = orn_xcalloc(1, sizeof *lv);
    lv->rank = me;
    lv->size = P;
    lv->limit = limit;
    lv->interval = limit / 8 < 1.0 ? limit / 8 : 1.0;
    lv->start = now();
    lv->info = all;
    for (int p = 0; p < P; p++) lv->info[p].host[sizeof lv->info[p].host - 1] = '\0';
    lv->peer = orn_xcalloc((size_t)P, sizeof *lv->peer);
    lv->lfd = lfd;
    pthread_mutex_init(&lv->mu, NULL);
    for (int q = 0; q < P; q++) {
        lv->peer[q].fd = -1;
        lv->peer[q].last = lv->start;
        if (lv->info[q].port < 0 && q != me) lv->peer[q].state = S_UNREACHABLE;
    }
    free(counts);
    if (pipe(lv->wake) != 0) {
        lv->wake[0] = lv->wake[1] = -1;
    } else {
        fcntl(lv->wake[0], F_SETFL, O_NONBLOCK);
        fcntl(lv->wake[1], F_SETFL, O_NONBLOCK);
        fcntl(lv->wake[0], F_SETFD, FD_CLOEXEC);
        fcntl(lv->wake[1], F_SETFD, FD_CLOEXEC);
    }
    for (int q = 0; q < me; q++) {
        if (lv->peer[q].state == S_UNREACHABLE) continue;
        candidates(lv, q);
        try_connect(lv, q);
    }
    if (lv->wake[0] < 0 || pthread_create(&lv->thread, NULL, monitor, lv) != 0) {
        fprintf(stderr, "orion: rank %d: warning: no liveness monitor (cannot start its thread)\n",
                me);
        for (int q = 0; q < P; q++) close_peer(&lv->peer[q]);
        close(lfd);
        if (lv->wake[0] >= 0) close(lv->wake[0]);
        if (lv->wake[1] >= 0) close(lv->wake[1]);
        pthread_mutex_destroy(&lv->mu);
        free(lv->peer);
        free(lv->info);
        free(lv);
        return;
    }
    *out = lv;
}

OrnLiveWait orn_live_enter(OrnLive *lv, const char *what, const int *peers, int n)
{
    OrnLiveWait outer = {NULL, NULL, 0};
    if (!lv) return outer;
    pthread_mutex_lock(&lv->mu);
    outer = lv->wait;
    lv->wait = (OrnLiveWait){what, peers, n};
    pthread_mutex_unlock(&lv->mu);
    return outer;
}

void orn_live_restore(OrnLive *lv, OrnLiveWait outer)
{
    if (!lv) return;
    pthread_mutex_lock(&lv->mu);
    lv->wait = outer;
    pthread_mutex_unlock(&lv->mu);
}

static void wake(OrnLive *lv)
{
    char c = 1;
    ssize_t n = write(lv->wake[1], &c, 1);
    (void)n;
}

void orn_live_failing(OrnLive *lv)
{
    if (!lv) return;
    atomic_store(&lv->failing, 1);
    wake(lv);
}

void orn_live_stop(OrnLive *lv)
{
    if (!lv) return;
    orn_live_restore(lv, (OrnLiveWait){NULL, NULL, 0});
    atomic_store(&lv->stop, 1);
    wake(lv);
    pthread_join(lv->thread, NULL);
    for (int q = 0; q < lv->size; q++) close_peer(&lv->peer[q]);
    for (int i = 0; i < lv->npend; i++) close(lv->pend[i].fd);
    close(lv->lfd);
    close(lv->wake[0]);
    close(lv->wake[1]);
    pthread_mutex_destroy(&lv->mu);
    free(lv->pend);
    free(lv->peer);
    free(lv->info);
    free(lv);
}
